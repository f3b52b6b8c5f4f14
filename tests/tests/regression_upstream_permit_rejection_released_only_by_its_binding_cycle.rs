//! kube-scheduler's scheduling cycle unreserves and forgets a pod that Permit rejects right
//! after `RunPermitPlugins` (schedule_one.go, `prepareForBindingCycle`), before any other
//! scheduling cycle runs. gangway's Upstream driver left the release to the pod's binding
//! cycle: in between, a sibling's Permit counted the rejected member, still assumed in its
//! group, towards quorum and passed alone — a partial gang the real code does not let
//! through. The driver now releases such a pod in its own cycle, as upstream does.
#![cfg(not(loom))]

use gangsched::scheduler::{outcome_channel, CycleOutcome, Node, PodOutcome};
use gangsched::sync::Arc;
use gangsched::{
    Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, PodGroup, Resources,
    Scheduler, SchedulerConfig, Time,
};

/// Rejects the pod named `a`, allows every other.
struct TurnsAwayA;

impl PermitPlugin for TurnsAwayA {
    fn name(&self) -> PluginName {
        "Quota".into()
    }

    fn permit(&self, pod: &Pod, _: &str) -> PermitVerdict {
        if pod.name() == "a" {
            PermitVerdict::reject("over quota")
        } else {
            PermitVerdict::Allow
        }
    }
}

#[test]
fn a_member_rejected_at_permit_is_released_before_its_siblings_permit() {
    let (outcomes, received) = outcome_channel();
    let plugins = PermitPlugins::new([Arc::new(TurnsAwayA) as Arc<dyn PermitPlugin>]).unwrap();
    let scheduler = Scheduler::builder(SchedulerConfig::default().with_mode(Mode::Upstream))
        .permit_plugins(plugins)
        .outcomes(outcomes)
        .build();
    let now = Time::ZERO;
    scheduler
        .add_node(Node::new("n1", Resources::new(4_000, 4 << 30)), now)
        .unwrap();
    scheduler
        .add_group(PodGroup::gang("ml", "g", 2).unwrap(), now)
        .unwrap();
    for name in ["a", "b"] {
        let pod = Pod::new(name, "ml", name).with_group("g");
        scheduler.add_pod(pod, now).unwrap();
    }

    // a: the gang says wait (1 of 2), then Quota rejects it — released in this very cycle.
    let first = scheduler.schedule_one(now).expect("a pops");
    let CycleOutcome::Released { pod, status, .. } = first else {
        panic!("a is released in its scheduling cycle: {first:?}");
    };
    assert_eq!(pod.as_str(), "a");
    assert_eq!(status.plugin().unwrap(), "Quota");
    assert!(scheduler.leaked_reservations().is_empty());
    let Some(PodOutcome::Rejected { pod, .. }) = received.try_recv() else {
        panic!("a's outcome is delivered when its cycle ends");
    };
    assert_eq!(pod.name(), "a");

    // b, before any binding cycle: a no longer counts, so b waits for a second member.
    let second = scheduler.schedule_one(now).expect("b pops");
    assert!(
        matches!(second, CycleOutcome::Waiting { .. }),
        "b must wait, not pass alone on a's released reservation: {second:?}"
    );
    scheduler.run_binding_cycles(now);
    assert!(
        received
            .drain()
            .iter()
            .all(|o| !matches!(o, PodOutcome::Bound { .. })),
        "nothing of the gang binds"
    );
    scheduler.check().unwrap();
}
