//! The rules of `member_events.rs` that only the threaded tiers reached (issue #43): a pod
//! observed bound ends only a wait in its gang's attempt, and `expire` ends no more attempts
//! than its batch allows.

use std::time::Duration;

use super::decide::AttemptWaiting;
use super::permit_with_tests::{plugin, plugins};
use super::*;
use crate::{Mode, PermitVerdict, PluginName, Pod, PodGroup, Policy, Time, WaitingPods};

const NS: &str = "ml";

/// Hardened: a member of a Basic group that waits at Permit for another plugin — no gang
/// attempt — observed bound by another binder keeps its wait: that plugin decides it, as it
/// would in kube-scheduler. Only a wait in the gang's own attempt is the gang's to end.
#[test]
fn a_pod_observed_bound_keeps_a_wait_for_another_plugin() {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    gang.on_group_added(PodGroup::new(NS, "b", Policy::Basic).unwrap())
        .unwrap();
    let pod = Pod::new("b-0", NS, "b-0").with_group("b");
    gang.on_pod_added(pod.clone(), false).unwrap();
    let pod = pod.with_node("n1");
    gang.reserve(&pod).unwrap();
    let quota = plugin("Quota", PermitVerdict::wait(Duration::from_secs(60)));
    let others = plugins(&[&quota]);
    let waiting = match gang.permit_with(&pod, "n1", &others, Time::ZERO) {
        Permit::Wait { waiting, .. } => waiting,
        other => panic!("waits for Quota: {other:?}"),
    };
    assert!(gang.on_pod_bound(&pod));
    assert!(waiting.decision().is_none(), "still Quota's to decide");
    assert_eq!(gang.waiting().len(), 1);
}

/// `expire` ends at most `limit` attempts a call (a batch under one shard's lock), the
/// earliest first; the rest wait for the next call.
#[test]
fn expire_ends_no_more_attempts_than_its_batch() {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    for (i, name) in ["a", "b", "c"].into_iter().enumerate() {
        gang.on_group_added(PodGroup::gang(NS, name, 2).unwrap())
            .unwrap();
        for m in 0..2 {
            let id = format!("{name}-{m}");
            gang.on_pod_added(Pod::new(id.as_str(), NS, &id).with_group(name), false)
                .unwrap();
        }
        let first = Pod::new(format!("{name}-0"), NS, &format!("{name}-0")).with_group(name);
        gang.reserve(&first).unwrap();
        let now = Time::ZERO + Duration::from_secs(i as u64);
        assert!(matches!(gang.permit(&first, now), Permit::Wait { .. }));
    }
    let mut groups = gang.registry().snapshot();
    let mut rejected = Rejected::default();
    let late = Time::ZERO + Duration::from_secs(3600);
    let names = |done: Vec<(Time, crate::GroupKey)>| -> Vec<String> {
        done.into_iter()
            .map(|(_, k)| k.name().to_string())
            .collect()
    };
    assert_eq!(names(groups.expire(&mut rejected, late, "late", 1)), ["a"]);
    assert_eq!(
        names(groups.expire(&mut rejected, late, "late", 2)),
        ["b", "c"]
    );
    assert!(groups.expire(&mut rejected, late, "late", 2).is_empty());
    assert_eq!(rejected.0.len(), 3, "each attempt's waiting member");
}

/// What an expiry rejects, and nothing else.
#[derive(Default)]
struct Rejected(Vec<crate::PodId>);

impl AttemptWaiting for Rejected {
    type Registration = ();

    fn allow_all(&mut self, _: &[crate::PodId]) -> Result<(), crate::PodId> {
        unreachable!("an expiry allows nobody")
    }
    fn reject_waiting(
        &mut self,
        ids: &[crate::PodId],
        _: &str,
        _: crate::Cause,
        rejected: &mut dyn FnMut(&crate::PodId),
    ) {
        for id in ids {
            rejected(id);
            self.0.push(id.clone());
        }
    }
    fn add_untimed(&mut self, _: &Pod) -> Result<(), crate::waiting::AddError> {
        unreachable!("an expiry registers nobody")
    }
    fn add_timed(
        &mut self,
        _: &Pod,
        _: &[(PluginName, Duration)],
        _: Time,
    ) -> Result<(), crate::waiting::AddError> {
        unreachable!("an expiry registers nobody")
    }
}
