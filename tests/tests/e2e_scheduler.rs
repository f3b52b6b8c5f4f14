//! The scheduler driver end to end, on real threads and the system clock with short timeouts:
//! gangs that fit bind whole, a gang that cannot fit times out and releases everything, bind
//! failures and deletes are survived, the timer flushes the backoff and the leftover pods when
//! each flush falls due, and at quiescence I4, I5 and I6 hold and every thread returns. Bad input (unknown node, duplicates, events after shutdown) is refused with typed
//! errors.
#![cfg(not(loom))]

use std::time::{Duration, Instant};

use gangsched::queue::QueueConfig;
use gangsched::scheduler::{
    AddGroupError, AddNodeError, AddPodError, DeleteGroupError, DeletePodError, InMemoryBinder,
    Node, RemoveNodeError, ResourceFit, RunningScheduler, Scheduler, SchedulerConfig,
    UpdateGroupError, UpdateNodeError, UpdatePodError,
};
use gangsched::sync::Arc;
use gangsched::sync::Mutex;
use gangsched::PodGroup;
use gangsched::{Mode, Pod, Resources, SystemClock, Time};

const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;

fn config(mode: Mode) -> SchedulerConfig {
    // 1.36's rules with millisecond backoffs, compared exactly: a 1 s ordering window would
    // round every one of them up to a second.
    let queue = QueueConfig::DEFAULT
        .with_ordering_window(None)
        .with_initial_backoff(Duration::from_millis(5))
        .with_max_backoff(Duration::from_millis(20))
        .with_max_in_unschedulable(Duration::from_millis(200));
    SchedulerConfig::default()
        .with_mode(mode)
        .with_queue(queue)
        .with_permit_timeout(Duration::from_millis(300))
        .with_backoff_flush_interval(Duration::from_millis(5))
        .with_leftover_flush_interval(Duration::from_millis(50))
        .with_workers(2)
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
    use gangsched::Clock;
    for i in 0..n {
        let node = Node::new(&format!("node-{i}"), Resources::new(cpus * CPU, 64 * GIB));
        s.add_node(node, clock.now()).unwrap();
    }
}

#[test]
fn gangs_that_fit_bind_whole_and_the_scheduler_shuts_down_cleanly() {
    use gangsched::Clock;
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
    use gangsched::{Clock, ManualClock};
    // A manual clock: after the timeout nothing moves until the test says so, so "everything
    // is released" is a state the scheduler reaches and stays in, not a moment to catch
    // between two retries.
    let clock = ManualClock::new(Time::ZERO);
    let binder = InMemoryBinder::default();
    // Only the active queue pops: with 1.36's pop from backoff the idle loop would take the
    // gang straight back out of its backoff, so the released state would be a moment.
    let hardened = config(Mode::Hardened);
    let queue = hardened.queue.with_pop_from_backoff(false);
    let s = Scheduler::with(hardened.with_queue(queue), ResourceFit, binder.clone());
    // Room for three members of 2 cpu each; the gang needs four, and the fourth asks for more
    // than the node has: it never fits, so nothing reopens the attempt after the timeout.
    let node = Node::new("node-0", Resources::new(7 * CPU, 64 * GIB));
    s.add_node(node, clock.now()).unwrap();
    let running = s.start(clock.clone());
    s.add_group(PodGroup::gang("ml", "big", 4).unwrap(), clock.now())
        .unwrap();
    for i in 0..3 {
        s.add_pod(member("big", i, 2), clock.now()).unwrap();
    }
    s.add_pod(member("big", 3, 8), clock.now()).unwrap();
    eventually("three members wait at Permit", || s.waiting().len() == 3);
    assert_eq!(s.cache().with(|c| c.assumed_count()), 3);
    clock.advance(s.config().permit_timeout);
    eventually(
        "the attempt times out and every reservation is released",
        || {
            s.stats().permit_timeouts == 3
                && s.in_binding().is_empty()
                && s.cache().with(|c| c.assumed_count()) == 0
        },
    );
    assert!(
        binder.bindings().is_empty(),
        "no member of a partial gang binds (I3)"
    );
    s.check().expect("I6: every reservation released");
    assert!(s.waiting().is_empty());
    running.shutdown();
}

/// A scheduler on a manual clock with a pod parked for room on a node too small for it;
/// only the active queue pops (with 1.36's pop from backoff the idle loop would take a pod out
/// of its backoff before any flush).
fn a_pod_parked_for_room(
    clock: &gangsched::ManualClock,
) -> (Scheduler, InMemoryBinder, RunningScheduler) {
    use gangsched::Clock;
    let binder = InMemoryBinder::default();
    let hardened = config(Mode::Hardened);
    let queue = hardened.queue.with_pop_from_backoff(false);
    let s = Scheduler::with(hardened.with_queue(queue), ResourceFit, binder.clone());
    let small = Node::new("small", Resources::new(CPU, 64 * GIB));
    s.add_node(small, clock.now()).unwrap();
    let running = s.start(clock.clone());
    let big = Pod::new("big", "ml", "big").with_requests(Resources::new(2 * CPU, GIB));
    s.add_pod(big, clock.now()).unwrap();
    eventually("the pod is parked for room", || {
        s.stats().unschedulable == 1
    });
    (s, binder, running)
}

/// The timer thread's leftover flush, on a manual clock: a pod parked for room that never
/// comes is tried again once it has waited past `max_in_unschedulable`, at each flush after
/// that, however far one step of the clock jumps past a flush's due time. (Found missing by
/// mutation testing, issue #43: the timer's `<=` turned `>` flushed before the due time and
/// never after it.)
#[test]
fn the_timer_flushes_the_leftover_pods_when_the_flush_falls_due() {
    let clock = gangsched::ManualClock::new(Time::ZERO);
    let (s, _, running) = a_pod_parked_for_room(&clock);
    // Past the pod's 200 ms in the pool and the first flush's due time, in one step.
    clock.advance(Duration::from_secs(1));
    eventually("the leftover flush tries it again", || {
        s.stats().unschedulable == 2
    });
    clock.advance(Duration::from_secs(1));
    eventually("and again at a later flush", || {
        s.stats().unschedulable == 3
    });
    running.shutdown();
}

/// The timer thread's backoff flush, likewise: a pod the room it waited for came back to,
/// put in backoff, is moved to the active queue once its backoff is over, by the first flush
/// after it, however far one step of the clock jumps (only the active queue pops, so nothing
/// else takes it out of its backoff).
#[test]
fn the_timer_flushes_the_backoff_when_the_flush_falls_due() {
    use gangsched::Clock;
    let clock = gangsched::ManualClock::new(Time::ZERO);
    let (s, binder, running) = a_pod_parked_for_room(&clock);
    // Room, announced while the pod's 5 ms backoff has not begun to run out: it backs off.
    let large = Node::new("large", Resources::new(4 * CPU, 64 * GIB));
    s.add_node(large, clock.now()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(binder.bindings().is_empty(), "still backing off");
    clock.advance(Duration::from_secs(1));
    eventually("the backoff flush lets it bind", || {
        binder.bindings().len() == 1
    });
    running.shutdown();
}

#[test]
fn bind_failures_and_deletes_are_survived() {
    use gangsched::Clock;
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
fn bad_input_is_refused_with_typed_errors_that_hand_back_what_was_given() {
    use gangsched::Clock;
    let clock = SystemClock::new();
    let s = Scheduler::new(config(Mode::Hardened));
    nodes(&s, &clock, 1, 4);
    let bound_elsewhere = Pod::new("b", "ml", "b").with_node("nowhere");
    let err = s.add_pod(bound_elsewhere.clone(), clock.now()).unwrap_err();
    assert!(matches!(err, AddPodError::UnknownNode { .. }), "{err}");
    assert_eq!(err.to_string(), "pod b is bound to unknown node nowhere");
    assert_eq!(
        err.into_pod(),
        bound_elsewhere,
        "the bound pod is handed back"
    );
    let pod = Pod::new("p", "ml", "p");
    s.add_pod(pod.clone(), clock.now()).unwrap();
    let err = s.add_pod(pod.clone(), clock.now()).unwrap_err();
    assert!(matches!(err, AddPodError::AlreadyKnown(_)), "{err}");
    assert_eq!(err.into_pod(), pod);
    let moved = pod.clone().with_node("nowhere");
    let err = s
        .update_pod(pod.clone(), moved.clone(), clock.now())
        .unwrap_err();
    assert!(matches!(err, UpdatePodError::UnknownNode { .. }), "{err}");
    assert_eq!(err.into_pod(), moved);
    let dup = Node::new("node-0", Resources::new(CPU, GIB));
    let err = s.add_node(dup.clone(), clock.now()).unwrap_err();
    assert!(matches!(err, AddNodeError::Duplicate(_)), "{err}");
    assert_eq!(err.into_node(), dup);
    assert!(matches!(
        s.delete_node("nope", clock.now()).unwrap_err(),
        RemoveNodeError::UnknownNode(_)
    ));
    let stranger = Node::new("nope", Resources::new(CPU, GIB));
    let err = s.update_node(stranger.clone(), clock.now()).unwrap_err();
    assert!(matches!(err, UpdateNodeError::UnknownNode(ref n) if *n == stranger));
    let twice = PodGroup::gang("ml", "g", 1).unwrap();
    s.add_group(twice.clone(), clock.now()).unwrap();
    let err = s.add_group(twice.clone(), clock.now()).unwrap_err();
    assert_eq!(err.into_group(), twice);
    let missing = PodGroup::gang("ml", "h", 1).unwrap();
    let err = s.update_group(missing.clone(), clock.now()).unwrap_err();
    assert_eq!(err.into_group(), missing);
    s.check().expect("nothing changed");

    let running = s.start(clock);
    running.shutdown();
    let late = Pod::new("late", "ml", "late");
    let err = s.add_pod(late.clone(), clock.now()).unwrap_err();
    assert_eq!(err.to_string(), "scheduler is shut down");
    assert_eq!(err.into_pod(), late);
    let group = PodGroup::gang("ml", "k", 2).unwrap();
    let err = s.add_group(group.clone(), Time::ZERO).unwrap_err();
    assert!(matches!(err, AddGroupError::ShutDown(_)));
    assert_eq!(err.into_group(), group);
    assert!(matches!(
        s.update_group(twice.clone(), Time::ZERO),
        Err(UpdateGroupError::ShutDown(_))
    ));
    assert!(matches!(
        s.delete_group(twice.key()),
        Err(DeleteGroupError::ShutDown(key)) if &key == twice.key()
    ));
    assert_eq!(
        s.delete_pod(&Pod::new("x", "ml", "x"), Time::ZERO),
        Err(DeletePodError::ShutDown)
    );
    assert!(matches!(
        s.add_node(Node::new("n", Resources::new(CPU, GIB)), Time::ZERO),
        Err(AddNodeError::ShutDown(_))
    ));
    // Every event is refused once shut down (docs/verification.md lists each error branch
    // of the steps with the test that reaches it).
    let moved = late.clone().with_node("node-0");
    assert!(matches!(
        s.update_pod(late, moved, Time::ZERO),
        Err(UpdatePodError::ShutDown(_))
    ));
    let node = Node::new("node-0", Resources::new(CPU, GIB));
    assert!(matches!(
        s.update_node(node, Time::ZERO),
        Err(UpdateNodeError::ShutDown(_))
    ));
    assert!(matches!(
        s.delete_node("node-0", Time::ZERO),
        Err(RemoveNodeError::ShutDown(name)) if name == "node-0"
    ));
}
