use std::time::Duration;

use super::steps;
use super::{Node, Scheduler, SchedulerConfig};
use crate::queue::QueuePlace;
use crate::{Mode, Pod, PodGroup, PodId, Resources, Time};

const CPU: u64 = 1_000;

fn member(i: usize) -> Pod {
    Pod::new(format!("m{i}"), "ml", &format!("m{i}"))
        .with_group("g")
        .with_requests(Resources::new(CPU, 1 << 30))
}

/// A gang of four on a node with room for three: three members wait at Permit.
fn three_waiting(mode: Mode) -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_permit_timeout(Duration::from_secs(10));
    let s = Scheduler::new(config);
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(3 * CPU, 8 << 30)), now)
        .unwrap();
    s.add_group(PodGroup::gang("ml", "g", 4).unwrap(), now)
        .unwrap();
    for i in 0..4 {
        s.add_pod(member(i), now).unwrap();
    }
    while s.schedule_one(now).is_some() {}
    assert_eq!(
        s.waiting().len(),
        3,
        "three members wait, the fourth found no room"
    );
    s
}

fn queued(s: &Scheduler, id: &PodId) -> bool {
    s.queue()
        .place(id)
        .is_some_and(|p| p != QueuePlace::InFlight)
}

/// H2: the first binding cycle of a failed Hardened attempt hands every rejected member back
/// together (one `add_gang_unschedulable`, one backoff); the siblings' own cycles find nothing.
#[test]
fn a_timed_out_hardened_gang_comes_back_together_in_one_binding_cycle() {
    let s = three_waiting(Mode::Hardened);
    s.tick(Time::from_secs(10));
    let Some(job) = s.inner.driver.with(|d| d.next_job()) else {
        panic!("a rejection is queued");
    };
    assert!(job.waited, "the pod waited at Permit");
    steps::binding_cycle(&mut s.parts(), job, Time::from_secs(10));
    let waited: Vec<PodId> = (0..3).map(|i| member(i).id().clone()).collect();
    assert!(waited.iter().all(|id| queued(&s, id)), "all three are back");
    assert!(s.in_binding().is_empty());
    let places: Vec<_> = waited.iter().map(|id| s.queue().place(id)).collect();
    assert!(
        places.windows(2).all(|w| w[0] == w[1]),
        "one backoff: {places:?}"
    );
    assert_eq!(
        s.run_binding_cycles(Time::from_secs(10)),
        0,
        "the siblings' jobs left with them"
    );
    assert_eq!(s.stats().permit_timeouts, 3);
    s.check().unwrap();
}

/// Upstream has no gang attempt: each member times out and comes back on its own.
#[test]
fn upstream_members_come_back_one_binding_cycle_at_a_time() {
    let s = three_waiting(Mode::Upstream);
    s.tick(Time::from_secs(10));
    let Some(job) = s.inner.driver.with(|d| d.next_job()) else {
        panic!("a rejection is queued");
    };
    steps::binding_cycle(&mut s.parts(), job, Time::from_secs(10));
    let back = (0..3).filter(|&i| queued(&s, member(i).id())).count();
    assert_eq!(back, 1);
    assert_eq!(s.run_binding_cycles(Time::from_secs(10)), 2);
    s.check().unwrap();
}

/// A pod that found only a cordoned node is asked again when the node is uncordoned (I7 for
/// node updates): the update is announced, NodeResourcesFit's hint queues it.
#[test]
fn uncordoning_a_node_schedules_the_pod_that_found_it_cordoned() {
    use super::UpdateNodeError;
    use crate::{Taint, TaintEffect};
    let s = Scheduler::new(SchedulerConfig::default());
    let now = Time::ZERO;
    let cordon = Taint::new(
        "node.kubernetes.io/unschedulable",
        "",
        TaintEffect::NoSchedule,
    );
    let node = Node::new("n", Resources::new(4 * CPU, 8 << 30));
    s.add_node(node.clone().with_taint(cordon), now).unwrap();
    let solo = Pod::new("solo", "ml", "solo").with_requests(Resources::new(CPU, 1 << 30));
    s.add_pod(solo.clone(), now).unwrap();
    while s.schedule_one(now).is_some() {}
    assert_eq!(s.queue().place(solo.id()), Some(QueuePlace::Unschedulable));
    assert_eq!(s.update_node(node.clone(), now), Ok(true), "uncordoned");
    assert_ne!(
        s.queue().place(solo.id()),
        Some(QueuePlace::Unschedulable),
        "asked again"
    );
    let later = now + Duration::from_secs(10);
    s.tick(later);
    while s.schedule_one(later).is_some() || s.run_binding_cycles(later) > 0 {}
    assert!(s.is_bound(solo.id()));
    assert_eq!(s.update_node(node.clone(), later), Ok(false), "a resync");
    s.close();
    assert!(matches!(
        s.update_node(node, later),
        Err(UpdateNodeError::ShutDown(_))
    ));
    s.check().unwrap();
}

/// Holds every pod at Permit for a minute: an embedder's Permit plugin.
struct HoldsAll;

impl crate::PermitPlugin for HoldsAll {
    fn name(&self) -> crate::PluginName {
        "Hold".into()
    }

    fn permit(&self, _: &Pod, _: &str) -> crate::PermitVerdict {
        crate::PermitVerdict::wait(Duration::from_secs(60))
    }
}

/// The embedder's Permit plugins: [`HoldsAll`] alone.
fn holds_all() -> crate::PermitPlugins {
    use crate::sync::Arc;
    crate::PermitPlugins::new([Arc::new(HoldsAll) as Arc<dyn crate::PermitPlugin>]).unwrap()
}

/// A plain pod deleted after its Reserve and before its Permit, where an embedder's plugin
/// holds it (found by the `scheduler_events` fuzz target's split cycles: in Hardened it waited
/// at Permit, deleted, with its room, until the plugin's deadline). Hardened rejects its wait
/// at once and its binding cycle frees its room (I6). Upstream waits on, as kube-scheduler's
/// does, its room freed at the delete (`handleAssumedPodDeletion`).
#[test]
fn regression_a_pod_deleted_before_its_permit_is_not_left_waiting_with_its_room() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let holds = holds_all();
        let s = Scheduler::builder(SchedulerConfig::default().with_mode(mode))
            .permit_plugins(holds)
            .build();
        let now = Time::ZERO;
        s.add_node(Node::new("n", Resources::new(CPU, 8 << 30)), now)
            .unwrap();
        let pod = Pod::new("p", "ml", "p").with_requests(Resources::new(CPU, 1 << 30));
        s.add_pod(pod.clone(), now).unwrap();
        let popped = s.queue().try_pop().expect("p is active");
        let mut parts = s.parts();
        let Ok(steps::Placed::Reserved { pod: placed, node }) =
            steps::place_and_reserve(&mut parts, popped, now)
        else {
            panic!("{mode:?}: p fits the node");
        };
        assert!(s.delete_pod(&pod, now).unwrap(), "{mode:?}");
        steps::permit(&mut parts, placed, node, now);
        match mode {
            Mode::Hardened => {
                assert!(s.waiting().is_empty(), "Hardened: not left waiting");
                assert_eq!(
                    s.run_binding_cycles(now),
                    1,
                    "its rejection's binding cycle"
                );
            }
            _ => assert_eq!(
                s.waiting().len(),
                1,
                "Upstream: waits on, as upstream's does"
            ),
        }
        assert_eq!(
            s.cache().pod_node(pod.id()),
            None,
            "{mode:?}: its room is free"
        );
        assert!(
            s.in_binding().is_empty() || mode == Mode::Upstream,
            "{mode:?}"
        );
        s.check().unwrap();
    }
}

/// A scheduler in `mode` with `permit` beside the gang plugin, a node with room for one pod,
/// pods `a` and `b` each needing all of it, `a` through its scheduling cycle and `b` parked
/// for want of room.
fn b_parked_behind_a(mode: Mode, permit: crate::PermitPlugins) -> (Scheduler, Pod, Pod) {
    let s = Scheduler::builder(SchedulerConfig::default().with_mode(mode))
        .permit_plugins(permit)
        .build();
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(CPU, 8 << 30)), now)
        .unwrap();
    let pod = |name: &str| Pod::new(name, "ml", name).with_requests(Resources::new(CPU, 1 << 30));
    let (a, b) = (pod("a"), pod("b"));
    s.add_pod(a.clone(), now).unwrap();
    s.add_pod(b.clone(), now).unwrap();
    s.schedule_one(now).expect("a is placed");
    s.schedule_one(now).expect("b finds no room");
    assert_eq!(
        s.queue().place(b.id()),
        Some(QueuePlace::Unschedulable),
        "{mode:?}"
    );
    (s, a, b)
}

/// Whether `b`, parked for want of room, has been asked again (moved out of the
/// unschedulable pods).
fn asked_again(s: &Scheduler, b: &Pod) -> bool {
    s.queue().place(b.id()) != Some(QueuePlace::Unschedulable)
}

/// `a`, allowed and waiting for its binding cycle, is observed bound to `n` by someone else
/// (its object names the node), then deleted.
fn observed_bound_then_deleted(s: &Scheduler, a: &Pod, now: Time) {
    let observed = a.clone().with_node("n");
    s.update_pod(a.clone(), observed.clone(), now).unwrap();
    assert!(s.delete_pod(&observed, now).unwrap(), "a was known");
}

/// A pod deleted before its binding cycle ran: the cycle frees its room and announces it, so
/// the pod parked for that room is asked again at once, not at the leftover flush (I7;
/// kubernetes PR #134157 in the bug corpus: `Flaw::DeleteAnnouncesNothing`).
#[test]
fn a_pod_deleted_before_its_binding_cycle_announces_the_room_it_frees() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let (s, a, b) = b_parked_behind_a(mode, crate::PermitPlugins::none());
        assert!(s.delete_pod(&a, Time::ZERO).unwrap());
        assert_eq!(s.run_binding_cycles(Time::ZERO), 1, "{mode:?}: a's cycle");
        assert!(asked_again(&s, &b), "{mode:?}: b is asked again");
        s.check().unwrap();
    }
}

/// A pod rejected while it waited at Permit: its binding cycle frees its room and announces it
/// to every pod but itself (I7; kubernetes#96478 in the bug corpus:
/// `Flaw::ReleaseAnnouncesNothing`).
#[test]
fn a_pod_rejected_at_permit_announces_the_room_it_frees() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let holds = holds_all();
        let (s, a, b) = b_parked_behind_a(mode, holds);
        assert!(s.waiting().reject(a.id(), "Hold", "no quota"), "{mode:?}");
        assert_eq!(s.run_binding_cycles(Time::ZERO), 1, "{mode:?}: a's cycle");
        // Rejected by Hold, a is parked for Hold's events: not backing off as after an error.
        assert_eq!(
            s.queue().place(a.id()),
            Some(QueuePlace::Unschedulable),
            "{mode:?}"
        );
        assert!(asked_again(&s, &b), "{mode:?}: b is asked again");
        s.check().unwrap();
    }
}

/// A scheduling cycle that sends its pod back tells the embedder so, once, naming that pod:
/// `by_hand::cycle_pod_outcomes` and `deliver_cycle_outcome` (the steps' mutants of
/// 2026-12-07: the unit tier noticed neither an outcome never sent nor one for the wrong pod).
#[test]
fn a_pod_sent_back_by_its_scheduling_cycle_hears_so() {
    let (sink, outcomes) = super::outcome_channel();
    let s = Scheduler::builder(SchedulerConfig::default())
        .outcomes(sink)
        .build();
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(CPU, 8 << 30)), now)
        .unwrap();
    let pod = |name: &str| Pod::new(name, "ml", name).with_requests(Resources::new(CPU, 1 << 30));
    s.add_pod(pod("a"), now).unwrap();
    s.add_pod(pod("b"), now).unwrap();
    s.schedule_one(now).expect("a is placed");
    assert!(
        outcomes.try_recv().is_none(),
        "a hears from its binding cycle"
    );
    s.schedule_one(now).expect("b finds no room");
    match outcomes.try_recv() {
        Some(super::PodOutcome::Unschedulable { pod, .. }) => assert_eq!(pod.name(), "b"),
        other => panic!("b's outcome: {other:?}"),
    }
    assert!(outcomes.try_recv().is_none(), "one outcome");
}

/// A tick says how many pods each flush moved (`Tick::leftover_flushed`,
/// `Tick::backoff_completed`), as an embedder driving the scheduler reads them (the steps'
/// mutants of 2026-12-07: the counts replaced by 0 or 1 went unnoticed by the unit tier).
#[test]
fn a_tick_counts_the_pods_its_flushes_move() {
    let s = Scheduler::new(SchedulerConfig::default());
    let now = Time::ZERO;
    let small = |cpus| Node::new("n", Resources::new(cpus, 8 << 30));
    s.add_node(small(CPU / 2), now).unwrap();
    for name in ["a", "b"] {
        let pod = Pod::new(name, "ml", name).with_requests(Resources::new(CPU, 1 << 30));
        s.add_pod(pod, now).unwrap();
    }
    while s.schedule_one(now).is_some() {}
    // Both parked for room; the leftover flush retries them after five minutes.
    let tick = s.tick(Time::from_secs(6 * 60));
    assert_eq!(tick.leftover_flushed, 2, "{tick:?}");
    while s.schedule_one(Time::from_secs(6 * 60)).is_some() {}
    // A node that grows moves both to the backoff, which ends within seconds.
    let grown = Time::from_secs(6 * 60) + Duration::from_millis(100);
    s.update_node(small(CPU / 2 + 1), grown).unwrap();
    let tick = s.tick(Time::from_secs(7 * 60));
    assert_eq!(tick.backoff_completed, 2, "{tick:?}");
}

/// A delete says whether it found what it deleted (`Scheduler::delete_pod`,
/// `Scheduler::delete_group`: `Ok(false)` for the unknown), for each place a pod can be known
/// in alone: queued (no group), bound (the cache). The steps' mutants of 2026-12-07: `remove_pod`'s
/// answer with its `||` turned `&&`, and `group_deleted`'s answer fixed, went unnoticed.
#[test]
fn a_delete_says_whether_it_found_the_pod_or_group() {
    let s = Scheduler::new(SchedulerConfig::default());
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(CPU, 8 << 30)), now)
        .unwrap();
    let plain = Pod::new("q", "ml", "q");
    assert!(!s.delete_pod(&plain, now).unwrap(), "unknown");
    s.add_pod(plain.clone(), now).unwrap();
    assert!(s.delete_pod(&plain, now).unwrap(), "queued");
    assert_eq!(s.queue().place(plain.id()), None);
    let bound = Pod::new("b", "ml", "b").with_node("n");
    s.add_pod(bound.clone(), now).unwrap();
    assert!(s.delete_pod(&bound, now).unwrap(), "bound");
    assert_eq!(s.cache().pod_node(bound.id()), None);
    assert!(!s.delete_pod(&bound, now).unwrap(), "deleted already");
    let group = PodGroup::gang("ml", "g", 2).unwrap();
    assert!(!s.delete_group(group.key()).unwrap(), "unknown group");
    s.add_group(group.clone(), now).unwrap();
    assert!(s.delete_group(group.key()).unwrap(), "known group");
    assert!(!s.delete_group(group.key()).unwrap(), "deleted already");
    s.check().unwrap();
}

/// An update to a pod the scheduler has bound, arriving before the binding is observed (its
/// object still names no node: a controller's label, say), leaves it out of the queue: only a
/// pod the queue holds is updated there, as kube-scheduler skips an assumed pod's updates. The
/// steps' mutant of 2026-12-07 that sent every unbound pod's update to the queue, which adds a
/// pod it does not hold, went unnoticed: the bound pod would have been scheduled again.
#[test]
fn an_update_to_a_pod_bound_but_not_yet_observed_leaves_it_out_of_the_queue() {
    let s = Scheduler::new(SchedulerConfig::default());
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(CPU, 8 << 30)), now)
        .unwrap();
    let pod = Pod::new("p", "ml", "p").with_requests(Resources::new(CPU, 1 << 30));
    s.add_pod(pod.clone(), now).unwrap();
    s.schedule_one(now).expect("p is placed");
    assert_eq!(s.run_binding_cycles(now), 1, "p's binding cycle binds it");
    assert_eq!(s.queue().place(pod.id()), None, "done with the queue");
    let relabelled = pod.clone().with_label("team", "a");
    s.update_pod(pod.clone(), relabelled, now).unwrap();
    assert_eq!(s.queue().place(pod.id()), None, "not queued again");
    assert!(s.schedule_one(now).is_none(), "nothing to schedule");
    assert_eq!(s.cache().pod_node(pod.id()).as_deref(), Some("n"));
    s.check().unwrap();
}

/// A pod allowed and waiting for its binding cycle, observed bound by someone else (its
/// object names a node: another scheduler, or an earlier run of this one), then deleted: its
/// binding cycle finds it deleted and must free its room, though the cache no longer holds it
/// assumed (found by triaging the steps' mutants of 2026-12-07: the cycle forgot only an
/// assumed pod, and the observed-bound, deleted pod kept its room for ever).
#[test]
fn regression_a_pod_observed_bound_then_deleted_before_its_binding_cycle_frees_its_room() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let (s, a, b) = b_parked_behind_a(mode, crate::PermitPlugins::none());
        let now = Time::ZERO;
        observed_bound_then_deleted(&s, &a, now);
        assert_eq!(s.run_binding_cycles(now), 1, "{mode:?}: a's cycle");
        assert_eq!(
            s.cache().pod_node(a.id()),
            None,
            "{mode:?}: a's room is free"
        );
        assert!(asked_again(&s, &b), "{mode:?}: b is asked again");
        s.check().unwrap();
    }
}

/// The binding cycle of a pod whose delete freed its room already (observed bound, then
/// deleted) frees nothing: Hardened announces nothing more, so a pod parked since stays parked;
/// Upstream announces a second time, as kube-scheduler's `handleBindingCycleError` does after a
/// `ForgetPod` that finds nothing (the steps' mutants of 2026-12-07 that announced in Hardened
/// too went unnoticed).
#[test]
fn a_binding_cycle_that_frees_nothing_announces_nothing_in_hardened() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let (s, a, _b) = b_parked_behind_a(mode, crate::PermitPlugins::none());
        let now = Time::ZERO;
        observed_bound_then_deleted(&s, &a, now);
        let too_big = Pod::new("c", "ml", "c").with_requests(Resources::new(2 * CPU, 1 << 30));
        s.add_pod(too_big.clone(), now).unwrap();
        while s.schedule_one(now).is_some() {}
        assert_eq!(
            s.queue().place(too_big.id()),
            Some(QueuePlace::Unschedulable),
            "{mode:?}: c is parked, after the delete's announcement"
        );
        assert_eq!(s.run_binding_cycles(now), 2, "{mode:?}: a's cycle and b's");
        let parked = s.queue().place(too_big.id()) == Some(QueuePlace::Unschedulable);
        assert_eq!(parked, mode == Mode::Hardened, "{mode:?}");
        s.check().unwrap();
    }
}

/// Upstream: a pod deleted after its Reserve and before its Permit has its room freed at the
/// delete (kube-scheduler's `handleAssumedPodDeletion` forgets an assumed pod not in its
/// waiting map), whatever other pods' decisions wait for their binding cycles: the delete asks
/// whether a decision for *this* pod is pending (the steps' mutant of 2026-12-07 that asked
/// about any other pod's went unnoticed).
#[test]
fn upstream_a_pod_deleted_before_its_permit_has_its_room_freed_beside_other_decisions() {
    let s = Scheduler::new(SchedulerConfig::default().with_mode(Mode::Upstream));
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(2 * CPU, 8 << 30)), now)
        .unwrap();
    let pod = |name: &str| Pod::new(name, "ml", name).with_requests(Resources::new(CPU, 1 << 30));
    let (allowed, deleted) = (pod("a"), pod("d"));
    s.add_pod(allowed.clone(), now).unwrap();
    s.schedule_one(now).expect("a is placed and allowed");
    s.add_pod(deleted.clone(), now).unwrap();
    let popped = s.queue().try_pop().expect("d is active");
    let mut parts = s.parts();
    let Ok(steps::Placed::Reserved { .. }) = steps::place_and_reserve(&mut parts, popped, now)
    else {
        panic!("d fits beside a");
    };
    assert!(s.delete_pod(&deleted, now).unwrap());
    assert_eq!(s.cache().pod_node(deleted.id()), None, "d's room is free");
    assert_eq!(s.cache().pod_node(allowed.id()).as_deref(), Some("n"));
}
