//! The scheduler driver end to end, on real threads and the system clock with short timeouts:
//! gangs that fit bind whole, a gang that cannot fit times out and releases everything, bind
//! failures and deletes are survived, and at quiescence I4, I5 and I6 hold and every thread
//! returns. Bad input (unknown node, duplicates, events after shutdown) is refused with typed
//! errors.
#![cfg(not(loom))]

use std::time::{Duration, Instant};

use gangway::gang::PodGroup;
use gangway::queue::QueueConfig;
use gangway::scheduler::{
    InMemoryBinder, Node, NodeEventError, PodEventError, ResourceFit, Scheduler, SchedulerConfig,
};
use gangway::sync::Arc;
use gangway::sync::Mutex;
use gangway::{Mode, Pod, Resources, SystemClock, Time};

const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;

fn config(mode: Mode) -> SchedulerConfig {
    SchedulerConfig {
        mode,
        queue: QueueConfig {
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            max_in_unschedulable: Duration::from_millis(200),
            ordering_window: None,
        },
        permit_timeout: Duration::from_millis(300),
        backoff_flush_interval: Duration::from_millis(5),
        leftover_flush_interval: Duration::from_millis(50),
        workers: 2,
    }
}

fn member(gang: &str, i: usize, cpus: u64) -> Pod {
    Pod::new(format!("{gang}-{i}"), "ml", &format!("{gang}-{i}"))
        .with_group(gang)
        .with_requests(Resources::new(cpus * CPU, GIB))
}

/// Waits (up to 10 s) until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting until {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn nodes(s: &Scheduler, clock: &SystemClock, n: usize, cpus: u64) {
    use gangway::Clock;
    for i in 0..n {
        let node = Node::new(&format!("node-{i}"), Resources::new(cpus * CPU, 64 * GIB));
        s.add_node(node, clock.now()).unwrap();
    }
}

#[test]
fn gangs_that_fit_bind_whole_and_the_scheduler_shuts_down_cleanly() {
    use gangway::Clock;
    for mode in [Mode::Hardened, Mode::Upstream] {
        let clock = SystemClock::new();
        let binder = InMemoryBinder::default();
        let s = Scheduler::with(config(mode), ResourceFit, binder.clone());
        nodes(&s, &clock, 2, 8);
        let running = s.start(clock);
        for g in ["a", "b"] {
            s.add_group(PodGroup::gang("ml", g, 4).unwrap(), clock.now())
                .unwrap();
            for i in 0..4 {
                s.add_pod(member(g, i, 2), clock.now()).unwrap();
            }
        }
        eventually("all 8 pods are bound", || binder.bindings().len() == 8);
        eventually("quiescent", || s.in_binding().is_empty());
        s.check().expect("I4, I5, I6 at quiescence");
        assert_eq!(s.stats().bound, 8, "{mode:?}");
        running.shutdown();
        assert!(s.is_shut_down());
    }
}

#[test]
fn a_gang_that_cannot_fit_times_out_and_releases_everything() {
    use gangway::Clock;
    let clock = SystemClock::new();
    let binder = InMemoryBinder::default();
    let s = Scheduler::with(config(Mode::Hardened), ResourceFit, binder.clone());
    // Room for three members of 2 cpu each; the gang needs four.
    nodes(&s, &clock, 1, 7);
    let running = s.start(clock);
    s.add_group(PodGroup::gang("ml", "big", 4).unwrap(), clock.now())
        .unwrap();
    for i in 0..4 {
        s.add_pod(member("big", i, 2), clock.now()).unwrap();
    }
    eventually("the attempt times out", || s.stats().permit_timeouts >= 3);
    eventually("nothing is assumed or waiting", || {
        s.in_binding().is_empty() && s.cache().with(|c| c.assumed_count()) == 0
    });
    assert!(
        binder.bindings().is_empty(),
        "no member of a partial gang binds (I3)"
    );
    // The gang retries for ever (5 ms backoffs), so the scheduler is never idle while it runs:
    // a check now could land inside a cycle, between assume and Permit. Stop it first.
    running.shutdown();
    s.check().expect("I6: every reservation released");
    assert_eq!(s.cache().with(|c| c.assumed_count()), 0);
}

#[test]
fn bind_failures_and_deletes_are_survived() {
    use gangway::Clock;
    let clock = SystemClock::new();
    // Every pod's first bind fails; the retry succeeds.
    let failed_once = Arc::new(Mutex::new(std::collections::BTreeSet::new()));
    let binder = InMemoryBinder::default().with_failures({
        let failed_once = failed_once.clone();
        move |pod, _| failed_once.lock().insert(pod.id().clone())
    });
    let s = Scheduler::with(config(Mode::Hardened), ResourceFit, binder.clone());
    nodes(&s, &clock, 2, 16);
    let running = s.start(clock);
    let solo: Vec<Pod> = (0..6)
        .map(|i| {
            Pod::new(format!("solo-{i}"), "ml", &format!("solo-{i}"))
                .with_requests(Resources::new(CPU, GIB))
        })
        .collect();
    for pod in &solo {
        s.add_pod(pod.clone(), clock.now()).unwrap();
    }
    // A gang that never completes (3 of 4): its members wait, then one is deleted.
    s.add_group(PodGroup::gang("ml", "short", 4).unwrap(), clock.now())
        .unwrap();
    let short: Vec<Pod> = (0..3).map(|i| member("short", i, 1)).collect();
    for pod in &short {
        s.add_pod(pod.clone(), clock.now()).unwrap();
    }
    s.delete_pod(&short[0], clock.now()).unwrap();
    eventually("the six solo pods are bound despite failures", || {
        binder.bindings().len() == 6
    });
    assert!(s.stats().bind_failures >= 6);
    eventually("quiescent", || s.in_binding().is_empty());
    s.check().expect("I4, I5, I6");
    assert!(short.iter().all(|p| binder.binding(p.id()).is_none()));
    running.shutdown();
}

#[test]
fn bad_input_is_refused_with_typed_errors() {
    use gangway::Clock;
    let clock = SystemClock::new();
    let s = Scheduler::new(config(Mode::Hardened));
    nodes(&s, &clock, 1, 4);
    let bound_elsewhere = Pod::new("b", "ml", "b").with_node("nowhere");
    let err = s.add_pod(bound_elsewhere, clock.now()).unwrap_err();
    assert!(matches!(err, PodEventError::Bound(_)), "{err}");
    let pod = Pod::new("p", "ml", "p");
    s.add_pod(pod.clone(), clock.now()).unwrap();
    let err = s.add_pod(pod.clone(), clock.now()).unwrap_err();
    assert!(matches!(err, PodEventError::AlreadyKnown(_)), "{err}");
    let dup = Node::new("node-0", Resources::new(CPU, GIB));
    let err = s.add_node(dup, clock.now()).unwrap_err();
    assert!(matches!(err, NodeEventError::Add(_)), "{err}");
    assert!(matches!(
        s.delete_node("nope").unwrap_err(),
        NodeEventError::Remove(_)
    ));
    let running = s.start(clock);
    running.shutdown();
    let err = s
        .add_pod(Pod::new("late", "ml", "late"), clock.now())
        .unwrap_err();
    assert_eq!(err.to_string(), "scheduler is shut down");
    assert!(matches!(
        s.add_group(PodGroup::gang("ml", "g", 2).unwrap(), Time::ZERO),
        Err(gangway::scheduler::GroupEventError::ShutDown(_))
    ));
    assert!(s.delete_pod(&Pod::new("x", "ml", "x"), Time::ZERO).is_err());
}
