//! Tests for the contention workload, completions and the reservation ledger: the pod-group
//! cycle binds every gang with no timeout and no reservation held in vain; the Permit barrier,
//! on the same workload, holds nodes for gangs that time out (its witness).

use clap::Parser;

use super::generate::ContentionSpec;
use super::{run, Options, Report, Workload};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    options: Options,
}

fn options(args: &[&str]) -> Options {
    let argv = ["simulate", "--json"]
        .into_iter()
        .chain(args.iter().copied());
    Cli::try_parse_from(argv).unwrap().options
}

/// A workload file's one node, of 1 CPU and 1000 bytes.
const ONE_NODE: &str = r#"
        [[nodes]]
        name = "n"
        cpu_millis = 1000
        memory_bytes = 1000"#;

fn small() -> ContentionSpec {
    ContentionSpec {
        nodes: 8,
        gangs: 12,
        run_ms: 10_000,
        seed: 3,
    }
}

fn simulate(cycle: &str, mode: &str) -> Report {
    let o = options(&["--contention", "--gang-cycle", cycle, "--mode", mode]);
    run(&o, &Workload::contention(&small())).unwrap()
}

#[test]
fn contention_gangs_need_most_of_the_cluster_one_member_per_node() {
    let w = Workload::contention(&small());
    assert_eq!(w, Workload::contention(&small()));
    w.validate().unwrap();
    assert_eq!((w.nodes.len(), w.gang_count()), (8, 12));
    for g in &w.groups {
        let size = g.min_count.unwrap() as usize;
        assert!((5..=8).contains(&size), "{}: {size} of 8 nodes", g.name);
        let members: Vec<_> = w
            .pods
            .iter()
            .filter(|p| p.group.as_deref() == Some(g.name.as_str()))
            .collect();
        assert_eq!(members.len(), size);
        for p in members {
            assert!(2 * p.cpu_millis > w.nodes[0].cpu_millis, "one per node");
            assert!(p.cpu_millis <= w.nodes[0].cpu_millis);
            assert_eq!(p.run_ms, Some(10_000));
        }
    }
    let json = serde_json::to_string(&w).unwrap();
    assert_eq!(Workload::parse_json(&json).unwrap(), w);
}

#[test]
fn pod_group_cycle_binds_every_gang_with_no_timeout_and_nothing_held_in_vain() {
    for mode in ["hardened", "upstream"] {
        let r = simulate("pod-group", mode);
        assert!(r.is_clean(), "{mode}: {r:?}");
        assert_eq!(
            (r.gang_cycle.as_str(), r.gangs_bound),
            ("pod-group", 12),
            "{mode}"
        );
        assert_eq!(r.timeouts, 0, "{mode}");
        assert_eq!(r.wasted_reservation_seconds, Some(0.0), "{mode}");
        assert!(
            r.completed > 0 && r.gangs_per_sim_sec > 0.0,
            "{mode}: {r:?}"
        );
        assert!(r.gang_bind_p50_s <= r.gang_bind_p99_s, "{mode}");
    }
}

#[test]
fn permit_barrier_holds_nodes_for_gangs_that_time_out_on_the_same_workload() {
    for mode in ["hardened", "upstream"] {
        let barrier = simulate("barrier", mode);
        let pod_group = simulate("pod-group", mode);
        assert!(barrier.is_clean(), "{mode}: {barrier:?}");
        assert_eq!(
            barrier.gangs_bound, 12,
            "{mode}: every gang binds in the end"
        );
        assert!(barrier.timeouts > 0, "{mode}: {barrier:?}");
        let wasted = barrier.wasted_reservation_seconds.unwrap();
        assert!(wasted > 0.0, "{mode}: {barrier:?}");
        // Virtual time: deterministic, not a timing. A deadlock idles the cluster until the
        // permit timeout; the pod-group cycle never waits for one.
        assert!(
            pod_group.gangs_per_sim_sec > barrier.gangs_per_sim_sec,
            "{mode}: {} vs {}",
            pod_group.gangs_per_sim_sec,
            barrier.gangs_per_sim_sec
        );
    }
}

#[test]
fn a_pod_that_completes_frees_its_node_for_the_next() {
    let w = Workload::parse_toml(&format!(
        r#"{ONE_NODE}
        [[pods]]
        name = "first"
        cpu_millis = 1000
        memory_bytes = 1000
        run_ms = 5000
        [[pods]]
        name = "second"
        cpu_millis = 1000
        memory_bytes = 1000
        arrival_ms = 1000
        "#
    ))
    .unwrap();
    let r = run(&options(&[]), &w).unwrap();
    assert!(r.is_clean(), "{r:?}");
    assert_eq!((r.pods_bound, r.completed), (2, 1), "{r:?}");
    assert!(
        r.virtual_seconds >= 5.0,
        "the second binds once the first completes: {r:?}"
    );
    assert_eq!(r.wasted_reservation_seconds, Some(0.0));
}

#[test]
fn run_ms_past_the_latest_time_is_refused() {
    let w = Workload::parse_toml(&format!(
        r#"{ONE_NODE}
        [[pods]]
        name = "p"
        cpu_millis = 1
        memory_bytes = 1
        run_ms = {}
        "#,
        u64::MAX
    ));
    let err = w.unwrap_err().to_string();
    assert!(err.contains("run_ms"), "{err}");
}
