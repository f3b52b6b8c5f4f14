//! Throughput through the real API server (docs/benchmarks.md, "gangway-scheduler on a real API
//! server"): nodes, gangs of two one-GPU workers and single one-CPU pods, all created as fast as
//! the server takes them while gangway-scheduler runs; reported: pods bound per second (first
//! creation to last bind) and each gang's time to bind (its last member created to its last
//! member bound), p50 and p99. Timing is printed, never asserted; what is asserted is that
//! everything bound, no gang part-bound, no node over capacity.
//!
//! Small in CI (20 nodes, 20 gangs, 40 pods). The benchmark's size:
//!
//! ```sh
//! GANGWAY_THROUGHPUT=1000,1000,2000 cargo test --release --manifest-path scheduler/Cargo.toml \
//!   --test e2e_throughput -- --nocapture
//! ```
//!
//! `GANGWAY_THROUGHPUT_ARGS` adds flags (`--workers 16`); `GANGWAY_SCHEDULER_BIN` runs another
//! build of the binary, to compare two.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher;
use kube::Api;
use support::cluster::Cluster;
use support::scheduler::SchedulerProcess;
use support::*;

/// (nodes, gangs, single pods).
fn size() -> (usize, usize, usize) {
    let Ok(spec) = std::env::var("GANGWAY_THROUGHPUT") else {
        return (20, 20, 40);
    };
    let parts: Vec<usize> = spec
        .split(',')
        .map(|p| {
            p.trim()
                .parse()
                .expect("GANGWAY_THROUGHPUT=NODES,GANGS,PODS")
        })
        .collect();
    assert_eq!(parts.len(), 3, "GANGWAY_THROUGHPUT=NODES,GANGS,PODS");
    (parts[0], parts[1], parts[2])
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gangs_and_pods_through_the_real_api_server() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let (nodes, gangs, singles) = size();
    let client = cluster.client().await;
    futures::stream::iter(0..nodes)
        .for_each_concurrent(16, |i| {
            let client = client.clone();
            async move {
                create(&client, &node(&format!("node-{i:04}"), 64, 8)).await;
            }
        })
        .await;
    namespace(&client, "load").await;
    for g in 0..gangs {
        create_in(&client, "load", &gang("load", &format!("g-{g:04}"), 2)).await;
    }
    // The API server takes writes far faster than kube-scheduler's default 50 a second;
    // scheduler_perf lifts the limit as well, to measure the scheduler and not its limiter.
    let mut args = vec![
        "--leader-elect=false",
        "--kube-api-qps=5000",
        "--kube-api-burst=5000",
        "--log=info,gangway_scheduler::outcomes=warn",
    ];
    // More flags for the run (a benchmark's variants), space-separated.
    let extra = std::env::var("GANGWAY_THROUGHPUT_ARGS").unwrap_or_default();
    args.extend(extra.split_whitespace());
    let scheduler = SchedulerProcess::start_scheduling(&cluster, &args);

    // Bound times, from a watch of the namespace.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "load");
    let total = gangs * 2 + singles;
    let watching = tokio::spawn({
        let pods = pods.clone();
        async move {
            let mut bound: BTreeMap<String, Instant> = BTreeMap::new();
            let mut stream = watcher(pods, watcher::Config::default()).boxed();
            while let Some(event) = stream.try_next().await.expect("watch") {
                let objects = match event {
                    watcher::Event::Apply(p) | watcher::Event::InitApply(p) => vec![p],
                    _ => Vec::new(),
                };
                for pod in objects {
                    let name = pod.metadata.name.clone().unwrap_or_default();
                    if pod.spec.and_then(|s| s.node_name).is_some() {
                        bound.entry(name).or_insert_with(Instant::now);
                    }
                }
                if bound.len() == total {
                    return bound;
                }
            }
            bound
        }
    });

    // Every pod, gang members and singles interleaved, 32 creations in flight.
    let mut specs: Vec<(String, Option<String>)> = Vec::new();
    for i in 0..gangs.max(singles) {
        if i < gangs {
            for m in 0..2 {
                specs.push((format!("g-{i:04}-{m}"), Some(format!("g-{i:04}"))));
            }
        }
        if i < singles {
            specs.push((format!("single-{i:04}"), None));
        }
    }
    let start = Instant::now();
    let created: BTreeMap<String, Instant> = futures::stream::iter(specs)
        .map(|(name, group)| {
            let client = client.clone();
            async move {
                let (cpu, gpus) = if group.is_some() { (1, 1) } else { (1, 0) };
                create_in(
                    &client,
                    "load",
                    &pod("load", &name, group.as_deref(), cpu, gpus),
                )
                .await;
                (name, Instant::now())
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let created_in = start.elapsed();
    let bound = tokio::time::timeout(Duration::from_secs(1800), watching)
        .await
        .expect("everything bound within 30 minutes")
        .expect("watch task");
    assert_eq!(bound.len(), total, "every pod bound");

    // I10's checks on the result: no gang part-bound, no node over 8 GPUs or 64 CPUs.
    let list = pods.list(&Default::default()).await.expect("list");
    let mut per_node: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for pod in &list.items {
        let spec = pod.spec.as_ref().unwrap();
        let node = spec.node_name.clone().expect("bound");
        let gpu = u32::from(spec.scheduling_group.is_some());
        let entry = per_node.entry(node).or_default();
        entry.0 += 1;
        entry.1 += gpu;
    }
    assert!(
        per_node.values().all(|&(cpu, gpu)| cpu <= 64 && gpu <= 8),
        "over capacity"
    );

    let first = created.values().min().copied().unwrap();
    let last = bound.values().max().copied().unwrap();
    let pods_per_second = total as f64 / (last - first).as_secs_f64();
    let mut gang_times: Vec<Duration> = (0..gangs)
        .map(|g| {
            let members = [format!("g-{g:04}-0"), format!("g-{g:04}-1")];
            let ready = members.iter().map(|m| created[m]).max().unwrap();
            let done = members.iter().map(|m| bound[m]).max().unwrap();
            done.saturating_duration_since(ready)
        })
        .collect();
    gang_times.sort();
    let mut pod_times: Vec<Duration> = created
        .iter()
        .map(|(name, at)| bound[name].saturating_duration_since(*at))
        .collect();
    pod_times.sort();
    println!(
        "throughput: {nodes} nodes, {gangs} gangs of 2, {singles} single pods: {total} pods bound \
         in {:.2} s ({pods_per_second:.0} pods/s; created in {:.2} s); gang time to bind p50 \
         {:.0} ms, p99 {:.0} ms; pod time to bind p50 {:.0} ms, p99 {:.0} ms",
        (last - first).as_secs_f64(),
        created_in.as_secs_f64(),
        percentile(&gang_times, 50.0).as_secs_f64() * 1e3,
        percentile(&gang_times, 99.0).as_secs_f64() * 1e3,
        percentile(&pod_times, 50.0).as_secs_f64() * 1e3,
        percentile(&pod_times, 99.0).as_secs_f64() * 1e3,
    );
    drop(scheduler);
}
