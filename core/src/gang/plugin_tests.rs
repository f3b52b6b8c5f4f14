//! Unit tests of the GangScheduling plugin in both modes.

use super::*;
use crate::sync::Arc;
use crate::{GroupKey, Mode, Pod, PodGroup, Policy, Time, WaitingPods};

const NS: &str = "ml";

pub(super) fn setup(mode: Mode, min_count: u32, members: usize) -> (GangScheduling, Vec<Pod>) {
    let gang = GangScheduling::new(mode, WaitingPods::new());
    gang.on_group_added(PodGroup::gang(NS, "g", min_count).unwrap())
        .unwrap();
    let pods: Vec<Pod> = (0..members)
        .map(|i| Pod::new(format!("p{i}"), NS, &format!("p{i}")).with_group("g"))
        .collect();
    for pod in &pods {
        gang.on_pod_added(pod.clone(), false).unwrap();
    }
    (gang, pods)
}

fn reserve_and_permit(gang: &GangScheduling, pod: &Pod, now: Time) -> Permit {
    gang.reserve(pod).unwrap();
    gang.permit(pod, now)
}

fn check(gang: &GangScheduling) {
    gang.registry().snapshot().check().unwrap();
    gang.waiting().state().check().unwrap();
}

#[test]
fn quorum_allows_every_waiting_member_in_both_modes() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let (gang, pods) = setup(mode, 3, 3);
        let Permit::Wait {
            waiting: w0,
            activate,
            ..
        } = reserve_and_permit(&gang, &pods[0], Time::ZERO)
        else {
            panic!("{mode:?}: first member waits");
        };
        assert_eq!(
            gang.activated(&activate).len(),
            2,
            "{mode:?}: the unscheduled siblings are activated"
        );
        let Permit::Wait { waiting: w1, .. } = reserve_and_permit(&gang, &pods[1], Time::ZERO)
        else {
            panic!("{mode:?}: second member waits");
        };
        assert!(matches!(
            reserve_and_permit(&gang, &pods[2], Time::ZERO),
            Permit::Allow
        ));
        assert!(w0.wait().is_success() && w1.wait().is_success(), "{mode:?}");
        assert!(gang.waiting().is_empty());
        check(&gang);
    }
}

#[test]
fn hardened_timeout_rejects_the_whole_attempt_and_releases_it() {
    let (gang, pods) = setup(Mode::Hardened, 3, 3);
    let waiters: Vec<_> = pods[..2]
        .iter()
        .map(|p| match reserve_and_permit(&gang, p, Time::ZERO) {
            Permit::Wait { waiting, .. } => waiting,
            other => panic!("waits: {other:?}"),
        })
        .collect();
    assert_eq!(
        gang.next_deadline(),
        Some(Time::ZERO + DEFAULT_PERMIT_TIMEOUT)
    );
    assert!(gang.expire(Time::from_secs(299)).is_empty());
    assert_eq!(gang.expire(Time::from_secs(300)).len(), 1);
    for w in &waiters {
        let status = w.wait();
        assert_eq!(
            status.message(),
            "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
        );
    }
    // A member reaching Permit while the failed attempt still holds reservations is rejected too.
    assert!(matches!(
        reserve_and_permit(&gang, &pods[2], Time::from_secs(301)),
        Permit::Reject { .. }
    ));
    for p in &pods {
        gang.unreserve(p);
    }
    let state = gang.registry().state(&GroupKey::new(NS, "g")).unwrap();
    assert_eq!(state.assumed().len(), 0);
    assert!(state.attempt().is_none(), "released attempts are forgotten");
    check(&gang);
}

#[test]
fn hardened_unreserve_of_a_waiting_member_rejects_its_siblings() {
    let (gang, pods) = setup(Mode::Hardened, 3, 3);
    let Permit::Wait { waiting: w0, .. } = reserve_and_permit(&gang, &pods[0], Time::ZERO) else {
        panic!()
    };
    let Permit::Wait { waiting: w1, .. } = reserve_and_permit(&gang, &pods[1], Time::ZERO) else {
        panic!()
    };
    assert!(gang.waiting().reject(w1.id(), "Preemption", "preempted"));
    gang.unreserve(&pods[1]);
    assert!(w0.wait().is_rejected());
    assert!(gang.waiting().is_empty());
    check(&gang);
}

#[test]
fn upstream_timeout_leaves_siblings_waiting() {
    let (gang, pods) = setup(Mode::Upstream, 3, 3);
    let Permit::Wait { waiting: w0, .. } = reserve_and_permit(&gang, &pods[0], Time::ZERO) else {
        panic!()
    };
    let Permit::Wait { waiting: w1, .. } = reserve_and_permit(&gang, &pods[1], Time::from_secs(10))
    else {
        panic!()
    };
    assert_eq!(gang.waiting().expire(Time::from_secs(300)).len(), 1);
    assert!(w0.wait().is_rejected());
    assert_eq!(w1.decision(), None, "upstream: no cascade");
    gang.unreserve(&pods[0]);
    check(&gang);
}

#[test]
fn hardened_delete_of_a_waiting_member_rejects_the_attempt() {
    let (gang, pods) = setup(Mode::Hardened, 3, 3);
    let Permit::Wait { waiting: w0, .. } = reserve_and_permit(&gang, &pods[0], Time::ZERO) else {
        panic!()
    };
    let Permit::Wait { waiting: w1, .. } = reserve_and_permit(&gang, &pods[1], Time::ZERO) else {
        panic!()
    };
    assert!(gang.on_pod_deleted(&pods[1]).is_some());
    assert!(w0.wait().is_rejected() && w1.wait().is_rejected());
    gang.unreserve(&pods[0]);
    gang.unreserve(&pods[1]); // deleted: a no-op
    check(&gang);
}

#[test]
fn hardened_bind_of_a_waiting_member_ends_its_wait_and_counts_as_assigned() {
    let (gang, pods) = setup(Mode::Hardened, 2, 2);
    let Permit::Wait { waiting: w0, .. } = reserve_and_permit(&gang, &pods[0], Time::ZERO) else {
        panic!()
    };
    assert!(gang.on_pod_bound(&pods[0]), "bound by another binder");
    assert!(w0.wait().is_rejected(), "its own wait ends");
    gang.unreserve(&pods[0]); // the failure path: a no-op, the pod is assigned
    assert!(matches!(
        reserve_and_permit(&gang, &pods[1], Time::ZERO),
        Permit::Allow
    ));
    check(&gang);
}

#[test]
fn hardened_permit_rejection_stops_counting_before_the_unreserve() {
    // Found by prop_gang: a pod rejected at Permit (its group object was gone) but not yet
    // unreserved must not lend its reservation to the next member's quorum.
    let (gang, pods) = setup(Mode::Hardened, 2, 2);
    let key = GroupKey::new(NS, "g");
    gang.on_group_deleted(&key);
    gang.reserve(&pods[0]).unwrap();
    assert!(matches!(
        gang.permit(&pods[0], Time::ZERO),
        Permit::Reject { .. }
    ));
    gang.on_group_added(PodGroup::gang(NS, "g", 2).unwrap())
        .unwrap();
    // p0's unreserve has not run yet.
    assert!(matches!(
        reserve_and_permit(&gang, &pods[1], Time::ZERO),
        Permit::Wait { .. }
    ));
    gang.unreserve(&pods[0]); // late: a no-op for the group
    check(&gang);
}

#[test]
fn an_attempt_left_with_nobody_waiting_is_over_and_the_next_gets_a_fresh_deadline() {
    let (gang, pods) = setup(Mode::Hardened, 3, 3);
    let Permit::Wait { waiting: w0, .. } = reserve_and_permit(&gang, &pods[0], Time::ZERO) else {
        panic!()
    };
    assert!(gang.on_pod_bound(&pods[0]));
    assert!(w0.wait().is_rejected());
    let late = Time::from_secs(299);
    assert!(matches!(
        reserve_and_permit(&gang, &pods[1], late),
        Permit::Wait { .. }
    ));
    let state = gang.registry().state(&GroupKey::new(NS, "g")).unwrap();
    assert_eq!(
        state.attempt().unwrap().deadline(),
        late + DEFAULT_PERMIT_TIMEOUT
    );
    assert!(
        gang.expire(Time::from_secs(300)).is_empty(),
        "the old deadline is gone"
    );
    check(&gang);
}

#[test]
fn hardened_quorum_drops_the_attempts_deadline_so_the_index_holds_open_attempts_only() {
    let (gang, pods) = setup(Mode::Hardened, 2, 2);
    assert!(matches!(
        reserve_and_permit(&gang, &pods[0], Time::ZERO),
        Permit::Wait { .. }
    ));
    let deadline = Time::ZERO + DEFAULT_PERMIT_TIMEOUT;
    assert_eq!(gang.next_deadline(), Some(deadline));
    assert!(matches!(
        reserve_and_permit(&gang, &pods[1], Time::ZERO),
        Permit::Allow
    ));
    assert_eq!(
        gang.next_deadline(),
        None,
        "closed at quorum, no longer indexed"
    );
    assert!(gang.expire(deadline).is_empty());
    check(&gang);
}

/// Found by `prop_gang` (its regression file keeps the case): a member allowed because its
/// group turned Basic does not close the open attempt, so the attempt's deadline must stay
/// indexed — else its waiting member would never time out.
#[test]
fn a_pass_that_does_not_close_the_attempt_keeps_its_deadline_indexed() {
    let (gang, pods) = setup(Mode::Hardened, 2, 3);
    let Permit::Wait { waiting, .. } = reserve_and_permit(&gang, &pods[0], Time::ZERO) else {
        panic!("first member waits");
    };
    let key = GroupKey::new(NS, "g");
    gang.on_group_deleted(&key).unwrap();
    gang.on_group_added(PodGroup::new(NS, "g", Policy::Basic).unwrap())
        .unwrap();
    assert!(matches!(
        reserve_and_permit(&gang, &pods[1], Time::ZERO),
        Permit::Allow
    ));
    let deadline = Time::ZERO + DEFAULT_PERMIT_TIMEOUT;
    assert_eq!(gang.next_deadline(), Some(deadline));
    assert_eq!(gang.expire(deadline), [key]);
    assert!(!waiting.wait().is_success());
    check(&gang);
}

#[test]
fn permit_reports_the_status_kube_schedulers_permit_step_returns() {
    let (gang, pods) = setup(Mode::Upstream, 2, 2);
    let wait = reserve_and_permit(&gang, &pods[0], Time::ZERO).status();
    assert_eq!(wait.code(), crate::Code::Wait);
    assert_eq!(wait.plugin(), None);
    assert_eq!(
        wait.message(),
        "waiting for minCount pods from a gang to be scheduled, \
         one or more plugins asked to wait and no plugin rejected pod"
    );
    assert!(reserve_and_permit(&gang, &pods[1], Time::ZERO)
        .status()
        .is_success());
}

#[test]
fn permit_without_the_pod_group_object_is_upstreams_wrapped_not_found() {
    // kube-scheduler 1.36.3 (measured by upstream/cmd/gangtrace): the lister's NotFound,
    // wrapped by the gang plugin and by RunPermitPlugins.
    for mode in [Mode::Upstream, Mode::Hardened] {
        let gang = GangScheduling::new(mode, WaitingPods::new());
        let pod = Pod::new("y", NS, "y").with_group("missing");
        gang.on_pod_added(pod.clone(), false).unwrap();
        let status = reserve_and_permit(&gang, &pod, Time::ZERO).status();
        assert_eq!(status.code(), crate::Code::Error, "{mode:?}");
        assert_eq!(status.plugin().map(|p| p.as_str()), Some("GangScheduling"));
        assert_eq!(
            status.message(),
            "running Permit plugin \"GangScheduling\": failed to get podGroup ml/missing: \
             podgroup.scheduling.k8s.io \"missing\" not found"
        );
    }
}

#[test]
fn a_preempted_waiting_pod_reports_what_wait_on_permit_returns() {
    let (gang, pods) = setup(Mode::Upstream, 2, 2);
    let Permit::Wait { waiting, .. } = reserve_and_permit(&gang, &pods[0], Time::ZERO) else {
        panic!("the first member waits");
    };
    assert!(waiting.preempt("DefaultPreemption", "preempted"));
    let status = waiting.wait();
    assert_eq!(status.code(), crate::Code::Error);
    assert_eq!(status.message(), "waiting on permit for pod: preempted");
    assert_eq!(
        status.plugin().map(|p| p.as_str()),
        Some("DefaultPreemption")
    );
}

/// `on_pod_updated` says whether the pod is a member whose object the plugin now holds (the
/// gang/ mutants of 2026-12-07 that made `ops::pod_updated` answer a constant went unnoticed
/// by the unit tier).
#[test]
fn an_update_says_whether_the_plugin_holds_the_pod() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let (gang, pods) = setup(mode, 2, 2);
        assert!(gang.on_pod_updated(pods[0].clone().with_label("team", "a")));
        let outsider = Pod::new("p9", NS, "p9").with_group("g");
        assert!(!gang.on_pod_updated(outsider), "{mode:?}: not a member");
        assert!(
            !gang.on_pod_updated(Pod::new("x", NS, "x")),
            "{mode:?}: no group"
        );
        check(&gang);
    }
}

/// The plugin tells its mode and Permit wait as it was built with (the gang/ mutants of
/// 2026-12-07 that answered the defaults went unnoticed by the unit tier).
#[test]
fn the_plugin_tells_its_mode_and_timeout() {
    let waits = std::time::Duration::from_secs(42);
    let gang = GangScheduling::with_timeout(Mode::Hardened, WaitingPods::new(), waits);
    assert_eq!((gang.mode(), gang.timeout()), (Mode::Hardened, waits));
    let upstream = GangScheduling::new(Mode::Upstream, WaitingPods::new());
    assert_eq!(upstream.mode(), Mode::Upstream);
}

/// `expire` write-locks only the shards with an attempt due: a binding worker reading another
/// gang's shard does not wait for the timer (issue #43: a `part_deadline` that always said
/// "due" made it lock every shard, to the same result).
#[test]
fn expire_locks_no_shard_with_nothing_due() {
    use crate::sync::{thread, Condvar, Mutex};
    use std::time::{Duration, Instant};
    let (gang, pods) = setup(Mode::Hardened, 2, 2);
    assert!(matches!(
        reserve_and_permit(&gang, &pods[0], Time::ZERO),
        Permit::Wait { .. }
    ));
    let registry = gang.registry();
    let due = super::registry_tests::shard_holding(registry, &GroupKey::new(NS, "g"));
    let idle = (due + 1) % registry.shards();
    // A reader holds the idle shard while the timer expires the due attempt.
    let reading = registry.read_shard(idle);
    let done = Arc::new((Mutex::new(None), Condvar::new()));
    let timer = thread::spawn("timer", {
        let (gang, done) = (gang.clone(), done.clone());
        move || {
            let expired = gang.expire(Time::ZERO + DEFAULT_PERMIT_TIMEOUT);
            *done.0.lock() = Some(expired.len());
            done.1.notify_all();
        }
    });
    let expired = {
        // A bound on a hang, not a measure of speed: the expiry takes microseconds.
        let give_up = Instant::now() + Duration::from_secs(30);
        let mut finished = done.0.lock();
        while let (None, Some(left)) = (*finished, give_up.checked_duration_since(Instant::now())) {
            done.1.wait_for(&mut finished, left);
        }
        *finished
    };
    drop(reading);
    timer.join().unwrap();
    assert_eq!(
        expired,
        Some(1),
        "expire waited for the idle shard's reader"
    );
}
