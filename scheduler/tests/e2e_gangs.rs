//! gangway-scheduler on a real kube-apiserver (upstream/testcluster): a GPU gang binds whole; a
//! gang that cannot fit binds nothing and its PodGroup says why; two gangs that each fit alone
//! but not together — one binds, the other waits holding nothing.

mod support;

use std::time::Duration;

use support::cluster::Cluster;
use support::scheduler::SchedulerProcess;
use support::*;

const WAIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gpu_gang_binds_whole_and_its_pod_group_says_scheduled() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b"] {
        create(&client, &node(name, 32, 8)).await;
    }
    create(&client, &node("cpu-only", 32, 0)).await;
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &[]);
    namespace(&client, "ml").await;
    create_in(&client, "ml", &gang("ml", "train", 2)).await;
    for i in 0..2 {
        create_in(
            &client,
            "ml",
            &pod("ml", &format!("worker-{i}"), Some("train"), 4, 8),
        )
        .await;
    }
    let placed = eventually("the gang bound", WAIT, || async {
        let placed = placements(&client, "ml").await;
        placed.values().all(Option::is_some).then_some(placed)
    })
    .await;
    let mut nodes: Vec<_> = placed.values().flatten().cloned().collect();
    nodes.sort();
    assert_eq!(nodes, ["gpu-a", "gpu-b"], "one worker per GPU node");
    let condition = eventually("PodGroupScheduled", WAIT, || async {
        pod_group_scheduled(&client, "ml", "train").await
    })
    .await;
    assert_eq!(
        (condition.0.as_str(), condition.1.as_str()),
        ("True", "Scheduled")
    );
    let events = eventually("a Scheduled event", WAIT, || async {
        let events = pod_events(&client, "ml", "worker-0").await;
        events
            .iter()
            .any(|(reason, _)| reason == "Scheduled")
            .then_some(events)
    })
    .await;
    let note = &events.iter().find(|(r, _)| r == "Scheduled").unwrap().1;
    assert!(
        note.starts_with("Successfully assigned ml/worker-0 to gpu-"),
        "{note}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gang_that_cannot_fit_binds_nothing_and_its_pod_group_says_why() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b"] {
        create(&client, &node(name, 32, 8)).await;
    }
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, &[]);
    namespace(&client, "ml").await;
    create_in(&client, "ml", &gang("ml", "big", 3)).await;
    for i in 0..3 {
        create_in(
            &client,
            "ml",
            &pod("ml", &format!("worker-{i}"), Some("big"), 4, 8),
        )
        .await;
    }
    let condition = eventually("PodGroupScheduled False", WAIT, || async {
        pod_group_scheduled(&client, "ml", "big")
            .await
            .filter(|c| c.0 == "False")
    })
    .await;
    assert_eq!(condition.1, "Unschedulable");
    assert!(!condition.2.is_empty(), "the condition says why");
    assert!(
        holds(Duration::from_secs(3), || async {
            bound_count(&client, "ml").await == 0
        })
        .await,
        "no member of a gang that cannot fit is bound"
    );
    let events = pod_events(&client, "ml", "worker-0").await;
    assert!(
        events
            .iter()
            .any(|(reason, _)| reason == "FailedScheduling"),
        "{events:?}"
    );
}

/// Two gangs of two whole-node members on three nodes, pending when the scheduler (with
/// `args`) starts; then a single pod that needs a whole node. Returns (the bound gang pods, the
/// single pod's node if it bound within `within`).
async fn two_gangs_then_a_single_pod(
    args: &[&str],
    within: Duration,
) -> Option<(Vec<String>, Option<String>)> {
    let cluster = Cluster::start()?;
    let client = cluster.client().await;
    for name in ["gpu-a", "gpu-b", "gpu-c"] {
        create(&client, &node(name, 32, 8)).await;
    }
    namespace(&client, "ml").await;
    for g in ["left", "right"] {
        create_in(&client, "ml", &gang("ml", g, 2)).await;
        for i in 0..2 {
            create_in(
                &client,
                "ml",
                &pod("ml", &format!("{g}-{i}"), Some(g), 4, 8),
            )
            .await;
        }
    }
    // Both gangs are pending when the scheduler starts: it sees them at once.
    let _scheduler = SchedulerProcess::start_scheduling(&cluster, args);
    let placed = eventually("one gang bound", WAIT, || async {
        let placed = placements(&client, "ml").await;
        (placed.values().filter(|n| n.is_some()).count() == 2).then_some(placed)
    })
    .await;
    let bound: Vec<String> = placed
        .iter()
        .filter(|(_, n)| n.is_some())
        .map(|(p, _)| p.clone())
        .collect();
    create_in(&client, "ml", &pod("ml", "solo", None, 4, 8)).await;
    let start = std::time::Instant::now();
    let mut solo = None;
    while start.elapsed() < within && solo.is_none() {
        solo = node_of(&client, "ml", "solo").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        holds(Duration::from_secs(2), || async {
            bound_count(&client, "ml").await == 2 + usize::from(solo.is_some())
        })
        .await,
        "the other gang stays unbound"
    );
    Some((bound, solo))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gangs_that_fit_alone_but_not_together_one_binds_the_other_holds_nothing() {
    let Some((bound, solo)) = two_gangs_then_a_single_pod(&[], WAIT).await else {
        return;
    };
    let winner = &bound[0][..bound[0].len() - 2];
    assert!(
        bound.iter().all(|p| p.starts_with(winner)),
        "one whole gang: {bound:?}"
    );
    // The third node is free: the single pod binds there, which it could not if the waiting
    // gang held a reservation on it.
    assert!(solo.is_some(), "the waiting gang holds no node");
}

/// The witness: with the Permit barrier the waiting gang's first member holds the third node
/// while it waits for a sibling that cannot fit (until the permit timeout, 5 minutes), and the
/// single pod finds no room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_permit_barrier_the_waiting_gang_holds_a_node() {
    let args = ["--gang-cycle=permit-barrier"];
    let Some((_, solo)) = two_gangs_then_a_single_pod(&args, Duration::from_secs(3)).await else {
        return;
    };
    assert_eq!(
        solo, None,
        "the barrier holds the node the single pod needs"
    );
}
