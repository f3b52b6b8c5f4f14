//! Unit tests of [`DriverState`]: the H2 marking, the whole-gang hand-back's choice of
//! siblings, and the state's own check with its witnesses.

use super::driver_state::DriverState;
use super::jobs::JobQueue;
use crate::sync::Arc;
use crate::{Cause, Decision, Pod, PodId, Status, Time};

fn member(name: &str, group: &str) -> Pod {
    Pod::new(name, "ml", name).with_group(group)
}

fn rejection(pod: &Pod) -> Decision {
    Decision::new(
        pod.clone(),
        Status::unschedulable("gang failed"),
        Cause::GangFailed,
    )
}

fn recorded(pods: &[&Pod]) -> DriverState {
    let mut d = DriverState::new();
    for pod in pods {
        d.record(pod, Arc::from("n"), Time::ZERO);
    }
    d
}

#[test]
fn a_failed_gang_leaves_with_its_first_binding_cycle_except_claimed_and_deleted_members() {
    let [p0, p1, p2, p3] = ["p0", "p1", "p2", "p3"].map(|n| member(n, "g"));
    let other = member("q0", "h");
    let mut d = recorded(&[&p0, &p1, &p2, &p3, &other]);
    for pod in [&p0, &p1, &p2, &p3, &other] {
        d.decision_delivered(rejection(pod), true);
    }
    // The rejection is marked the moment it arrives (H2).
    assert!(d.assignment(p2.id()).is_some_and(|a| a.rejected));
    // p1's binding cycle has begun (taking its job claims it); p3 was deleted while it
    // waited.
    d.take_job(p1.id()).expect("p1's rejection");
    assert!(d.claimed(p1.id()).is_some());
    assert!(d.mark_deleted(p3.id()));
    // p0's binding cycle hands the gang back: only p2 goes with it, job and all.
    d.take_job(p0.id()).expect("p0's rejection");
    assert!(d.claimed(p0.id()).is_some(), "p0 is in binding");
    let siblings: Vec<PodId> = d
        .take_rejected_siblings(&p0)
        .into_iter()
        .map(|(a, decision)| {
            assert!(decision.is_some_and(|d| d.pod.id() == a.pod.id()));
            a.pod.id().clone()
        })
        .collect();
    assert_eq!(siblings, [p2.id().clone()]);
    assert!(d.assignment(p2.id()).is_none());
    let left: Vec<&PodId> = d.jobs().jobs().map(|j| j.decision.pod.id()).collect();
    assert_eq!(
        left,
        [p3.id(), other.id()],
        "p3's and the other gang's stay"
    );
    assert!(d.claim(p1.id()).is_none(), "claimed once");
    d.check().unwrap();
}

#[test]
fn check_finds_a_decision_for_a_pod_not_in_binding() {
    let pod = member("p0", "g");
    let mut d: DriverState = DriverState::new();
    d.decision_delivered(rejection(&pod), true);
    let e = d.check().unwrap_err();
    assert!(e.contains("not in binding"), "{e}");
}

#[test]
fn check_finds_a_rejection_mark_that_disagrees_with_the_decision() {
    let pod = member("p0", "g");
    let mut d = recorded(&[&pod]);
    d.decision_delivered(rejection(&pod), true);
    d.check().unwrap();
    // Its rejection replaced by an allow: the mark no longer agrees.
    d.drop_job(pod.id()).expect("the rejection");
    d.decision_delivered(
        Decision::new(pod.clone(), Status::success(), Cause::Allowed),
        true,
    );
    let e = d.check().unwrap_err();
    assert!(e.contains("disagrees"), "{e}");
}

/// A worker that takes a job claims its pod in the same critical section, so no stale
/// decision can meet a later attempt: the claimed pod's other decisions are refused by
/// `check`, and a job whose pod cannot be claimed is dropped.
#[test]
fn taking_a_job_claims_its_pod_and_a_job_for_a_claimed_pod_is_a_violation() {
    let [p0, p1] = ["p0", "p1"].map(|n| member(n, "g"));
    let mut d = recorded(&[&p0, &p1]);
    d.decision_delivered(rejection(&p0), true);
    d.decision_delivered(rejection(&p1), true);
    let job = d.next_job().expect("p0's rejection");
    assert_eq!(job.decision.pod.id(), p0.id());
    assert!(d.claimed(p0.id()).is_some(), "claimed as it was taken");
    assert!(d.claimed(p1.id()).is_none());
    d.check().unwrap();
    // A second decision for the claimed p0 (none is made while I1 holds).
    d.decision_delivered(rejection(&p0), true);
    let e = d.check().unwrap_err();
    assert!(e.contains("binding cycle has begun"), "{e}");
    // p1's comes next; then the second p0 decision cannot claim its pod and is dropped.
    let job = d.next_job().expect("p1's rejection");
    assert_eq!(job.decision.pod.id(), p1.id());
    assert!(d.next_job().is_none());
    d.check().unwrap();
}
