//! Benchmarks of the waiting-pod map (issue #2); figures and method in `docs/benchmarks.md`.
//!
//! - `handoff/same_thread`: add one pod, allow it, `wait()` for the decision, all on one thread.
//! - `handoff/to_worker`: add + allow 1,000 pods on a map built `with_channel`; the iteration
//!   ends when a worker thread has received all 1,000 decisions (time per pod = time / 1,000).
//! - `expire/100k_none_due`: `expire(now)` on 100,000 waiting pods, none due.
//! - `expire/100k`: one `expire(now)` that times out all of 100,000 waiting pods.
//!
//! Run with `cargo bench -p gangsched --bench waiting`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use gangsched::sync::{channel, thread};
use gangsched::{Pod, Time, WaitingPod, WaitingPods};

/// The one plugin every benchmarked pod waits for.
const GANG: &str = "GangScheduling";
/// How long each pod may wait at Permit (kube-scheduler's gang default).
const WAIT: Duration = Duration::from_secs(300);
/// Pods per `handoff/to_worker` iteration.
const BATCH: usize = 1_000;
/// Waiting pods in the `expire` benchmarks.
const MANY: usize = 100_000;
/// Pod `i` of a [`many_waiting`] map is added at `i` ms, so its deadline is `300 s + i ms`:
/// every deadline is at or before `ALL_DUE` and after `NONE_DUE`.
const ALL_DUE: Time = Time::from_secs(400);
const NONE_DUE: Time = Time::from_secs(299);

/// `n` distinct pods, built once outside every timed loop.
fn pods(prefix: &str, n: usize) -> Vec<Pod> {
    (0..n)
        .map(|i| {
            Pod::new(
                format!("{prefix}-uid-{i}"),
                "bench",
                &format!("{prefix}-{i}"),
            )
        })
        .collect()
}

/// A map in which every pod of `pods` waits for [`GANG`], pod `i` added at `i` ms, and the
/// handles `add` returned (kept alive, as a Permit caller would keep them).
fn many_waiting(pods: &[Pod]) -> (WaitingPods, Vec<WaitingPod>) {
    let waiting = WaitingPods::new();
    let handles = pods
        .iter()
        .zip(0u64..)
        .map(|(pod, i)| {
            waiting
                .add(pod.clone(), [(GANG.into(), WAIT)], Time::from_millis(i))
                .expect("pod ids are distinct")
        })
        .collect();
    (waiting, handles)
}

fn handoff(c: &mut Criterion) {
    let mut group = c.benchmark_group("handoff");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));

    // One pod at a time, on one thread. Every iteration leaves the map empty (the allowed pod
    // leaves it), so cycling through 1,024 pre-built pods gives each iteration a fresh
    // registration without building a `Pod` inside the timed loop.
    let waiting = WaitingPods::new();
    let same = pods("same", 1_024);
    let mut next = same.iter().cycle();
    group.throughput(Throughput::Elements(1));
    group.bench_function("same_thread", |b| {
        b.iter(|| {
            let pod = next.next().expect("cycle never ends").clone();
            let wp = waiting
                .add(pod, [(GANG.into(), WAIT)], Time::ZERO)
                .expect("the map is empty between iterations");
            let allowed = waiting.allow(wp.id(), GANG);
            let status = wp.wait();
            assert!(allowed && status.is_success());
            black_box(status)
        })
    });
    assert!(waiting.is_empty());
    drop(waiting);

    // Decision delivery: the map hands every decision to a channel; a worker thread (a
    // binding worker, in a scheduler) takes them and acks once per batch of `BATCH`.
    let (waiting, decisions) = WaitingPods::with_channel();
    let (ack_tx, ack_rx) = channel::unbounded::<()>();
    let worker = thread::spawn("bench-binder", move || {
        let mut received = 0usize;
        while let Ok(decision) = decisions.recv() {
            assert!(decision.status.is_success());
            black_box(decision);
            received += 1;
            if received.is_multiple_of(BATCH) && ack_tx.send(()).is_err() {
                break;
            }
        }
        received
    });
    let batch = pods("worker", BATCH);
    group
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("to_worker", |b| {
        b.iter(|| {
            for pod in &batch {
                let wp = waiting
                    .add(pod.clone(), [(GANG.into(), WAIT)], Time::ZERO)
                    .expect("the map is empty between iterations");
                assert!(waiting.allow(wp.id(), GANG));
            }
            ack_rx.recv().expect("the worker is running");
        })
    });
    assert!(waiting.is_empty());
    drop(waiting); // the last sender: the worker's `recv` fails and it ends
    let received = worker.join().expect("the worker panicked");
    assert!(received.is_multiple_of(BATCH));
    group.finish();
}

fn expire(c: &mut Criterion) {
    let mut group = c.benchmark_group("expire");
    let many = pods("many", MANY);

    // Nothing is due: `expire` looks at the earliest deadline only, so this should not depend
    // on how many pods wait. The same map serves every iteration (nothing leaves it).
    let (waiting, handles) = many_waiting(&many);
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("100k_none_due", |b| {
        b.iter(|| {
            let decided = waiting.expire(black_box(NONE_DUE));
            assert!(decided.is_empty());
            decided
        })
    });
    assert_eq!(waiting.len(), MANY);
    drop((waiting, handles));

    // Everything is due: one call times out all 100,000 pods. Only the `expire` call is timed;
    // building the map and dropping it, its handles and the decisions are not.
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6))
        .throughput(Throughput::Elements(MANY as u64));
    group.bench_function("100k", |b| {
        b.iter_batched(
            || many_waiting(&many),
            |(waiting, handles)| {
                let decided = waiting.expire(black_box(ALL_DUE));
                assert_eq!(decided.len(), MANY);
                (decided, waiting, handles)
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, handoff, expire);
criterion_main!(benches);
