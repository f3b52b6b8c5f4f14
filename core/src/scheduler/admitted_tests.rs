//! A gang the Hardened pod-group cycle admitted, while it binds (`steps/admitted.rs`): a
//! failed bind, a delete or a raised minimum that leaves it short of quorum releases the
//! members still waiting to bind, together and reported; one deadline bounds its binding; a
//! failure that leaves the quorum whole releases nothing. Upstream keeps 1.36's behaviour: each
//! member binds or fails on its own.

use std::time::Duration;

use super::{
    outcome_channel, GangCycle, InMemoryBinder, Node, PodOutcome, Scheduler, SchedulerConfig,
};
use crate::queue::QueuePlace;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::channel::Receiver;
use crate::sync::Arc;
use crate::{Cause, GroupKey, Mode, Pod, PodGroup, PodId, Resources, Time};

const CPU: u64 = 1_000;
const TIMEOUT: Duration = Duration::from_secs(10);

/// A scheduler in `mode` with the pod-group cycle, a node with room for four members, and a
/// binder that fails the pods `fails` names.
fn scheduler(mode: Mode, fails: &'static [&'static str]) -> (Scheduler, Receiver<PodOutcome>) {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(GangCycle::PodGroup)
        .with_permit_timeout(TIMEOUT);
    built(config, fails, crate::PermitPlugins::none())
}

/// A scheduler with `config`, `permit` beside the gang plugin, a node with room for four
/// members, and a binder that fails the pods `fails` names.
fn built(
    config: SchedulerConfig,
    fails: &'static [&'static str],
    permit: crate::PermitPlugins,
) -> (Scheduler, Receiver<PodOutcome>) {
    let binder = InMemoryBinder::new().with_failures(|pod, _| fails.contains(&pod.name()));
    let (sink, outcomes) = outcome_channel();
    let s = Scheduler::builder(config)
        .binder(binder)
        .permit_plugins(permit)
        .outcomes(sink)
        .build();
    let node = Node::new("n", Resources::new(4 * CPU, 64 << 30));
    s.add_node(node, Time::ZERO).unwrap();
    (s, outcomes)
}

fn member(i: usize) -> Pod {
    let name = format!("g-{i}");
    Pod::new(name.as_str(), "ml", &name)
        .with_group("g")
        .with_requests(Resources::new(CPU, 1 << 30))
}

/// Gang `g` of `size` members and minimum `min_count`, admitted whole by one pod-group cycle:
/// every member allowed, no binding cycle run yet.
fn admitted_gang(s: &Scheduler, size: usize, min_count: u32) {
    s.add_group(PodGroup::gang("ml", "g", min_count).unwrap(), Time::ZERO)
        .unwrap();
    for i in 0..size {
        s.add_pod(member(i), Time::ZERO).unwrap();
    }
    s.schedule_one(Time::ZERO).expect("the gang is active");
    assert_eq!(s.in_binding().len(), size, "admitted whole");
    s.check().unwrap();
}

fn drain(outcomes: &Receiver<PodOutcome>) -> Vec<PodOutcome> {
    std::iter::from_fn(|| outcomes.try_recv()).collect()
}

fn rejected(outcome: &PodOutcome) -> Option<(&Pod, Cause, String)> {
    match outcome {
        PodOutcome::Rejected { pod, status, cause } => Some((pod, *cause, status.message())),
        _ => None,
    }
}

fn queued(s: &Scheduler, i: usize) -> bool {
    let place = s.queue().place(member(i).id());
    place.is_some_and(|p| p != QueuePlace::InFlight)
}

#[test]
fn a_failed_bind_that_leaves_the_gang_short_releases_the_members_still_waiting_to_bind() {
    let (s, outcomes) = scheduler(Mode::Hardened, &["g-1"]);
    admitted_gang(&s, 3, 3);
    assert!(s.run_binding_cycle(Time::ZERO), "g-0 binds");
    // g-1's bind fails. In the same step g-2 — allowed, its binding cycle not begun — is
    // released and comes back with g-1, in one backoff (H2): a g-1 back alone would find its
    // gang short in its own pod-group cycle and park it, g-2 would follow the same way, and
    // the gang, which fits, would wait for the leftover flush.
    assert!(s.run_binding_cycle(Time::ZERO), "g-1's bind fails");
    s.check().unwrap();
    assert_eq!(s.run_binding_cycles(Time::ZERO), 0, "g-2 went with g-1");
    let all = drain(&outcomes);
    assert!(matches!(&all[0], PodOutcome::Bound { pod, .. } if pod.name() == "g-0"));
    assert!(matches!(&all[1], PodOutcome::BindFailed { pod, .. } if pod.name() == "g-1"));
    let (pod, cause, message) = rejected(&all[2]).expect("g-2 rejected");
    assert_eq!((pod.name(), cause), ("g-2", Cause::GangFailed));
    assert_eq!(
        message,
        "pod group ml/g can no longer reach its minCount 3: \
         the bind of ml/g-1 failed"
    );
    assert_eq!(all.len(), 3);
    assert!(s.in_binding().is_empty());
    assert_eq!(s.cache().snapshot().assumed_count(), 0, "nothing reserved");
    // g-1 in the error backoff (its bind failed: no plugin rejected it), g-2 in the backoff
    // (the gang plugin rejected it), with one expiry.
    let place = |i: usize| s.queue().place(member(i).id());
    let (Some(QueuePlace::ErrorBackoff(failed)), Some(QueuePlace::Backoff(released))) =
        (place(1), place(2))
    else {
        panic!("g-1 and g-2 back off: {:?}, {:?}", place(1), place(2));
    };
    assert_eq!(failed, released, "one backoff for both");
    s.check().unwrap();
    // When it ends, the pair comes back together, and one pod-group cycle admits it beside
    // g-0 — no leftover flush needed.
    let later = Time::ZERO + Duration::from_secs(11);
    s.tick(later);
    assert!(queued(&s, 1) && queued(&s, 2));
    s.schedule_one(later).expect("the pair is active");
    assert_eq!(s.in_binding().len(), 2, "admitted together");
    s.check().unwrap();
}

/// The room a failed bind and its released siblings free reaches the other gangs: the
/// announcement leaves out only the gang handed back. Gang `h`, parked for want of room while
/// `g` holds three of the node's four CPUs, is moved once `g-1`'s bind fails and `g-2` is
/// released with it.
#[test]
fn the_room_a_failed_bind_frees_with_its_siblings_reaches_the_gang_parked_for_it() {
    let (s, outcomes) = scheduler(Mode::Hardened, &["g-1"]);
    admitted_gang(&s, 3, 3);
    s.add_group(PodGroup::gang("ml", "h", 2).unwrap(), Time::ZERO)
        .unwrap();
    let h: Vec<Pod> = (0..2)
        .map(|i| {
            let name = format!("h-{i}");
            Pod::new(name.as_str(), "ml", &name)
                .with_group("h")
                .with_requests(Resources::new(CPU, 1 << 30))
        })
        .collect();
    for pod in &h {
        s.add_pod(pod.clone(), Time::ZERO).unwrap();
    }
    s.schedule_one(Time::ZERO).expect("h is active");
    let parked = |pod: &Pod| s.queue().place(pod.id()) == Some(QueuePlace::Unschedulable);
    assert!(h.iter().all(parked), "h waits for room");
    assert!(s.run_binding_cycle(Time::ZERO), "g-0 binds");
    assert!(s.run_binding_cycle(Time::ZERO), "g-1's bind fails");
    // The member NodeResourcesFit turned away moves; its sibling, parked by the gang plugin,
    // is gathered with it by its next pod-group cycle, and h binds within seconds — not at the
    // leftover flush.
    assert!(
        !h.iter().all(parked),
        "the room freed reached h: {:?}",
        h.iter()
            .map(|p| s.queue().place(p.id()))
            .collect::<Vec<_>>()
    );
    s.check().unwrap();
    let bound = |outcomes: &[PodOutcome]| {
        outcomes
            .iter()
            .filter(|o| matches!(o, PodOutcome::Bound { pod, .. } if pod.group() == Some("h")))
            .count()
    };
    let mut seen = drain(&outcomes);
    for second in 1..=10 {
        let now = Time::ZERO + Duration::from_secs(second);
        s.tick(now);
        while s.schedule_one(now).is_some() {}
        s.run_binding_cycles(now);
        seen.extend(drain(&outcomes));
    }
    assert_eq!(bound(&seen), 2, "h bound within ten seconds: {seen:?}");
    s.check().unwrap();
}

#[test]
fn the_released_gang_comes_back_together_and_binds_beside_its_bound_member() {
    let (s, outcomes) = scheduler(Mode::Hardened, &[]);
    admitted_gang(&s, 3, 3);
    // g-1 is deleted before its bind: g-0 bound and g-2 cannot make three.
    assert!(s.run_binding_cycle(Time::ZERO), "g-0 binds");
    s.delete_pod(&member(1), Time::ZERO).unwrap();
    s.check().unwrap();
    s.run_binding_cycles(Time::ZERO);
    let all = drain(&outcomes);
    let released: Vec<_> = all.iter().filter_map(rejected).collect();
    assert_eq!(released.len(), 1, "{all:?}");
    assert_eq!(released[0].0.name(), "g-2");
    assert!(
        released[0].2.ends_with("ml/g-1 was deleted"),
        "{}",
        released[0].2
    );
    assert!(all
        .iter()
        .any(|o| matches!(o, PodOutcome::Dropped { pod } if pod.name() == "g-1")));
    // A new g-1 arrives; g-2 and it bind beside g-0 in one more pod-group cycle.
    s.add_pod(member(1), Time::ZERO).unwrap();
    let later = Time::ZERO + Duration::from_secs(60);
    s.tick(later);
    let cycle = s.schedule_one(later).expect("the gang is back");
    assert!(
        matches!(cycle, super::CycleOutcome::PodGroup { admitted: true, .. }),
        "{cycle:?}"
    );
    assert_eq!(s.run_binding_cycles(later), 2);
    assert_eq!(s.stats().bound, 3);
    s.check().unwrap();
}

#[test]
fn a_failed_bind_that_keeps_the_quorum_releases_nothing() {
    let (s, outcomes) = scheduler(Mode::Hardened, &["g-0"]);
    // Four members, minimum three: one failure leaves three.
    admitted_gang(&s, 4, 3);
    assert_eq!(s.run_binding_cycles(Time::ZERO), 4);
    let all = drain(&outcomes);
    assert!(all.iter().all(|o| rejected(o).is_none()), "{all:?}");
    assert_eq!(s.stats().bound, 3);
    assert!(queued(&s, 0), "the failed member alone backs off");
    s.check().unwrap();
}

#[test]
fn a_raised_minimum_releases_the_members_still_waiting_to_bind() {
    let (s, outcomes) = scheduler(Mode::Hardened, &[]);
    admitted_gang(&s, 3, 3);
    assert!(s.run_binding_cycle(Time::ZERO));
    // A fourth member arrives and the minimum goes up to four: three scheduled cannot make it.
    s.add_pod(member(3), Time::ZERO).unwrap();
    s.update_group(PodGroup::gang("ml", "g", 4).unwrap(), Time::ZERO)
        .unwrap();
    s.check().unwrap();
    s.run_binding_cycles(Time::ZERO);
    let released: Vec<PodId> = drain(&outcomes)
        .iter()
        .filter_map(rejected)
        .map(|(pod, cause, _)| {
            assert_eq!(cause, Cause::GangFailed);
            pod.id().clone()
        })
        .collect();
    assert_eq!(released, [member(1).id().clone(), member(2).id().clone()]);
    assert_eq!(s.stats().bound, 1);
    s.check().unwrap();
}

#[test]
fn one_deadline_bounds_the_binding_of_an_admitted_gang() {
    let (s, outcomes) = scheduler(Mode::Hardened, &[]);
    admitted_gang(&s, 3, 3);
    assert!(
        s.run_binding_cycle(Time::ZERO),
        "g-0 binds; the others' cycles do not start"
    );
    let deadline = Time::ZERO + TIMEOUT;
    assert_eq!(
        s.next_deadline(),
        Some(deadline),
        "the gang's binding deadline"
    );
    let before = s.tick(Time::ZERO + (TIMEOUT - Duration::from_millis(1)));
    assert!(before.timed_out_gangs.is_empty());
    let tick = s.tick(deadline);
    assert_eq!(tick.timed_out_gangs, [GroupKey::new("ml", "g")]);
    s.check().unwrap();
    assert_eq!(
        s.run_binding_cycles(deadline),
        1,
        "one cycle hands both back"
    );
    let released: Vec<(String, Cause)> = drain(&outcomes)
        .iter()
        .filter_map(rejected)
        .map(|(pod, cause, message)| {
            assert_eq!(message, "pod group ml/g did not bind within its deadline");
            (pod.name().to_owned(), cause)
        })
        .collect();
    assert_eq!(
        released,
        [
            ("g-1".to_owned(), Cause::TimedOut),
            ("g-2".to_owned(), Cause::TimedOut)
        ]
    );
    assert!(queued(&s, 1) && queued(&s, 2));
    assert_eq!(s.cache().snapshot().assumed_count(), 0);
    s.check().unwrap();
}

#[test]
fn a_gang_whose_members_all_began_binding_has_no_deadline_left() {
    let (s, _outcomes) = scheduler(Mode::Hardened, &[]);
    admitted_gang(&s, 2, 2);
    assert_eq!(s.run_binding_cycles(Time::ZERO), 2);
    let tick = s.tick(Time::ZERO + TIMEOUT);
    assert!(tick.timed_out_gangs.is_empty());
    assert_eq!(s.stats().bound, 2);
}

#[test]
fn upstream_binds_each_member_on_its_own_after_a_failed_bind() {
    let (s, outcomes) = scheduler(Mode::Upstream, &["g-1"]);
    admitted_gang(&s, 3, 3);
    assert_eq!(s.run_binding_cycles(Time::ZERO), 3);
    let all = drain(&outcomes);
    assert!(all.iter().all(|o| rejected(o).is_none()), "{all:?}");
    assert_eq!(s.stats().bound, 2, "1.36 leaves the gang bound short");
    assert!(s.tick(Time::ZERO + TIMEOUT).timed_out_gangs.is_empty());
}

#[test]
fn after_a_transient_bind_failure_the_gang_binds_whole_on_its_next_attempt() {
    let config = SchedulerConfig::default()
        .with_gang_cycle(GangCycle::PodGroup)
        .with_permit_timeout(TIMEOUT);
    let failed_once = Arc::new(AtomicBool::new(false));
    let binder = InMemoryBinder::new().with_failures(move |pod, _| {
        pod.name() == "g-1" && !failed_once.swap(true, Ordering::SeqCst)
    });
    let s = Scheduler::builder(config).binder(binder).build();
    let node = Node::new("n", Resources::new(4 * CPU, 64 << 30));
    s.add_node(node, Time::ZERO).unwrap();
    admitted_gang(&s, 3, 3);
    assert!(s.run_binding_cycle(Time::ZERO), "g-0 binds");
    assert!(
        s.run_binding_cycle(Time::ZERO),
        "g-1's bind fails; g-2 is released"
    );
    s.run_binding_cycles(Time::ZERO);
    let mut now = Time::ZERO;
    let mut cycles = 0;
    while s.stats().bound < 3 && now < Time::from_secs(60) {
        now += Duration::from_millis(100);
        s.tick(now);
        while s.schedule_one(now).is_some() {
            cycles += 1;
        }
        s.run_binding_cycles(now);
    }
    assert_eq!(s.stats().bound, 3, "bound by {now:?} after {cycles} cycles");
    assert!(
        now <= Time::from_secs(2),
        "the gang's one backoff, not a leftover flush: {now:?}"
    );
    s.check().unwrap();
}

/// Holds the pod named `g-1` at Permit for a minute; allows every other.
struct HoldsG1;

impl crate::PermitPlugin for HoldsG1 {
    fn name(&self) -> crate::PluginName {
        "Hold".into()
    }

    fn permit(&self, pod: &Pod, _: &str) -> crate::PermitVerdict {
        if pod.name() == "g-1" {
            crate::PermitVerdict::wait(Duration::from_secs(60))
        } else {
            crate::PermitVerdict::Allow
        }
    }
}

/// The contrast of the Hardened hand-back above, at the Permit barrier in Upstream: a failed
/// bind hands back its own pod only. `g-1`, rejected while it waited at Permit, is its own
/// binding cycle's to hand back, as kube-scheduler's is — the failed bind of `g-0` does not
/// take it along.
#[test]
fn upstream_a_failed_bind_leaves_a_rejected_sibling_to_its_own_binding_cycle() {
    let config = SchedulerConfig::default().with_mode(Mode::Upstream);
    let holds =
        crate::PermitPlugins::new([Arc::new(HoldsG1) as Arc<dyn crate::PermitPlugin>]).unwrap();
    let (s, outcomes) = built(config, &["g-0"], holds);
    s.add_group(PodGroup::gang("ml", "g", 1).unwrap(), Time::ZERO)
        .unwrap();
    for i in 0..2 {
        s.add_pod(member(i), Time::ZERO).unwrap();
    }
    s.schedule_one(Time::ZERO).expect("g-0 is allowed");
    s.schedule_one(Time::ZERO).expect("g-1 waits for Hold");
    assert!(s.waiting().reject(member(1).id(), "Hold", "no quota"));
    assert!(s.run_binding_cycle(Time::ZERO), "g-0's bind fails");
    let first = drain(&outcomes);
    assert!(
        matches!(&first[..], [PodOutcome::BindFailed { pod, .. }] if pod.name() == "g-0"),
        "{first:?}"
    );
    assert_eq!(
        s.in_binding(),
        [member(1).id().clone()],
        "g-1 is still in binding"
    );
    assert!(s.run_binding_cycle(Time::ZERO), "g-1's own cycle");
    let second = drain(&outcomes);
    assert!(rejected(&second[0]).is_some_and(|(pod, ..)| pod.name() == "g-1"));
    s.check().unwrap();
}
