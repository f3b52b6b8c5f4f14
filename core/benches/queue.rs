//! Benchmarks of the scheduling queue (issue #4); figures and method in `docs/benchmarks.md`.
//!
//! - `move_all/100k`: 100,000 pods in the unschedulable pool, each handed back rejected by a
//!   plugin whose hint for the event says `Queue`; the timed part is ONE
//!   `move_all_to_active_or_backoff` that moves all of them (to backoff: the event comes half a
//!   second after their failure, inside their 1 s backoff). The pool is built once and cloned
//!   for every iteration (setup, not timed).
//! - `move_all/100k_skip`: the same pool, but the hint says `QueueSkip` for every pod: every
//!   hint is asked and nothing moves, so the same queue serves every iteration.
//! - `pop_add/{state,queue}_10k`: 10,000 pods active (steady state); one iteration pops the
//!   first pod, ends its attempt (`done`) and adds it again at a later time, so the queue
//!   stays at 10,000. `state` is the pure `QueueState`; `queue` the `SchedulingQueue` (one lock
//!   per call, `try_pop`).
//!
//! Run with `cargo bench -p gangsched --bench queue`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use gangsched::queue::{EventKind, PluginSet, QueuePlace, QueueState};
use gangsched::sync::Arc;
use gangsched::{ClusterEvent, Pod, QueueConfig, QueueingHint, SchedulingQueue, Time};

const NS: &str = "bench";
/// The plugin that rejects every pod in `move_all`.
const FIT: &str = "NodeResourcesFit";
const POOL: usize = 100_000;
const ACTIVE: usize = 10_000;

/// A hint for `AssignedPodDelete` from [`FIT`] that always says `hint`.
fn plugins(hint: QueueingHint) -> PluginSet {
    PluginSet::new().with_hint(FIT, EventKind::AssignedPodDelete, move |_, _| Ok(hint))
}

fn pods(n: usize) -> Vec<Pod> {
    (0..n)
        .map(|i| Pod::new(format!("uid-{i}"), NS, &format!("worker-{i}")))
        .collect()
}

/// The event that frees resources (a bound pod deleted).
fn freed() -> ClusterEvent {
    ClusterEvent::AssignedPodDelete(Pod::new("gone", NS, "gone"))
}

/// `pods` added, popped and handed back rejected by [`FIT`], all at `Time::ZERO`: with no
/// event during their attempts they all park in the unschedulable pool.
fn unschedulable_pool(pods: &[Pod], plugins: &PluginSet) -> QueueState {
    let mut q = QueueState::new(QueueConfig::default());
    for pod in pods {
        q.add(pod.clone(), Time::ZERO, plugins).expect("new pod");
    }
    while let Some(popped) = q.pop() {
        let place = q
            .add_unschedulable_if_not_present(popped.info.rejected_by(FIT), Time::ZERO, plugins)
            .expect("in flight");
        assert_eq!(place, Some(QueuePlace::Unschedulable));
    }
    assert_eq!(q.lengths().unschedulable, pods.len());
    q
}

fn move_all(c: &mut Criterion) {
    let all = pods(POOL);
    let queue = plugins(QueueingHint::Queue);
    let skip = plugins(QueueingHint::QueueSkip);
    let pool = unschedulable_pool(&all, &queue);
    let now = Time::from_millis(500);

    // Once, untimed: the event really moves every pod to backoff (expiry 1 s).
    let mut check = pool.clone();
    assert_eq!(
        check.move_all_to_active_or_backoff(freed(), None, now, &queue),
        POOL
    );
    let lengths = check.lengths();
    assert_eq!((lengths.backoff, lengths.unschedulable), (POOL, 0));
    check.check().expect("I4");
    drop(check);

    let mut group = c.benchmark_group("move_all");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(POOL as u64));
    group.bench_function(BenchmarkId::from_parameter("100k"), |b| {
        b.iter_batched(
            || pool.clone(),
            |mut q| {
                let moved = q.move_all_to_active_or_backoff(freed(), None, black_box(now), &queue);
                assert_eq!(moved, POOL);
                // Dropped after the timing stops.
                q
            },
            BatchSize::PerIteration,
        )
    });

    // The same pool as seen by a plugin whose hint skips: nothing moves, so one queue serves
    // every iteration (no pod is in flight, so no event is recorded either).
    let mut unmoved = pool.clone();
    assert_eq!(
        unmoved.move_all_to_active_or_backoff(freed(), None, now, &skip),
        0
    );
    assert_eq!(unmoved, pool, "a skipped event changes nothing");
    group.bench_function(BenchmarkId::from_parameter("100k_skip"), |b| {
        b.iter(|| {
            let moved = unmoved.move_all_to_active_or_backoff(freed(), None, black_box(now), &skip);
            assert_eq!(moved, 0);
        })
    });
    group.finish();
}

fn pop_add(c: &mut Criterion) {
    let plugins = plugins(QueueingHint::Queue);
    let mut group = c.benchmark_group("pop_add");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));

    // The pure state.
    let mut state = QueueState::new(QueueConfig::default());
    for (i, pod) in pods(ACTIVE).into_iter().enumerate() {
        state
            .add(pod, Time::from_nanos(i as u64), &plugins)
            .expect("new pod");
    }
    let mut now = ACTIVE as u64;
    group.bench_function(BenchmarkId::from_parameter("state_10k"), |b| {
        b.iter(|| {
            let popped = state.pop().expect("10k active");
            let id = popped.info.id().clone();
            assert!(state.done(&id));
            now += 1;
            let pod = popped.info.pod().clone();
            assert!(state
                .add(pod, Time::from_nanos(now), &plugins)
                .expect("done, so not queued"));
            black_box(&state);
        })
    });
    assert_eq!(state.active_len(), ACTIVE);
    state.check().expect("I4");

    // The same behind the lock.
    let queue = SchedulingQueue::new(QueueConfig::default(), Arc::new(plugins.clone()));
    for (i, pod) in pods(ACTIVE).into_iter().enumerate() {
        queue.add(pod, Time::from_nanos(i as u64)).expect("new pod");
    }
    let mut now = ACTIVE as u64;
    group.bench_function(BenchmarkId::from_parameter("queue_10k"), |b| {
        b.iter(|| {
            let popped = queue.try_pop().expect("10k active");
            let id = popped.info.id().clone();
            assert!(queue.done(&id));
            now += 1;
            let pod = popped.info.pod().clone();
            assert!(queue
                .add(pod, Time::from_nanos(now))
                .expect("done, so not queued"));
        })
    });
    assert_eq!(queue.lengths().active, ACTIVE);
    group.finish();
}

criterion_group!(benches, move_all, pop_add);
criterion_main!(benches);
