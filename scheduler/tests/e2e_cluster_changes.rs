//! gangway-scheduler as the cluster changes under it, on a real kube-apiserver: a member
//! deleted while its siblings wait, a node deleted under a gang, a member bound by another actor
//! (seen only through the watch), a pod naming a PodGroup that does not exist yet, a request
//! for a resource no node has.

mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::api::DeleteParams;
use kube::{Api, Client};
use support::cluster::Cluster;
use support::scheduler::SchedulerProcess;
use support::*;

const WAIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_deleted_while_its_siblings_wait_is_replaced_and_the_gang_binds_whole() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for i in 0..3 {
        create(&client, &node(&format!("gpu-{i}"), 32, 8)).await;
    }
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    namespace(&client, "ml").await;
    create_in(&client, "ml", &gang("ml", "train", 3)).await;
    for i in 0..2 {
        create_in(
            &client,
            "ml",
            &pod("ml", &format!("w-{i}"), Some("train"), 1, 8),
        )
        .await;
    }
    // Two of three: they wait, nothing bound.
    assert!(
        holds(Duration::from_secs(2), || async {
            bound_count(&client, "ml").await == 0
        })
        .await
    );
    delete_pod(&client, "ml", "w-0").await;
    for i in 2..4 {
        create_in(
            &client,
            "ml",
            &pod("ml", &format!("w-{i}"), Some("train"), 1, 8),
        )
        .await;
    }
    let placed = eventually("the gang of three bound", WAIT, || async {
        let placed = placements(&client, "ml").await;
        (placed.values().filter(|n| n.is_some()).count() == 3).then_some(placed)
    })
    .await;
    assert!(!placed.contains_key("w-0"));
    assert!(placed.values().all(Option::is_some), "{placed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_deleted_under_a_waiting_gang_is_not_used_and_a_new_one_is() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b"] {
        create(&client, &node(name, 32, 8)).await;
    }
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    namespace(&client, "ml").await;
    create_in(&client, "ml", &gang("ml", "train", 3)).await;
    for i in 0..3 {
        create_in(
            &client,
            "ml",
            &pod("ml", &format!("w-{i}"), Some("train"), 1, 8),
        )
        .await;
    }
    // Three members, two nodes: the gang waits, nothing bound.
    assert!(
        holds(Duration::from_secs(2), || async {
            bound_count(&client, "ml").await == 0
        })
        .await
    );
    Api::<Node>::all(client.clone())
        .delete("gpu-b", &DeleteParams::default())
        .await
        .expect("delete node");
    create(&client, &node("gpu-c", 32, 8)).await;
    assert!(
        holds(Duration::from_secs(2), || async {
            bound_count(&client, "ml").await == 0
        })
        .await,
        "two nodes again (a, c): still nothing bound"
    );
    create(&client, &node("gpu-d", 32, 8)).await;
    let placed = eventually("the gang bound on a, c and d", WAIT, || async {
        let placed = placements(&client, "ml").await;
        placed.values().all(Option::is_some).then_some(placed)
    })
    .await;
    let mut nodes: Vec<_> = placed.into_values().flatten().collect();
    nodes.sort();
    assert_eq!(nodes, ["gpu-a", "gpu-c", "gpu-d"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_bound_by_another_actor_counts_as_bound_and_takes_its_room() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b"] {
        create(&client, &node(name, 32, 8)).await;
    }
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    namespace(&client, "ml").await;
    create_in(&client, "ml", &gang("ml", "train", 2)).await;
    // A member for another scheduler, bound by the user's own Binding.
    let mut theirs = pod("ml", "theirs", Some("train"), 1, 8);
    theirs.spec.as_mut().unwrap().scheduler_name = Some("someone-else".into());
    create_in(&client, "ml", &theirs).await;
    bind_as_someone_else(&client, "ml", "theirs", "gpu-a").await;
    // The gang's other member: with the first counted bound, one more reaches the minimum.
    create_in(&client, "ml", &pod("ml", "ours", Some("train"), 1, 8)).await;
    let node = bound_node(&client, "ml", "ours", WAIT).await;
    assert_eq!(
        node, "gpu-b",
        "gpu-a's GPUs are taken by the other actor's member"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_naming_a_missing_pod_group_says_so_and_binds_once_it_exists() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b"] {
        create(&client, &node(name, 32, 8)).await;
    }
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    namespace(&client, "ml").await;
    for i in 0..2 {
        create_in(
            &client,
            "ml",
            &pod("ml", &format!("w-{i}"), Some("later"), 1, 8),
        )
        .await;
    }
    let note = eventually("a PodGroupNotFound event", WAIT, || async {
        let events = pod_events(&client, "ml", "w-0").await;
        events
            .into_iter()
            .find(|(r, _)| r == "PodGroupNotFound")
            .map(|(_, n)| n)
    })
    .await;
    assert_eq!(
        note,
        "pod group ml/later does not exist; the pod waits for it"
    );
    assert_eq!(bound_count(&client, "ml").await, 0);
    create_in(&client, "ml", &gang("ml", "later", 2)).await;
    eventually("the gang bound once its group exists", WAIT, || async {
        (bound_count(&client, "ml").await == 2).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_for_a_resource_no_node_has_is_unschedulable_with_a_reason() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    create(&client, &node("cpu-only", 32, 0)).await;
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    namespace(&client, "ml").await;
    create_in(&client, "ml", &pod("ml", "wants-gpu", None, 1, 1)).await;
    let note = eventually("a FailedScheduling event", WAIT, || async {
        let events = pod_events(&client, "ml", "wants-gpu").await;
        events
            .into_iter()
            .find(|(r, _)| r == "FailedScheduling")
            .map(|(_, n)| n)
    })
    .await;
    assert!(note.contains("Insufficient nvidia.com/gpu"), "{note}");
}

/// Two 8-GPU nodes and a scheduler that writes once every 2 s, whose one token went to bind a
/// 1-GPU warm-up pod: the next bind waits about 2 s for its token, long enough for the test to
/// act between placement and bind.
struct SlowWrites {
    /// Kept alive for the test.
    _cluster: Cluster,
    client: Client,
    scheduler: SchedulerProcess,
    /// The warm-up pod's node.
    warm: String,
    /// The other, empty node: the only one where a pod of 8 GPUs fits.
    empty: &'static str,
}

async fn slow_writes() -> Option<SlowWrites> {
    let cluster = Cluster::start()?;
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b"] {
        create(&client, &node(name, 32, 8)).await;
    }
    let scheduler = SchedulerProcess::start_scheduling(
        &cluster,
        &[
            "--leader-elect=false",
            "--kube-api-qps=0.5",
            "--kube-api-burst=1",
        ],
    );
    namespace(&client, "ml").await;
    create_in(&client, "ml", &pod("ml", "warm-up", None, 1, 1)).await;
    let warm = bound_node(&client, "ml", "warm-up", WAIT).await;
    let empty = if warm == "gpu-a" { "gpu-b" } else { "gpu-a" };
    Some(SlowWrites {
        _cluster: cluster,
        client,
        scheduler,
        warm,
        empty,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bind_that_conflicts_releases_the_reservation_and_counts_the_pod_where_it_was_bound() {
    // Held whole: a pattern that left a field out would drop it, the cluster with it.
    let Some(slow) = slow_writes().await else {
        return;
    };
    let SlowWrites {
        client,
        scheduler,
        warm,
        empty,
        ..
    } = &slow;
    create_in(client, "ml", &pod("ml", "contested", None, 1, 8)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Someone else binds it first, to the node the scheduler chose (the only one with 8 free).
    bind_as_someone_else(client, "ml", "contested", empty).await;
    scheduler.wait_for("bind refused (bound by someone else)", WAIT);
    // Its room is counted once: a 7-GPU pod fits only beside the warm-up pod.
    create_in(client, "ml", &pod("ml", "next", None, 1, 7)).await;
    assert_eq!(&bound_node(client, "ml", "next", WAIT).await, warm);
    assert_eq!(
        node_of(client, "ml", "contested").await.as_deref(),
        Some(*empty)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_deleted_between_placement_and_bind_leaves_its_room_free() {
    let Some(slow) = slow_writes().await else {
        return;
    };
    let (client, empty) = (&slow.client, slow.empty);
    create_in(client, "ml", &pod("ml", "gone", None, 1, 8)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    delete_pod(client, "ml", "gone").await;
    // Its reservation is released: a pod needing the whole empty node binds there.
    create_in(client, "ml", &pod("ml", "next", None, 1, 8)).await;
    assert_eq!(bound_node(client, "ml", "next", WAIT).await, empty);
}
