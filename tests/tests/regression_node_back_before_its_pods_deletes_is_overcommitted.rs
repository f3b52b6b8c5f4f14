//! A node deleted while pods ran on it, and back before their own deletes came: gangway's
//! cache had dropped those pods with the node, so the node came back empty and the scheduler
//! placed pods into room they still held — an overcommitted node. kube-scheduler's cache keeps
//! a deleted node's pods (`RemoveNode`) until they go. Found by the driver differential
//! against the real `ScheduleOne` (`gangway differential --driver … --generate-driver`).
#![cfg(not(loom))]

use gangsched::scheduler::{CycleOutcome, Node};
use gangsched::{Mode, Pod, Resources, Scheduler, SchedulerConfig, Time};

#[test]
fn a_node_that_comes_back_still_holds_the_room_of_the_pods_on_it() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let s = Scheduler::new(SchedulerConfig::default().with_mode(mode));
        let now = Time::ZERO;
        let node = Node::new("n1", Resources::new(1_000, 1 << 30));
        s.add_node(node.clone(), now).unwrap();
        let running = Pod::new("a", "ns", "a")
            .with_requests(Resources::new(600, 0))
            .with_node("n1");
        s.add_pod(running.clone(), now).unwrap();

        assert_eq!(s.delete_node("n1", now).unwrap(), [running.id().clone()]);
        s.add_node(node, now).unwrap();
        let newcomer = Pod::new("b", "ns", "b").with_requests(Resources::new(600, 0));
        s.add_pod(newcomer, now).unwrap();
        let cycle = s.schedule_one(now).expect("b pops");
        assert!(
            matches!(cycle, CycleOutcome::Unschedulable { .. }),
            "{mode:?}: a still runs on n1, b does not fit beside it: {cycle:?}"
        );
        s.check().unwrap();

        // Once a's delete comes, its room is free.
        s.delete_pod(&running, now).unwrap();
        s.check().unwrap();
    }
}
