//! The embedder's Permit plugins through the whole scheduler (`SchedulerBuilder::permit_plugins`),
//! driven by hand in virtual time: a plugin's wait ends by its allow or its timeout, a
//! panicking plugin rejects the pod as its error and loses nothing, and a plugin that turns
//! away the member that closed a gang's quorum splits the gang in Upstream mode only
//! (docs/races.md) — Hardened asks it before the gang; and Upstream drops a pod deleted while
//! the cycle that a plugin rejects it in ran.
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

/// Upstream releases a pod Permit rejects in its scheduling cycle; one deleted while that cycle
/// ran is dropped there — done with the queue, its reservation gone, nothing left in binding —
/// as kube-scheduler's failure handler drops a pod the informer no longer has.
#[test]
fn an_upstream_pod_deleted_during_its_cycle_and_rejected_at_permit_is_dropped() {
    use gangsched::checking::{scheduler_parts, steps, Parts};
    use gangsched::scheduler::CycleOutcome;

    let quota = quota(PermitVerdict::reject("over quota"), &[]);
    let (scheduler, outcomes) = scheduler(Mode::Upstream, &quota);
    let pod = Pod::new("solo", "ml", "solo");
    scheduler.add_pod(pod.clone(), Time::ZERO).unwrap();
    let mut parts = scheduler_parts(&scheduler);
    let popped = parts.queue(|q, _| q.pop_tied(pod.id())).expect("solo pops");
    let steps::Placed::Reserved { pod: placed, node } =
        steps::place_and_reserve(&mut parts, popped, Time::ZERO).expect("placed")
    else {
        panic!("solo fits on n1");
    };
    // The informer's delete comes while the cycle is between Reserve and Permit.
    assert!(steps::pod_deleted(&mut parts, &pod, Time::ZERO).unwrap());
    let outcome = steps::permit(&mut parts, placed, node, Time::ZERO);
    assert!(
        matches!(outcome, CycleOutcome::Dropped { .. }),
        "{outcome:?}"
    );
    drop(parts);
    assert_eq!(scheduler.queue().place(pod.id()), None, "not requeued");
    assert!(scheduler.in_binding().is_empty());
    assert!(scheduler.leaked_reservations().is_empty());
    assert_eq!(
        scheduler.run_binding_cycles(Time::ZERO),
        0,
        "no binding cycle"
    );
    assert!(outcomes.try_recv().is_none(), "driven by steps: no sink");
    scheduler.check().unwrap();
}
