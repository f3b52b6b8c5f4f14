#![cfg(not(loom))]
//! Conformance: kube-scheduler 1.36's unit tests of the pod-group scheduling cycle
//! (`schedule_one_podgroup.go`, and the gang plugin's Permit inside it), re-expressed as tables
//! of data run by one driver each, against a [`Scheduler`] in [`GangCycle::PodGroup`].
//!
//! Tests ported from kube-scheduler and rewritten as tables for gangway:
//!
//! - `TestPodGroupSchedulingAlgorithm` → [`ALGORITHM`] (10 of its 14 rows), each row also
//!   carrying what `TestSubmitPodGroupAlgorithmResult` does with that algorithm result (which
//!   pods bind, which go back): 8 of its 16 rows are the outcome of one of these; "All pods
//!   feasible, two waiting", which has no submit row, takes its outcome from submit's rule.
//!   Run by [`run_algorithm`] in `Mode::Upstream` with upstream's expectations, and in
//!   `Mode::Hardened` with its own where it differs (the row's `hardened` column says why),
//!   each under two group policies.
//! - `TestPodGroupInfoForPod` → [`ORDER`] (1 of 2 rows), run by [`run_order`] in both modes.
//! - `TestGangSchedulingFlow`'s one `isDuringPodGroupSchedulingCycle` row → [`FLOW`], run by
//!   [`run_flow`] in both modes, with a second row "(gangway)", not upstream's: the row "gang
//!   pod passes PreEnqueue, but waits at Permit" inside a pod-group cycle, its expectation
//!   derived from the real code. (The other `TestGangSchedulingFlow` rows are
//!   `conformance_gang.rs`'s.)
//!
//! Where gangway's `Mode::Upstream` disagrees with the real code, the row says so in its
//! `known_difference` column (what gangway does, and the symptom in the driver's error): the
//! driver asserts that the row fails with that symptom, so the row fails once gangway is fixed.
//! The port found two, both fixed in gangway's core since: a member another plugin held at
//! Permit came back with that plugin's bare `Wait` status instead of 1.36's `Unschedulable`
//! "pod group is unschedulable, one or more plugins asked to wait and no plugin rejected pod",
//! and a placed member of an infeasible group came back with its Permit message alone, without
//! the leading "pod group is unschedulable, " that `WithError(errPodGroupUnschedulable)` puts
//! first. No row is marked now.
//!
//! Witnesses: every table also runs under [`GangCycle::PermitBarrier`], and [`ALGORITHM`] with
//! each group status turned wrong; the drivers must fail every row of both. The Hardened test
//! also checks that upstream's expectation fails on every row with a `hardened` column.
//!
//! The tables and the fake live in `conformance_pod_group/` (`fake_plugin.rs`,
//! `algorithm_cases.rs`, `gang_flow.rs`), included by `#[path]`.
//!
//! Adaptations:
//!
//! - The fake plugin (`fake_plugin.rs`) is upstream's `fakePodGroupPlugin`: its Filter is the
//!   scheduler's [`Placement`](gangsched::scheduler::Placement), which stands for all of
//!   `schedulePod` — so a filter's rejection on node1 comes back as `schedulePod`'s `FitError`,
//!   `Unschedulable` whatever the filter's code ("All pods unschedulable": p1's
//!   `UnschedulableAndUnresolvable` is `Unschedulable`, as upstream expects) — and its Permit
//!   is a [`PermitPlugin`](gangsched::PermitPlugin) beside the gang's. Its PostFilter has no
//!   counterpart: gangway does not preempt.
//! - Upstream's table has no gang plugin; gangway always runs one. Each row runs with its pods
//!   in a Basic PodGroup (the gang plugin allows a Basic pod, as if absent) and again in a gang
//!   of min count 1 (any one placed member meets its quorum): either way the fake alone
//!   decides, as upstream's rule says — the group succeeds iff some member's Permit succeeds.
//! - Upstream calls `podGroupSchedulingAlgorithm` on a hand-built `QueuedPodGroupInfo`
//!   (p1, p2, p3); here the pods arrive 1 ms apart so the cycle's own order
//!   (`podGroupInfoForPod`: priority, then first attempt) is p1, p2, p3, and one
//!   `schedule_one` runs the algorithm and `submitPodGroupAlgorithmResult` together. The
//!   algorithm's per-pod results are read from what gangway shows: the fake's call log (the
//!   pods tried, in order; a Permit call on node1 for each one its Filter passed, which is
//!   upstream's `SuggestedHost == "node1"` and its `permitStatus`) and each member's
//!   [`CycleOutcome`]; the outcome columns are `submitPodGroupAlgorithmResult`'s: bound pods
//!   are bound after the binding cycles, the others back in the queue with nothing reserved.
//! - `TestSubmitPodGroupAlgorithmResult` runs submit on a framework without the fake, so a
//!   placed pod's `prepareForBindingCycle` Permit passes; here the same fake serves both, so
//!   it answers its table on a pod's first Permit (the simulation's) and allows on a later one
//!   (the commit's). The driver checks that Upstream asks again for exactly the placed pods of
//!   a feasible group, in order, and Hardened never does (it admits on the snapshot's answer).
//! - Messages: upstream's tables compare codes only. Where the real code fixes the message —
//!   a placed pod of an unschedulable group (`NewStatus(Unschedulable, permit message)
//!   .WithError(errPodGroupUnschedulable)`, whose `Message()` puts the error first, checked on
//!   the real `fwk.Status`), a Permit plugin's error (`running Permit plugin "P": `) and the
//!   group's after an error (`failed to schedule other pod from a pod group: `) — Upstream's
//!   are compared too.
//! - Left out of `TestPodGroupSchedulingAlgorithm`: the four rows that need preemption
//!   ("All pods require preemption", "… but waiting", "One pod requires preemption, but
//!   waiting, two are feasible", "One pod unschedulable, one requires preemption, one
//!   feasible"). The two "… while waiting on preemption" rows are kept: their fake has no
//!   PostFilter status for p1, so p1 falls back to the fake's default (no nomination) and is
//!   merely unschedulable. The `TopologyAwareWorkloadScheduling=true` runs are left out
//!   (gangway has no placements); they expect the same.
//! - Left out of `TestSubmitPodGroupAlgorithmResult`: its four preemption rows, "Unschedulable
//!   for the entire pod group" (a group-level status with no pod results, which no gangway
//!   cycle produces), and the three "Already Scheduled" rows with every `expectCondition`
//!   (gangway writes no PodGroup condition). "All pods unschedulable with nil nominatingInfo"
//!   is "All pods unschedulable" here (gangway nominates nothing); "Error for one pod" is the
//!   outcome of "Any filter/permit returned Error", and "… while waiting on preemption" of
//!   the two rows of that name.
//! - `TestPodGroupInfoForPod`: the pods are in a Basic PodGroup (upstream's cache has members
//!   and no PodGroup object; gangway's PreEnqueue gates a pod whose group is missing), their
//!   `InitialAttemptTimestamp`s are when each is added (and so first let into the active
//!   queue), and the cycle pops the queue's head (p2, the highest priority) rather than p1 —
//!   the order is total, so which member is popped does not change it. Its second row ("Pods
//!   not in state or not in queue are skipped") is left out: gangway feeds the group state and
//!   the queue from the same `add_pod`, so a member is never in one and not the other.
//! - `TestGangSchedulingFlow`'s row: p2 and p3 cannot wait at Permit before p1's cycle under
//!   the pod-group cycle, so they are placed before p1 in the same cycle (given higher
//!   priorities), p1 closing the quorum on the snapshot as upstream's does. pg2's p4 and p5
//!   (a gang of 4 with 2 pods) cannot reach Permit in gangway: PreEnqueue gates them, and the
//!   row checks they stay gated, neither bound nor allowed — as upstream's go on waiting.
//!   Upstream's `wantAllowedPods` check is vacuous (its waiting pods are never in the waiting
//!   map); here the allowed pods really are allowed and bind.
//! - `Mode::Hardened` differs, on purpose: it turns another Permit plugin's wait on a member
//!   into that plugin's error (H1: only its gang holds a member at Permit), and an error ends
//!   the cycle for the whole group as upstream's errors do — so the four rows where the fake
//!   asks a pod to wait end in a group error, nothing bound; it admits a feasible group in one
//!   step, so in the flow row p2 and p3 are allowed at once rather than waiting for p1 at
//!   their own Permit; and its status for a placed member of an infeasible gang is its own
//!   (only its code and the gang's reason are checked).
//! - The algorithm rows' pods have no namespace upstream; here they are in `default`
//!   (`PodGroup::new` refuses an empty namespace).
//! - Not ported: `TestFrameworkForPodGroup` (gangway has one profile),
//!   `TestSkipPodGroupPodSchedule` (no pod is terminating — a delete takes a pod out of the
//!   queue and its group at once — and an assumed pod is no unscheduled member to gather),
//!   `TestPodGroupCycle_UpdateSnapshotError` (the snapshot is a copy that cannot fail),
//!   `TestPodGroupCycle_PodGroupPostFilter` and `TestRunWorkloadAwarePreemption` (no
//!   preemption), `TestUpdatePodGroupCondition` (no PodGroup conditions),
//!   `TestPodGroupSchedulingPlacementAlgorithm` and its `_Scoring` (no placements).
//!
//! Source: kubernetes/kubernetes v1.36.3, `pkg/scheduler/schedule_one_podgroup_test.go` and
//! `pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go`, judged against
//! `schedule_one_podgroup.go` beside them.
//!
//! Copyright & License:
//!   - Copyright The Kubernetes Authors
//!   - Apache License, Version 2.0
//!   - <http://www.apache.org/licenses/LICENSE-2.0>

#[path = "conformance_pod_group/algorithm_cases.rs"]
mod algorithm_cases;
#[path = "conformance_pod_group/fake_plugin.rs"]
mod fake_plugin;
#[path = "conformance_pod_group/gang_flow.rs"]
mod gang_flow;

use gangsched::queue::QueuePlace;
use gangsched::scheduler::{CycleOutcome, Node};
use gangsched::{
    Code, GangCycle, Mode, Pod, PodGroup, PodId, Policy, Resources, Scheduler, SchedulerConfig,
    Time,
};

use algorithm_cases::{AlgorithmCase, Want, ALGORITHM, G, PODS};
use fake_plugin::{answer, fake_scheduler, Call, Fake, FILTER_ERROR, NODE, PERMIT_ERROR, S};
use gang_flow::{run_flow, FLOW};

const MODES: [Mode; 2] = [Mode::Upstream, Mode::Hardened];
/// The group status `podGroupSchedulingDefaultAlgorithm` gives the other pods after an error.
const OTHER_POD: &str = "failed to schedule other pod from a pod group: ";
/// Upstream's `errPodGroupUnschedulable`, first in the message of every placed pod of an
/// unschedulable group.
const GROUP_UNSCHEDULABLE: &str = "pod group is unschedulable";
/// `RunPermitPlugins`' reason after any wait.
const PLUGINS_WAIT: &str = "one or more plugins asked to wait and no plugin rejected pod";

fn member(ns: &str, name: &str, group: &str) -> Pod {
    Pod::new(name, ns, name).with_group(group)
}

fn id(name: &str) -> PodId {
    PodId::new(name)
}

/// `Err(msg)` unless `ok`.
fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    ok.then_some(()).ok_or_else(msg)
}

/// A pod-group cycle's verdict and members (each with its pod), or why it is not one.
fn group_members(
    outcome: Option<CycleOutcome>,
) -> Result<(bool, Vec<(String, CycleOutcome)>), String> {
    let Some(CycleOutcome::PodGroup {
        admitted, members, ..
    }) = outcome
    else {
        return Err(format!("not a pod-group cycle: {outcome:?}"));
    };
    let pod = |m: &CycleOutcome| match m {
        CycleOutcome::Allowed { pod, .. }
        | CycleOutcome::Waiting { pod, .. }
        | CycleOutcome::Rejected { pod, .. }
        | CycleOutcome::Released { pod, .. }
        | CycleOutcome::Dropped { pod }
        | CycleOutcome::Unschedulable { pod, .. } => pod.as_str().to_owned(),
        other => format!("{other:?}"),
    };
    Ok((
        admitted,
        members.into_iter().map(|m| (pod(&m), m)).collect(),
    ))
}

fn names(members: &[(String, CycleOutcome)]) -> Vec<&str> {
    members.iter().map(|(p, _)| p.as_str()).collect()
}

/// After a cycle and its binding cycles: the invariants hold, nothing is held, leaked or
/// waiting, and each of `pods` is bound iff it is in `bound`, else back in the queue.
fn settled(s: &Scheduler, pods: &[&str], bound: &[&str]) -> Result<(), String> {
    s.check().map_err(|v| format!("invariant: {v}"))?;
    let (held, leaked) = (s.held_and_waiting(), s.leaked_reservations());
    ensure(
        held.is_empty() && leaked.is_empty() && s.waiting().is_empty(),
        || format!("held {held:?}, leaked {leaked:?}, or a pod waits at Permit"),
    )?;
    let got: Vec<&str> = pods
        .iter()
        .copied()
        .filter(|p| s.is_bound(&id(p)))
        .collect();
    ensure(got == bound, || {
        format!("bound: want {bound:?}, got {got:?}")
    })?;
    for p in pods.iter().filter(|p| !bound.contains(p)) {
        let place = s.queue().place(&id(p));
        ensure(place.is_some_and(|q| q != QueuePlace::InFlight), || {
            format!("{p}: want back in the queue, got {place:?}")
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// TestPodGroupSchedulingAlgorithm, with TestSubmitPodGroupAlgorithmResult's outcomes
// ---------------------------------------------------------------------------------------------

/// Basic (the gang plugin allows each pod, as if absent) and a gang of min count 1 (any placed
/// member meets its quorum): under both only the fake decides.
const POLICIES: [Policy; 2] = [Policy::Basic, Policy::Gang { min_count: 1 }];

/// The fake's calls `want` implies: the simulation's Filter on each tried pod, and its Permit
/// on node1 right after for each the Filter passed; then Upstream's commit
/// (`prepareForBindingCycle`) asks Permit again of each placed pod of a feasible group, in
/// order. Hardened admits on the snapshot's answers and asks nobody again.
fn expected_calls(mode: Mode, case: &AlgorithmCase, want: &Want) -> Vec<Call> {
    let permit = |p: &str| Call::Permit(p.to_owned(), NODE.to_owned());
    let mut calls = Vec::new();
    for &(p, _) in want.pods {
        calls.push(Call::Filter(p.to_owned()));
        if answer(case.filter, p) == Some(S::Nil) {
            calls.push(permit(p));
        }
    }
    if mode == Mode::Upstream && want.group == G::Success {
        let placed = want.pods.iter().filter(|(_, s)| *s == S::Nil);
        calls.extend(placed.map(|(p, _)| permit(p)));
    }
    calls
}

/// Whether `outcome` is what `want` says of `pod` (`submitPodGroupAlgorithmResult`): a placed
/// pod of a feasible group is allowed on node1; a placed pod of an unschedulable group goes back
/// unschedulable with its Permit message after the group's error; an unplaced pod with its own
/// status; after an error the erring pod with its own and every other with the group's.
/// Upstream's messages are checked where the real code fixes them; of Hardened's errors, which
/// are its own, only the code and the group's prefix.
fn member_matches(
    mode: Mode,
    case: &AlgorithmCase,
    want: &Want,
    pod: &str,
    outcome: &CycleOutcome,
) -> bool {
    let status = answer(want.pods, pod);
    let CycleOutcome::Unschedulable { status: got, .. } = outcome else {
        return matches!(outcome, CycleOutcome::Allowed { node, .. }
            if node == NODE && want.group == G::Success && status == Some(S::Nil));
    };
    let message = got.message();
    match (want.group, status) {
        (G::Success, Some(S::Nil)) => false,
        (G::Error, _) if mode == Mode::Hardened => {
            got.code() == Code::Error
                && message.starts_with(OTHER_POD) == (status != Some(S::Error))
        }
        (G::Error, _) => {
            let (erring, _) = want
                .pods
                .iter()
                .find(|(_, s)| *s == S::Error)
                .expect("an error");
            let own = match answer(case.filter, erring) {
                Some(S::Error) => FILTER_ERROR,
                _ => PERMIT_ERROR,
            };
            let want_message = match status {
                Some(S::Error) => own.to_owned(),
                _ => format!("{OTHER_POD}{own}"),
            };
            got.code() == Code::Error && message == want_message
        }
        (G::Unschedulable, Some(S::Nil)) => {
            got.code() == Code::Unschedulable
                && message == format!("{GROUP_UNSCHEDULABLE}, {PLUGINS_WAIT}")
        }
        _ => got.code() == Code::Unschedulable,
    }
}

/// Runs `case` in `mode`, `cycle` and `policy` against `want`: one cycle (p1's, the first to
/// arrive), then the binding cycles.
fn run_algorithm(
    mode: Mode,
    cycle: GangCycle,
    policy: Policy,
    case: &AlgorithmCase,
    want: &Want,
) -> Result<(), String> {
    let fake = Fake::new(case.filter, case.permit);
    let s = fake_scheduler(mode, cycle, &fake);
    let group = PodGroup::new("default", "pg", policy).expect("valid fixture");
    s.add_group(group, Time::ZERO).expect("the group");
    for (at, p) in (1..).zip(PODS) {
        let pod = member("default", p, "pg");
        s.add_pod(pod, Time::from_millis(at)).expect("a pod");
    }
    let now = Time::from_millis(10);
    let (admitted, members) = group_members(s.schedule_one(now))?;
    ensure(names(&members) == PODS, || {
        format!("placing order {:?}", names(&members))
    })?;
    let (calls, want_calls) = (fake.calls(), expected_calls(mode, case, want));
    ensure(calls == want_calls, || {
        format!("fake plugin calls: want {want_calls:?}, got {calls:?}")
    })?;
    ensure(admitted == (want.group == G::Success), || {
        format!("group {:?}, admitted {admitted}: {members:?}", want.group)
    })?;
    for (pod, outcome) in &members {
        ensure(member_matches(mode, case, want, pod, outcome), || {
            format!("{pod}: want {want:?}, got {outcome:?}")
        })?;
    }
    s.run_binding_cycles(now);
    settled(&s, &PODS, want.bound)
}

/// Every row under both policies against `want_of` its row; the failures.
fn run_table(
    mode: Mode,
    cycle: GangCycle,
    want_of: impl Fn(&AlgorithmCase) -> Want,
) -> Vec<String> {
    let mut failures = Vec::new();
    for case in ALGORITHM {
        for policy in POLICIES {
            if let Err(e) = run_algorithm(mode, cycle, policy, case, &want_of(case)) {
                failures.push(format!("{mode:?} {policy:?}: {}: {e}", case.name));
            }
        }
    }
    failures
}

#[test]
fn pod_group_scheduling_algorithm_upstream() {
    let mut failures = Vec::new();
    for case in ALGORITHM {
        for policy in POLICIES {
            let got = run_algorithm(
                Mode::Upstream,
                GangCycle::PodGroup,
                policy,
                case,
                &case.upstream,
            );
            let name = format!("{policy:?}: {}", case.name);
            match (case.known_difference, got) {
                (None, Ok(())) => {}
                (None, Err(e)) => failures.push(format!("{name}: {e}")),
                (Some((_, symptom)), Err(e)) if e.contains(symptom) => {}
                (Some((what, _)), got) => failures.push(format!(
                    "{name}: known difference ({what}) not seen: {got:?}"
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn pod_group_scheduling_algorithm_hardened() {
    let failures = run_table(Mode::Hardened, GangCycle::PodGroup, |case| {
        case.hardened.map_or(case.upstream, |(_, want)| want)
    });
    assert!(failures.is_empty(), "{failures:#?}");
    // Every `hardened` column is a real difference: upstream's expectation fails there.
    let differ = ALGORITHM.iter().filter(|c| c.hardened.is_some()).count();
    let failures = run_table(Mode::Hardened, GangCycle::PodGroup, |case| case.upstream);
    assert_eq!(failures.len(), 2 * differ, "{failures:#?}");
}

/// Witness: under the Permit barrier a cycle is one pod's, and every row fails.
#[test]
fn witness_the_permit_barrier_fails_every_algorithm_row() {
    for mode in MODES {
        let failures = run_table(mode, GangCycle::PermitBarrier, |case| case.upstream);
        assert_eq!(
            failures.len(),
            2 * ALGORITHM.len(),
            "{mode:?}: {failures:#?}"
        );
    }
}

/// Witness: every row with a wrong group status fails.
#[test]
fn witness_a_wrong_group_status_fails_every_row() {
    let wrong = |want: Want| Want {
        group: match want.group {
            G::Success => G::Unschedulable,
            G::Unschedulable | G::Error => G::Success,
        },
        ..want
    };
    for mode in MODES {
        let failures = run_table(mode, GangCycle::PodGroup, |case| {
            wrong(
                case.hardened
                    .filter(|_| mode == Mode::Hardened)
                    .map_or(case.upstream, |h| h.1),
            )
        });
        assert_eq!(
            failures.len(),
            2 * ALGORITHM.len(),
            "{mode:?}: {failures:#?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// TestPodGroupInfoForPod
// ---------------------------------------------------------------------------------------------

/// One row of `TestPodGroupInfoForPod`: the group's pods (name, priority, when added in ms —
/// its `InitialAttemptTimestamp`) and the order the cycle places them in (`expectedPods`).
struct OrderCase {
    name: &'static str,
    pods: &'static [(&'static str, i32, u64)],
    order: &'static [&'static str],
}

const ORDER: &[OrderCase] = &[OrderCase {
    name: "Success with multiple pods, sorted by priority and timestamp",
    pods: &[
        ("p1", 100, 0),
        ("p2", 200, 1_000),
        ("p3", 150, 2_000),
        ("p4", 150, 1_000),
    ],
    order: &["p2", "p4", "p3", "p1"],
}];

/// Runs `case` in `mode` and `cycle`: the pods added in time order, then one cycle.
fn run_order(mode: Mode, cycle: GangCycle, case: &OrderCase) -> Result<(), String> {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(cycle);
    let s = Scheduler::new(config);
    let node = Node::new(NODE, Resources::new(64_000, 256 << 30));
    s.add_node(node, Time::ZERO).expect("the node");
    let group = PodGroup::new("ns1", "pg", Policy::Basic).expect("valid fixture");
    s.add_group(group, Time::ZERO).expect("the group");
    let mut pods = case.pods.to_vec();
    pods.sort_by_key(|&(_, _, at)| at);
    let mut now = Time::ZERO;
    for (p, priority, at) in pods {
        now = Time::from_millis(at);
        let pod = member("ns1", p, "pg").with_priority(priority);
        s.add_pod(pod, now).expect("a pod");
    }
    let outcome = s.schedule_one(now);
    if let Some(CycleOutcome::PodGroup { group, .. }) = &outcome {
        ensure(group.name() == "pg", || format!("group {group}"))?;
    }
    let (_, members) = group_members(outcome)?;
    ensure(names(&members) == case.order, || {
        format!("order {:?}", names(&members))
    })
}

#[test]
fn pod_group_info_for_pod() {
    for mode in MODES {
        for case in ORDER {
            let got = run_order(mode, GangCycle::PodGroup, case);
            got.unwrap_or_else(|e| panic!("{mode:?}: {}: {e}", case.name));
        }
    }
}

/// Witness: the row with its order reversed fails.
#[test]
fn witness_a_wrong_order_fails() {
    let wrong = OrderCase {
        order: &["p1", "p3", "p4", "p2"],
        ..ORDER[0]
    };
    for mode in MODES {
        assert!(run_order(mode, GangCycle::PodGroup, &wrong).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// TestGangSchedulingFlow, isDuringPodGroupSchedulingCycle (gang_flow.rs)
// ---------------------------------------------------------------------------------------------

#[test]
fn gang_scheduling_flow_during_pod_group_cycle() {
    let mut failures = Vec::new();
    for mode in MODES {
        for case in FLOW {
            let known = case.known_difference.filter(|_| mode == Mode::Upstream);
            match (known, run_flow(mode, GangCycle::PodGroup, case)) {
                (None, Ok(())) => {}
                (None, Err(e)) => failures.push(format!("{mode:?}: {}: {e}", case.name)),
                (Some((_, symptom)), Err(e)) if e.contains(symptom) => {}
                (Some((what, _)), got) => failures.push(format!(
                    "{mode:?}: {}: known difference ({what}) not seen: {got:?}",
                    case.name
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Witness: under the Permit barrier the order and flow drivers fail every row too.
#[test]
fn witness_the_permit_barrier_fails_every_order_and_flow_row() {
    for mode in MODES {
        for case in ORDER {
            assert!(
                run_order(mode, GangCycle::PermitBarrier, case).is_err(),
                "{}",
                case.name
            );
        }
        for case in FLOW {
            assert!(
                run_flow(mode, GangCycle::PermitBarrier, case).is_err(),
                "{}",
                case.name
            );
        }
    }
}
