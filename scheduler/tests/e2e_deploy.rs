//! deploy/ works as it is: its namespace, ServiceAccount, RBAC rules and Deployment are accepted
//! by a real kube-apiserver, and gangway-scheduler running with that ServiceAccount's token —
//! nothing more than the rules grant — leads on its Lease in `gangway-system` and schedules the
//! gang of deploy/examples/gpu-gang.yaml, writing its conditions and events. (No kubelet here,
//! so the Deployment's pods do not run; the test runs the binary with the account's
//! credentials instead.)

mod support;

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
use kube::api::PostParams;
use kube::{Api, Client};
use serde_json::Value;
use support::cluster::Cluster;
use support::scheduler::SchedulerProcess;
use support::*;

const WAIT: Duration = Duration::from_secs(60);

fn documents(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("manifest");
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).expect("yaml"))
        .collect()
}

fn typed<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// Creates every object of `file` as the cluster's admin.
async fn apply(client: &Client, file: &str) {
    for doc in documents(file) {
        let namespace = doc["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_owned();
        let kind = doc["kind"].as_str().unwrap_or_default().to_owned();
        match kind.as_str() {
            "Namespace" => drop(create::<Namespace>(client, &typed(doc)).await),
            "ClusterRole" => drop(create::<ClusterRole>(client, &typed(doc)).await),
            "ClusterRoleBinding" => drop(create::<ClusterRoleBinding>(client, &typed(doc)).await),
            "ServiceAccount" => {
                drop(create_in::<ServiceAccount>(client, &namespace, &typed(doc)).await)
            }
            "Role" => drop(create_in::<Role>(client, &namespace, &typed(doc)).await),
            "RoleBinding" => drop(create_in::<RoleBinding>(client, &namespace, &typed(doc)).await),
            "Deployment" => drop(create_in::<Deployment>(client, &namespace, &typed(doc)).await),
            "PodGroup" => drop(create_in::<PodGroup>(client, &namespace, &typed(doc)).await),
            "Pod" => drop(create_in::<Pod>(client, &namespace, &typed(doc)).await),
            other => panic!("{file}: unexpected kind {other}"),
        }
    }
}

/// A kubeconfig like the cluster's, authenticating as the ServiceAccount.
async fn service_account_kubeconfig(cluster: &Cluster, client: &Client) -> std::path::PathBuf {
    let request: TokenRequest = typed(serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": 3600},
    }));
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "gangway-system");
    let issued: TokenRequest = accounts
        .create_subresource(
            "token",
            "gangway-scheduler",
            &PostParams::default(),
            &request,
        )
        .await
        .expect("a token for the ServiceAccount");
    let token = issued.status.and_then(|s| s.token).expect("a token issued");
    let admin = std::fs::read_to_string(cluster.kubeconfig()).expect("kubeconfig");
    let line = admin
        .lines()
        .find(|l| l.trim_start().starts_with("token:"))
        .expect("token line");
    let own = admin.replace(line, &format!("    token: {token}"));
    let path = cluster
        .kubeconfig()
        .with_file_name("gangway-scheduler.kubeconfig");
    std::fs::write(&path, own).expect("write kubeconfig");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifests_apply_and_their_account_schedules_the_example_gang() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b"] {
        create(&client, &node(name, 32, 8)).await;
    }
    // `kubectl apply -f deploy/` in file order.
    for file in ["namespace.yaml", "rbac.yaml", "deployment.yaml"] {
        apply(&client, file).await;
    }
    let kubeconfig = service_account_kubeconfig(&cluster, &client).await;
    let scheduler = SchedulerProcess::start_with(
        &kubeconfig,
        &["--leader-elect-resource-namespace=gangway-system"],
    );
    scheduler.wait_for("scheduling", WAIT);
    apply(&client, "examples/gpu-gang.yaml").await;
    eventually("the example gang bound", WAIT, || async {
        let placed = placements(&client, "default").await;
        (placed.len() == 2 && placed.values().all(Option::is_some)).then_some(())
    })
    .await;
    let condition = eventually("PodGroupScheduled", WAIT, || async {
        pod_group_scheduled(&client, "default", "llm-train").await
    })
    .await;
    assert_eq!(condition.0, "True");
    eventually("a Scheduled event", WAIT, || async {
        let events = pod_events(&client, "default", "llm-train-0").await;
        events
            .iter()
            .any(|(reason, _)| reason == "Scheduled")
            .then_some(())
    })
    .await;
    let log = scheduler.log();
    assert!(
        !log.contains("forbidden"),
        "a request the rules do not allow:\n{log}"
    );
}
