//! Unit tests of the scoped move's thresholds and its gated members: when the group and gate
//! indexes are built, and which gated members a group's event asks again. (Found missing by
//! mutation testing, issue #43: both are outcome-equal to the full walk by design, so only the
//! work they save tells them apart.)

use super::requeue_tests::{group_scope, Counting};
use super::state_tests::{checked, plugins, pod};
use super::*;
use crate::{Pod, PodGroup, QueueingHint, Time};

fn group_event() -> ClusterEvent {
    ClusterEvent::PodGroupAdd(PodGroup::gang("ns", "g", 2).unwrap())
}

/// The group index is built by the first scoped move in a queue of 64 pods, not 63; the gate
/// index by the first move with 64 gated pods, not 63.
#[test]
fn the_indexes_are_built_from_64_pods() {
    let p = plugins();
    let skip = |_: &Pod, _: &ClusterEvent| Ok(QueueingHint::QueueSkip);
    let grouped = Counting::new(
        plugins().with_hint("Gang", EventKind::PodGroupAdd, skip),
        group_scope,
    );
    let mut q = QueueState::new(QueueConfig::default());
    for i in 0..63 {
        assert!(!q
            .add(pod(&format!("gated-{i:02}"), 0), Time::ZERO, &p)
            .unwrap());
    }
    let small = || ClusterEvent::NodeAdd("small".into());
    q.move_all_to_active_or_backoff(small(), None, Time::ZERO, &p);
    q.move_all_to_active_or_backoff(group_event(), None, Time::ZERO, &grouped);
    assert!(q.groups.is_none() && q.gates.is_none(), "63 pods, 63 gated");
    assert!(!q.add(pod("gated-63", 0), Time::ZERO, &p).unwrap());
    q.move_all_to_active_or_backoff(group_event(), None, Time::ZERO, &grouped);
    assert!(q.groups.is_some(), "64 pods");
    assert!(
        q.gates.is_none(),
        "a group's move does not build the gate index"
    );
    q.move_all_to_active_or_backoff(small(), None, Time::ZERO, &p);
    assert!(q.gates.is_some(), "64 gated");
    checked(&q);
}

/// A group's event asks PreEnqueue again of each of its gated members whose gate registered
/// for it: a plugin set does not promise that one member's verdict is the group's.
#[test]
fn a_group_event_asks_each_gated_member_unless_the_plugins_gate_by_group() {
    let inner = plugins().with_hint("Gate", EventKind::PodGroupAdd, |_, _| {
        Ok(QueueingHint::Queue)
    });
    let p = Counting::new(inner, group_scope);
    let mut q = QueueState::new(QueueConfig::default());
    for i in 0..3 {
        let name = format!("gated-{i}");
        let member = Pod::new(&*name, "ns", &name).with_group("g");
        assert!(!q.add(member, Time::ZERO, &p).unwrap());
    }
    q.build_indexes();
    p.take();
    q.move_all_to_active_or_backoff(group_event(), None, Time::ZERO, &p);
    assert_eq!(p.take().0, 3, "each member's gate asked");
    assert_eq!(q.lengths().gated, 3);
    checked(&q);
}
