//! Unit tests of the requeue paths the other queue tests left unasked (found by mutation
//! testing, issue #43): a gang's requeue reason taken over all its members, the count an
//! activation reports, and what a cluster event visits — nothing for a scope of nobody, one
//! group's pods through the group index, no gated pod whose gate did not register for it.

use super::state_tests::{checked, fail_unschedulable, plugins, pod, NODE};
use super::*;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::{GroupKey, PluginName, Pod, PodGroup, PodId, QueueingHint, Time};

/// A plugin set that counts what the queue asks of it, and answers a scope per event.
pub(super) struct Counting {
    inner: PluginSet,
    scope: fn(&ClusterEvent) -> EventScope,
    pre_enqueue: AtomicU64,
    registered: AtomicU64,
    hints: AtomicU64,
}

impl Counting {
    pub(super) fn new(inner: PluginSet, scope: fn(&ClusterEvent) -> EventScope) -> Counting {
        Counting {
            inner,
            scope,
            pre_enqueue: AtomicU64::new(0),
            registered: AtomicU64::new(0),
            hints: AtomicU64::new(0),
        }
    }

    /// The three counts since the last call: PreEnqueue, `registered`, hints.
    pub(super) fn take(&self) -> (u64, u64, u64) {
        let take = |count: &AtomicU64| count.swap(0, Ordering::Relaxed);
        (
            take(&self.pre_enqueue),
            take(&self.registered),
            take(&self.hints),
        )
    }
}

/// The scope a gang plugin gives its PodGroup's arrival: that group's pods; every other event
/// concerns everyone.
pub(super) fn group_scope(event: &ClusterEvent) -> EventScope {
    match event {
        ClusterEvent::PodGroupAdd(group) => EventScope::Group(group.key().clone()),
        _ => EventScope::Everyone,
    }
}

impl QueuePlugins for Counting {
    fn pre_enqueue(&self, pod: &Pod) -> Result<(), Gate> {
        self.pre_enqueue.fetch_add(1, Ordering::Relaxed);
        self.inner.pre_enqueue(pod)
    }

    fn registered(&self, plugin: &PluginName, kind: EventKind) -> bool {
        self.registered.fetch_add(1, Ordering::Relaxed);
        self.inner.registered(plugin, kind)
    }

    fn is_event_of_interest(&self, kind: EventKind) -> bool {
        self.inner.is_event_of_interest(kind)
    }

    fn hint(
        &self,
        plugin: &PluginName,
        pod: &Pod,
        event: &ClusterEvent,
    ) -> Result<QueueingHint, String> {
        self.hints.fetch_add(1, Ordering::Relaxed);
        self.inner.hint(plugin, pod, event)
    }

    fn event_scope(&self, event: &ClusterEvent) -> EventScope {
        (self.scope)(event)
    }
}

/// A gang's members come back with the strongest reason any of them has: the first member's
/// own events do not help it, the second's do, and both back off (none stays parked).
#[test]
fn a_gang_backs_off_if_any_member_s_events_help() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("m1", 2), Time::ZERO, &p).unwrap();
    q.add(pod("m2", 1), Time::ZERO, &p).unwrap();
    let m1 = q.pop().unwrap().info.rejected_by("NoHints");
    let m2 = q.pop().unwrap().info.rejected_by(NODE);
    let freed = ClusterEvent::AssignedPodDelete(pod("x", 0));
    q.move_all_to_active_or_backoff(freed, None, Time::ZERO, &p);
    let places = q
        .add_gang_unschedulable(vec![m1, m2], Time::ZERO, &p)
        .unwrap();
    assert!(
        places
            .iter()
            .all(|place| matches!(place, Some(QueuePlace::Backoff(_)))),
        "{places:?}"
    );
    checked(&q);
}

/// An activation reports how many pods it moved: the parked and backing-off ones, not one in
/// flight (recorded for later), already active, or unknown.
#[test]
fn an_activation_counts_the_pods_it_moved() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    for (name, priority) in [("parked", 4), ("backing", 3), ("flying", 2), ("active", 1)] {
        q.add(pod(name, priority), Time::ZERO, &p).unwrap();
    }
    let parked = q.pop().unwrap().info.rejected_by("NoHints");
    q.add_unschedulable_if_not_present(parked, Time::ZERO, &p)
        .unwrap();
    fail_unschedulable(&mut q, "backing", Time::ZERO, &p);
    let freed = ClusterEvent::AssignedPodDelete(pod("x", 0));
    q.move_all_to_active_or_backoff(freed, None, Time::ZERO, &p);
    assert_eq!(
        q.place(&PodId::from("parked")),
        Some(QueuePlace::Unschedulable)
    );
    assert!(matches!(
        q.place(&PodId::from("backing")),
        Some(QueuePlace::Backoff(_))
    ));
    assert_eq!(q.pop().unwrap().info.id().as_str(), "flying");
    let ids: Vec<PodId> = ["parked", "backing", "flying", "active", "unknown"]
        .into_iter()
        .map(PodId::from)
        .collect();
    assert_eq!(q.activate(&ids, Time::ZERO, &p), 2);
    checked(&q);
}

/// An event whose scope is nobody visits no pod, whatever the hints would say.
#[test]
fn an_event_for_nobody_visits_no_pod() {
    let p = Counting::new(plugins(), |_| EventScope::Nobody);
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 1), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "a", Time::ZERO, &p.inner);
    let big = ClusterEvent::NodeAdd("big".into());
    assert_eq!(
        q.move_all_to_active_or_backoff(big, None, Time::ZERO, &p),
        0
    );
    assert_eq!(q.place(&PodId::from("a")), Some(QueuePlace::Unschedulable));
    assert_eq!(p.take().2, 0, "no hint asked");
}

/// In a large queue an event scoped to one group visits that group's pods only (through the
/// group index, issue #23): five hints asked, not seventy.
#[test]
fn a_group_event_in_a_large_queue_visits_that_group_only() {
    let inner = PluginSet::new().with_hint("Gang", EventKind::PodGroupAdd, |pod, event| {
        let ClusterEvent::PodGroupAdd(group) = event else {
            return Ok(QueueingHint::QueueSkip);
        };
        Ok(if pod.group_key() == Some(group.key()) {
            QueueingHint::Queue
        } else {
            QueueingHint::QueueSkip
        })
    });
    let p = Counting::new(inner, group_scope);
    let mut q = QueueState::new(QueueConfig::default());
    for i in 0..70 {
        let group = if i < 5 { "g" } else { "other" };
        let name = format!("p{i:02}");
        let pod = Pod::new(&*name, "ns", &name).with_group(group);
        q.add(pod, Time::ZERO, &p).unwrap();
        let popped = q.pop().unwrap().info.rejected_by("Gang");
        q.add_unschedulable_if_not_present(popped, Time::ZERO, &p)
            .unwrap();
    }
    checked(&q);
    p.take();
    let added = ClusterEvent::PodGroupAdd(PodGroup::gang("ns", "g", 5).unwrap());
    assert_eq!(
        q.move_all_to_active_or_backoff(added, None, Time::ZERO, &p),
        5
    );
    assert_eq!(p.take().2, 5, "the group's hints only");
    assert!(q.groups.is_some(), "the index was built");
    let key = GroupKey::new("ns", "g");
    assert!(q.pods().all(|(_, place, info)| {
        (info.pod().group_key() == Some(&key)) == !matches!(place, QueuePlace::Unschedulable)
    }));
    checked(&q);
}

/// With the gate index, an event the gate did not register for does not visit the gate's
/// pods (its registration is asked once, not once per pod); one it did register for asks
/// each of them.
#[test]
fn an_event_visits_the_gated_pods_only_of_gates_registered_for_it() {
    let p = Counting::new(plugins(), |_| EventScope::Everyone);
    let mut q = QueueState::new(QueueConfig::default());
    for i in 0..5 {
        assert!(!q
            .add(pod(&format!("gated-{i}"), 0), Time::ZERO, &p)
            .unwrap());
    }
    q.add(pod("plain", 1), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "plain", Time::ZERO, &p.inner);
    q.build_indexes();
    p.take();
    let small = ClusterEvent::NodeAdd("small".into());
    q.move_all_to_active_or_backoff(small, None, Time::ZERO, &p);
    let (_, registered, _) = p.take();
    assert!(registered < 5, "the gate asked {registered} times");
    let update = ClusterEvent::UnscheduledPodUpdate {
        old: pod("elsewhere", 0),
        new: pod("elsewhere", 1),
    };
    q.move_all_to_active_or_backoff(update, None, Time::ZERO, &p);
    let (pre_enqueue, _, hints) = p.take();
    // Each gated pod asked again (its gate is its rejector), and the plain pod's rejector.
    assert_eq!((pre_enqueue, hints), (5, 6));
    assert_eq!(q.lengths().gated, 5, "and gated again");
    checked(&q);
}

/// A leftover flush walks a small pool and builds the leftover index once the queue holds
/// [`LeftoverIndex::BUILD_FROM`](super::leftover_index::LeftoverIndex::BUILD_FROM) pods (a
/// model checker's small queues never pay for it); the flush moves the same pods either way.
#[test]
fn a_leftover_flush_builds_its_index_from_64_pods() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    for i in 0..63 {
        q.add(pod(&format!("p{i:02}"), 0), Time::ZERO, &p).unwrap();
    }
    q.flush_unschedulable_leftover(Time::from_secs(1), &p);
    assert!(q.leftover.is_none(), "63 pods");
    q.add(pod("p63", 0), Time::ZERO, &p).unwrap();
    q.flush_unschedulable_leftover(Time::from_secs(1), &p);
    assert!(q.leftover.is_some(), "64 pods");
    checked(&q);
}

/// kube-scheduler's one list of in-flight events: a pod handed back hears another pod's
/// update (on by default), or, with the list per pod, only its own; an activation is the
/// activated pod's alone either way.
#[test]
fn another_pod_s_update_is_heard_only_with_the_shared_list_and_an_activation_never() {
    let p = PluginSet::new().with_hint("Updates", EventKind::UnscheduledPodUpdate, |_, _| {
        Ok(QueueingHint::Queue)
    });
    // `a`'s place after `b`, in flight beside it, is updated (or activated) during the attempt.
    let a_after = |config: QueueConfig, activate: bool| {
        let mut q = QueueState::new(config);
        q.add(pod("a", 2), Time::ZERO, &p).unwrap();
        q.add(pod("b", 1), Time::ZERO, &p).unwrap();
        q.pop().unwrap();
        q.pop().unwrap();
        if activate {
            q.activate(&[PodId::from("b")], Time::ZERO, &p);
        } else {
            q.update(pod("b", 1), pod("b", 3), Time::ZERO, &p);
        }
        let place = q
            .hand_back(&PodId::from("a"), Some("Updates".into()), Time::ZERO, &p)
            .unwrap();
        checked(&q);
        place
    };
    let shared = QueueConfig::default();
    assert!(shared.shared_in_flight_events);
    let own = shared.with_shared_in_flight_events(false);
    assert!(matches!(
        a_after(shared, false),
        Some(QueuePlace::Backoff(_))
    ));
    assert_eq!(a_after(own, false), Some(QueuePlace::Unschedulable));
    assert_eq!(a_after(shared, true), Some(QueuePlace::Unschedulable));
}

/// A pod the walk leaves parked but gated now (its update while in flight lowered it under
/// the gate, and a move runs PreEnqueue on it) is refiled under its gate in the indexes.
#[test]
fn a_pod_gated_by_a_move_is_refiled_in_the_indexes() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("gated-y", 1), Time::ZERO, &p).unwrap();
    q.pop().unwrap();
    q.update(pod("gated-y", 1), pod("gated-y", 0), Time::ZERO, &p);
    q.hand_back(&PodId::from("gated-y"), Some(NODE.into()), Time::ZERO, &p)
        .unwrap();
    assert_eq!(
        q.place(&PodId::from("gated-y")),
        Some(QueuePlace::Unschedulable)
    );
    q.build_indexes();
    checked(&q);
    let freed = ClusterEvent::AssignedPodDelete(pod("x", 0));
    q.move_all_to_active_or_backoff(freed, None, Time::ZERO, &p);
    assert_eq!(
        q.place(&PodId::from("gated-y")),
        Some(QueuePlace::Unschedulable)
    );
    assert!(q
        .info(&PodId::from("gated-y"))
        .unwrap()
        .gated_by()
        .is_some());
    checked(&q);
}

/// A wildcard event moves a gated pod — its gate asked again — only with
/// `wildcards_move_gated` (kubernetes#139162); v1.36.3 leaves it where it is.
#[test]
fn a_wildcard_moves_a_gated_pod_only_with_wildcards_move_gated() {
    for (config, asked) in [
        (QueueConfig::default(), 0),
        (QueueConfig::default().with_wildcards_move_gated(true), 1),
    ] {
        let p = Counting::new(plugins(), |_| EventScope::Everyone);
        let mut q = QueueState::new(config);
        assert!(!q.add(pod("gated-a", 0), Time::ZERO, &p).unwrap());
        p.take();
        q.move_all_to_active_or_backoff(ClusterEvent::ForceActivate, None, Time::ZERO, &p);
        assert_eq!(p.take().0, asked, "{config:?}");
        checked(&q);
    }
}

/// A pod pending on a plugin whose hint skips the event is not retried at once because some
/// plugin left it pending: its rejector's hint sends it to backoff.
#[test]
fn a_pending_plugin_that_skips_leaves_the_pod_to_its_rejector() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 1), Time::ZERO, &p).unwrap();
    let info = q
        .pop()
        .unwrap()
        .info
        .rejected_by(NODE)
        .pending_on("NoHints");
    q.add_unschedulable_if_not_present(info, Time::ZERO, &p)
        .unwrap();
    let freed = ClusterEvent::AssignedPodDelete(pod("x", 0));
    q.move_all_to_active_or_backoff(freed, None, Time::ZERO, &p);
    assert!(matches!(
        q.place(&PodId::from("a")),
        Some(QueuePlace::Backoff(_))
    ));
}

/// An update of a parked pod moves that pod, wherever its slot is.
#[test]
fn an_update_moves_the_parked_pod_it_names() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 1), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "a", Time::ZERO, &p);
    assert!(!q.add(pod("gated-b", 0), Time::ZERO, &p).unwrap());
    let place = q.update(pod("gated-b", 0), pod("gated-b", 1), Time::ZERO, &p);
    assert!(matches!(place, QueuePlace::Active(_)), "{place:?}");
    assert_eq!(q.place(&PodId::from("a")), Some(QueuePlace::Unschedulable));
    checked(&q);
}
