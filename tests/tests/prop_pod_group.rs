#![cfg(not(loom))]
//! Property test: the pod-group cycle (`GangCycle::PodGroup`) on arbitrary gang arrivals.
//! Random nodes (1–4 slots of CPU each), random gangs (1–5 members of 1–2 slots, min count all
//! of them) whose members arrive in a random interleaving, one millisecond apart, through a real
//! `Scheduler` driven by hand; time then runs on for a minute in one-second steps (backoffs
//! end, the 5-minute permit timeout never comes).
//!
//! - After every step, in both modes, the scheduler's own `check` holds (I4–I7, and I3 and I9
//!   in Hardened: no member of an unadmitted gang holds a reservation).
//! - At the end no pod waits at Permit holding a node, no timeout fired, and if some gang fits
//!   alone on the empty cluster — the reference: the sum over nodes of how many of its members
//!   each node takes is at least its min count — some gang is bound: progress without
//!   timeouts. With deletes and failed binds mixed in (the first property), only the
//!   invariants are asked for.
//!
//! The witness: the Permit barrier on the same arrivals (`the_barrier_fails_progress…`): two
//! gangs that each fit alone but not together, interleaved, both hold part of the cluster and
//! neither binds without a timeout.

use std::time::Duration;

use gangsched::scheduler::{InMemoryBinder, Node, ResourceFit, Scheduler, SchedulerConfig};
use gangsched::{GangCycle, Mode, Pod, PodGroup, Resources, Time};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const SLOT: u64 = 1_000;
const GIB: u64 = 1 << 30;

#[derive(Clone, Debug)]
struct Gang {
    /// Members (all of them make the min count).
    size: usize,
    /// Slots each member asks for.
    slots: u64,
}

#[derive(Clone, Debug)]
struct Case {
    /// Slots of each node.
    nodes: Vec<u64>,
    gangs: Vec<Gang>,
    /// The arrival order: `(gang, member)` pairs, every member once.
    arrivals: Vec<(usize, usize)>,
    /// After which arrivals the scheduler runs its cycles (otherwise the next pod arrives
    /// first, so members of different gangs queue interleaved).
    settle: Vec<bool>,
}

fn case() -> impl Strategy<Value = Case> {
    let nodes = prop::collection::vec(1u64..=4, 1..=4);
    let gangs = prop::collection::vec(
        (1usize..=5, 1u64..=2).prop_map(|(size, slots)| Gang { size, slots }),
        1..=3,
    );
    (nodes, gangs)
        .prop_flat_map(|(nodes, gangs)| {
            let members: Vec<(usize, usize)> = gangs
                .iter()
                .enumerate()
                .flat_map(|(g, gang)| (0..gang.size).map(move |m| (g, m)))
                .collect();
            let settle = prop::collection::vec(any::<bool>(), members.len());
            (
                Just(nodes),
                Just(gangs),
                Just(members).prop_shuffle(),
                settle,
            )
        })
        .prop_map(|(nodes, gangs, arrivals, settle)| Case {
            nodes,
            gangs,
            arrivals,
            settle,
        })
}

/// Faults mixed into the arrivals: after arrival `at`, delete the `n`-th pod added so far.
fn deletes() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((0usize..16, 0usize..16), 0..3)
}

fn member(g: usize, m: usize, gang: &Gang) -> Pod {
    let name = format!("g{g}-{m}");
    Pod::new(name.clone(), "ml", &name)
        .with_group(&format!("g{g}"))
        .with_requests(Resources::new(gang.slots * SLOT, GIB))
}

/// The reference: whether `gang` fits alone on the empty cluster.
fn fits_alone(nodes: &[u64], gang: &Gang) -> bool {
    nodes.iter().map(|slots| slots / gang.slots).sum::<u64>() >= gang.size as u64
}

/// Scheduling and binding cycles until nothing moves, the invariants after each.
fn settle(s: &Scheduler, now: Time) -> Result<(), TestCaseError> {
    loop {
        let moved = s.schedule_one(now).is_some() || s.run_binding_cycles(now) > 0;
        s.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
        if !moved {
            return Ok(());
        }
    }
}

/// Runs `case` through a scheduler with `cycle` in `mode` (binds of pods named in
/// `failing` fail once each; `deletes` as [`deletes`] says). Returns the scheduler and its
/// pods.
fn run(
    case: &Case,
    mode: Mode,
    cycle: GangCycle,
    deletes: &[(usize, usize)],
    failing: bool,
) -> Result<(Scheduler, Vec<Pod>), TestCaseError> {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(cycle);
    let failed = gangsched::sync::Arc::new(gangsched::sync::Mutex::new(Vec::<String>::new()));
    let binder = InMemoryBinder::new().with_failures(move |pod, _| {
        let fail = failing
            && pod.name().ends_with("-1")
            && !failed.lock().contains(&pod.name().to_owned());
        if fail {
            failed.lock().push(pod.name().to_owned());
        }
        fail
    });
    let s = Scheduler::with(config, ResourceFit, binder);
    let mut now = Time::ZERO;
    for (i, slots) in case.nodes.iter().enumerate() {
        let node = Node::new(&format!("n{i}"), Resources::new(slots * SLOT, 64 * GIB));
        s.add_node(node, now).unwrap();
    }
    for (g, gang) in case.gangs.iter().enumerate() {
        let group = PodGroup::gang("ml", &format!("g{g}"), gang.size as u32).unwrap();
        s.add_group(group, now).unwrap();
    }
    let mut pods = Vec::new();
    for (at, &(g, m)) in case.arrivals.iter().enumerate() {
        now += Duration::from_millis(1);
        let pod = member(g, m, &case.gangs[g]);
        s.add_pod(pod.clone(), now).unwrap();
        pods.push(pod);
        if case.settle[at] {
            settle(&s, now)?;
        }
        for &(after, n) in deletes {
            if after == at {
                if let Some(pod) = pods.get(n) {
                    let _ = s.delete_pod(pod, now);
                    settle(&s, now)?;
                }
            }
        }
    }
    for _ in 0..60 {
        now += Duration::from_secs(1);
        s.tick(now);
        settle(&s, now)?;
    }
    Ok((s, pods))
}

/// At the end: nobody holds a node while waiting, no timeout fired, and some gang bound if
/// one fits alone.
fn progress_without_timeouts(case: &Case, s: &Scheduler, pods: &[Pod]) -> Result<(), String> {
    let held = s.held_and_waiting();
    if !held.is_empty() {
        return Err(format!("{held:?} hold their nodes, waiting at Permit"));
    }
    if s.stats().permit_timeouts > 0 {
        return Err("a permit timeout fired".to_owned());
    }
    let some_fits = case.gangs.iter().any(|g| fits_alone(&case.nodes, g));
    let bound = |g: usize| {
        pods.iter()
            .filter(|p| p.name().starts_with(&format!("g{g}-")) && s.is_bound(p.id()))
            .count()
    };
    let some_bound = (0..case.gangs.len()).any(|g| bound(g) >= case.gangs[g].size);
    if some_fits && !some_bound {
        return Err("a gang fits alone on the empty cluster, but none is bound".to_owned());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_step_of_the_pod_group_cycle_keeps_the_invariants(
        case in case(),
        deletes in deletes(),
        failing in any::<bool>(),
        hardened in any::<bool>(),
    ) {
        let mode = if hardened { Mode::Hardened } else { Mode::Upstream };
        run(&case, mode, GangCycle::PodGroup, &deletes, failing)?;
    }

    #[test]
    fn a_gang_that_fits_alone_binds_without_a_timeout(case in case(), hardened in any::<bool>()) {
        let mode = if hardened { Mode::Hardened } else { Mode::Upstream };
        let (s, pods) = run(&case, mode, GangCycle::PodGroup, &[], false)?;
        progress_without_timeouts(&case, &s, &pods).map_err(TestCaseError::fail)?;
    }
}

/// Two gangs of two one-slot members on one node of two slots, arriving interleaved (g0-0,
/// g1-0, g0-1, g1-1) before the scheduler runs. Each fits alone, not together.
fn room_for_one() -> Case {
    Case {
        nodes: vec![2],
        gangs: vec![Gang { size: 2, slots: 1 }, Gang { size: 2, slots: 1 }],
        arrivals: vec![(0, 0), (1, 0), (0, 1), (1, 1)],
        settle: vec![false; 4],
    }
}

#[test]
fn the_pod_group_cycle_binds_one_of_two_gangs_with_room_for_one() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let case = room_for_one();
        let (s, pods) = run(&case, mode, GangCycle::PodGroup, &[], false).unwrap();
        progress_without_timeouts(&case, &s, &pods).unwrap();
    }
}

#[test]
fn the_barrier_fails_progress_without_timeouts_on_two_gangs_with_room_for_one() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let case = room_for_one();
        let (s, pods) = run(&case, mode, GangCycle::PermitBarrier, &[], false).unwrap();
        let err = progress_without_timeouts(&case, &s, &pods).unwrap_err();
        assert!(err.contains("waiting at Permit"), "{mode:?}: {err}");
    }
}

/// The property can fail: run on the Permit barrier, the same random search finds arrivals
/// where gangs hold part of the cluster each and wait (the counterexample proptest shrinks to
/// is printed).
#[test]
fn the_same_search_finds_the_barriers_hold_and_wait() {
    let config = ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(&(case(), any::<bool>()), |(case, hardened)| {
        let mode = if hardened {
            Mode::Hardened
        } else {
            Mode::Upstream
        };
        let (s, pods) = run(&case, mode, GangCycle::PermitBarrier, &[], false)?;
        progress_without_timeouts(&case, &s, &pods).map_err(TestCaseError::fail)
    });
    match result {
        Err(proptest::test_runner::TestError::Fail(why, case)) => {
            println!("the barrier's counterexample: {case:?}: {why}");
        }
        other => panic!("the barrier passed the search: {other:?}"),
    }
}
