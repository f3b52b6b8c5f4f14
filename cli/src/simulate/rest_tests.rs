//! The witness for the checks at rest (`rest.rs`): a bound pod dropped from the cache without
//! its delete — room freed that nobody announced — leaves a pod parked for room a node has
//! (I7) and a gang counting a member bound that the cache no longer holds (I5).

use std::time::Duration;

use gangsched::scheduler::{ResourceFit, Scheduler, SchedulerConfig};
use gangsched::{GangCycle, Pod, PodGroup, Resources, Time};

use super::rest::Rests;

const SLOT: Resources = Resources::new(1_000, 1 << 30);

fn settle(s: &Scheduler, now: Time) {
    while s.schedule_one(now).is_some() || s.run_binding_cycles(now) > 0 {}
}

#[test]
fn room_freed_in_silence_breaks_i5_and_i7_at_rest() {
    let s = Scheduler::builder(SchedulerConfig::default())
        .placement(ResourceFit)
        .build();
    let now = Time::ZERO;
    s.add_node(gangsched::scheduler::Node::new("node-0", SLOT), now)
        .unwrap();
    s.add_group(PodGroup::gang("ns", "a", 1).unwrap(), now)
        .unwrap();
    let x = Pod::new("x", "ns", "x").with_group("a").with_requests(SLOT);
    let y = Pod::new("y", "ns", "y").with_requests(SLOT);
    s.add_pod(x.clone(), now).unwrap();
    settle(&s, now);
    assert!(s.is_bound(x.id()));
    s.add_pod(y.clone(), now).unwrap();
    settle(&s, now);
    let mut rests = Rests::default();
    rests.check(&s, GangCycle::PermitBarrier, now, |_| false);
    assert!(rests.violations.is_empty(), "{:?}", rests.violations);
    // The cache drops x as a delete would, but nothing tells the queue or the gang.
    s.cache().remove_pod(x.id()).expect("x is in the cache");
    let later = now + Duration::from_secs(1);
    rests.check(&s, GangCycle::PermitBarrier, later, |_| false);
    let found = rests.violations.join("\n");
    assert!(
        found.contains("I7: y is parked as unschedulable"),
        "{found}"
    );
    assert!(
        found.contains("I5: x is Bound in gang ns/a but None"),
        "{found}"
    );
}
