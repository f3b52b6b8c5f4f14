#![cfg(not(loom))]
//! Property tests, "arbitrary gang arrivals": the real `GangScheduling` plugin run in lockstep
//! with the reference model [`gangway_model::gang::GangModel`] in both modes, by the harness
//! [`gangway_model::gang::lockstep`] (what a case is, what is compared after every step, and the
//! settling with I6 at the end are described there). This file holds the strategies, the
//! property tests and the named regressions.
//!
//! - `hardened_matches_model_and_keeps_gang_atomicity`, `upstream_matches_model`: a pod
//!   rejected at Permit is unreserved by its scheduling cycle at once (kube-scheduler).
//! - `hardened_keeps_gang_atomicity_with_permit_rejections_unreserved_late`,
//!   `upstream_matches_model_with_permit_rejections_unreserved_late`: the unreserve of a pod
//!   rejected at Permit is postponed to a later operation or the settling, like a wait's
//!   rejection. Hardened Permit releases a pod it rejects at once (P7), so I3 still holds;
//!   `regression_permit_rejection_lent_to_quorum` replays the case that found it.
//! - `regression_bound_elsewhere_ends_the_attempt`: an attempt left with nobody waiting is
//!   over (A4).
//!
//! Upstream does not keep I3 even sequentially: `upstream_breaks_gang_atomicity` runs the same
//! check on `Mode::Upstream` and expects it to find a partial gang (the witness), and
//! `upstream_partial_gang_after_a_rejection` replays the shrunk counterexamples.
//!
//! The case count comes from `PROPTEST_CASES` (default 256).

use std::time::Duration;

use gangsched::gang::DEFAULT_PERMIT_TIMEOUT;

use gangsched::Mode;
use gangsched::{GroupKey, Policy};
use gangway_model::gang::lockstep::{run_case, run_ops, Lockstep, Op, Phase, GROUPS, MAX_PODS, NS};
use proptest::prelude::*;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        1 => Just(Policy::Basic),
        1 => Just(Policy::Gang { min_count: 1 }),
        3 => Just(Policy::Gang { min_count: 2 }),
        3 => Just(Policy::Gang { min_count: 3 }),
        1 => Just(Policy::Gang { min_count: 4 }),
    ]
}

fn duration() -> impl Strategy<Value = Duration> {
    prop::sample::select(vec![
        Duration::from_nanos(1),
        Duration::from_secs(1),
        Duration::from_secs(150),
        DEFAULT_PERMIT_TIMEOUT - Duration::from_nanos(1),
        DEFAULT_PERMIT_TIMEOUT,
    ])
}

fn op() -> impl Strategy<Value = Op> {
    let pod = 0..MAX_PODS;
    let group = 0..GROUPS.len();
    let pick = 0..MAX_PODS;
    prop_oneof![
        5 => (pod.clone(), prop::bool::weighted(0.1))
            .prop_map(|(pod, bound)| Op::AddPod { pod, bound }),
        3 => (group.clone(), policy()).prop_map(|(group, policy)| Op::AddGroup { group, policy }),
        1 => (group.clone(), policy())
            .prop_map(|(group, policy)| Op::UpdateGroup { group, policy }),
        1 => group.prop_map(|group| Op::DeleteGroup { group }),
        8 => pick.clone().prop_map(|pick| Op::Schedule { pick }),
        2 => pick.clone().prop_map(|pick| Op::Reserve { pick }),
        2 => Just(Op::Permit),
        1 => Just(Op::AbortCycle),
        1 => duration().prop_map(Op::Tick),
        2 => duration().prop_map(Op::Expire),
        3 => pick.clone().prop_map(|pick| Op::Unreserve { pick }),
        3 => pick.clone().prop_map(|pick| Op::Bind { pick }),
        1 => pick.clone().prop_map(|pick| Op::Preempt { pick }),
        1 => pick.prop_map(|pick| Op::BindElsewhere { pick }),
        1 => pod.prop_map(|pod| Op::Delete { pod }),
    ]
}

/// A case: how many groups, which group each pod names, and the operations.
fn case() -> impl Strategy<Value = (usize, Vec<usize>, Vec<Op>)> {
    (
        2usize..=3,
        prop::collection::vec(0..GROUPS.len(), 3..=MAX_PODS),
        prop::collection::vec(op(), 1..120),
    )
}

/// A case with the unreserve of pods rejected at Permit postponed.
fn run_deferring(
    mode: Mode,
    check_i3: bool,
    groups: usize,
    pod_groups: &[usize],
    ops: &[Op],
) -> Result<(), String> {
    let lockstep = Lockstep::new(mode, groups, pod_groups, check_i3).deferring_permit_rejections();
    run_ops(lockstep, ops)
}

fn config() -> ProptestConfig {
    // Only where failures are saved: `SourceParallel` cannot place files for an integration
    // test (no lib.rs beside it); the cwd of an integration test is the package root, tests/.
    // The case count stays with `PROPTEST_CASES`.
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/prop_gang.txt",
        ))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Hardened: lockstep with the model, I5 and I3 after every step, I6 at the end.
    #[test]
    fn hardened_matches_model_and_keeps_gang_atomicity((groups, pod_groups, ops) in case()) {
        run_case(Mode::Hardened, true, groups, &pod_groups, &ops).map_err(TestCaseError::fail)?;
    }

    /// Upstream: lockstep with the model, I5 after every step, I6 at the end — what upstream
    /// guarantees. (Not I3: see `upstream_breaks_gang_atomicity`.)
    #[test]
    fn upstream_matches_model((groups, pod_groups, ops) in case()) {
        run_case(Mode::Upstream, false, groups, &pod_groups, &ops).map_err(TestCaseError::fail)?;
    }

    /// Hardened, with the unreserve of a pod rejected at Permit postponed to a later
    /// `Unreserve` or the settling: the same checks, I3 included. Before P7 this found
    /// `regression_permit_rejection_lent_to_quorum`.
    #[test]
    fn hardened_keeps_gang_atomicity_with_permit_rejections_unreserved_late(
        (groups, pod_groups, ops) in case()
    ) {
        run_deferring(Mode::Hardened, true, groups, &pod_groups, &ops)
            .map_err(TestCaseError::fail)?;
    }

    /// Upstream, with the unreserve of a pod rejected at Permit postponed: the model agrees
    /// (the pod stays assumed until then), I5 and I6 hold.
    #[test]
    fn upstream_matches_model_with_permit_rejections_unreserved_late(
        (groups, pod_groups, ops) in case()
    ) {
        run_deferring(Mode::Upstream, false, groups, &pod_groups, &ops)
            .map_err(TestCaseError::fail)?;
    }
}

/// The witness for I3: the same check on `Mode::Upstream` finds a partial gang without any
/// concurrency — a waiting member times out, and before its binding cycle unreserves it the
/// last member reaches Permit, counts it towards the quorum and passes alone. Deterministic
/// seed, no failure persistence (the failure is the expected outcome).
#[test]
fn upstream_breaks_gang_atomicity() {
    let config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let result = runner.run(&case(), |(groups, pod_groups, ops)| {
        run_case(Mode::Upstream, true, groups, &pod_groups, &ops).map_err(TestCaseError::fail)
    });
    match result {
        Err(TestError::Fail(reason, (_, _, ops))) => {
            assert!(
                reason.message().contains("I3:"),
                "expected a gang atomicity violation, got: {reason}"
            );
            assert!(ops.len() <= 12, "shrinks to a short sequence: {ops:?}");
        }
        other => panic!("upstream kept I3 over every case: {other:?}"),
    }
}

/// The shrunk counterexamples of `upstream_breaks_gang_atomicity`, replayed: in a gang of two,
/// `p0` waits and is rejected — by its timeout, or by preemption — and `p1` reaches Permit
/// before `p0`'s binding cycle has unreserved it. Upstream counts `p0` (still assumed) towards
/// the quorum, "allows" it (a no-op, it is decided) and lets `p1` pass alone. Hardened rejects
/// `p1`: the attempt failed (timeout), or one of its members stopped waiting (preemption).
#[test]
fn upstream_partial_gang_after_a_rejection() {
    let gang_of_two = [
        Op::AddGroup {
            group: 0,
            policy: Policy::Gang { min_count: 2 },
        },
        Op::AddPod {
            pod: 0,
            bound: false,
        },
        Op::AddPod {
            pod: 1,
            bound: false,
        },
        Op::Schedule { pick: 0 },
    ];
    for rejection in [Op::Expire(DEFAULT_PERMIT_TIMEOUT), Op::Preempt { pick: 0 }] {
        let mut ops = gang_of_two.to_vec();
        ops.extend([rejection, Op::Schedule { pick: 0 }]);
        let upstream = run_case(Mode::Upstream, true, 2, &[0, 0], &ops);
        let Err(reason) = upstream else {
            panic!("upstream passed after {rejection:?}");
        };
        assert!(
            reason.contains("I3: 1 of gang ml/g0 (min count 2, 0 admitted)"),
            "{reason}"
        );
        run_case(Mode::Hardened, true, 2, &[0, 0], &ops).unwrap();
    }
}

/// The shrunk case `cc 01d1e1c0…` of `proptest-regressions/prop_gang.txt`, found by the
/// hardened lockstep while it deferred Permit rejections: `p0` (group `g0`, Basic) is reserved,
/// `g0` is deleted and `p0`'s Permit is rejected with an error; `g0` comes back as a gang of
/// two before `p0` is unreserved, and `p1` reaches Permit. Before P7 the still-assumed `p0` was
/// lent to `p1`'s quorum and `p1` passed alone (I3). Now hardened Permit released `p0` when it
/// rejected it: `p1` waits, and the late unreserve of `p0` is a no-op for the group. Upstream
/// (no P7) still lends `p0` to the quorum.
#[test]
fn regression_permit_rejection_lent_to_quorum() {
    // 4 pods: `pod: 4` is p0, `pod: 5` is p1; `group: 2` is g0 (2 groups).
    let pod_groups = [0, 0, 0, 1];
    let ops = [
        Op::AddPod {
            pod: 4,
            bound: false,
        },
        Op::AddGroup {
            group: 0,
            policy: Policy::Basic,
        },
        Op::AddPod {
            pod: 5,
            bound: false,
        },
        Op::Reserve { pick: 0 },
        Op::DeleteGroup { group: 0 },
        Op::Permit,
        Op::AddGroup {
            group: 2,
            policy: Policy::Gang { min_count: 2 },
        },
        Op::AddPod {
            pod: 0,
            bound: false,
        },
        Op::Schedule { pick: 0 },
        Op::AddPod {
            pod: 0,
            bound: false,
        },
    ];
    let mut hardened =
        Lockstep::new(Mode::Hardened, 2, &pod_groups, true).deferring_permit_rejections();
    for op in ops {
        hardened.run(op).unwrap();
    }
    assert_eq!(
        hardened.phase(0),
        Phase::Rejected,
        "p0 is not unreserved yet"
    );
    assert_eq!(hardened.phase(1), Phase::Waiting, "p1 waits for a sibling");
    let p1 = hardened.model().waiting()[0].pod.id().clone();
    assert!(hardened.gang().waiting().get(&p1).is_some());
    hardened.settle().unwrap();

    let upstream =
        Lockstep::new(Mode::Upstream, 2, &pod_groups, true).deferring_permit_rejections();
    let Err(reason) = run_ops(upstream, &ops) else {
        panic!("upstream kept I3 with a deferred unreserve");
    };
    assert!(
        reason.contains("I3: 1 of gang ml/g0 (min count 2, 0 admitted) passed Permit alone"),
        "{reason}"
    );
    run_case(Mode::Hardened, true, 2, &pod_groups, &ops).unwrap();
}

/// The shrunk case `cc 962aff21…` of `proptest-regressions/prop_gang.txt`: `p0` waits alone in
/// a gang of two and is bound by another binder. Its attempt is left with nobody waiting, so it
/// is over (A4) — before, it lingered with its old deadline for the next member to inherit.
#[test]
fn regression_bound_elsewhere_ends_the_attempt() {
    let pod_groups = [0, 2, 2, 0, 1];
    let ops = [
        Op::AddPod {
            pod: 2,
            bound: false,
        },
        Op::AddGroup {
            group: 0,
            policy: Policy::Gang { min_count: 2 },
        },
        Op::AddPod {
            pod: 0,
            bound: false,
        },
        Op::AddPod {
            pod: 0,
            bound: false,
        },
        Op::Schedule { pick: 0 },
        Op::Reserve { pick: 0 },
        Op::AbortCycle,
        Op::BindElsewhere { pick: 0 },
    ];
    let mut hardened = Lockstep::new(Mode::Hardened, 2, &pod_groups, true);
    for op in ops {
        hardened.run(op).unwrap();
    }
    assert_eq!(hardened.phase(0), Phase::Rejected, "p0's wait ended");
    let g0 = GroupKey::new(NS, GROUPS[0]);
    let state = hardened.gang().registry().state(&g0).unwrap();
    assert!(state.attempt().is_none(), "{:?}", state.attempt());
    hardened.settle().unwrap();
}

/// Found by `hardened_matches_model_and_keeps_gang_atomicity`: two gangs in different shards
/// of the group registry time out at the same deadline. Expiry runs shard by shard, and told
/// the gangs in shard order (`[g1, g0]`); it tells them in (deadline, group) order, as the
/// model does, whichever shards they live in.
#[test]
fn regression_expire_tells_gangs_in_deadline_order_across_shards() {
    let pod_groups = [0, 2, 1, 2, 0, 1, 1];
    let gang = Policy::Gang { min_count: 2 };
    let add = |pod| Op::AddPod { pod, bound: false };
    let ops = [
        add(3),
        add(1),
        Op::AddGroup {
            group: 0,
            policy: gang,
        },
        add(5),
        Op::AddGroup {
            group: 1,
            policy: gang,
        },
        add(0),
        Op::Schedule { pick: 0 },
        Op::DeleteGroup { group: 2 },
        add(0),
        add(6),
        Op::Schedule { pick: 0 },
    ];
    let mut hardened = Lockstep::new(Mode::Hardened, 2, &pod_groups, true);
    for op in ops {
        hardened.run(op).unwrap();
    }
    hardened.settle().unwrap();
}
