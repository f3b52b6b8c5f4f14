//! Hardened asks the embedder's Permit plugins before the gang plugin. A gang member they
//! reject was still counted as reserved in its group until its binding cycle unreserved it, so
//! a sibling's Permit in between met quorum with it and passed alone — a partial gang (I3),
//! found by `gangway check --permit-rejections 1` on the tiny preset. A member another plugin
//! rejects now stops counting at once, as one the gang rejects does.
#![cfg(not(loom))]

use gangsched::sync::atomic::AtomicBool;
use gangsched::sync::Arc;
use gangsched::{GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPods};
// The model checker's own quota plugin, switched on: it rejects every pod.
use gangway_check::Quota;

#[test]
fn a_member_another_plugin_rejects_no_longer_counts_towards_its_gangs_quorum() {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    gang.on_group_added(PodGroup::gang("ml", "a", 2).unwrap())
        .unwrap();
    let pods: Vec<Pod> = (0..2)
        .map(|i| Pod::new(format!("a-{i}"), "ml", &format!("a-{i}")).with_group("a"))
        .map(|p| p.with_node("n1"))
        .collect();
    for pod in &pods {
        gang.on_pod_added(pod.clone(), false).unwrap();
    }
    let quota = Quota::new(Arc::new(AtomicBool::new(true))).plugins();

    gang.reserve(&pods[0]).unwrap();
    let first = gang.permit_with(&pods[0], "n1", &quota, Time::ZERO);
    assert!(matches!(first, Permit::Reject { .. }), "{first:?}");
    // a-0's binding cycle has not unreserved it yet when a-1's Permit runs.
    gang.reserve(&pods[1]).unwrap();
    let second = gang.permit(&pods[1], Time::ZERO);
    assert!(
        matches!(second, Permit::Wait { .. }),
        "a-1 must wait for a second member, not pass alone: {second:?}"
    );
    gang.unreserve(&pods[0]);
    gang.registry().snapshot().check().unwrap();
}
