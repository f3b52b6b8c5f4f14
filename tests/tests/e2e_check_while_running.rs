//! `Scheduler::check` is safe while the scheduler's threads run: 1,000 threaded runs — gangs
//! and single pods binding, a bind failing now and then, a member deleted — each checked in a
//! loop from another thread the whole time, and no check reports a violation. Without the
//! step gate the same loop finds false I6 reports (a pod between its assume and its record);
//! `core/src/scheduler/check_tests.rs` holds the deterministic witness.
#![cfg(not(loom))]

use std::time::{Duration, Instant};

use gangsched::queue::QueueConfig;
use gangsched::scheduler::{InMemoryBinder, Node};
use gangsched::SystemClock;
use gangsched::{Clock, Mode, Pod, PodGroup, Resources, Scheduler, SchedulerConfig};

const RUNS: usize = 1_000;
const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;

fn config(mode: Mode) -> SchedulerConfig {
    // Backoff in milliseconds, and its ordering window too: with the default window of a
    // second, a pod whose bind failed waits for the window's end, and the runs that fail a bind
    // would spend their time checking an idle scheduler.
    let queue = QueueConfig::DEFAULT
        .with_initial_backoff(Duration::from_millis(1))
        .with_max_backoff(Duration::from_millis(2))
        .with_ordering_window(Some(Duration::from_millis(1)));
    SchedulerConfig::default()
        .with_mode(mode)
        .with_queue(queue)
        .with_permit_timeout(Duration::from_secs(5))
        .with_backoff_flush_interval(Duration::from_millis(1))
        .with_workers(2)
}

fn pod(name: &str, group: Option<&str>) -> Pod {
    let pod = Pod::new(name, "ml", name).with_requests(Resources::new(CPU, GIB));
    match group {
        Some(group) => pod.with_group(group),
        None => pod,
    }
}

/// One run: a gang of four and three single pods on two nodes, one bind failing every tenth
/// run, checked from this thread until every pod is bound; returns how many checks ran.
fn one_run(run: usize) -> usize {
    let mode = if run.is_multiple_of(2) {
        Mode::Hardened
    } else {
        Mode::Upstream
    };
    let clock = SystemClock::new();
    let failed = std::sync::atomic::AtomicBool::new(false);
    let binder = InMemoryBinder::new().with_failures(move |pod, _| {
        run.is_multiple_of(10)
            && pod.name() == "solo-0"
            && !failed.swap(true, std::sync::atomic::Ordering::SeqCst)
    });
    let s = Scheduler::with(
        config(mode),
        gangsched::scheduler::ResourceFit,
        binder.clone(),
    );
    let now = clock.now();
    for n in 0..2 {
        s.add_node(
            Node::new(&format!("n{n}"), Resources::new(4 * CPU, 64 * GIB)),
            now,
        )
        .unwrap();
    }
    let running = s.start(clock);
    s.add_group(PodGroup::gang("ml", "g", 4).unwrap(), clock.now())
        .unwrap();
    let mut pods: Vec<Pod> = (0..4).map(|i| pod(&format!("g-{i}"), Some("g"))).collect();
    pods.extend((0..3).map(|i| pod(&format!("solo-{i}"), None)));
    for p in &pods {
        s.add_pod(p.clone(), clock.now()).unwrap();
    }
    let start = Instant::now();
    let mut checks = 0;
    loop {
        if let Err(violation) = s.check() {
            panic!("run {run} ({mode:?}), check {checks}: {violation}");
        }
        checks += 1;
        if binder.bindings().len() == pods.len() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "run {run}: not all bound: {:?}",
            binder.bindings()
        );
        std::thread::yield_now();
    }
    running.shutdown();
    s.check().unwrap();
    assert!(s.leaked_reservations().is_empty());
    checks
}

#[test]
fn check_reports_nothing_false_while_a_thousand_runs_schedule() {
    let checks: usize = (0..RUNS).map(one_run).sum();
    assert!(checks >= RUNS, "every run was checked at least once");
}
