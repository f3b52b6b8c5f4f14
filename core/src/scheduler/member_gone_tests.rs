//! A gang member deleted before it was scheduled, with the pod-group cycle
//! (`steps/member_gone.rs`): the room it took on a cycle's snapshot turned its siblings away,
//! and was never assumed, so its delete releases nothing to announce. Hardened asks the
//! parked members again; Upstream parks them, as kube-scheduler 1.36 does.

use std::time::Duration;

use super::{CycleOutcome, GangCycle, Node, Scheduler, SchedulerConfig};
use crate::queue::QueuePlace;
use crate::{Mode, Pod, PodGroup, Resources, Time};

const CPU: u64 = 1_000;

/// A node of two CPUs; gang `g`, minimum 3, of two members of one CPU (`g-big0`, `g-big1`, of
/// higher priority: the cycle places them first) and two of half a CPU (`g-small0`,
/// `g-small1`). The cycle places the two large ones and turns the small ones away: two of
/// three. Without `g-big1`, `g-big0` and the two small ones fit.
fn scheduler(mode: Mode) -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(GangCycle::PodGroup)
        .with_permit_timeout(Duration::from_secs(10));
    let s = Scheduler::new(config);
    s.add_node(
        Node::new("n", Resources::new(2 * CPU, 64 << 30)),
        Time::ZERO,
    )
    .unwrap();
    s.add_group(PodGroup::gang("ml", "g", 3).unwrap(), Time::ZERO)
        .unwrap();
    for (name, cpu, priority) in [
        ("g-big0", CPU, 10),
        ("g-big1", CPU, 10),
        ("g-small0", CPU / 2, 0),
        ("g-small1", CPU / 2, 0),
    ] {
        s.add_pod(pod(name, cpu).with_priority(priority), Time::ZERO)
            .unwrap();
    }
    s
}

fn pod(name: &str, cpu: u64) -> Pod {
    Pod::new(name, "ml", name)
        .with_group("g")
        .with_requests(Resources::new(cpu, 1 << 30))
}

fn place(s: &Scheduler, name: &str) -> Option<QueuePlace> {
    s.queue().place(pod(name, 0).id())
}

fn not_admitted(outcome: &CycleOutcome) {
    match outcome {
        CycleOutcome::PodGroup { admitted, .. } => assert!(!admitted, "{outcome:?}"),
        other => panic!("not a pod-group cycle: {other:?}"),
    }
}

/// Hardened: the gang fits without the deleted member, and binds.
fn binds_without_big1(s: &Scheduler) {
    let outcome = s.schedule_one(Time::ZERO).expect("the gang is asked again");
    match &outcome {
        CycleOutcome::PodGroup { admitted, .. } => assert!(admitted, "{outcome:?}"),
        other => panic!("not a pod-group cycle: {other:?}"),
    }
    s.check().unwrap();
    assert_eq!(s.run_binding_cycles(Time::ZERO), 3);
    assert_eq!(s.stats().bound, 3);
}

/// Deleted once its gang is parked: Hardened activates the parked members.
#[test]
fn regression_a_member_deleted_while_its_gang_is_parked_asks_its_siblings_again() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let s = scheduler(mode);
        not_admitted(&s.schedule_one(Time::ZERO).expect("a member is active"));
        for name in ["g-small0", "g-small1"] {
            assert_eq!(place(&s, name), Some(QueuePlace::Unschedulable), "{mode:?}");
        }
        assert!(s.delete_pod(&pod("g-big1", CPU), Time::ZERO).unwrap());
        s.check().unwrap();
        match mode {
            Mode::Hardened => binds_without_big1(&s),
            // kube-scheduler 1.36 moves no pod for an unscheduled pod's delete.
            _ => assert_eq!(place(&s, "g-small0"), Some(QueuePlace::Unschedulable)),
        }
    }
}

/// Deleted while the cycle runs, between its simulation and its commit (the fuzz target's
/// find, `regressions/scheduler_events/member-deleted-in-the-cycle-parks-siblings-with-room`):
/// Hardened activates the members as they are handed back.
#[test]
fn regression_a_member_deleted_as_its_gang_cycle_runs_asks_its_siblings_again() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let s = scheduler(mode);
        let popped = s.queue().pop().expect("a member is active");
        assert_eq!(
            popped.info.pod().name(),
            "g-big0",
            "{mode:?}: priority first"
        );
        let group = popped.info.pod().group_key().cloned().unwrap();
        let mut p = s.parts();
        let gathered = super::steps::gather(&mut p, popped, group, Time::ZERO).unwrap();
        let sim = super::steps::simulate(&mut p, gathered);
        assert!(s.delete_pod(&pod("g-big1", CPU), Time::ZERO).unwrap());
        not_admitted(&super::steps::commit(&mut p, sim, Time::ZERO));
        s.check().unwrap();
        match mode {
            Mode::Hardened => {
                for name in ["g-big0", "g-small0", "g-small1"] {
                    let at = place(&s, name);
                    assert!(
                        matches!(at, Some(QueuePlace::Active(_))),
                        "{name} is {at:?}"
                    );
                }
                binds_without_big1(&s);
            }
            _ => assert_eq!(place(&s, "g-small0"), Some(QueuePlace::Unschedulable)),
        }
    }
}
