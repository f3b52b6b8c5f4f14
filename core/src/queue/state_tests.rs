//! Unit tests of [`QueueState`], the scheduling queue as pure data.

use std::time::Duration;

use super::*;
use crate::{Code, Pod, PodId, QueueingHint, Status, Time};

pub(super) const NODE: &str = "NodeResourcesFit";

pub(super) fn pod(id: &str, priority: i32) -> Pod {
    Pod::new(id, "ns", id).with_priority(priority)
}

pub(super) fn id(s: &str) -> PodId {
    PodId::from(s)
}

/// NodeResourcesFit says a freed node may help; a gate named "Gate" holds pods named "gated*"
/// until their priority is raised above 0, and listens to pod updates.
pub(super) fn plugins() -> PluginSet {
    PluginSet::new()
        .with_pre_enqueue("Gate", |p: &Pod| {
            if p.name().starts_with("gated") && p.priority() <= 0 {
                Status::with_reason(Code::UnschedulableAndUnresolvable, "gated")
            } else {
                Status::success()
            }
        })
        .with_hint(NODE, EventKind::AssignedPodDelete, |_, _| {
            Ok(QueueingHint::Queue)
        })
        .with_hint(NODE, EventKind::NodeAdd, |_, e| match e {
            ClusterEvent::NodeAdd(name) if name == "big" => Ok(QueueingHint::Queue),
            ClusterEvent::NodeAdd(name) if name == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint("Gate", EventKind::UnscheduledPodUpdate, |_, _| {
            Ok(QueueingHint::Queue)
        })
}

/// The slot pod `name` is filed in (it must be known).
pub(super) fn slot_of(q: &QueueState, name: &str) -> u32 {
    *q.ids.get(&PodId::from(name)).expect("a known pod")
}

/// The slots pods `names` are filed in.
pub(super) fn slots_of<'a>(
    q: &QueueState,
    names: impl IntoIterator<Item = &'a str>,
) -> std::collections::BTreeSet<u32> {
    names.into_iter().map(|name| slot_of(q, name)).collect()
}

pub(super) fn checked(q: &QueueState) {
    q.check().unwrap();
}

/// Pops `name` (which must be first) and hands it back rejected by NodeResourcesFit at `now`.
pub(super) fn fail_unschedulable(
    q: &mut QueueState,
    name: &str,
    now: Time,
    p: &PluginSet,
) -> Option<QueuePlace> {
    let popped = q.pop().expect("a pod is active");
    assert_eq!(popped.info.id(), &id(name));
    let place = q
        .add_unschedulable_if_not_present(popped.info.rejected_by(NODE), now, p)
        .unwrap();
    checked(q);
    place
}

/// A bound pod is deleted at `now`: the pods NodeResourcesFit rejected move on.
fn free_room(q: &mut QueueState, now: Time, p: &PluginSet) {
    q.move_all_to_active_or_backoff(ClusterEvent::AssignedPodDelete(pod("x", 0)), None, now, p);
    checked(q);
}

#[test]
fn pops_by_priority_then_timestamp() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("low", 0), Time::from_secs(1), &p).unwrap();
    q.add(pod("high", 10), Time::from_secs(2), &p).unwrap();
    q.add(pod("low-later", 0), Time::from_secs(3), &p).unwrap();
    checked(&q);
    let order: Vec<_> = std::iter::from_fn(|| q.pop())
        .map(|p| p.info.id().clone())
        .collect();
    assert_eq!(order, vec![id("high"), id("low"), id("low-later")]);
    assert_eq!(q.lengths().in_flight, 3);
    assert!(matches!(
        q.add(pod("low", 0), Time::ZERO, &p),
        Err(QueueError::AlreadyQueued { .. })
    ));
    checked(&q);
}

#[test]
fn unschedulable_pod_waits_for_an_event_its_rejector_cares_about() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    assert_eq!(
        fail_unschedulable(&mut q, "a", Time::ZERO, &p),
        Some(QueuePlace::Unschedulable)
    );
    // No plugin registered for NodeUpdate: ignored.
    assert_eq!(
        q.move_all_to_active_or_backoff(ClusterEvent::NodeUpdate("n".into()), None, Time::ZERO, &p),
        0
    );
    // The hint skips a small node.
    assert_eq!(
        q.move_all_to_active_or_backoff(
            ClusterEvent::NodeAdd("small".into()),
            None,
            Time::ZERO,
            &p
        ),
        0
    );
    assert_eq!(q.place(&id("a")), Some(QueuePlace::Unschedulable));
    // A big node helps: after its backoff (1 s from the failure at 0).
    q.move_all_to_active_or_backoff(
        ClusterEvent::NodeAdd("big".into()),
        None,
        Time::from_millis(500),
        &p,
    );
    assert_eq!(
        q.place(&id("a")),
        Some(QueuePlace::Backoff(Time::from_secs(1)))
    );
    checked(&q);
    // 1.36's ordering window: at 1.x s the truncated now equals the expiry, still backing off.
    assert_eq!(q.flush_backoff_completed(Time::from_millis(1_999), &p), 0);
    assert_eq!(q.flush_backoff_completed(Time::from_secs(2), &p), 1);
    assert!(matches!(q.place(&id("a")), Some(QueuePlace::Active(_))));
    checked(&q);
}

#[test]
fn a_failing_hint_counts_as_queue() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "a", Time::ZERO, &p);
    let moved = q.move_all_to_active_or_backoff(
        ClusterEvent::NodeAdd("broken".into()),
        None,
        Time::from_secs(5),
        &p,
    );
    assert_eq!(moved, 1);
    assert!(
        matches!(q.place(&id("a")), Some(QueuePlace::Active(_))),
        "backoff already over"
    );
}

/// kube-scheduler 1.36 backs off by failures, not attempts: rejections double it, an error
/// resets the count to the errors in a row, and a rejection after errors counts the
/// rejections again (`getBackoffTime`) — measured against the real code by
/// upstream/traces/generated_error_after_rejections.jsonl.
#[test]
fn backoff_counts_rejections_or_the_errors_in_a_row_not_attempts() {
    let mut info = QueuedPodInfo::new(pod("a", 0), Time::ZERO);
    for _ in 0..3 {
        info.start_attempt();
        info = info.rejected_by(NODE);
        info.count_failure();
    }
    assert_eq!((info.attempts(), info.backoff_count()), (3, 3));
    info.start_attempt();
    info.count_failure(); // no rejector: an error
    assert_eq!(
        (info.unschedulable_count(), info.consecutive_errors()),
        (3, 1)
    );
    assert_eq!(
        info.backoff_count(),
        1,
        "one error in a row, not four attempts"
    );
    info.start_attempt();
    info.count_failure();
    assert_eq!(info.backoff_count(), 2);
    info.start_attempt();
    info = info.rejected_by(NODE);
    info.count_failure();
    assert_eq!((info.consecutive_errors(), info.backoff_count()), (0, 4));
    let c = QueueConfig::default();
    assert_eq!(c.backoff_expiry(&info), Some(Time::from_secs(8)));
}

#[test]
fn backoff_doubles_per_failure_and_is_capped() {
    let c = QueueConfig::default();
    let secs = |n| c.backoff_duration(n).as_secs();
    assert_eq!(
        [
            secs(0),
            secs(1),
            secs(2),
            secs(3),
            secs(4),
            secs(5),
            secs(60)
        ],
        [0, 1, 2, 4, 8, 10, 10]
    );
    assert_eq!(c.backoff_duration(u32::MAX), Duration::from_secs(10));
}

#[test]
fn ordering_window_truncates_and_keeps_an_equal_expiry_backing_off() {
    let c = QueueConfig {
        ordering_window: Some(Duration::from_secs(1)),
        ..QueueConfig::default()
    };
    // Expiry 2.0 s (failure at 1.3 s + 1 s, truncated); at now = 2.5 s the truncated now is
    // 2.0 s, equal to the expiry: still backing off.
    let mut info = QueuedPodInfo::new(pod("a", 0), Time::from_millis(1_300));
    info.start_attempt();
    let mut info = info.rejected_by(NODE);
    info.count_failure();
    assert_eq!(c.backoff_expiry(&info), Some(Time::from_secs(2)));
    assert!(c.is_backing_off(&info, Time::from_millis(2_500)));
    assert!(!c.is_backing_off(&info, Time::from_secs(3)));
    assert_eq!(c.backoff_ends(Time::from_secs(2)), Time::from_secs(3));
}

/// kube-scheduler's `getBackoffTime` answers the zero time — before every `now`, window or
/// not — for a pod that has not failed yet or when backoff is off. gangway's window compared
/// such a pod's "expiry" (its timestamp) with the truncated `now` and kept it backing off for
/// up to a second: an ungated pod went to backoff instead of the active queue.
#[test]
fn a_pod_that_never_failed_never_backs_off_in_the_ordering_window() {
    let c = QueueConfig::DEFAULT;
    let info = QueuedPodInfo::new(pod("a", 0), Time::from_millis(1_300));
    assert_eq!(c.backoff_expiry(&info), None);
    assert!(!c.is_backing_off(&info, Time::from_millis(1_300)));
    let mut failed = info.clone();
    failed.start_attempt();
    let mut failed = failed.rejected_by(NODE);
    failed.count_failure();
    assert!(c.is_backing_off(&failed, Time::from_millis(1_300)));
    let off = c.with_max_backoff(Duration::ZERO);
    assert_eq!(off.backoff_expiry(&failed), None);
    assert!(!off.is_backing_off(&failed, Time::from_millis(1_300)));
}

#[test]
fn an_event_during_the_attempt_is_not_lost() {
    // I7: the node frees up while the pod is being scheduled; when it comes back rejected it
    // goes to backoff, not to the unschedulable pool.
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    let popped = q.pop().unwrap();
    q.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(pod("gone", 0)),
        None,
        Time::ZERO,
        &p,
    );
    checked(&q);
    let place = q
        .add_unschedulable_if_not_present(popped.info.rejected_by(NODE), Time::ZERO, &p)
        .unwrap();
    assert_eq!(place, Some(QueuePlace::Backoff(Time::from_secs(1))));
    assert_eq!(q.lengths().in_flight, 0);
    assert!(q.events.is_empty(), "no pod in flight, no events kept");
    checked(&q);
}

#[test]
fn an_event_before_the_attempt_does_not_count() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    q.add(pod("b", -1), Time::ZERO, &p).unwrap();
    let a = q.pop().unwrap();
    q.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(pod("x", 0)),
        None,
        Time::ZERO,
        &p,
    );
    let b = q.pop().unwrap();
    let back = |q: &mut QueueState, info: QueuedPodInfo| {
        q.add_unschedulable_if_not_present(info.rejected_by(NODE), Time::ZERO, &p)
            .unwrap()
    };
    assert_eq!(
        back(&mut q, b.info),
        Some(QueuePlace::Unschedulable),
        "b was popped after the event"
    );
    assert!(
        matches!(back(&mut q, a.info), Some(QueuePlace::Backoff(_))),
        "a saw it in flight"
    );
    checked(&q);
}

#[test]
fn error_failures_back_off_separately() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    let popped = q.pop().unwrap();
    let place = q
        .add_unschedulable_if_not_present(popped.info, Time::ZERO, &p)
        .unwrap();
    assert_eq!(place, Some(QueuePlace::ErrorBackoff(Time::from_secs(1))));
    assert_eq!(q.lengths().error_backoff, 1);
    checked(&q);
}

#[test]
fn activate_moves_parked_pods_and_remembers_in_flight_ones() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    q.add(pod("b", -1), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "a", Time::ZERO, &p);
    let b = q.pop().unwrap();
    assert_eq!(
        q.activate(&[id("a"), id("b"), id("unknown")], Time::ZERO, &p),
        1
    );
    assert!(matches!(q.place(&id("a")), Some(QueuePlace::Active(_))));
    // b was in flight: its activation is honoured when it comes back (I7).
    let place = q
        .add_unschedulable_if_not_present(b.info.rejected_by(NODE), Time::ZERO, &p)
        .unwrap();
    assert!(matches!(place, Some(QueuePlace::Backoff(_))));
    checked(&q);
}

#[test]
fn gated_pods_wait_in_the_pool_and_move_only_for_their_gate() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    assert!(!q.add(pod("gated-a", 0), Time::ZERO, &p).unwrap());
    assert_eq!(q.lengths().gated, 1);
    assert_eq!(
        q.info(&id("gated-a"))
            .unwrap()
            .gated_by()
            .map(|g| g.as_str()),
        Some("Gate")
    );
    // A freed node does not concern the gate.
    q.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(pod("x", 0)),
        None,
        Time::ZERO,
        &p,
    );
    assert_eq!(q.place(&id("gated-a")), Some(QueuePlace::Unschedulable));
    // The update that lifts the gate lets it in.
    let place = q.update(pod("gated-a", 0), pod("gated-a", 5), Time::ZERO, &p);
    assert!(matches!(place, QueuePlace::Active(_)));
    assert_eq!(q.lengths().gated, 0);
    checked(&q);
}

#[test]
fn a_pod_deleted_in_flight_does_not_come_back() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    let popped = q.pop().unwrap();
    assert!(q.delete(&id("a")));
    assert_eq!(
        q.add_unschedulable_if_not_present(popped.info, Time::ZERO, &p)
            .unwrap(),
        None
    );
    assert_eq!(q.place(&id("a")), None);
    assert!(!q.delete(&id("a")), "unknown: no-op");
    checked(&q);
}

#[test]
fn a_failed_gang_comes_back_together_with_one_backoff() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    for name in ["g0", "g1", "g2"] {
        q.add(pod(name, 0), Time::ZERO, &p).unwrap();
    }
    // g0 already failed once before (an error), so its own backoff would be longer.
    fail_unschedulable(&mut q, "g0", Time::ZERO, &p);
    q.activate(&[id("g0")], Time::ZERO, &p);
    let members: Vec<_> = (0..3)
        .map(|_| q.pop().unwrap().info.rejected_by(NODE))
        .collect();
    assert_eq!(members.iter().map(|m| m.attempts()).max(), Some(2));
    // Resources were freed during the attempt: the event applies to all of them.
    q.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(pod("x", 0)),
        None,
        Time::ZERO,
        &p,
    );
    let places = q
        .add_gang_unschedulable(members, Time::from_secs(10), &p)
        .unwrap();
    let expiry = Time::from_secs(12); // 10 s + g0's 2 s: one backoff, the longest
    assert_eq!(places, vec![Some(QueuePlace::Backoff(expiry)); 3]);
    // 1.36's ordering window: at 12.x s the truncated now equals the expiry, still backing off.
    assert_eq!(q.flush_backoff_completed(Time::from_millis(12_999), &p), 0);
    assert_eq!(
        q.flush_backoff_completed(Time::from_secs(13), &p),
        3,
        "they leave backoff together"
    );
    checked(&q);
}

#[test]
fn hand_back_takes_the_queues_own_record_and_refuses_a_pod_not_in_flight() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    for name in ["a", "g0", "g1"] {
        q.add(pod(name, 0), Time::ZERO, &p).unwrap();
    }
    q.pop().unwrap();
    let place = q.hand_back(&id("a"), Some(NODE.into()), Time::ZERO, &p);
    assert_eq!(place, Ok(Some(QueuePlace::Unschedulable)));
    let info = q.info(&id("a")).unwrap();
    assert_eq!(
        (info.attempts(), info.unschedulable_plugins().len()),
        (1, 1)
    );
    let before = q.clone();
    assert_eq!(
        q.hand_back(&id("a"), None, Time::ZERO, &p),
        Err(HandBackError::NotInFlight(id("a")))
    );
    // One member is not in flight: nobody comes back.
    q.pop().unwrap();
    let members = [(id("g0"), Some(NODE.into())), (id("g1"), None)];
    let before_gang = q.clone();
    assert_eq!(
        q.hand_back_gang(&members, Time::ZERO, &p),
        Err(HandBackError::NotInFlight(id("g1")))
    );
    assert_eq!(q, before_gang);
    assert_ne!(q, before, "g0 is in flight");
    checked(&q);
}

/// The layout the pool walk relies on (`QueuedPodInfo`'s docs): a slot is two cache lines.
#[cfg(target_pointer_width = "64")]
#[test]
fn a_queue_slot_is_two_cache_lines() {
    assert_eq!(std::mem::size_of::<Option<QueuedPodInfo>>(), 128);
    assert_eq!(std::mem::align_of::<QueuedPodInfo>(), 64);
}

/// 1.36's pop from backoff: with the active queue empty, a pop takes the rejected pod whose
/// backoff ends first, ties by priority; a pod in the error backoff is never taken early; with
/// the option off (the witness) nothing pops.
#[test]
fn pop_from_backoff_takes_the_earliest_rejection_never_an_error() {
    let p = plugins();
    let now = Time::ZERO;
    for pop_from_backoff in [true, false] {
        let config = QueueConfig::DEFAULT.with_pop_from_backoff(pop_from_backoff);
        let mut q = QueueState::new(config);
        for (name, priority) in [("low", 0), ("high", 5), ("err", 9)] {
            q.add(pod(name, priority), now, &p).unwrap();
        }
        // "err" fails with an error, then "high" and "low" are rejected at the same instant:
        // the same backoff expiry, so priority breaks the tie.
        let err = q.pop().unwrap();
        assert_eq!(err.info.id(), &id("err"));
        q.hand_back(&id("err"), None, now, &p).unwrap();
        for name in ["high", "low"] {
            fail_unschedulable(&mut q, name, now, &p);
        }
        free_room(&mut q, now, &p);
        assert!(matches!(q.place(&id("high")), Some(QueuePlace::Backoff(_))));
        assert!(matches!(
            q.place(&id("err")),
            Some(QueuePlace::ErrorBackoff(_))
        ));
        checked(&q);
        if !pop_from_backoff {
            assert_eq!(q.poppable_len(), 0);
            assert!(q.pop().is_none(), "only the active queue pops");
            continue;
        }
        assert_eq!(q.poppable_len(), 2, "the error backoff is not poppable");
        assert_eq!(q.pop().unwrap().info.id(), &id("high"));
        assert_eq!(q.pop().unwrap().info.id(), &id("low"));
        assert!(q.pop().is_none(), "the error backoff waits out its expiry");
        assert_eq!(q.place(&id("high")), Some(QueuePlace::InFlight));
        checked(&q);
    }
}

/// An update while the pod is in flight is an event of its attempt and its new object: handed
/// back, the pod is requeued as it is now (kube-scheduler's failure handler requeues the
/// informer's copy) — upstream/traces/update_in_flight.jsonl measures it against the real code.
#[test]
fn a_pod_updated_in_flight_comes_back_as_its_new_object() {
    let p = plugins();
    let now = Time::ZERO;
    let mut q = QueueState::new(QueueConfig::DEFAULT);
    q.add(pod("a", 0), now, &p).unwrap();
    q.pop().unwrap();
    assert_eq!(
        q.update(pod("a", 0), pod("a", 10), now, &p),
        QueuePlace::InFlight
    );
    q.hand_back(&id("a"), Some(NODE.into()), now, &p).unwrap();
    assert_eq!(q.info(&id("a")).unwrap().pod().priority(), 10);
    checked(&q);
}

/// Closing ends every attempt in flight (kube-scheduler's close calls done for each); a
/// hand-back after it finds the pod no longer in flight and changes nothing — measured against
/// the real code by upstream/traces/close.jsonl.
#[test]
fn close_ends_the_attempts_in_flight() {
    let p = plugins();
    let now = Time::ZERO;
    let mut q = QueueState::new(QueueConfig::DEFAULT);
    q.add(pod("a", 0), now, &p).unwrap();
    q.add(pod("b", 0), now, &p).unwrap();
    q.pop().unwrap();
    q.close();
    assert!(q.is_closed());
    assert_eq!(q.lengths().in_flight, 0);
    assert!(q.hand_back(&id("a"), None, now, &p).is_err());
    assert_eq!(q.place(&id("a")), None);
    assert!(matches!(q.place(&id("b")), Some(QueuePlace::Active(_))));
    checked(&q);
}

/// With pop from backoff, the heads a model checker explores are the backoff pods a pop could
/// take when the active queue is empty — all those tied in expiry and order — and `pop_tied`
/// takes any of them; without it, none.
#[test]
fn the_heads_include_tied_backoff_pods_when_popping_from_backoff() {
    let p = plugins();
    let now = Time::ZERO;
    for pop_from_backoff in [true, false] {
        let mut q = QueueState::new(QueueConfig::DEFAULT.with_pop_from_backoff(pop_from_backoff));
        for name in ["a", "b", "c"] {
            q.add(pod(name, if name == "c" { -1 } else { 0 }), now, &p)
                .unwrap();
        }
        for name in ["a", "b", "c"] {
            fail_unschedulable(&mut q, name, now, &p);
        }
        free_room(&mut q, now, &p);
        let heads: Vec<&PodId> = q.heads().collect();
        if !pop_from_backoff {
            assert!(heads.is_empty());
            assert!(q.pop_tied(&id("b")).is_none());
            continue;
        }
        // a and b: the same expiry, priority and timestamp; c has a lower priority.
        assert_eq!(heads, [&id("a"), &id("b")]);
        assert!(q.pop_tied(&id("c")).is_none(), "not a head");
        assert_eq!(q.pop_tied(&id("b")).unwrap().info.id(), &id("b"));
        assert_eq!(q.heads().collect::<Vec<_>>(), [&id("a")]);
        assert_eq!(q.pop().unwrap().info.id(), &id("a"));
        assert_eq!(q.pop().unwrap().info.id(), &id("c"));
        checked(&q);
    }
}

/// kube-scheduler 1.36 with the gang gates backs a failed pod group member off whatever its
/// attempt saw (`determineSchedulingHintForInFlightPod`: no event-based requeueing for pod
/// groups); with the rule off (gangway's default, the witness) it parks like any pod until an
/// event its rejector cares about.
#[test]
fn a_failed_group_member_backs_off_under_the_gang_gates_rule() {
    let p = plugins();
    for rule in [true, false] {
        let config = QueueConfig::DEFAULT.with_group_members_back_off(rule);
        let mut q = QueueState::new(config);
        q.add(pod("m", 0).with_group("g"), Time::ZERO, &p).unwrap();
        q.add(pod("solo", 0), Time::ZERO, &p).unwrap();
        let member = fail_unschedulable(&mut q, "m", Time::ZERO, &p);
        let solo = fail_unschedulable(&mut q, "solo", Time::ZERO, &p);
        assert_eq!(
            solo,
            Some(QueuePlace::Unschedulable),
            "a pod without a group parks"
        );
        if rule {
            assert_eq!(member, Some(QueuePlace::Backoff(Time::from_secs(1))));
        } else {
            assert_eq!(member, Some(QueuePlace::Unschedulable));
        }
    }
}

/// The queue is one state to a model checker whatever its hash table's history: two queues
/// holding the same pods — one that grew to 200 and lost half, one filled in reverse — are
/// equal and hash alike, although their tables list the pods in different orders (the
/// witness: a hash over the table's own order tells them apart).
#[test]
fn the_same_pods_are_one_state_whatever_the_table_s_order() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |value: &dyn Fn(&mut DefaultHasher)| {
        let mut h = DefaultHasher::new();
        value(&mut h);
        h.finish()
    };
    let p = plugins();
    let name = |i: usize| format!("p-{i:03}");
    let mut grown = QueueState::new(QueueConfig::default());
    for i in 0..200 {
        grown.add(pod(&name(i), 0), Time::ZERO, &p).unwrap();
    }
    for i in 100..200 {
        assert!(grown.delete(&id(&name(i))));
    }
    let mut reversed = QueueState::new(QueueConfig::default());
    for i in (0..100).rev() {
        reversed.add(pod(&name(i), 0), Time::ZERO, &p).unwrap();
    }
    let in_table_order =
        |q: &QueueState| hash(&|h| q.entries().for_each(|(id, place, _)| (id, place).hash(h)));
    assert_ne!(in_table_order(&grown), in_table_order(&reversed));
    assert_eq!(grown, reversed);
    assert_eq!(hash(&|h| grown.hash(h)), hash(&|h| reversed.hash(h)));
    assert!(grown
        .pods()
        .map(|(id, ..)| id)
        .eq(reversed.pods().map(|(id, ..)| id)));
    reversed.pop().unwrap();
    assert_ne!(grown, reversed);
}

/// The queue keeps the configuration it was made with, and a planted flaw (the checkers'
/// seam) is the one asked for.
#[test]
fn a_queue_keeps_its_configuration_and_its_planted_flaw() {
    let config = QueueConfig::BEFORE_1_33;
    assert_ne!(config, QueueConfig::default());
    assert_eq!(QueueState::new(config).config(), &config);
    #[cfg(feature = "checking")]
    {
        use super::flaw::QueueFlaw;
        let flawed = QueueState::with_flaw(config, QueueFlaw::ForgetsEventsInFlight);
        assert!(flawed.planted(QueueFlaw::ForgetsEventsInFlight));
        assert!(!QueueState::new(config).planted(QueueFlaw::ForgetsEventsInFlight));
        assert_eq!(flawed.config(), &config);
    }
}

/// A binding cycle past Permit takes the pod's record as its attempt ends (to hand it back
/// with its attempts counted if the bind fails); a second take, or one for a pod not in
/// flight, finds nothing.
#[test]
fn take_done_hands_over_the_record_of_the_attempt_once() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 1), Time::ZERO, &p).unwrap();
    q.add(pod("b", 0), Time::ZERO, &p).unwrap();
    q.pop().unwrap();
    let taken = q.take_done(&id("a")).expect("in flight");
    assert_eq!((taken.id(), taken.attempts()), (&id("a"), 1));
    assert_eq!(q.place(&id("a")), None);
    assert!(q.take_done(&id("a")).is_none(), "once");
    assert!(q.take_done(&id("b")).is_none(), "active, not in flight");
    checked(&q);
}

/// Each pop is one scheduling cycle, numbered from 1 (kube-scheduler's `SchedulingCycle`),
/// and the popped pod carries its cycle's number.
#[test]
fn each_pop_is_one_scheduling_cycle() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    assert_eq!(q.scheduling_cycle(), 0);
    for name in ["a", "b", "c"] {
        q.add(pod(name, 1), Time::ZERO, &p).unwrap();
    }
    let cycles: Vec<u64> = (0..3).map(|_| q.pop().unwrap().cycle).collect();
    assert_eq!(cycles, [1, 2, 3]);
    assert_eq!(q.scheduling_cycle(), 3);
}

/// Queues that differ hash apart — by a pod's place, a pod more, a pop — so that the model
/// checker, which tells states apart by their hash first, does not take one for the other.
#[test]
fn different_queues_hash_apart() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash_of = |q: &QueueState| {
        let mut h = DefaultHasher::new();
        q.hash(&mut h);
        h.finish()
    };
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 1), Time::ZERO, &p).unwrap();
    let one = q.clone();
    q.add(pod("b", 1), Time::ZERO, &p).unwrap();
    let two = q.clone();
    q.pop().unwrap();
    let popped = q.clone();
    let hashes = [hash_of(&one), hash_of(&two), hash_of(&popped)];
    assert!(
        hashes[0] != hashes[1] && hashes[1] != hashes[2] && hashes[0] != hashes[2],
        "{hashes:?}"
    );
    assert_eq!(hash_of(&two), hash_of(&two.clone()));
}
