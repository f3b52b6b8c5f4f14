//! What the e2e tests share: a test API server (`cluster`), gangway-scheduler as a process
//! (`scheduler`), and here the objects they create and the waits they make.

#![allow(dead_code)] // each e2e file uses its own part of it

pub mod cluster;
pub mod scheduler;

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client, Resource};
use serde_json::json;

/// The scheduler name the tests' pods ask for (the binary's default).
pub const SCHEDULER: &str = "gangway-scheduler";

fn from<T: DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// A node with `cpu` cores, 64 GiB and `gpus` GPUs, ready, as scheduler_perf makes them (an
/// API object; no kubelet).
pub fn node(name: &str, cpu: u32, gpus: u32) -> Node {
    from(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "capacity": {"cpu": cpu.to_string(), "memory": "64Gi", "pods": "110", "nvidia.com/gpu": gpus.to_string()},
            "allocatable": {"cpu": cpu.to_string(), "memory": "64Gi", "pods": "110", "nvidia.com/gpu": gpus.to_string()},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }))
}

/// A gang PodGroup (`scheduling.k8s.io/v1beta1`) of at least `min` members.
pub fn gang(namespace: &str, name: &str, min: u32) -> PodGroup {
    from(json!({
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min}}},
    }))
}

/// A pod for gangway-scheduler requesting `cpu` cores and `gpus` GPUs, a member of `group` if
/// given.
pub fn pod(namespace: &str, name: &str, group: Option<&str>, cpu: u32, gpus: u32) -> Pod {
    let mut pod: Pod = from(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [{
                "name": "work", "image": "registry.k8s.io/pause:3.10",
                "resources": {
                    "requests": {"cpu": cpu.to_string(), "nvidia.com/gpu": gpus.to_string()},
                    "limits": {"nvidia.com/gpu": gpus.to_string()},
                },
            }],
        },
    }));
    if let (Some(group), Some(spec)) = (group, pod.spec.as_mut()) {
        spec.scheduling_group = Some(from(json!({"podGroupName": group})));
    }
    pod
}

/// `pod` with the `high` priority class ([`priority_class`]).
pub fn high_priority(mut pod: Pod) -> Pod {
    if let Some(spec) = pod.spec.as_mut() {
        spec.priority_class_name = Some("high".into());
    }
    pod
}

/// The `high` priority class (1000).
pub fn priority_class() -> PriorityClass {
    from(json!({
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000,
    }))
}

/// Creates a cluster-scoped object.
pub async fn create<K>(client: &Client, object: &K) -> K
where
    K: Resource<Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    Api::<K>::all(client.clone())
        .create(&PostParams::default(), object)
        .await
        .expect("create")
}

/// Creates a namespaced object in `namespace`.
pub async fn create_in<K>(client: &Client, namespace: &str, object: &K) -> K
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    Api::<K>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), object)
        .await
        .expect("create")
}

/// Creates namespace `name`.
pub async fn namespace(client: &Client, name: &str) {
    let ns: Namespace =
        from(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}));
    create(client, &ns).await;
}

/// Deletes pod `namespace/name` at once.
pub async fn delete_pod(client: &Client, namespace: &str, name: &str) {
    Api::<Pod>::namespaced(client.clone(), namespace)
        .delete(name, &DeleteParams::default().grace_period(0))
        .await
        .expect("delete pod");
}

/// The pods of `namespace` by name, with their node (`None`: not bound).
pub async fn placements(client: &Client, namespace: &str) -> BTreeMap<String, Option<String>> {
    let pods = Api::<Pod>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .expect("list pods");
    pods.items
        .into_iter()
        .map(|p| {
            let node = p.spec.and_then(|s| s.node_name);
            (p.metadata.name.unwrap_or_default(), node)
        })
        .collect()
}

/// The node pod `namespace/name` is bound to, if it is.
pub async fn node_of(client: &Client, namespace: &str, name: &str) -> Option<String> {
    placements(client, namespace)
        .await
        .get(name)
        .cloned()
        .flatten()
}

/// Waits until pod `namespace/name` is bound (panics after `timeout`); its node.
pub async fn bound_node(client: &Client, namespace: &str, name: &str, timeout: Duration) -> String {
    let what = format!("{namespace}/{name} bound");
    eventually(&what, timeout, || node_of(client, namespace, name)).await
}

/// Binds pod `namespace/name` to `node` through `pods/binding`, as a user or another scheduler
/// would.
pub async fn bind_as_someone_else(client: &Client, namespace: &str, name: &str, node: &str) {
    let binding: k8s_openapi::api::core::v1::Binding = from(json!({
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace},
        "target": {"kind": "Node", "name": node},
    }));
    let _: serde_json::Value = Api::<Pod>::namespaced(client.clone(), namespace)
        .create_subresource("binding", name, &PostParams::default(), &binding)
        .await
        .expect("the other binding");
}

/// How many pods of `namespace` are bound.
pub async fn bound_count(client: &Client, namespace: &str) -> usize {
    placements(client, namespace)
        .await
        .values()
        .filter(|n| n.is_some())
        .count()
}

/// Polls `probe` every 100 ms until it gives `Some`, or panics naming `what` after `timeout`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        if start.elapsed() > timeout {
            panic!("{what}: not within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `probe` stays `true` for all of `period` (checked every 100 ms).
pub async fn holds<F, Fut>(period: Duration, mut probe: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    while start.elapsed() < period {
        if !probe().await {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    true
}

/// The `PodGroupScheduled` condition of `namespace/name`: (status, reason, message).
pub async fn pod_group_scheduled(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Option<(String, String, String)> {
    let group = Api::<PodGroup>::namespaced(client.clone(), namespace)
        .get(name)
        .await
        .ok()?;
    let condition = group
        .status?
        .conditions?
        .into_iter()
        .find(|c| c.type_ == "PodGroupScheduled")?;
    Some((condition.status, condition.reason, condition.message))
}

/// The reasons and notes of the events about pod `namespace/name` (events.k8s.io/v1).
pub async fn pod_events(client: &Client, namespace: &str, name: &str) -> Vec<(String, String)> {
    let events = Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .expect("list events");
    events
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
        .collect()
}
