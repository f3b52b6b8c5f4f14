//! A Hardened gang attempt times out; the first member's binding cycle hands the whole gang
//! back (H2). Its siblings' own decisions — rejections of the attempt that is over — were left
//! behind in the binding workers' queue: a sibling popped again before a worker reached its
//! stale rejection had its *new* attempt released by it (its reservation dropped, its gang's
//! new attempt failed). The hand-back now takes the siblings' decisions with their
//! assignments, so nothing of the old attempt is left to act on the new one.
#![cfg(not(loom))]

use gangsched::queue::QueuePlace;
use gangsched::scheduler::CycleOutcome;
use gangsched::Time;
use gangway_tests::waiting_gang::{two_members_waiting, PERMIT_TIMEOUT};

#[test]
fn regression_stale_decision_after_gang_hand_back() {
    let s = two_members_waiting();

    // The attempt times out: two rejections wait for binding cycles. The first one to run
    // hands the gang back whole.
    let timeout = Time::from_secs(PERMIT_TIMEOUT.as_secs());
    s.tick(timeout);
    assert_eq!(s.in_binding().len(), 2);
    assert!(s.run_binding_cycle(timeout), "a rejection to run");
    assert!(
        s.in_binding().is_empty(),
        "both members are handed back together"
    );

    // The gang tries again before any binding worker looks at the queue of decisions.
    let later = Time::from_secs(30);
    s.tick(later); // backoffs over
    let mut again = Vec::new();
    while let Some(outcome) = s.schedule_one(later) {
        again.push(outcome);
    }
    let waiting = again
        .iter()
        .filter(|o| matches!(o, CycleOutcome::Waiting { .. }))
        .count();
    assert_eq!(waiting, 2, "two members wait again: {again:?}");

    // Nothing of the old attempt is left to act on the new one.
    assert_eq!(s.run_binding_cycles(later), 0, "no stale decision");
    assert_eq!(s.waiting().len(), 2, "the new attempt still waits");
    for waiting in s.waiting().snapshot() {
        assert_eq!(s.queue().place(waiting.id()), Some(QueuePlace::InFlight));
        assert!(s.in_binding().contains(waiting.id()));
    }
    assert_eq!(s.cache().with(|c| c.assumed_count()), 2);
    s.check().expect("I4, I5, I6");
}
