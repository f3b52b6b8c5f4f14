//! kube-scheduler registers a plugin that does not implement `EnqueueExtensions` for every
//! cluster event, its hint always `Queue` (`fillEventToPluginMap`): a pod such a plugin
//! rejected is retried on the next event. gangway's queue knew no hints for the embedder's
//! Permit plugins, so a pod one of them rejected parked in the unschedulable pool until the
//! 5-minute leftover flush — found by the driver differential against kube-scheduler's
//! `ScheduleOne` (upstream/traces/driver_permit_reject.jsonl). Both modes now wake it.
#![cfg(not(loom))]

use gangsched::queue::QueuePlace;
use gangsched::scheduler::{CycleOutcome, Node};
use gangsched::sync::Arc;
use gangsched::{
    Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, Resources, Scheduler,
    SchedulerConfig, Time,
};

/// Rejects every pod.
struct OverQuota;

impl PermitPlugin for OverQuota {
    fn name(&self) -> PluginName {
        "Quota".into()
    }

    fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
        PermitVerdict::reject("over quota")
    }
}

#[test]
fn a_pod_a_permit_plugin_rejected_is_retried_on_the_next_event() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let plugins = PermitPlugins::new([Arc::new(OverQuota) as Arc<dyn PermitPlugin>]).unwrap();
        let s = Scheduler::builder(SchedulerConfig::default().with_mode(mode))
            .permit_plugins(plugins)
            .build();
        let now = Time::ZERO;
        s.add_node(Node::new("n1", Resources::new(1_000, 1 << 30)), now)
            .unwrap();
        let pod = Pod::new("p", "ns", "p");
        s.add_pod(pod.clone(), now).unwrap();
        let cycle = s.schedule_one(now).expect("p pops");
        assert!(
            matches!(
                cycle,
                CycleOutcome::Released { .. } | CycleOutcome::Rejected { .. }
            ),
            "{mode:?}: {cycle:?}"
        );
        s.run_binding_cycles(now);
        assert_eq!(
            s.queue().place(pod.id()),
            Some(QueuePlace::Unschedulable),
            "{mode:?}: parked, rejected by Quota"
        );
        // Any event may make Quota say yes: a node joins.
        let later = Time::from_secs(1);
        s.add_node(Node::new("n2", Resources::new(1_000, 1 << 30)), later)
            .unwrap();
        assert!(
            matches!(
                s.queue().place(pod.id()),
                Some(QueuePlace::Active(_) | QueuePlace::Backoff(_))
            ),
            "{mode:?}: the node add retries p, not the leftover flush 5 minutes on: {:?}",
            s.queue().place(pod.id())
        );
        s.check().unwrap();
    }
}
