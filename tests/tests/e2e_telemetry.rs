//! The metrics a scheduler reports, read back with a recorder after a small run driven by
//! hand in explicit time: a gang that fits binds whole, a gang that cannot fit times out at
//! Permit and comes back together, and a Basic pod binds alone. Every count is known, so each
//! is asserted exactly.
#![cfg(not(loom))]

use std::time::Duration;

use gangsched::scheduler::{InMemoryBinder, Node, ResourceFit, Scheduler, SchedulerConfig};
use gangsched::telemetry::{
    BINDING_ATTEMPTS, GANG_ATTEMPTS, PENDING_PODS, PERMIT_WAIT_DURATION,
    PODGROUP_SCHEDULE_ATTEMPTS, SCHEDULE_ATTEMPTS,
};
use gangsched::PodGroup;
use gangsched::{Mode, Pod, Policy, Resources, Time};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use metrics_util::MetricKind;

const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;

fn member(gang: &str, i: usize) -> Pod {
    Pod::new(format!("{gang}-{i}"), "ml", &format!("{gang}-{i}"))
        .with_group(gang)
        .with_requests(Resources::new(CPU, GIB))
}

/// What the recorder holds: (name, labels, value) with a counter's total, a gauge's value or
/// a histogram's samples. (Taking a snapshot drains the histograms: take one per run.)
type Recorded = Vec<(String, Vec<(String, String)>, DebugValue)>;

fn recorded(snapshotter: &Snapshotter) -> Recorded {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(ck, _, _, value)| {
            let (kind, key) = ck.into_parts();
            let _: MetricKind = kind;
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (key.name().to_owned(), labels, value)
        })
        .collect()
}

/// The value of metric `name` with label `key=value` (counter total, gauge value, or the
/// number of histogram samples); 0 if it was never recorded.
fn read(recorded: &Recorded, name: &str, key: &str, value: &str) -> f64 {
    recorded
        .iter()
        .find(|(n, labels, _)| n == name && labels.iter().any(|(k, v)| k == key && v == value))
        .map_or(0.0, |(_, _, v)| match v {
            DebugValue::Counter(n) => *n as f64,
            DebugValue::Gauge(g) => g.into_inner(),
            DebugValue::Histogram(samples) => samples.len() as f64,
        })
}

/// Gang `a` (3 of 3) fits on node 0; gang `b` (3 of 3) finds room for 2 on node 1 and times
/// out at Permit; Basic pod `solo` binds alone on node 0.
fn run() -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(Mode::Hardened)
        .with_permit_timeout(Duration::from_secs(10));
    let s = Scheduler::with(config, ResourceFit, InMemoryBinder::default());
    let t0 = Time::ZERO;
    s.add_node(Node::new("node-0", Resources::new(4 * CPU, 64 * GIB)), t0)
        .unwrap();
    s.add_node(Node::new("node-1", Resources::new(2 * CPU, 64 * GIB)), t0)
        .unwrap();
    for gang in ["a", "b"] {
        s.add_group(PodGroup::gang("ml", gang, 3).unwrap(), t0)
            .unwrap();
    }
    s.add_group(PodGroup::new("ml", "solo", Policy::Basic).unwrap(), t0)
        .unwrap();
    for i in 0..3 {
        s.add_pod(member("a", i), t0).unwrap();
    }
    // Gang a's three cycles, then its binding cycles.
    while s.schedule_one(t0).is_some() {}
    s.run_binding_cycles(t0);
    // Node 0's last slot goes to the Basic pod; then gang b gets node 1's two and no third.
    s.add_pod(member("solo", 0), t0).unwrap();
    while s.schedule_one(t0).is_some() {}
    s.run_binding_cycles(t0);
    for i in 0..3 {
        s.add_pod(member("b", i), t0).unwrap();
    }
    while s.schedule_one(t0).is_some() {}
    s.run_binding_cycles(t0);
    // Gang b's attempt times out: its two waiting members are rejected together.
    let late = Time::from_secs(10);
    s.tick(late);
    s.run_binding_cycles(late);
    s
}

#[test]
fn a_small_run_reports_every_count() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let s = metrics::with_local_recorder(&recorder, run);
    let recorded = recorded(&snapshotter);
    let count = |name, key, value| read(&recorded, name, key, value);

    // Bound: gang a's three and the Basic pod.
    assert_eq!(count(SCHEDULE_ATTEMPTS, "result", "scheduled"), 4.0);
    assert_eq!(count(BINDING_ATTEMPTS, "result", "bound"), 4.0);
    // Gang b: its third member found no room; its two waiting members timed out.
    assert_eq!(count(SCHEDULE_ATTEMPTS, "result", "unschedulable"), 3.0);
    assert_eq!(count(BINDING_ATTEMPTS, "result", "rejected"), 2.0);
    assert_eq!(count(SCHEDULE_ATTEMPTS, "result", "error"), 0.0);
    // Gang attempts decided as a whole.
    assert_eq!(count(GANG_ATTEMPTS, "outcome", "admitted"), 1.0);
    assert_eq!(count(GANG_ATTEMPTS, "outcome", "timed_out"), 1.0);
    assert_eq!(count(GANG_ATTEMPTS, "outcome", "failed"), 0.0);
    // Waits at Permit: gang a's two first members allowed, gang b's two rejected.
    assert_eq!(count(PERMIT_WAIT_DURATION, "result", "Success"), 2.0);
    assert_eq!(count(PERMIT_WAIT_DURATION, "result", "Unschedulable"), 2.0);
    // Gang b is back in the queue, all three members, none active yet.
    let pending: f64 = ["active", "backoff", "unschedulable", "gated"]
        .into_iter()
        .map(|q| count(PENDING_PODS, "queue", q))
        .sum();
    assert_eq!(pending, 3.0);
    assert_eq!(s.stats().bound, 4, "{:?}", s.stats());

    let names: Vec<&str> = recorded.iter().map(|(n, _, _)| n.as_str()).collect();
    for name in [
        PENDING_PODS,
        PERMIT_WAIT_DURATION,
        SCHEDULE_ATTEMPTS,
        BINDING_ATTEMPTS,
    ] {
        assert!(names.contains(&name), "{name} recorded");
    }
}

/// The waits are recorded in seconds: gang b's members waited the whole permit timeout.
#[test]
fn permit_waits_are_in_seconds() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, run);
    let waits: Vec<f64> = recorded(&snapshotter)
        .into_iter()
        .filter(|(name, labels, _)| {
            name == PERMIT_WAIT_DURATION && labels.iter().any(|(_, v)| v == "Unschedulable")
        })
        .flat_map(|(_, _, v)| match v {
            DebugValue::Histogram(samples) => samples.into_iter().map(|s| s.into_inner()).collect(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(waits, vec![10.0, 10.0]);
}

/// `describe_metrics` gives each metric its help text (and the wait histogram its unit).
#[test]
fn every_metric_is_described() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        gangsched::telemetry::describe_metrics();
        run();
    });
    let snapshot = snapshotter.snapshot().into_vec();
    for name in [
        PENDING_PODS,
        PERMIT_WAIT_DURATION,
        SCHEDULE_ATTEMPTS,
        BINDING_ATTEMPTS,
        GANG_ATTEMPTS,
    ] {
        let described = snapshot
            .iter()
            .find(|(ck, _, _, _)| ck.key().name() == name)
            .map(|(_, unit, help, _)| (*unit, help.clone()));
        let Some((unit, Some(help))) = described else {
            panic!("{name} is recorded and described: {described:?}");
        };
        assert!(!help.is_empty());
        if name == PERMIT_WAIT_DURATION {
            assert_eq!(unit, Some(metrics::Unit::Seconds));
        }
    }
}

/// The pod-group cycle counts as kube-scheduler 1.37 does (`schedule_one_podgroup.go`): one
/// `scheduler_podgroup_schedule_attempts_total` per cycle for the group, and each member's own
/// attempt in `scheduler_schedule_attempts_total` — `scheduled` as it binds, `unschedulable`
/// through the failure handler. (Until 2026-12-06 the group's result went into the pods'
/// counter, one count for the whole gang.)
#[test]
fn the_pod_group_cycle_counts_the_group_and_each_member() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let config = SchedulerConfig::default().with_gang_cycle(gangsched::GangCycle::PodGroup);
        let s = Scheduler::with(config, ResourceFit, InMemoryBinder::default());
        let t0 = Time::ZERO;
        s.add_node(Node::new("node-0", Resources::new(3 * CPU, 64 * GIB)), t0)
            .unwrap();
        for gang in ["fits", "too-big"] {
            s.add_group(PodGroup::gang("ml", gang, 3).unwrap(), t0)
                .unwrap();
            for i in 0..3 {
                s.add_pod(member(gang, i), t0).unwrap();
            }
        }
        while s.schedule_one(t0).is_some() {}
        s.run_binding_cycles(t0);
        assert_eq!(s.stats().bound, 3);
    });
    let recorded = recorded(&snapshotter);
    let count = |name, key, value| read(&recorded, name, key, value);
    assert_eq!(
        count(PODGROUP_SCHEDULE_ATTEMPTS, "result", "scheduled"),
        1.0
    );
    assert_eq!(
        count(PODGROUP_SCHEDULE_ATTEMPTS, "result", "unschedulable"),
        1.0
    );
    assert_eq!(count(SCHEDULE_ATTEMPTS, "result", "scheduled"), 3.0);
    assert_eq!(count(SCHEDULE_ATTEMPTS, "result", "unschedulable"), 3.0);
}
