//! The gang plugin plugged into the scheduling queue: members are gated until the gang can
//! form, the last arrival lets them all in, and a gang attempt that fails in Hardened mode
//! goes back to the queue together with one backoff.
#![cfg(not(loom))]

use gangsched::gang::{GangScheduling, Permit};

use gangsched::queue::{ClusterEvent, QueueConfig, QueuePlace, SchedulingQueue};
use gangsched::scheduler::SchedulerPlugins;
use gangsched::sync::Arc;
use gangsched::PodGroup;
use gangsched::{Mode, Pod, Time, WaitingPods};

fn member(i: usize) -> Pod {
    Pod::new(format!("p{i}"), "ml", &format!("p{i}")).with_group("g")
}

/// The pod-add event handler, in upstream's order: group registry, then the queue, then a move
/// of gated siblings (an unscheduled pod add is otherwise no requeue trigger).
fn pod_added(gang: &GangScheduling, queue: &SchedulingQueue, pod: Pod, now: Time) {
    gang.on_pod_added(pod.clone(), false).unwrap();
    queue.add(pod.clone(), now).unwrap();
    queue.move_all_to_active_or_backoff(ClusterEvent::UnscheduledPodAdd(pod), None, now);
}

#[test]
fn gang_members_are_gated_until_the_gang_can_form_then_fail_and_return_together() {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    let queue = SchedulingQueue::new(
        QueueConfig::default(),
        Arc::new(SchedulerPlugins::new(gang.registry().clone())),
    );
    gang.on_group_added(PodGroup::gang("ml", "g", 3).unwrap())
        .unwrap();

    pod_added(&gang, &queue, member(0), Time::ZERO);
    pod_added(&gang, &queue, member(1), Time::ZERO);
    assert_eq!(
        queue.lengths().gated,
        2,
        "two of three: gated by GangScheduling"
    );
    assert!(queue.try_pop().is_none());

    pod_added(&gang, &queue, member(2), Time::ZERO);
    let lengths = queue.lengths();
    assert_eq!(
        (lengths.active, lengths.gated),
        (3, 0),
        "the third arrival lets the gang in"
    );
    queue.snapshot().check().unwrap();

    // Two members reach Permit and wait; the third never gets there (say it does not fit and
    // is handed back); the attempt times out and is rejected as a whole.
    let popped: Vec<_> = (0..3).map(|_| queue.try_pop().unwrap()).collect();
    let mut waiting = Vec::new();
    for p in &popped[..2] {
        gang.reserve(p.info.pod()).unwrap();
        let Permit::Wait { waiting: w, .. } = gang.permit(p.info.pod(), Time::ZERO) else {
            panic!("waits for its siblings");
        };
        waiting.push(w);
    }
    let third = popped[2].info.clone().rejected_by("NodeResourcesFit");
    assert_eq!(
        queue
            .add_unschedulable_if_not_present(third, Time::ZERO)
            .unwrap(),
        Some(QueuePlace::Unschedulable)
    );
    assert_eq!(gang.expire(Time::from_secs(300)).len(), 1);
    assert!(waiting.iter().all(|w| w.wait().is_rejected()));

    // The failed members' binding cycles release them and hand them back as one gang.
    for p in &popped[..2] {
        gang.unreserve(p.info.pod());
    }
    let members = popped[..2]
        .iter()
        .map(|p| p.info.clone().rejected_by("GangScheduling"))
        .collect();
    let places = queue
        .add_gang_unschedulable(members, Time::from_secs(300))
        .unwrap();
    assert_eq!(places[0], places[1], "together");
    queue.snapshot().check().unwrap();
    gang.registry().snapshot().check().unwrap();
    assert!(gang.waiting().is_empty());
}
