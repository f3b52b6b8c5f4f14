//! Resources held while waiting (docs/races.md): one member of a waiting gang is
//! deleted; upstream leaves its siblings parked at Permit, each holding its reservation, until
//! their own timers fire minutes later — blocking other gangs meanwhile. Hardened rejects the
//! whole attempt at once, so every reservation is released as soon as the binding cycles run.
#![cfg(not(loom))]

use gangsched::gang::{GangScheduling, Permit};

use gangsched::{GroupKey, PodGroup};
use gangsched::{Mode, Pod, Time, WaitingPods};

/// A gang of three with two members waiting; the second is deleted. Returns how many
/// reservations are still held one second before the waits would time out, after every
/// binding cycle that was woken has unreserved its pod.
fn held_after_delete(mode: Mode) -> usize {
    let gang = GangScheduling::new(mode, WaitingPods::new());
    gang.on_group_added(PodGroup::gang("ml", "g", 3).unwrap())
        .unwrap();
    let pods: Vec<Pod> = (0..3)
        .map(|i| Pod::new(format!("p{i}"), "ml", &format!("p{i}")).with_group("g"))
        .collect();
    for pod in &pods {
        gang.on_pod_added(pod.clone(), false).unwrap();
    }
    let mut waiting = Vec::new();
    for pod in &pods[..2] {
        gang.reserve(pod).unwrap();
        let Permit::Wait { waiting: w, .. } = gang.permit(pod, Time::ZERO) else {
            panic!("waits");
        };
        waiting.push(w);
    }
    // The pod-delete handler: the group forgets the pod, its waiting entry is rejected.
    gang.on_pod_deleted(&pods[1]);
    gang.waiting().remove(pods[1].id());
    // Binding cycles whose wait returned a rejection unreserve their pods.
    for (pod, w) in pods.iter().zip(&waiting) {
        if w.decision().is_some_and(|s| s.is_rejected()) {
            gang.unreserve(pod);
        }
    }
    let almost = Time::from_secs(299);
    gang.waiting().expire(almost);
    gang.expire(almost);
    let state = gang.registry().state(&GroupKey::new("ml", "g")).unwrap();
    state.assumed().len()
}

#[test]
fn upstream_keeps_the_sibling_reserved_until_its_own_timeout() {
    assert_eq!(held_after_delete(Mode::Upstream), 1);
}

#[test]
fn hardened_releases_every_reservation_at_once() {
    assert_eq!(held_after_delete(Mode::Hardened), 0);
}
