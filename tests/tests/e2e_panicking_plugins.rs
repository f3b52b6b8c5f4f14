//! User code that panics — a Binder, a Placement — is caught at its call: the bind or the
//! placement fails with an error, the reservation is released, the pod goes back to the
//! error backoff and is retried, the panic is counted and reported as the pod's outcome, and
//! the thread that called it (a binding worker, the scheduling loop, the embedder's own) lives
//! on. Nothing leaks: `check()` holds and every thread returns at shutdown.
#![cfg(not(loom))]

use std::time::{Duration, Instant};

use gangsched::queue::QueueConfig;
use gangsched::scheduler::{
    outcome_channel, BindError, Binder, CacheState, InMemoryBinder, Node, Placement, PodOutcome,
    ResourceFit, RunningScheduler, SchedulerBuilder,
};
use gangsched::sync::atomic::{AtomicU64, Ordering};
use gangsched::waiting::Receiver;
use gangsched::{Clock, Code, Mode, Pod, PodGroup, Resources, Scheduler, SchedulerConfig};
use gangsched::{Status, SystemClock, Time};

const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;

fn config(mode: Mode) -> SchedulerConfig {
    let queue = QueueConfig::DEFAULT
        .with_initial_backoff(Duration::from_millis(5))
        .with_max_backoff(Duration::from_millis(20));
    SchedulerConfig::default()
        .with_mode(mode)
        .with_queue(queue)
        .with_permit_timeout(Duration::from_secs(5))
        .with_backoff_flush_interval(Duration::from_millis(5))
        // One worker: if a panic killed it, nothing would bind after.
        .with_workers(1)
}

/// Panics on its first `times` binds, then binds as the in-memory binder does.
struct PanickingBinder {
    left: AtomicU64,
    inner: InMemoryBinder,
}

impl Binder for PanickingBinder {
    fn bind(&self, pod: &Pod, node: &str) -> Result<(), BindError> {
        let left = self.left.load(Ordering::SeqCst);
        if left > 0 {
            self.left.store(left - 1, Ordering::SeqCst);
            panic!("binder bug on {}", pod.name());
        }
        self.inner.bind(pod, node)
    }
}

/// Panics on its first `times` placements, then places as [`ResourceFit`].
struct PanickingPlacement {
    left: AtomicU64,
}

impl Placement for PanickingPlacement {
    fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status> {
        let left = self.left.load(Ordering::SeqCst);
        if left > 0 {
            self.left.store(left - 1, Ordering::SeqCst);
            panic!("placement bug on {}", pod.name());
        }
        ResourceFit.place(pod, cache)
    }
}

/// Collects outcomes until `done` says it has what it waits for (up to 10 s).
fn collect_until(
    received: &Receiver<PodOutcome>,
    mut done: impl FnMut(&[PodOutcome]) -> bool,
) -> Vec<PodOutcome> {
    let start = Instant::now();
    let mut outcomes = Vec::new();
    while !done(&outcomes) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out; outcomes so far: {outcomes:?}"
        );
        outcomes.extend(std::iter::from_fn(|| received.try_recv()));
        std::thread::sleep(Duration::from_millis(2));
    }
    outcomes
}

fn bound(outcomes: &[PodOutcome]) -> usize {
    outcomes
        .iter()
        .filter(|o| matches!(o, PodOutcome::Bound { .. }))
        .count()
}

fn gang(s: &Scheduler, now: Time) {
    s.add_group(PodGroup::gang("ml", "g", 4).unwrap(), now)
        .unwrap();
    for i in 0..4 {
        let pod = Pod::new(format!("g-{i}"), "ml", &format!("g-{i}"))
            .with_group("g")
            .with_requests(Resources::new(CPU, GIB));
        s.add_pod(pod, now).unwrap();
    }
}

/// Builds the scheduler with an outcome channel, starts it on one node, adds a gang of four
/// and collects outcomes until all four are bound.
fn gang_until_bound(
    builder: SchedulerBuilder,
    clock: &SystemClock,
) -> (Scheduler, Vec<PodOutcome>, RunningScheduler) {
    let (outcomes, received) = outcome_channel();
    let s = builder.outcomes(outcomes).build();
    s.add_node(
        Node::new("n", Resources::new(8 * CPU, 64 * GIB)),
        clock.now(),
    )
    .unwrap();
    let running = s.start(*clock);
    gang(&s, clock.now());
    let seen = collect_until(&received, |o| bound(o) == 4);
    (s, seen, running)
}

#[test]
fn a_panicking_binder_fails_the_bind_and_the_worker_lives_on() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let clock = SystemClock::new();
        let bindings = InMemoryBinder::new();
        let binder = PanickingBinder {
            left: AtomicU64::new(2),
            inner: bindings.clone(),
        };
        let builder = Scheduler::builder(config(mode)).binder(binder);
        let (s, seen, running) = gang_until_bound(builder, &clock);
        let panicked: Vec<_> = seen
            .iter()
            .filter_map(|o| match o {
                PodOutcome::BindFailed {
                    error: BindError::Panicked(message),
                    ..
                } => Some(message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(panicked.len(), 2, "{mode:?}: {seen:?}");
        assert!(panicked[0].starts_with("binder bug on g-"), "{panicked:?}");
        assert_eq!(
            bindings.bindings().len(),
            4,
            "every member bound in the end"
        );
        let stats = s.stats();
        assert_eq!((stats.plugin_panics, stats.bind_failures), (2, 2));
        s.check().unwrap();
        assert!(s.leaked_reservations().is_empty());
        running.shutdown();
        s.check().unwrap();
    }
}

#[test]
fn a_panicking_placement_is_an_error_and_the_scheduling_loop_lives_on() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let clock = SystemClock::new();
        let builder = Scheduler::builder(config(mode)).placement(PanickingPlacement {
            left: AtomicU64::new(1),
        });
        let (s, seen, running) = gang_until_bound(builder, &clock);
        let errors: Vec<&Status> = seen
            .iter()
            .filter_map(|o| match o {
                PodOutcome::Unschedulable { status, .. } => Some(status),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 1, "{mode:?}: {seen:?}");
        assert_eq!(errors[0].code(), Code::Error);
        assert_eq!(errors[0].plugin().map(|p| p.as_str()), Some("Placement"));
        assert!(errors[0]
            .message()
            .starts_with("placement panicked: placement bug on g-"));
        let stats = s.stats();
        assert_eq!((stats.plugin_panics, stats.placement_errors), (1, 1));
        assert_eq!(stats.unschedulable, 0, "an error is not a verdict");
        running.shutdown();
        s.check().unwrap();
    }
}

#[test]
fn a_panicking_binder_driven_by_hand_leaves_the_callers_thread_alive() {
    let bindings = InMemoryBinder::new();
    let binder = PanickingBinder {
        left: AtomicU64::new(1),
        inner: bindings.clone(),
    };
    let (outcomes, received) = outcome_channel();
    let s = Scheduler::builder(config(Mode::Hardened))
        .binder(binder)
        .outcomes(outcomes)
        .build();
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(8 * CPU, 64 * GIB)), now)
        .unwrap();
    s.add_pod(
        Pod::new("a", "ml", "a").with_requests(Resources::new(CPU, GIB)),
        now,
    )
    .unwrap();
    s.schedule_one(now).unwrap();
    assert_eq!(s.run_binding_cycles(now), 1);
    assert!(matches!(
        received.try_recv(),
        Some(PodOutcome::BindFailed {
            error: BindError::Panicked(_),
            ..
        })
    ));
    // Released: the node is empty and the pod waits out its error backoff.
    assert!(s.cache().with(|c| c.node("n").unwrap().pod_count()) == 0);
    s.check().unwrap();
    let later = now + Duration::from_secs(1);
    s.tick(later);
    s.schedule_one(later).unwrap();
    s.run_binding_cycles(later);
    assert!(matches!(
        received.try_recv(),
        Some(PodOutcome::Bound { .. })
    ));
    assert_eq!(bindings.bindings().len(), 1);
}
