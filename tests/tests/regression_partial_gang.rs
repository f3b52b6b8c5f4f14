//! The partial gang (docs/races.md), sequentially: a waiting member times out, and before
//! its binding cycle has released its reservation the last member reaches Permit. Upstream
//! counts the timed-out member towards quorum, "allows" it (a no-op: it is already rejected)
//! and lets the last member bind alone. Hardened rejects the whole attempt and every member
//! reaching Permit until its reservations are released. The concurrent versions of this race
//! are loom models (a)–(c) in `loom_gang.rs`.
#![cfg(not(loom))]

use gangsched::gang::{GangScheduling, Permit};

use gangsched::PodGroup;
use gangsched::{Mode, Pod, Time, WaitingPods};

fn gang_of_two(mode: Mode) -> (GangScheduling, Pod, Pod) {
    let gang = GangScheduling::new(mode, WaitingPods::new());
    gang.on_group_added(PodGroup::gang("ml", "g", 2).unwrap())
        .unwrap();
    let p0 = Pod::new("p0", "ml", "p0").with_group("g");
    let p1 = Pod::new("p1", "ml", "p1").with_group("g");
    gang.on_pod_added(p0.clone(), false).unwrap();
    gang.on_pod_added(p1.clone(), false).unwrap();
    (gang, p0, p1)
}

/// Runs the sequence and returns (p0 passed Permit, p1 passed Permit).
fn timeout_then_last_permit(mode: Mode) -> (bool, bool) {
    let (gang, p0, p1) = gang_of_two(mode);
    gang.reserve(&p0).unwrap();
    let Permit::Wait { waiting: w0, .. } = gang.permit(&p0, Time::ZERO) else {
        panic!("p0 waits for its sibling");
    };
    // Five minutes later p0's timer fires (upstream: its own; hardened: the attempt's).
    let deadline = Time::from_secs(300);
    gang.waiting().expire(deadline);
    gang.expire(deadline);
    // p1's scheduling cycle runs before p0's binding cycle has unreserved p0.
    gang.reserve(&p1).unwrap();
    let p1_passed = matches!(gang.permit(&p1, deadline), Permit::Allow);
    (w0.wait().is_success(), p1_passed)
}

#[test]
fn upstream_lets_one_member_of_a_gang_of_two_bind() {
    assert_eq!(
        timeout_then_last_permit(Mode::Upstream),
        (false, true),
        "the partial gang"
    );
}

#[test]
fn hardened_lets_no_member_pass() {
    assert_eq!(timeout_then_last_permit(Mode::Hardened), (false, false));
}
