//! I7's judge on a real scheduler's states (`parked_with_room`).

use gangsched::scheduler::{Node, Placement, ResourceFit};
use gangsched::{GangCycle, Mode, Pod, PodGroup, Resources, Scheduler, SchedulerConfig, Time};

use super::properties::parked_with_room;

const CPU: u64 = 1_000;

/// A gang whose quorum of two fits only if its two small members go first, behind a larger
/// member of higher priority that the pod-group cycle places first: the cycle never finds that
/// room, so the members parked for want of it wait for no lost event. The judge once placed
/// members by name and took the wait for a lost wake-up (found by the scheduler_events fuzz
/// target's judgement at rest).
#[test]
fn room_for_a_quorum_in_an_order_the_cycle_never_takes_is_no_lost_event() {
    let config = SchedulerConfig::default()
        .with_mode(Mode::Hardened)
        .with_gang_cycle(GangCycle::PodGroup);
    let s = Scheduler::new(config);
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(CPU, 8 << 30)), now)
        .unwrap();
    s.add_group(PodGroup::gang("ml", "g", 2).unwrap(), now)
        .unwrap();
    let member = |name: &str, millis: u64, priority: i32| {
        Pod::new(name, "ml", name)
            .with_group("g")
            .with_priority(priority)
            .with_requests(Resources::new(millis, 1 << 30))
    };
    s.add_pod(member("a-small", CPU / 2, 0), now).unwrap();
    s.add_pod(member("b-small", CPU / 2, 0), now).unwrap();
    s.add_pod(member("z-large", CPU, 2), now).unwrap();
    let mut at = now;
    for _ in 0..20 {
        while s.schedule_one(at).is_some() {}
        at += std::time::Duration::from_secs(30);
        s.tick(at);
    }
    let queue = s.queue().snapshot();
    let parked = queue
        .pods()
        .filter(|(_, place, _)| *place == gangsched::queue::QueuePlace::Unschedulable)
        .count();
    assert_eq!(parked, 3, "the gang parked whole: {queue:?}");
    let found = parked_with_room(
        &queue,
        &s.gang().registry().snapshot(),
        &s.cache().snapshot(),
        true,
        |plugin| plugin.as_str() == ResourceFit::PLUGIN,
        |pod, cache| ResourceFit.place(pod, cache).ok(),
    );
    assert_eq!(found, None);
}
