use gangsched::gang::MemberPlace;
use gangsched::{GroupKey, PodGroup};
use gangsched::{Mode, Pod, Time};

use super::{GangModel, ModelPermit};

fn gang_of(mode: Mode, min: u32, members: usize) -> (GangModel, Vec<Pod>) {
    let mut m = GangModel::new(mode);
    m.add_group(PodGroup::gang("ml", "g", min).unwrap())
        .unwrap();
    let pods: Vec<Pod> = (0..members)
        .map(|i| Pod::new(format!("p{i}"), "ml", &format!("p{i}")).with_group("g"))
        .collect();
    for p in &pods {
        m.add_pod(p.clone(), false).unwrap();
    }
    (m, pods)
}

fn key() -> GroupKey {
    GroupKey::new("ml", "g")
}

#[test]
fn quorum_allows_every_waiting_member_in_both_modes() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let (mut m, pods) = gang_of(mode, 2, 3);
        m.reserve(&pods[0]).unwrap();
        let ModelPermit::Wait { activate } = m.permit(&pods[0], Time::ZERO) else {
            panic!("{mode:?}: the first member waits");
        };
        assert_eq!(activate, pods[1..].to_vec());
        m.reserve(&pods[1]).unwrap();
        assert_eq!(m.permit(&pods[1], Time::ZERO), ModelPermit::Allow);
        let decided = m.take_decisions();
        assert_eq!(decided.len(), 1);
        assert!(decided[0].status.is_success() && decided[0].pod == pods[0]);
        assert!(m.waiting().is_empty());
        assert!(m.group(&key()).unwrap().attempt.is_none());
    }
}

#[test]
fn hardened_timeout_fails_the_attempt_until_its_reservations_are_released() {
    let (mut m, pods) = gang_of(Mode::Hardened, 3, 3);
    for p in &pods[..2] {
        m.reserve(p).unwrap();
        assert!(matches!(m.permit(p, Time::ZERO), ModelPermit::Wait { .. }));
    }
    assert_eq!(m.expire_waiting(Time::from_secs(900)), Vec::new());
    assert!(m.expire_attempts(Time::from_secs(299)).is_empty());
    assert_eq!(m.expire_attempts(Time::from_secs(300)).len(), 1);
    assert_eq!(m.take_decisions().len(), 2);
    m.reserve(&pods[2]).unwrap();
    assert!(matches!(
        m.permit(&pods[2], Time::from_secs(300)),
        ModelPermit::Reject(..)
    ));
    // P7: the rejected pod is released at once; the other two still hold the failure.
    let g = m.group(&key()).unwrap();
    assert_eq!(g.place_of(pods[2].id()), Some(MemberPlace::Unscheduled));
    assert!(g.attempt.as_ref().is_some_and(|a| a.failure.is_some()));
    for p in &pods {
        m.unreserve(p);
    }
    let g = m.group(&key()).unwrap();
    assert_eq!(g.count(MemberPlace::Assumed), 0);
    assert!(g.attempt.is_none());
}

#[test]
fn upstream_timeout_leaves_the_sibling_waiting() {
    let (mut m, pods) = gang_of(Mode::Upstream, 3, 3);
    m.reserve(&pods[0]).unwrap();
    m.permit(&pods[0], Time::ZERO);
    m.reserve(&pods[1]).unwrap();
    m.permit(&pods[1], Time::from_secs(10));
    let expired = m.expire_waiting(Time::from_secs(300));
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].pod, pods[0]);
    assert!(m.is_waiting(pods[1].id()));
}

/// P7: `p0` is rejected at Permit (its object is gone) and not yet unreserved; the next member
/// must not count it. Upstream does, and lets `p1` pass alone.
#[test]
fn a_permit_rejection_releases_the_reservation_at_once_only_when_hardened() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let (mut m, pods) = gang_of(mode, 2, 2);
        m.delete_group(&key()).unwrap();
        m.reserve(&pods[0]).unwrap();
        assert!(matches!(
            m.permit(&pods[0], Time::ZERO),
            ModelPermit::Reject(..)
        ));
        let placement = m.group(&key()).unwrap().place_of(pods[0].id());
        m.add_group(PodGroup::gang("ml", "g", 2).unwrap()).unwrap();
        m.reserve(&pods[1]).unwrap();
        let second = m.permit(&pods[1], Time::ZERO);
        m.unreserve(&pods[0]); // late
        match mode {
            Mode::Upstream => {
                assert_eq!(placement, Some(MemberPlace::Assumed));
                assert_eq!(second, ModelPermit::Allow);
            }
            Mode::Hardened => {
                assert_eq!(placement, Some(MemberPlace::Unscheduled));
                assert!(matches!(second, ModelPermit::Wait { .. }));
                assert!(m.is_waiting(pods[1].id()));
            }
        }
    }
}

/// A4: the last waiter is bound elsewhere; the attempt is over and the next one gets a fresh
/// deadline, which the old one's does not fire.
#[test]
fn an_attempt_left_with_nobody_waiting_is_over() {
    let (mut m, pods) = gang_of(Mode::Hardened, 3, 3);
    m.reserve(&pods[0]).unwrap();
    m.permit(&pods[0], Time::ZERO);
    assert!(m.pod_bound(&pods[0]));
    assert_eq!(m.take_decisions().len(), 1);
    assert!(m.group(&key()).unwrap().attempt.is_none());
    let late = Time::from_secs(299);
    m.reserve(&pods[1]).unwrap();
    assert!(matches!(m.permit(&pods[1], late), ModelPermit::Wait { .. }));
    let deadline = m.group(&key()).unwrap().attempt.as_ref().unwrap().deadline;
    assert_eq!(deadline, late + m.timeout());
    assert!(m.expire_attempts(Time::from_secs(300)).is_empty());
}

/// A4 and G4: deleting the only waiter ends the attempt rather than failing it; deleting one
/// of two fails it and rejects both.
#[test]
fn deleting_a_waiter_fails_the_attempt_only_if_others_wait() {
    let (mut m, pods) = gang_of(Mode::Hardened, 3, 3);
    m.reserve(&pods[0]).unwrap();
    m.permit(&pods[0], Time::ZERO);
    m.delete_pod(&pods[0]).unwrap();
    assert_eq!(m.take_decisions().len(), 1);
    assert!(m.group(&key()).unwrap().attempt.is_none());
    for p in &pods[1..] {
        m.reserve(p).unwrap();
        m.permit(p, Time::ZERO);
    }
    m.delete_pod(&pods[1]).unwrap();
    assert_eq!(m.take_decisions().len(), 2);
    let attempt = m.group(&key()).unwrap().attempt.clone().unwrap();
    assert_eq!(
        attempt.failure.as_deref(),
        Some("gang member ml/p1 was deleted")
    );
}
