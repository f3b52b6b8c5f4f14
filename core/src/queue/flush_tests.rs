//! Unit tests of the queue's two flushes and when they have work: the backoff flush, and the
//! unschedulable leftover flush with a gated pod (v1.36.3, or kubernetes#139162 with
//! `QueueConfig::wildcards_move_gated`).

use std::time::Duration;

use super::state_tests::{checked, fail_unschedulable, id, plugins, pod, NODE};
use super::*;
use crate::{Pod, Time};

#[test]
fn next_backoff_expiry_and_leftover_flush_say_when_the_flushes_have_work() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    assert_eq!(
        (q.next_backoff_expiry(), q.next_leftover_flush()),
        (None, None)
    );
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "a", Time::ZERO, &p);
    let five_min = Time::ZERO + Duration::from_secs(300);
    assert_eq!(
        q.next_leftover_flush(),
        Some(five_min + Duration::from_nanos(1))
    );
    assert_eq!(
        q.flush_unschedulable_leftover(five_min, &p),
        0,
        "not longer than 5 min yet"
    );
    assert_eq!(
        q.flush_unschedulable_leftover(five_min + Duration::from_nanos(1), &p),
        1
    );
    // It moved to backoff (its 1 s backoff from time zero is over, so straight to active).
    assert_eq!(q.next_leftover_flush(), None);
    let popped = q.pop().expect("active");
    let now = Time::from_secs(400);
    q.add_unschedulable_if_not_present(popped.info.rejected_by("NodeResourcesFit"), now, &p)
        .expect("in flight");
    q.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(Pod::new("x", "ns", "x")),
        None,
        now,
        &p,
    );
    // Second attempt: 2 s backoff from its failure at 400 s, expiring at 402 s; in 1.36's
    // 1 s ordering window it still backs off at 402.x s, so the flush has work at 403 s.
    assert_eq!(
        q.place(&id("a")),
        Some(QueuePlace::Backoff(Time::from_secs(402)))
    );
    assert_eq!(q.next_backoff_expiry(), Some(Time::from_secs(403)));
    assert_eq!(q.flush_backoff_completed(Time::from_millis(402_999), &p), 0);
    assert_eq!(q.flush_backoff_completed(Time::from_secs(403), &p), 1);
    // Compared exactly (before 1.33), the flush has work at the expiry itself.
    let mut exact = QueueState::new(QueueConfig::BEFORE_1_33);
    exact.add(pod("a", 0), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut exact, "a", Time::ZERO, &p);
    exact.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(Pod::new("x", "ns", "x")),
        None,
        Time::ZERO,
        &p,
    );
    assert_eq!(exact.next_backoff_expiry(), Some(Time::from_secs(1)));
    assert_eq!(exact.flush_backoff_completed(Time::from_secs(1), &p), 1);
}

/// Found by the `queue_moves` corpus differential (a setup byte turning
/// `SchedulerPopFromBackoffQ` off): gangway compared a backoff with the gate off as 1.32 did,
/// over at its expiry, where v1.36.3's `isPodBackingoff` is `!boTime.Before(now)` with the gate
/// on or off, so kube-scheduler still held the pod at its expiry. With the gate off the
/// backoff now ends a nanosecond after its expiry, and the flush timer says so.
#[test]
fn a_backoff_ending_now_still_holds_with_pop_from_backoff_off() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::POP_FROM_BACKOFF_OFF);
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "a", Time::ZERO, &p);
    q.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(Pod::new("x", "ns", "x")),
        None,
        Time::ZERO,
        &p,
    );
    assert_eq!(
        q.place(&id("a")),
        Some(QueuePlace::Backoff(Time::from_secs(1)))
    );
    assert_eq!(
        q.next_backoff_expiry(),
        Some(Time::from_nanos(1_000_000_001))
    );
    assert_eq!(q.flush_backoff_completed(Time::from_secs(1), &p), 0);
    assert_eq!(
        q.flush_backoff_completed(Time::from_nanos(1_000_000_001), &p),
        1
    );
}

#[test]
fn leftover_flush_retries_old_unschedulable_pods_once() {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    q.add(pod("gated-b", 0), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "a", Time::ZERO, &p);
    assert_eq!(
        q.flush_unschedulable_leftover(Time::from_secs(300), &p),
        0,
        "exactly 5 min is not past"
    );
    assert_eq!(q.flush_unschedulable_leftover(Time::from_secs(301), &p), 1);
    assert!(matches!(q.place(&id("a")), Some(QueuePlace::Active(_))));
    assert_eq!(
        q.place(&id("gated-b")),
        Some(QueuePlace::Unschedulable),
        "still gated"
    );
    assert_eq!(
        q.flush_unschedulable_leftover(Time::from_secs(330), &p),
        0,
        "not re-flushed at once"
    );
    checked(&q);
}

/// v1.36.3: the leftover flush never retries a gated pod (a wildcard matches no gate's
/// registration), so a stale gated pod stays stale and every flush announces
/// `UnschedulableTimeout` to the pods in flight: one rejected then backs off instead of
/// parking (upstream/traces/gated_pod_stale_at_every_flush.jsonl). `next_leftover_flush`
/// leaves the gated pod out, or every instant would be a deadline. With kubernetes#139162 (the
/// witness) the first flush checks the gate and starts a new wait; the next finds nothing.
#[test]
fn a_stale_gated_pod_makes_every_leftover_flush_an_event_for_the_pods_in_flight() {
    let p = plugins();
    for fix in [false, true] {
        let mut q = QueueState::new(QueueConfig::DEFAULT.with_wildcards_move_gated(fix));
        q.add(pod("gated-a", 0), Time::ZERO, &p).unwrap();
        assert_eq!(
            q.next_leftover_flush(),
            fix.then(|| Time::from_nanos(300_000_000_001))
        );
        let (first, second) = (Time::from_secs(301), Time::from_secs(331));
        q.add(pod("b", 0), first, &p).unwrap();
        let popped = q.pop().expect("b is active");
        assert_eq!(q.flush_unschedulable_leftover(first, &p), 0, "still gated");
        assert_eq!(q.place(&id("gated-a")), Some(QueuePlace::Unschedulable));
        // The flush was an event during b's attempt either way: b backs off.
        let place = q
            .add_unschedulable_if_not_present(popped.info.rejected_by(NODE), first, &p)
            .unwrap();
        assert!(
            matches!(place, Some(QueuePlace::Backoff(_))),
            "{fix}: {place:?}"
        );
        assert_eq!(
            q.flush_backoff_completed(first + Duration::from_secs(2), &p),
            1
        );
        let popped = q.pop().expect("b is active again");
        q.flush_unschedulable_leftover(second, &p);
        let place = q
            .add_unschedulable_if_not_present(popped.info.rejected_by(NODE), second, &p)
            .unwrap();
        if fix {
            assert_eq!(place, Some(QueuePlace::Unschedulable), "nothing was stale");
            assert_eq!(
                q.next_leftover_flush(),
                Some(Time::from_nanos(601_000_000_001))
            );
        } else {
            assert!(
                matches!(place, Some(QueuePlace::Backoff(_))),
                "announced again: {place:?}"
            );
            assert_eq!(
                q.next_leftover_flush(),
                None,
                "b backs off, gated-a is never retried"
            );
        }
        checked(&q);
    }
}
