//! Found by e2e_crash's H7 test: gangway-scheduler started its scheduling thread before the
//! Pod watch had listed every pod, so a pending pod listed before a bound one (etcd lists by
//! namespace and name) could be placed on that pod's node as if it were empty — two pods on
//! room for one. kube-scheduler waits for its informers' caches to sync; so does gangway now.

mod support;

use std::time::Duration;

use support::cluster::Cluster;
use support::scheduler::SchedulerProcess;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_full_of_pods_listed_after_the_pending_ones_gets_no_more() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    create(&client, &node("gpu", 32, 8)).await;
    namespace(&client, "ns").await;
    // Pending pods whose names sort before the bound one's.
    for i in 0..20 {
        create_in(&client, "ns", &pod("ns", &format!("a-{i:02}"), None, 1, 1)).await;
    }
    // The node's GPUs, all taken by a pod bound there by someone else.
    let mut full = pod("ns", "z-bound", None, 1, 8);
    full.spec.as_mut().unwrap().node_name = Some("gpu".into());
    create_in(&client, "ns", &full).await;
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    assert!(
        holds(Duration::from_secs(3), || async {
            bound_count(&client, "ns").await == 1
        })
        .await,
        "a pending pod was bound onto a full node: {:?}",
        placements(&client, "ns").await
    );
}
