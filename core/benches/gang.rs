//! Benchmarks of the gang plugin's Permit at quorum (issue #3); figures and method in
//! `docs/benchmarks.md`.
//!
//! - `permit_at_quorum/{upstream,hardened}/{8,10000}`: a gang of N whose N−1 first members are
//!   reserved and waiting at Permit (set up, not timed); the timed part is Reserve + Permit of
//!   the last member, which reaches quorum and allows its N−1 waiting siblings. Throughput is
//!   N elements per iteration: the members the gang lets through.
//!
//! Run with `cargo bench -p gangsched --bench gang`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use gangsched::{GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPod, WaitingPods};

const NS: &str = "bench";
const GROUP: &str = "gang";
/// A small gang (one node's worth of GPUs) and a very large one.
const SMALL: usize = 8;
const LARGE: usize = 10_000;
const MODES: [(Mode, &str); 2] = [(Mode::Upstream, "upstream"), (Mode::Hardened, "hardened")];

/// The `n` members of the gang, built once per size, outside every timed loop.
fn members(n: usize) -> Vec<Pod> {
    (0..n)
        .map(|i| Pod::new(format!("uid-{i}"), NS, &format!("worker-{i}")).with_group(GROUP))
        .collect()
}

/// A fresh plugin and waiting map in `mode`, the gang of `pods.len()` with all of its members
/// added, and every member but the last reserved and waiting at Permit. Returns the plugin and
/// the waiting members' handles (kept alive, as their scheduling cycles would keep them).
///
/// All N−1 are reserved before any is permitted: the state reached is the same as with
/// Reserve + Permit one member at a time, but each `Wait` hands back the list of unscheduled
/// siblings to activate, which one member at a time makes the setup O(N²).
fn one_short(mode: Mode, pods: &[Pod]) -> (GangScheduling, Vec<WaitingPod>) {
    let gang = GangScheduling::new(mode, WaitingPods::new());
    let min_count = u32::try_from(pods.len()).expect("gang size fits u32");
    gang.on_group_added(PodGroup::gang(NS, GROUP, min_count).expect("valid group"))
        .expect("new group");
    for pod in pods {
        gang.on_pod_added(pod.clone(), false).expect("new member");
    }
    let (_, waiting) = pods.split_last().expect("a gang has members");
    for pod in waiting {
        gang.reserve(pod).expect("unscheduled member");
    }
    let handles = waiting
        .iter()
        .map(|pod| match gang.permit(pod, Time::ZERO) {
            Permit::Wait { waiting, .. } => waiting,
            other => panic!("below quorum a member waits, got {other:?}"),
        })
        .collect();
    (gang, handles)
}

/// The timed part: Reserve + Permit of the last member, which allows every waiting sibling.
fn last_member_arrives(gang: &GangScheduling, last: &Pod) -> Permit {
    gang.reserve(last).expect("unscheduled member");
    let permit = gang.permit(black_box(last), Time::ZERO);
    assert!(matches!(permit, Permit::Allow));
    permit
}

fn permit_at_quorum(c: &mut Criterion) {
    let mut group = c.benchmark_group("permit_at_quorum");
    for n in [SMALL, LARGE] {
        let pods = members(n);
        let last = pods.last().expect("a gang has members");
        if n == LARGE {
            group
                .sample_size(10)
                .sampling_mode(SamplingMode::Flat)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(4));
        } else {
            group
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
        }
        group.throughput(Throughput::Elements(n as u64));
        for (mode, name) in MODES {
            // Once, untimed: quorum really allows all N−1 waiting siblings.
            let (gang, handles) = one_short(mode, &pods);
            last_member_arrives(&gang, last);
            assert!(gang.waiting().is_empty(), "{name}/{n}: nobody left waiting");
            assert!(handles
                .iter()
                .all(|h| h.decision().is_some_and(|s| s.is_success())));
            drop((gang, handles));

            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter_batched(
                    || one_short(mode, &pods),
                    |(gang, handles)| {
                        let permit = last_member_arrives(&gang, last);
                        assert!(gang.waiting().is_empty());
                        // Dropped after the timing stops: the plugin, its maps, the handles.
                        (permit, gang, handles)
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, permit_at_quorum);
criterion_main!(benches);
