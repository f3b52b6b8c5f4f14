//! The pod-group cycle through a real [`Scheduler`]: a feasible gang admitted whole in one
//! cycle, an infeasible one handed back with nothing reserved, and two gangs that each fit
//! alone but not together — where the Permit barrier holds both (I9's witness) and the
//! pod-group cycle binds one with no timeout.

use std::time::Duration;

use super::{CycleOutcome, GangCycle, Node, Scheduler, SchedulerConfig};
use crate::queue::QueuePlace;
use crate::{Mode, Pod, PodGroup, Resources, Time};

const CPU: u64 = 1_000;
const MODES: [Mode; 2] = [Mode::Upstream, Mode::Hardened];

fn scheduler(mode: Mode, cycle: GangCycle, cpus: u64) -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(cycle)
        .with_permit_timeout(Duration::from_secs(10));
    let s = Scheduler::new(config);
    s.add_node(
        Node::new("n", Resources::new(cpus * CPU, 64 << 30)),
        Time::ZERO,
    )
    .unwrap();
    s
}

fn member(group: &str, i: usize) -> Pod {
    let name = format!("{group}-{i}");
    Pod::new(name.as_str(), "ml", &name)
        .with_group(group)
        .with_requests(Resources::new(CPU, 1 << 30))
}

fn add_gang(s: &Scheduler, group: &str, size: usize, min_count: u32) {
    s.add_group(PodGroup::gang("ml", group, min_count).unwrap(), Time::ZERO)
        .unwrap();
    for i in 0..size {
        s.add_pod(member(group, i), Time::ZERO).unwrap();
    }
}

fn members(outcome: &CycleOutcome) -> (bool, &[CycleOutcome]) {
    match outcome {
        CycleOutcome::PodGroup {
            admitted, members, ..
        } => (*admitted, members),
        other => panic!("not a pod-group cycle: {other:?}"),
    }
}

#[test]
fn a_feasible_gang_is_admitted_whole_in_one_cycle_and_binds() {
    for mode in MODES {
        let s = scheduler(mode, GangCycle::PodGroup, 4);
        add_gang(&s, "g", 3, 3);
        let outcome = s.schedule_one(Time::ZERO).expect("a member is active");
        let (admitted, each) = members(&outcome);
        assert!(admitted, "{mode:?}: {outcome:?}");
        assert_eq!(each.len(), 3, "the popped member brought its two siblings");
        assert!(
            s.schedule_one(Time::ZERO).is_none(),
            "nobody left in the queue"
        );
        assert!(s.held_and_waiting().is_empty(), "{mode:?}: nobody waits");
        s.check().unwrap();
        assert_eq!(s.run_binding_cycles(Time::ZERO), 3);
        assert_eq!(s.stats().bound, 3, "{mode:?}");
        assert_eq!(s.stats().permit_timeouts, 0);
    }
}

#[test]
fn an_infeasible_gang_goes_back_whole_with_nothing_reserved() {
    for mode in MODES {
        // Room for two of a gang of three.
        let s = scheduler(mode, GangCycle::PodGroup, 2);
        add_gang(&s, "g", 3, 3);
        let outcome = s.schedule_one(Time::ZERO).unwrap();
        let (admitted, each) = members(&outcome);
        assert!(!admitted, "{mode:?}");
        assert_eq!(each.len(), 3);
        assert!(each
            .iter()
            .all(|o| matches!(o, CycleOutcome::Unschedulable { .. })));
        assert!(s.in_binding().is_empty(), "{mode:?}: nothing reserved");
        assert_eq!(s.cache().snapshot().assumed_count(), 0);
        assert!(s.waiting().is_empty());
        for i in 0..3 {
            let place = s.queue().place(member("g", i).id());
            assert!(
                place.is_some_and(|p| p != QueuePlace::InFlight),
                "{mode:?}: member {i} back in the queue: {place:?}"
            );
        }
        s.check().unwrap();
    }
}

#[test]
fn upstream_reports_each_placed_member_with_its_permit_wait_message() {
    let s = scheduler(Mode::Upstream, GangCycle::PodGroup, 2);
    add_gang(&s, "g", 3, 3);
    let outcome = s.schedule_one(Time::ZERO).unwrap();
    let messages: Vec<String> = members(&outcome)
        .1
        .iter()
        .map(|o| match o {
            CycleOutcome::Unschedulable { status, .. } => status.message(),
            other => panic!("{other:?}"),
        })
        .collect();
    // `NewStatus(Unschedulable, permitStatus.Message()).WithError(errPodGroupUnschedulable)`:
    // the error's text comes first (the real fwk.Status, run by tests/conformance_pod_group).
    let wait = "pod group is unschedulable, \
                waiting for minCount pods from a gang to be scheduled, \
                one or more plugins asked to wait and no plugin rejected pod";
    assert_eq!(messages[0], wait);
    assert_eq!(messages[1], wait);
    assert!(
        messages[2].starts_with("0/1 nodes are available"),
        "{}",
        messages[2]
    );
}

#[test]
fn hardened_stops_placing_once_quorum_is_out_of_reach() {
    // Room for one of a gang of three: the second member finds no room, and with one left
    // the quorum of three is out of reach — the third is not tried.
    let s = scheduler(Mode::Hardened, GangCycle::PodGroup, 1);
    add_gang(&s, "g", 3, 3);
    let before = s.stats().cycles;
    let outcome = s.schedule_one(Time::ZERO).unwrap();
    assert!(!members(&outcome).0);
    assert_eq!(s.stats().cycles - before, 2, "two members tried, not three");
    s.check().unwrap();
}

/// Upstream: a group whose PodGroup object went away after its members were queued fails its
/// Permit with an error, and only a placed member reaches Permit: a member that finds no room
/// is passed over and the next one tried, as kube-scheduler's pod-group cycle does (Hardened's
/// stop once quorum is out of reach is its own). The steps' mutants of 2026-12-07 that made
/// Upstream stop at the member that found no room went unnoticed by every tier.
#[test]
fn upstream_passes_over_an_unplaced_member_of_a_group_gone_to_the_one_that_fails_permit() {
    let s = scheduler(Mode::Upstream, GangCycle::PodGroup, 1);
    s.add_group(PodGroup::gang("ml", "g", 2).unwrap(), Time::ZERO)
        .unwrap();
    let too_big = Pod::new("g-0", "ml", "g-0")
        .with_group("g")
        .with_requests(Resources::new(4 * CPU, 1 << 30));
    s.add_pod(too_big, Time::ZERO).unwrap();
    s.add_pod(member("g", 1), Time::ZERO).unwrap();
    s.add_pod(member("g", 2), Time::ZERO).unwrap();
    assert!(s.delete_group(&crate::GroupKey::new("ml", "g")).unwrap());
    let before = s.stats().cycles;
    let outcome = s
        .schedule_one(Time::ZERO)
        .expect("the group's members are queued");
    let CycleOutcome::PodGroup {
        admitted, status, ..
    } = &outcome
    else {
        panic!("not a pod-group cycle: {outcome:?}");
    };
    assert!(!admitted);
    assert!(
        status
            .message()
            .contains("podgroup.scheduling.k8s.io \"g\" not found"),
        "{status:?}"
    );
    assert_eq!(
        s.stats().cycles - before,
        2,
        "g-0 finds no room, g-1 is placed and fails Permit, g-2 is not tried"
    );
    s.check().unwrap();
}

/// Two gangs of three on room for four, their members arriving interleaved: each gang fits
/// alone, not both.
fn contention(mode: Mode, cycle: GangCycle) -> Scheduler {
    let s = scheduler(mode, cycle, 4);
    for group in ["a", "b"] {
        s.add_group(PodGroup::gang("ml", group, 3).unwrap(), Time::ZERO)
            .unwrap();
    }
    let mut arrival = 0;
    for i in 0..3 {
        for group in ["a", "b"] {
            arrival += 1;
            s.add_pod(member(group, i), Time::from_millis(arrival))
                .unwrap();
        }
    }
    s
}

#[test]
fn the_barrier_holds_two_gangs_that_do_not_fit_together_until_a_timeout() {
    for mode in MODES {
        let s = contention(mode, GangCycle::PermitBarrier);
        let now = Time::from_millis(10);
        while s.schedule_one(now).is_some() {}
        s.run_binding_cycles(now);
        // a-0, b-0, a-1, b-1 hold the four nodes' room and wait; a-2 and b-2 find none.
        assert_eq!(s.held_and_waiting().len(), 4, "{mode:?}: I9's witness");
        assert_eq!(s.stats().bound, 0, "{mode:?}: neither gang binds");
        // Only the timeout breaks it.
        s.tick(Time::from_secs(11));
        s.run_binding_cycles(Time::from_secs(11));
        assert!(s.stats().permit_timeouts > 0, "{mode:?}");
        assert!(s.held_and_waiting().is_empty());
    }
}

#[test]
fn the_pod_group_cycle_binds_one_of_two_contending_gangs_with_no_timeout() {
    for mode in MODES {
        let s = contention(mode, GangCycle::PodGroup);
        let now = Time::from_millis(10);
        while s.schedule_one(now).is_some() {
            assert!(s.held_and_waiting().is_empty(), "{mode:?}: I9");
            s.check().unwrap();
        }
        s.run_binding_cycles(now);
        assert_eq!(s.stats().bound, 3, "{mode:?}: one gang bound");
        assert_eq!(s.stats().permit_timeouts, 0, "{mode:?}: no timeout fired");
        assert_eq!(s.cache().snapshot().assumed_count(), 0);
        s.check().unwrap();
    }
}

/// Refuses the member named `g-1`; allows everyone else.
struct RefusesSecond;

impl crate::PermitPlugin for RefusesSecond {
    fn name(&self) -> crate::PluginName {
        "Quota".into()
    }
    fn permit(&self, pod: &Pod, _: &str) -> crate::PermitVerdict {
        if pod.name() == "g-1" {
            crate::PermitVerdict::reject("over quota")
        } else {
            crate::PermitVerdict::Allow
        }
    }
}

/// A pod-group scheduler in `mode` with room for four members, `plugin` beside the gang's at
/// Permit, and gang `g` of two (minimum two).
fn with_permit_plugin(mode: Mode, plugin: impl crate::PermitPlugin + 'static) -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(GangCycle::PodGroup);
    let plugin = crate::sync::Arc::new(plugin) as crate::sync::Arc<dyn crate::PermitPlugin>;
    let plugins = crate::PermitPlugins::new([plugin]).unwrap();
    let s = Scheduler::builder(config).permit_plugins(plugins).build();
    let node = Node::new("n", Resources::new(4 * CPU, 64 << 30));
    s.add_node(node, Time::ZERO).unwrap();
    add_gang(&s, "g", 2, 2);
    s
}

/// 1.36's `podGroupPodSchedulingAlgorithm` runs the Permit plugins on each member it assumes
/// and reverts one they reject, so that member does not count towards quorum: a gang of two
/// whose second member another plugin refuses is infeasible, in both modes, and nothing is
/// reserved (before, Upstream counted the refused member, admitted the gang and left the first
/// member allowed alone once the real Permit refused the second).
#[test]
fn a_member_another_permit_plugin_refuses_does_not_count_towards_quorum() {
    for mode in MODES {
        let s = with_permit_plugin(mode, RefusesSecond);
        let outcome = s.schedule_one(Time::ZERO).unwrap();
        let (admitted, each) = members(&outcome);
        assert!(!admitted, "{mode:?}: {outcome:?}");
        assert!(
            matches!(&each[1], CycleOutcome::Unschedulable { status, .. }
                if status.plugin().map(|p| p.to_string()) == Some("Quota".to_owned())),
            "{mode:?}: the refused member goes back with the plugin's status: {each:?}"
        );
        s.run_binding_cycles(Time::ZERO);
        assert_eq!(s.stats().bound, 0, "{mode:?}: no member bound alone");
        assert!(s.held_and_waiting().is_empty(), "{mode:?}");
        assert!(s.leaked_reservations().is_empty(), "{mode:?}");
        s.check().unwrap();
    }
}

/// Asks the member named `g-1` to wait; allows everyone else.
struct HoldsSecond;

impl crate::PermitPlugin for HoldsSecond {
    fn name(&self) -> crate::PluginName {
        "Hold".into()
    }
    fn permit(&self, pod: &Pod, _: &str) -> crate::PermitVerdict {
        if pod.name() == "g-1" {
            crate::PermitVerdict::wait(Duration::from_secs(5))
        } else {
            crate::PermitVerdict::Allow
        }
    }
}

/// 1.36 keeps a member another plugin asks to wait assumed (it counts towards quorum), but its
/// Permit is then a wait, not the success that makes the group feasible: when that member is
/// the one that reaches quorum and no member follows, the group is infeasible. Hardened refuses
/// the wait (only the gang may hold a member, H1): infeasible too. Nothing is reserved either
/// way.
#[test]
fn a_quorum_member_another_plugin_holds_does_not_make_the_group_feasible() {
    for mode in MODES {
        let s = with_permit_plugin(mode, HoldsSecond);
        let outcome = s.schedule_one(Time::ZERO).unwrap();
        let (admitted, _) = members(&outcome);
        assert!(!admitted, "{mode:?}: {outcome:?}");
        s.run_binding_cycles(Time::ZERO);
        assert_eq!(s.stats().bound, 0, "{mode:?}");
        assert!(s.held_and_waiting().is_empty(), "{mode:?}");
        assert!(s.leaked_reservations().is_empty(), "{mode:?}");
        s.check().unwrap();
    }
}

/// 1.36 wraps a Permit rejection on the snapshot in a FitError over the one node the member
/// was assumed on (`podGroupPodSchedulingAlgorithm`); gangway handed back the plugin's bare
/// message until the driver differential showed it
/// (upstream/traces/driver_pod_group_permit_rejects.jsonl). The plugin stays the rejector.
#[test]
fn a_permit_rejection_on_the_snapshot_is_a_fit_error_over_one_node() {
    for mode in MODES {
        let s = with_permit_plugin(mode, RefusesSecond);
        let outcome = s.schedule_one(Time::ZERO).unwrap();
        let (_, each) = members(&outcome);
        let CycleOutcome::Unschedulable { status, .. } = &each[1] else {
            panic!("{mode:?}: {each:?}");
        };
        assert_eq!(status.message(), "0/1 nodes are available: 1 over quota.");
        assert_eq!(status.plugin().map(|p| p.to_string()), Some("Quota".into()));
        s.check().unwrap();
    }
}

/// With no node at all, 1.36's `schedulingAlgorithm` makes `ErrNoNodesAvailable` an
/// UnschedulableAndUnresolvable status: the pod-group cycle goes on to the next member, each
/// backs off as an error with its own "no nodes available" and the group is unschedulable, not
/// in error. gangway stopped at the first member with "failed to schedule other pod from a pod
/// group" until the driver differential showed it (upstream/traces/driver_pod_group_no_nodes.jsonl).
#[test]
fn no_node_at_all_is_each_members_own_verdict_not_the_groups_error() {
    let config = SchedulerConfig::default()
        .with_mode(Mode::Upstream)
        .with_gang_cycle(GangCycle::PodGroup);
    let s = Scheduler::new(config);
    add_gang(&s, "g", 2, 2);
    let outcome = s.schedule_one(Time::ZERO).unwrap();
    let (admitted, each) = members(&outcome);
    assert!(!admitted);
    for m in each {
        let CycleOutcome::Unschedulable { pod, status } = m else {
            panic!("{each:?}");
        };
        assert_eq!(status.message(), super::ResourceFit::NO_NODES);
        let place = s.queue().snapshot().place(pod);
        assert!(
            matches!(place, Some(QueuePlace::ErrorBackoff(_))),
            "{place:?}"
        );
    }
    let condition = outcome.pod_group_scheduled().unwrap();
    assert_eq!(condition.reason, super::PodGroupScheduled::UNSCHEDULABLE);
    assert_eq!(condition.message, "pod group is unschedulable");
    s.check().unwrap();
}

/// Found by `shuttle_step_races` (a node leaving as pods are placed): the node a Hardened
/// pod-group cycle placed its gang on left between the snapshot and the commit. The commit's
/// assume failed — an error, not the gang plugin's verdict — but the gang went back rejected
/// by the gang plugin, parked for an event the new node's arrival is not, and waited for the
/// leftover flush although it fit. It backs off as after an error now, as Upstream's member by
/// member commit (the scheduling cycle's own assume) always did.
#[test]
fn regression_a_node_leaving_before_the_commit_backs_the_gang_off_as_an_error() {
    for mode in MODES {
        let s = scheduler(mode, GangCycle::PodGroup, 4);
        add_gang(&s, "g", 2, 2);
        let popped = s.queue().pop().expect("a member is active");
        let group = popped.info.pod().group_key().cloned().unwrap();
        let mut p = s.parts();
        let gathered = super::steps::gather(&mut p, popped, group, Time::ZERO).unwrap();
        let sim = super::steps::simulate(&mut p, gathered);
        s.delete_node("n", Time::ZERO).unwrap();
        s.add_node(
            Node::new("m", Resources::new(4 * CPU, 64 << 30)),
            Time::ZERO,
        )
        .unwrap();
        let outcome = super::steps::commit(&mut p, sim, Time::ZERO);
        let (admitted, each) = members(&outcome);
        // Upstream's group status is the simulation's (feasible); its members failed one by one.
        assert_eq!(admitted, mode == Mode::Upstream, "{mode:?}: {outcome:?}");
        assert_eq!(each.len(), 2, "{mode:?}");
        for i in 0..2 {
            let place = s.queue().place(member("g", i).id());
            assert!(
                matches!(place, Some(QueuePlace::ErrorBackoff(_))),
                "{mode:?}: g-{i} is {place:?}, not in the error backoff"
            );
        }
        s.check().unwrap();
        assert_eq!(s.cache().with(|c| c.assumed_count()), 0, "{mode:?}");
    }
}

/// Hardened: a member the snapshot placed, deleted before the commit (found by the
/// `scheduler_events` fuzz target once it judged its rests). The commit's reserve of that
/// member failed and the gang went back rejected by the gang plugin: its other members parked
/// waiting for an event a delete is not, though the gang still fit without it — a member the
/// placement had turned away for room its siblings took on the snapshot waited for the
/// leftover flush with that room free. The snapshot was stale, not the gang infeasible: the
/// others back off as after an error now, and are tried again.
#[test]
fn regression_a_member_deleted_before_the_commit_backs_the_rest_off_as_an_error() {
    let s = scheduler(Mode::Hardened, GangCycle::PodGroup, 4);
    add_gang(&s, "g", 3, 2);
    let popped = s.queue().pop().expect("a member is active");
    let group = popped.info.pod().group_key().cloned().unwrap();
    let mut p = s.parts();
    let gathered = super::steps::gather(&mut p, popped, group, Time::ZERO).unwrap();
    let sim = super::steps::simulate(&mut p, gathered);
    assert!(s.delete_pod(&member("g", 2), Time::ZERO).unwrap());
    let outcome = super::steps::commit(&mut p, sim, Time::ZERO);
    let (admitted, each) = members(&outcome);
    assert!(!admitted, "{outcome:?}");
    assert_eq!(each.len(), 3);
    for i in 0..2 {
        let place = s.queue().place(member("g", i).id());
        assert!(
            matches!(place, Some(QueuePlace::ErrorBackoff(_))),
            "g-{i} is {place:?}, not in the error backoff"
        );
    }
    s.check().unwrap();
    assert_eq!(s.cache().with(|c| c.assumed_count()), 0);
}
