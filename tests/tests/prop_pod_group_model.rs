#![cfg(not(loom))]
//! Property test: one pod-group cycle of the real scheduler beside the reference model of the
//! cycle (`gangway_model::pod_group`), in both modes. A generated cluster — nodes of 1–4 slots,
//! some of each taken by a bound pod outside any gang — and a gang of alike members (1–2
//! slots each), some of them already bound on a node of their own, the rest queued; one
//! `schedule_one` pops a member and runs the cycle. Compared with the model: whether the gang
//! is admitted, how many members are admitted (in binding) and the room left on the cluster;
//! after the binding cycles, how many bound. The scheduler's `check` holds throughout.
//!
//! The witness (`a_planted_off_by_one_in_the_reference_is_found`): the same comparison
//! against the model with its minimum lowered by one must fail on some generated case, so the
//! comparison can tell a wrong verdict.

use gangsched::scheduler::{CycleOutcome, Node, Scheduler, SchedulerConfig};
use gangsched::{GangCycle, Mode, Pod, PodGroup, Resources, Time};
use gangway_model::pod_group::{cycle, CycleCase, CycleVerdict};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const SLOT: u64 = 1_000;
const GIB: u64 = 1 << 30;

/// A generated cluster and gang.
#[derive(Clone, Debug)]
struct Cluster {
    /// Each node's slots and how many a bound pod outside the gang takes.
    nodes: Vec<(u64, u64)>,
    /// Slots each member asks for.
    size: u64,
    /// Members queued, and members already bound.
    queued: usize,
    bound: usize,
    /// The gang's minimum (1 to all its members).
    min_count: usize,
}

fn cluster() -> impl Strategy<Value = Cluster> {
    let nodes = prop::collection::vec((1u64..=4).prop_flat_map(|c| (Just(c), 0..=c)), 1..=4);
    (nodes, 1u64..=2, 1usize..=5, 0usize..=2).prop_flat_map(|(nodes, size, queued, bound)| {
        (1..=queued + bound).prop_map(move |min_count| Cluster {
            nodes: nodes.clone(),
            size,
            queued,
            bound,
            min_count,
        })
    })
}

fn node_name(i: usize) -> String {
    format!("n{i}")
}

fn member(i: usize, size: u64) -> Pod {
    let name = format!("g-{i}");
    Pod::new(name.clone(), "ml", &name)
        .with_group("g")
        .with_requests(Resources::new(size * SLOT, GIB))
}

/// The scheduler with `c` set up: the nodes, the outside pods, the bound members (on a node of
/// their own, full), the gang and its queued members.
fn scheduler(c: &Cluster, mode: Mode) -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(GangCycle::PodGroup);
    let s = Scheduler::new(config);
    let t = Time::ZERO;
    for (i, (slots, taken)) in c.nodes.iter().enumerate() {
        let name = node_name(i);
        s.add_node(Node::new(&name, Resources::new(slots * SLOT, 64 * GIB)), t)
            .unwrap();
        if *taken > 0 {
            let pod = Pod::new(format!("other-{i}"), "ml", &format!("other-{i}"))
                .with_requests(Resources::new(taken * SLOT, GIB))
                .with_node(&name);
            s.add_pod(pod, t).unwrap();
        }
    }
    let home = Resources::new(c.bound as u64 * c.size * SLOT, 64 * GIB);
    s.add_node(Node::new("home", home), t).unwrap();
    s.add_group(PodGroup::gang("ml", "g", c.min_count as u32).unwrap(), t)
        .unwrap();
    for i in 0..c.bound {
        s.add_pod(member(i, c.size).with_node("home"), t).unwrap();
    }
    for i in c.bound..c.bound + c.queued {
        s.add_pod(member(i, c.size), t).unwrap();
    }
    s
}

/// The model's case for `c`.
fn case_of(c: &Cluster) -> CycleCase {
    CycleCase {
        free: c.nodes.iter().map(|(slots, taken)| slots - taken).collect(),
        size: c.size,
        gathered: c.queued,
        scheduled: c.bound,
        min_count: c.min_count,
    }
}

/// Free slots on the cluster, the gang's full home node included (it has none).
fn free_slots(s: &Scheduler) -> u64 {
    let cache = s.cache().snapshot();
    cache.nodes().map(|n| n.free().cpu_millis / SLOT).sum()
}

fn fail(
    what: &str,
    mode: Mode,
    real: impl std::fmt::Debug,
    model: impl std::fmt::Debug,
) -> TestCaseError {
    TestCaseError::fail(format!("{mode:?} {what}: real {real:?}, model {model:?}"))
}

/// Runs one cycle of `c` in `mode` and compares it with `expected`.
fn compare(c: &Cluster, mode: Mode, expected: CycleVerdict) -> Result<(), TestCaseError> {
    let s = scheduler(c, mode);
    s.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
    let outcome = s.schedule_one(Time::ZERO).expect("a member is queued");
    let admitted = match &outcome {
        CycleOutcome::PodGroup { admitted, .. } => *admitted,
        other => {
            return Err(TestCaseError::fail(format!(
                "not a pod-group cycle: {other:?}"
            )))
        }
    };
    s.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
    if admitted != expected.admitted {
        return Err(fail("admitted", mode, admitted, expected.admitted));
    }
    let in_binding = s.in_binding().len();
    if in_binding != expected.admitted_members {
        return Err(fail(
            "members admitted",
            mode,
            in_binding,
            expected.admitted_members,
        ));
    }
    if free_slots(&s) != expected.free_after {
        return Err(fail(
            "free slots",
            mode,
            free_slots(&s),
            expected.free_after,
        ));
    }
    s.run_binding_cycles(Time::ZERO);
    s.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
    let bound = s.stats().bound as usize;
    if bound != expected.admitted_members {
        return Err(fail("bound", mode, bound, expected.admitted_members));
    }
    if !s.held_and_waiting().is_empty() {
        return Err(TestCaseError::fail(format!(
            "{mode:?}: a member waits holding its node"
        )));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn one_pod_group_cycle_does_what_the_reference_says(c in cluster()) {
        let expected = cycle(&case_of(&c));
        for mode in [Mode::Hardened, Mode::Upstream] {
            compare(&c, mode, expected)?;
        }
    }
}

/// The witness: a reference off by one in the minimum is caught on some generated case.
#[test]
fn a_planted_off_by_one_in_the_reference_is_found() {
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&cluster(), |c| {
        let mut wrong = case_of(&c);
        wrong.min_count = wrong.min_count.saturating_sub(1).max(1);
        compare(&c, Mode::Hardened, cycle(&wrong))
    });
    assert!(result.is_err(), "a wrong reference must be found");
}
