//! Running gangway-scheduler, on a real kube-apiserver: the API server restarted mid-run, two
//! replicas (only the leader binds; killing it hands over), an API server unreachable at
//! start, the health and metrics endpoints, SIGTERM.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use support::cluster::Cluster;
use support::scheduler::SchedulerProcess;
use support::*;

const WAIT: Duration = Duration::from_secs(60);

/// GET `path` on `address`: (status code, body).
fn get(address: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connect");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    let code = response
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (code, body)
}

async fn gang_of_two(client: &kube::Client, namespace: &str, name: &str) {
    create_in(client, namespace, &gang(namespace, name, 2)).await;
    for i in 0..2 {
        create_in(
            client,
            namespace,
            &pod(namespace, &format!("{name}-{i}"), Some(name), 1, 4),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_restarted_mid_run_loses_nothing_and_binds_nothing_twice() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for i in 0..4 {
        create(&client, &node(&format!("gpu-{i}"), 32, 8)).await;
    }
    let scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    namespace(&client, "ml").await;
    gang_of_two(&client, "ml", "before").await;
    eventually("the first gang bound", WAIT, || async {
        (bound_count(&client, "ml").await == 2).then_some(())
    })
    .await;
    let before = placements(&client, "ml").await;

    cluster.restart();
    let client = cluster.client().await;
    gang_of_two(&client, "ml", "after").await;
    eventually("the gang made after the restart bound", WAIT, || async {
        (bound_count(&client, "ml").await == 4).then_some(())
    })
    .await;
    let after = placements(&client, "ml").await;
    for (pod, node) in &before {
        assert_eq!(after.get(pod), Some(node), "{pod} stays where it was bound");
    }
    // Four pods of 4 GPUs on four 8-GPU nodes: at most two a node.
    let mut per_node = std::collections::BTreeMap::<String, u32>::new();
    for node in after.values().flatten() {
        *per_node.entry(node.clone()).or_default() += 4;
    }
    assert!(per_node.values().all(|&gpus| gpus <= 8), "{per_node:?}");
    assert!(
        scheduler.logged("watch failed") || scheduler.logged("relist"),
        "the scheduler saw its watches break and resumed them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_replicas_only_the_leader_binds_and_killing_it_hands_over() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for i in 0..4 {
        create(&client, &node(&format!("gpu-{i}"), 32, 8)).await;
    }
    let one = SchedulerProcess::start(&cluster, &[]);
    let two = SchedulerProcess::start(&cluster, &[]);
    let start = Instant::now();
    let (mut leader, follower) = loop {
        if one.logged("scheduling") {
            break (one, two);
        }
        if two.logged("scheduling") {
            break (two, one);
        }
        assert!(start.elapsed() < WAIT, "no replica leads");
        std::thread::sleep(Duration::from_millis(50));
    };
    namespace(&client, "ml").await;
    gang_of_two(&client, "ml", "first").await;
    eventually("the leader binds the gang", WAIT, || async {
        (bound_count(&client, "ml").await == 2).then_some(())
    })
    .await;
    assert!(!follower.logged("scheduling"), "the follower stands by");
    assert!(
        !follower.logged("attempt ended"),
        "the follower binds nothing"
    );
    let (code, _) = get(follower.address(), "/readyz");
    assert_eq!(code, 200, "a follower standing by is ready");

    leader.kill9();
    let killed = Instant::now();
    gang_of_two(&client, "ml", "second").await;
    follower.wait_for("scheduling", Duration::from_secs(30));
    eventually("the new leader binds the second gang", WAIT, || async {
        (bound_count(&client, "ml").await == 4).then_some(())
    })
    .await;
    // The lease lasts 4 s; the follower renews its try every grace period.
    assert!(
        killed.elapsed() < Duration::from_secs(20),
        "took over in {:?}",
        killed.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_releases_the_lease_and_a_follower_takes_over_at_once() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    create(&client, &node("gpu-0", 32, 8)).await;
    let mut leader = SchedulerProcess::start_scheduling(&cluster, &[]);
    let follower = SchedulerProcess::start(&cluster, &[]);
    follower.wait_for("waiting to lead", WAIT);
    let status = leader.terminate();
    assert!(
        status.success(),
        "SIGTERM is a clean stop: {status:?}\n{}",
        leader.log()
    );
    assert!(leader.logged("stopped"));
    let released = Instant::now();
    follower.wait_for("scheduling", Duration::from_secs(30));
    assert!(
        released.elapsed() < Duration::from_secs(4),
        "a released lease is taken without waiting for it to expire: {:?}",
        released.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_api_server_at_start_is_retried_then_a_clear_exit() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    cluster.stop();
    let started = Instant::now();
    let mut scheduler = SchedulerProcess::start(&cluster, &["--startup-timeout=3s"]);
    let status = scheduler
        .wait_exit(Duration::from_secs(30))
        .expect("it gives up");
    assert!(!status.success(), "a non-zero exit");
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "it kept trying for the timeout"
    );
    let log = scheduler.log();
    assert!(
        log.contains("api server unreachable server=https://127.0.0.1:"),
        "{log}"
    );
    assert!(log.contains("gangway-scheduler stopped"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_metrics_are_served() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    create(&client, &node("gpu-0", 32, 8)).await;
    let scheduler = SchedulerProcess::start_scheduling(&cluster, &["--leader-elect=false"]);
    let address = scheduler.address();
    assert_eq!(get(address, "/healthz"), (200, "ok\n".into()));
    assert_eq!(get(address, "/readyz"), (200, "ok\n".into()));
    namespace(&client, "ml").await;
    gang_of_two(&client, "ml", "g").await;
    eventually("the gang bound", WAIT, || async {
        (bound_count(&client, "ml").await == 2).then_some(())
    })
    .await;
    let (code, metrics) = get(address, "/metrics");
    assert_eq!(code, 200);
    for line in [
        "scheduler_schedule_attempts_total{result=\"scheduled\"} 2",
        "gangway_binds_total{result=\"bound\"} 2",
        "gangway_placement_records_total 1",
    ] {
        assert!(metrics.contains(line), "{line} missing from:\n{metrics}");
    }
    assert_eq!(get(address, "/nothing").0, 404);
}
