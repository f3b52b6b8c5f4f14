//! The embedder's Permit plugins through the whole scheduler (`SchedulerBuilder::permit_plugins`),
//! driven by hand in virtual time: a plugin's wait ends by its allow or its timeout, a
//! panicking plugin rejects the pod as its error and loses nothing, and a plugin that turns
//! away the member that closed a gang's quorum splits the gang in Upstream mode only
//! (docs/races.md) — Hardened asks it before the gang.
#![cfg(not(loom))]

use std::time::Duration;

use gangsched::scheduler::{outcome_channel, Node, PodOutcome};
use gangsched::sync::atomic::{AtomicU64, Ordering};
use gangsched::sync::Arc;
use gangsched::waiting::Receiver;
use gangsched::{
    Code, Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, PodGroup, Resources,
    Scheduler, SchedulerConfig, Time,
};

/// Answers `verdict` for every pod whose name is in `for_pods` (all when empty), and allows
/// the others; panics instead when `panics` is set.
struct Quota {
    verdict: PermitVerdict,
    for_pods: Vec<&'static str>,
    panics: bool,
    asked: AtomicU64,
}

impl PermitPlugin for Quota {
    fn name(&self) -> PluginName {
        "Quota".into()
    }

    fn permit(&self, pod: &Pod, _: &str) -> PermitVerdict {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if !self.for_pods.is_empty() && !self.for_pods.contains(&pod.name()) {
            return PermitVerdict::Allow;
        }
        if self.panics {
            panic!("quota bug on {}", pod.name());
        }
        self.verdict.clone()
    }
}

fn quota(verdict: PermitVerdict, for_pods: &[&'static str]) -> Arc<Quota> {
    Arc::new(Quota {
        verdict,
        for_pods: for_pods.to_vec(),
        panics: false,
        asked: AtomicU64::new(0),
    })
}

fn scheduler(mode: Mode, quota: &Arc<Quota>) -> (Scheduler, Receiver<PodOutcome>) {
    let (outcomes, received) = outcome_channel();
    let plugins = PermitPlugins::new([quota.clone() as Arc<dyn PermitPlugin>]).unwrap();
    let scheduler = Scheduler::builder(SchedulerConfig::default().with_mode(mode))
        .permit_plugins(plugins)
        .outcomes(outcomes)
        .build();
    let node = Node::new("n1", Resources::new(4_000, 4 << 30));
    scheduler.add_node(node, Time::ZERO).unwrap();
    (scheduler, received)
}

/// Schedules every pod it can and runs the binding cycles that can run, at `now`.
fn settle(scheduler: &Scheduler, now: Time) {
    while scheduler.schedule_one(now).is_some() {
        scheduler.run_binding_cycles(now);
    }
    scheduler.run_binding_cycles(now);
}

#[test]
fn a_plugins_wait_ends_with_its_allow() {
    let quota = quota(PermitVerdict::wait(Duration::from_secs(30)), &[]);
    let (scheduler, outcomes) = scheduler(Mode::Upstream, &quota);
    let pod = Pod::new("solo", "ml", "solo");
    scheduler.add_pod(pod.clone(), Time::ZERO).unwrap();
    settle(&scheduler, Time::ZERO);
    assert!(
        outcomes.try_recv().is_none(),
        "waiting on Quota: no outcome yet"
    );
    let waiting = scheduler.waiting().get(pod.id()).expect("waiting");
    assert_eq!(waiting.pending_plugins(), ["Quota"]);

    assert!(scheduler.waiting().allow(pod.id(), "Quota"));
    settle(&scheduler, Time::from_secs(1));
    assert!(matches!(
        outcomes.try_recv().unwrap(),
        PodOutcome::Bound { .. }
    ));
    scheduler.check().unwrap();
}

#[test]
fn a_plugins_timeout_rejects_the_pod_and_hands_it_back() {
    let quota = quota(PermitVerdict::wait(Duration::from_secs(2)), &[]);
    let (scheduler, outcomes) = scheduler(Mode::Hardened, &quota);
    let pod = Pod::new("solo", "ml", "solo");
    scheduler.add_pod(pod.clone(), Time::ZERO).unwrap();
    settle(&scheduler, Time::ZERO);
    let later = Time::from_secs(2);
    scheduler.tick(later);
    settle(&scheduler, later);
    let PodOutcome::Rejected { status, .. } = outcomes.try_recv().unwrap() else {
        panic!("Quota's timer rejects the pod");
    };
    assert_eq!(status.plugin().unwrap(), "Quota");
    assert_eq!(
        status.message(),
        "rejected due to timeout after waiting 2s at plugin Quota"
    );
    assert!(scheduler.leaked_reservations().is_empty());
    scheduler.check().unwrap();
}

#[test]
fn a_panicking_plugin_rejects_the_pod_as_its_error_and_is_counted() {
    let quota = Arc::new(Quota {
        verdict: PermitVerdict::Allow,
        for_pods: Vec::new(),
        panics: true,
        asked: AtomicU64::new(0),
    });
    let (scheduler, outcomes) = scheduler(Mode::Upstream, &quota);
    scheduler
        .add_pod(Pod::new("solo", "ml", "solo"), Time::ZERO)
        .unwrap();
    settle(&scheduler, Time::ZERO);
    let PodOutcome::Rejected { status, .. } = outcomes.try_recv().unwrap() else {
        panic!("the panic rejects the pod");
    };
    assert_eq!(status.code(), Code::Error);
    assert_eq!(
        status.message(),
        "running Permit plugin \"Quota\": panicked: quota bug on solo"
    );
    assert_eq!(scheduler.stats().plugin_panics, 1);
    assert!(scheduler.leaked_reservations().is_empty());
    scheduler.check().unwrap();
}

#[test]
fn a_plugin_turning_away_the_quorums_last_member_splits_an_upstream_gang_only() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let quota = quota(PermitVerdict::reject("over quota"), &["b"]);
        let (scheduler, outcomes) = scheduler(mode, &quota);
        scheduler
            .add_group(PodGroup::gang("ml", "g", 2).unwrap(), Time::ZERO)
            .unwrap();
        for name in ["a", "b"] {
            let pod = Pod::new(name, "ml", name).with_group("g");
            scheduler.add_pod(pod, Time::ZERO).unwrap();
        }
        settle(&scheduler, Time::ZERO);
        let bound: Vec<String> = outcomes
            .drain()
            .into_iter()
            .filter(|o| matches!(o, PodOutcome::Bound { .. }))
            .map(|o| o.pod().name().to_owned())
            .collect();
        match mode {
            Mode::Upstream => assert_eq!(bound, ["a"], "a partial gang: a bound without b"),
            Mode::Hardened => assert!(bound.is_empty(), "{bound:?}"),
        }
        assert!(scheduler.leaked_reservations().is_empty(), "{mode:?}");
        scheduler.check().unwrap();
    }
}
