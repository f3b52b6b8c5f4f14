//! The Permit step with the embedder's plugins beside the gang's (`GangScheduling::permit_with`),
//! as kube-scheduler 1.36's `RunPermitPlugins` folds them, and Hardened's order.

use std::time::Duration;

use super::plugin_tests::setup;
use super::*;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::Arc;
use crate::{
    Code, Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, PodGroup, Policy,
    Status, Time, WaitingPods,
};

/// A plugin that always says `verdict` and counts how often it was asked.
pub(super) struct Scripted {
    name: &'static str,
    verdict: PermitVerdict,
    asked: AtomicU64,
}

pub(super) fn plugin(name: &'static str, verdict: PermitVerdict) -> Arc<Scripted> {
    Arc::new(Scripted {
        name,
        verdict,
        asked: AtomicU64::new(0),
    })
}

impl PermitPlugin for Scripted {
    fn name(&self) -> PluginName {
        self.name.into()
    }
    fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.verdict.clone()
    }
}

pub(super) fn plugins(list: &[&Arc<Scripted>]) -> PermitPlugins {
    PermitPlugins::new(list.iter().map(|p| (*p).clone() as Arc<dyn PermitPlugin>)).unwrap()
}

fn permit(gang: &GangScheduling, pod: &Pod, others: &PermitPlugins, now: Time) -> Permit {
    let pod = pod.clone().with_node("n1");
    gang.reserve(&pod).unwrap();
    gang.permit_with(&pod, "n1", others, now)
}

#[test]
fn every_plugin_that_asks_to_wait_gets_its_own_pending_entry_and_timer() {
    let (gang, pods) = setup(Mode::Upstream, 2, 2);
    let quota = plugin(
        "Quota",
        PermitVerdict::Wait {
            timeout: Duration::from_secs(1),
            reason: "waiting for quota".into(),
        },
    );
    let budget = plugin("Budget", PermitVerdict::wait(Duration::from_secs(3600)));
    let Permit::Wait {
        waiting,
        activate,
        status,
    } = permit(&gang, &pods[0], &plugins(&[&quota, &budget]), Time::ZERO)
    else {
        panic!("three plugins wait");
    };
    assert_eq!(
        gang.activated(&activate).len(),
        1,
        "the gang still activates its sibling"
    );
    // The last waiting plugin's status, the framework's reason appended (Budget gave none).
    let status = status.expect("a plugin besides the gang's waited last");
    assert_eq!(status.code(), Code::Wait);
    assert_eq!(
        status.message(),
        "one or more plugins asked to wait and no plugin rejected pod"
    );
    let mut pending = waiting.pending_plugins();
    pending.sort();
    assert_eq!(pending, ["Budget", "GangScheduling", "Quota"]);
    let entry = gang.waiting().state();
    let entry = entry.get(waiting.id()).unwrap();
    let budget_wait = entry
        .pending()
        .iter()
        .find(|p| p.plugin == "Budget")
        .unwrap();
    assert_eq!(budget_wait.wait, crate::waiting::MAX_PERMIT_WAIT, "capped");

    // The gang's allow clears only its own entry; Quota's timer rejects the pod.
    assert!(!gang.waiting().allow(waiting.id(), "GangScheduling"));
    assert!(gang.waiting().expire(Time::from_millis(999)).is_empty());
    let expired = gang.waiting().expire(Time::from_secs(1));
    assert_eq!(expired.len(), 1);
    let decision = waiting.decision().unwrap();
    assert_eq!(decision.plugin().unwrap(), "Quota");
    assert_eq!(
        decision.message(),
        "rejected due to timeout after waiting 1s at plugin Quota"
    );
}

#[test]
fn a_later_plugins_rejection_wins_and_the_plugins_after_it_are_not_asked() {
    let (gang, pods) = setup(Mode::Upstream, 2, 2);
    let quota = plugin("Quota", PermitVerdict::reject("over quota"));
    let budget = plugin("Budget", PermitVerdict::Allow);
    let Permit::Reject {
        status, activate, ..
    } = permit(&gang, &pods[0], &plugins(&[&quota, &budget]), Time::ZERO)
    else {
        panic!("Quota rejects");
    };
    assert_eq!(status.code(), Code::Unschedulable);
    assert_eq!(status.plugin().unwrap(), "Quota");
    assert_eq!(status.message(), "over quota");
    assert_eq!(
        gang.activated(&activate).len(),
        1,
        "upstream's gang activated before Quota ran"
    );
    assert_eq!(budget.asked.load(Ordering::SeqCst), 0);
    assert!(
        gang.waiting().is_empty(),
        "a rejected pod is never registered"
    );
}

#[test]
fn a_plugins_error_is_reported_as_kube_scheduler_wraps_it() {
    let (gang, pods) = setup(Mode::Upstream, 1, 1);
    for (verdict, message) in [
        (
            PermitVerdict::Reject(Status::with_reason(Code::Error, "store down")),
            "running Permit plugin \"Quota\": store down",
        ),
        (
            PermitVerdict::Reject(Status::success()),
            "running Permit plugin \"Quota\": rejected with Success, which is not a rejection",
        ),
    ] {
        let quota = plugin("Quota", verdict);
        let pod = pods[0].clone().with_node("n1");
        let Permit::Reject { status, .. } =
            gang.permit_with(&pod, "n1", &plugins(&[&quota]), Time::ZERO)
        else {
            panic!("an error rejects");
        };
        assert_eq!(
            (status.code(), status.message()),
            (Code::Error, message.to_owned())
        );
        assert_eq!(status.plugin().unwrap(), "Quota");
    }
}

/// Upstream's gang plugin runs first: at quorum it allows its waiting siblings at once, and a
/// later plugin rejecting the pod that closed the quorum leaves them to bind without it — a
/// partial gang. Hardened asks the other plugins first, so the quorum is never reached.
#[test]
fn a_later_plugin_rejecting_the_quorums_last_member_splits_an_upstream_gang_only() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let (gang, pods) = setup(mode, 2, 2);
        let none = PermitPlugins::none();
        let Permit::Wait { waiting: first, .. } = permit(&gang, &pods[0], &none, Time::ZERO) else {
            panic!("{mode:?}: the first member waits");
        };
        let quota = plugin("Quota", PermitVerdict::reject("over quota"));
        let second = permit(&gang, &pods[1], &plugins(&[&quota]), Time::ZERO);
        assert!(
            matches!(second, Permit::Reject { .. }),
            "{mode:?}: {second:?}"
        );
        match mode {
            Mode::Upstream => {
                assert_eq!(first.decision(), Some(Status::success()), "partial gang");
            }
            Mode::Hardened => {
                assert_eq!(first.decision(), None, "the gang still waits for quorum");
            }
        }
    }
}

#[test]
fn hardened_refuses_another_plugins_wait_on_a_gang_member_but_not_on_a_lone_pod() {
    let (gang, pods) = setup(Mode::Hardened, 2, 2);
    let quota = plugin("Quota", PermitVerdict::wait(Duration::from_secs(10)));
    let others = plugins(&[&quota]);
    let Permit::Reject { status, .. } = permit(&gang, &pods[0], &others, Time::ZERO) else {
        panic!("a gang member may not wait on Quota");
    };
    assert_eq!(status.code(), Code::Error);
    assert_eq!(status.plugin().unwrap(), "Quota");
    assert!(
        status.message().contains("only its gang holds a member"),
        "{status:?}"
    );
    assert!(gang.waiting().is_empty());

    let lone = Pod::new("solo", "ml", "solo").with_node("n1");
    let Permit::Wait { waiting, .. } = gang.permit_with(&lone, "n1", &others, Time::ZERO) else {
        panic!("a pod outside a gang waits on Quota");
    };
    assert_eq!(waiting.pending_plugins(), ["Quota"]);
    assert!(gang.waiting().allow(waiting.id(), "Quota"));
    assert_eq!(waiting.decision(), Some(Status::success()));
}

#[test]
fn with_no_other_plugin_the_step_is_the_gang_plugins_permit() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let (gang, pods) = setup(mode, 2, 2);
        let permit = permit(&gang, &pods[0], &PermitPlugins::none(), Time::ZERO);
        let Permit::Wait { status: None, .. } = &permit else {
            panic!("{mode:?}: waits for the gang alone: {permit:?}");
        };
        assert_eq!(permit.status(), Permit::<()>::gang_wait_status());
    }
}

#[test]
fn hardened_lets_a_basic_group_member_wait_on_another_plugin_and_rejects_one_without_its_group() {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    gang.on_group_added(PodGroup::new("ml", "basic", Policy::Basic).unwrap())
        .unwrap();
    let quota = plugin("Quota", PermitVerdict::wait(Duration::from_secs(10)));
    let others = plugins(&[&quota]);
    let member = Pod::new("b", "ml", "b").with_group("basic");
    gang.on_pod_added(member.clone(), false).unwrap();
    let Permit::Wait { waiting, .. } = permit(&gang, &member, &others, Time::ZERO) else {
        panic!("a Basic group's member waits on Quota");
    };
    assert_eq!(waiting.pending_plugins(), ["Quota"]);

    // A member of a group nobody created: the gang plugin's own error, before any wait.
    let orphan = Pod::new("o", "ml", "o")
        .with_group("missing")
        .with_node("n1");
    let Permit::Reject { status, .. } = gang.permit_with(&orphan, "n1", &others, Time::ZERO) else {
        panic!("no group state: rejected");
    };
    assert_eq!(status.code(), Code::Error);
    assert_eq!(status.plugin().unwrap(), "GangScheduling");
    assert_eq!(gang.waiting().len(), 1, "only the Basic member waits");
}

/// Hardened: a wait the waiting map refuses (the pod already waits) is the error of the first
/// plugin that asked for it, as kube-scheduler reports a Permit plugin's failure — not the gang
/// plugin's, and not a success (issue #43: `registration_error` answering a default status was
/// missed).
#[test]
fn a_wait_the_map_refuses_is_the_first_waiting_plugins_error() {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    gang.on_group_added(PodGroup::new("ml", "basic", Policy::Basic).unwrap())
        .unwrap();
    let quota = plugin("Quota", PermitVerdict::wait(Duration::from_secs(10)));
    let budget = plugin("Budget", PermitVerdict::wait(Duration::from_secs(20)));
    let others = plugins(&[&quota, &budget]);
    let member = Pod::new("b", "ml", "b").with_group("basic");
    gang.on_pod_added(member.clone(), false).unwrap();
    let Permit::Wait { .. } = permit(&gang, &member, &others, Time::ZERO) else {
        panic!("a Basic group's member waits on Quota and Budget");
    };
    let member = member.with_node("n1");
    let Permit::Reject { status, .. } = gang.permit_with(&member, "n1", &others, Time::ZERO) else {
        panic!("already waiting: refused");
    };
    assert_eq!(status.code(), Code::Error);
    assert_eq!(status.plugin().unwrap(), "Quota");
    assert_eq!(
        status.message(),
        "running Permit plugin \"Quota\": pod b is already waiting"
    );
    assert_eq!(gang.waiting().len(), 1, "the first wait stands");
}
