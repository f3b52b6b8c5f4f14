//! A Hardened scheduler with one gang of three on a node with room for two: two members wait at
//! Permit, the third found no room — the start of the gang hand-back regression tests.

use std::time::Duration;

use gangsched::scheduler::{Node, Scheduler, SchedulerConfig};
use gangsched::{Mode, Pod, PodGroup, Resources, Time};

/// One CPU, in millicores.
pub const CPU: u64 = 1_000;

/// The gang's permit timeout.
pub const PERMIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Member `i` of gang `ml/g`: one CPU, 1 GiB.
pub fn member(i: usize) -> Pod {
    Pod::new(format!("m{i}"), "ml", &format!("m{i}"))
        .with_group("g")
        .with_requests(Resources::new(CPU, 1 << 30))
}

/// A Hardened scheduler whose gang `ml/g` (min count 3) has scheduled at `Time::ZERO`: `m0`
/// and `m1` wait at Permit on node `n`, `m2` found no room.
pub fn two_members_waiting() -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(Mode::Hardened)
        .with_permit_timeout(PERMIT_TIMEOUT);
    let s = Scheduler::new(config);
    let t0 = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(2 * CPU, 8 << 30)), t0)
        .expect("a new node");
    s.add_group(PodGroup::gang("ml", "g", 3).expect("a valid gang"), t0)
        .expect("a new group");
    for i in 0..3 {
        s.add_pod(member(i), t0).expect("a new pod");
    }
    while s.schedule_one(t0).is_some() {}
    assert_eq!(
        s.waiting().len(),
        2,
        "two members wait, the third found no room"
    );
    s
}
