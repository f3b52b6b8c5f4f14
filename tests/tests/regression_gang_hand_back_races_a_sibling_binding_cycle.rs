//! A Hardened gang attempt times out with two members waiting, and two binding workers take
//! their rejections at once. The first to finish hands its gang back whole (H2) — and must not
//! take the sibling whose binding cycle the other worker has already begun: before binding
//! cycles claimed their pods, the hand-back took it, the other cycle then found its pod gone,
//! took it for deleted (`deleted_in_flight` 1, no delete anywhere) and ended its attempt in
//! the queue a second time — the pod's new attempt, had it been popped again meanwhile. Found
//! by `e2e_scheduler` on real threads; here the two workers' steps are interleaved by hand.
#![cfg(not(loom))]

use gangsched::checking::steps::{self, BindingOutcome};
use gangsched::checking::{self, Parts};
use gangsched::queue::QueuePlace;
use gangsched::{Cause, PodId, Time};
use gangway_tests::waiting_gang::{member, two_members_waiting, PERMIT_TIMEOUT};

#[test]
fn regression_gang_hand_back_races_a_sibling_binding_cycle() {
    let s = two_members_waiting();
    let now = Time::from_secs(PERMIT_TIMEOUT.as_secs());
    s.tick(now);

    let (m0, m1) = (member(0).id().clone(), member(1).id().clone());
    let mut parts = checking::scheduler_parts(&s);
    let mut job = |id: &PodId| parts.driver(|d| d.take_job(id)).expect("a rejection");
    let (job0, job1) = (job(&m0), job(&m1));
    assert_eq!(job1.decision.cause, Cause::TimedOut);

    // Worker 2 begins m1's binding cycle; worker 1 runs m0's whole cycle meanwhile.
    let begun = steps::begin_binding(&mut parts, job1, now).expect("m1 is in binding");
    let first = steps::binding_cycle(&mut parts, job0, now);
    let BindingOutcome::Released { pods, .. } = first else {
        panic!("m0 is released: {first:?}");
    };
    assert_eq!(
        pods.iter().map(|p| p.id()).collect::<Vec<_>>(),
        [&m0],
        "the hand-back leaves m1 to the cycle that claimed it"
    );
    // Worker 2 ends m1's cycle: a rejection like any other, not a deletion.
    let second = steps::end_binding(&mut parts, begun, None, now);
    assert!(
        matches!(&second, BindingOutcome::Released { pods, .. } if pods.len() == 1 && pods[0].id() == &m1),
        "{second:?}"
    );

    let stats = s.stats();
    assert_eq!(stats.deleted_in_flight, 0, "nothing was deleted: {stats:?}");
    assert_eq!((stats.permit_rejections, stats.permit_timeouts), (2, 2));
    for id in [&m0, &m1] {
        let place = s.queue().place(id);
        assert!(
            place.is_some_and(|p| p != QueuePlace::InFlight),
            "{id} is back in the queue, once: {place:?}"
        );
    }
    assert!(s.in_binding().is_empty());
    s.check().expect("I4, I5, I6");
}
