//! Three bugs the `scheduler_events` fuzz target found (fuzz/README.md, "Findings"), on the
//! public API.
//!
//! 1. Hardened, the Permit barrier: a Basic group's member waits at Permit for the embedder's
//!    plugin (no gang holds it); the group becomes a gang of two; the next member's gang Permit
//!    counted the waiter as scheduled and passed alone — and when the plugin then rejected the
//!    waiter, one member of a gang of two was bound (I3). Now the waiter is rejected as its
//!    group becomes a gang, and retries as a gang member.
//! 2. Hardened, the pod-group cycle: a gang admitted at minimum 1 whose PodGroup is deleted
//!    and created again at minimum 2 kept its member binding, short of quorum (I9).
//! 3. The first again, with the next member's Permit before the rejected waiter's binding
//!    cycle has run: the waiter, rejected but still assumed, counted towards quorum and the
//!    member passed alone (I3). Now the rejection takes it out of the quorum at once.
//! 4. The third again, with the waiter's wait already over when its group becomes a gang —
//!    timed out, or rejected by the embedder through the waiting map — and its binding cycle
//!    not yet run: only members still waiting were taken out of the quorum, so it counted and
//!    the next member passed alone (I3). Now every member a group let wait for another plugin
//!    while it was no gang stops counting as the group becomes one; one that was allowed
//!    counts again once it is bound.
#![cfg(not(loom))]

use std::time::Duration;

use gangsched::scheduler::{outcome_channel, Node, OutcomeSender, PodOutcome};
use gangsched::sync::Arc;
use gangsched::{
    GangCycle, Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, PodGroup, Policy,
    Resources, Scheduler, SchedulerConfig, Time,
};

const CPU: u64 = 1_000;

/// Asks `g-0` to wait a minute; allows every other pod.
struct HoldsFirst;

impl PermitPlugin for HoldsFirst {
    fn name(&self) -> PluginName {
        "Quota".into()
    }
    fn permit(&self, pod: &Pod, _: &str) -> PermitVerdict {
        if pod.name() == "g-0" {
            PermitVerdict::wait(Duration::from_secs(60))
        } else {
            PermitVerdict::Allow
        }
    }
}

fn member(i: usize) -> Pod {
    let name = format!("g-{i}");
    Pod::new(name.as_str(), "ml", &name)
        .with_group("g")
        .with_priority(10 - i as i32)
        .with_requests(Resources::new(CPU, 1 << 30))
}

/// Hardened with `HoldsFirst`, one roomy node, the Basic group `g`, and its member `g-0`
/// waiting at Permit for Quota alone; its outcomes go to `outcomes`.
fn g0_waits_for_quota(outcomes: OutcomeSender) -> Scheduler {
    let config = SchedulerConfig::default().with_mode(Mode::Hardened);
    let plugin = Arc::new(HoldsFirst) as Arc<dyn PermitPlugin>;
    let s = Scheduler::builder(config)
        .permit_plugins(PermitPlugins::new([plugin]).unwrap())
        .outcomes(outcomes)
        .build();
    s.add_node(
        Node::new("n", Resources::new(4 * CPU, 64 << 30)),
        Time::ZERO,
    )
    .unwrap();
    let basic = PodGroup::new("ml", "g", Policy::Basic).unwrap();
    s.add_group(basic, Time::ZERO).unwrap();
    s.add_pod(member(0), Time::ZERO).unwrap();
    s.schedule_one(Time::ZERO).unwrap();
    assert_eq!(s.waiting().snapshot().len(), 1, "g-0 waits for Quota alone");
    s
}

#[test]
fn regression_basic_to_gang_quorum_counts_a_plugin_waiter() {
    let (sink, outcomes) = outcome_channel();
    let s = g0_waits_for_quota(sink);

    s.update_group(PodGroup::gang("ml", "g", 2).unwrap(), Time::ZERO)
        .unwrap();
    s.run_binding_cycles(Time::ZERO);
    let rejected: Vec<String> = outcomes
        .drain()
        .into_iter()
        .filter_map(|o| match o {
            PodOutcome::Rejected { pod, status, .. } => {
                Some(format!("{}: {}", pod.name(), status.message()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        rejected,
        ["g-0: its pod group became a gang while it waited at permit for another plugin"]
    );

    // g-1 alone is not the gang's quorum: it waits for g-0's next attempt.
    s.add_pod(member(1), Time::ZERO).unwrap();
    s.schedule_one(Time::ZERO).unwrap();
    s.run_binding_cycles(Time::ZERO);
    assert_eq!(
        s.stats().bound,
        0,
        "no member of the gang of two binds alone"
    );
    s.check().unwrap();
}

/// g-0's binding cycle has not run when g-1 arrives: it is rejected, still reserved, and no
/// quorum for g-1.
#[test]
fn regression_rejected_waiter_counts_until_its_binding_cycle() {
    let (sink, _outcomes) = outcome_channel();
    let s = g0_waits_for_quota(sink);
    g1_waits_once_g0_was_decided(&s, Time::ZERO);
}

#[test]
fn regression_group_readded_with_higher_min_keeps_binding() {
    let config = SchedulerConfig::default()
        .with_mode(Mode::Hardened)
        .with_gang_cycle(GangCycle::PodGroup);
    let s = Scheduler::new(config);
    s.add_node(
        Node::new("n", Resources::new(4 * CPU, 64 << 30)),
        Time::ZERO,
    )
    .unwrap();
    s.add_group(PodGroup::gang("ml", "g", 1).unwrap(), Time::ZERO)
        .unwrap();
    s.add_pod(member(0), Time::ZERO).unwrap();
    s.schedule_one(Time::ZERO).unwrap();
    assert_eq!(
        s.in_binding().len(),
        1,
        "g-0 admitted, its binding not begun"
    );

    s.delete_group(&gangsched::GroupKey::new("ml", "g"))
        .unwrap();
    s.add_group(PodGroup::gang("ml", "g", 2).unwrap(), Time::ZERO)
        .unwrap();
    s.check()
        .expect("the gang short of quorum is released, not left binding (I9)");
    s.run_binding_cycles(Time::ZERO);
    assert_eq!(s.stats().bound, 0);
    s.check().unwrap();
}

/// The group becomes a gang of two — `g-0` still waiting for Quota, or its wait over — before
/// `g-0`'s binding cycle runs; `g-1` arrives and is scheduled: it must wait, not pass alone,
/// and nothing binds.
fn g1_waits_once_g0_was_decided(s: &Scheduler, at: Time) {
    s.update_group(PodGroup::gang("ml", "g", 2).unwrap(), at)
        .unwrap();
    s.add_pod(member(1), at).unwrap();
    s.schedule_one(at).unwrap();
    let waiting: Vec<String> = s
        .waiting()
        .snapshot()
        .iter()
        .map(|w| w.pod().name().to_owned())
        .collect();
    assert_eq!(waiting, ["g-1"], "g-1 waits: a decided g-0 is no quorum");
    s.run_binding_cycles(at);
    assert_eq!(
        s.stats().bound,
        0,
        "no member of the gang of two binds alone"
    );
    s.check().unwrap();
}

#[test]
fn regression_timed_out_waiter_counts_once_its_group_is_a_gang() {
    let (sink, _outcomes) = outcome_channel();
    let s = g0_waits_for_quota(sink);
    let later = Time::ZERO + Duration::from_secs(61);
    s.tick(later);
    assert!(
        s.waiting().is_empty(),
        "Quota's minute is over: g-0 timed out"
    );
    g1_waits_once_g0_was_decided(&s, later);
}

#[test]
fn regression_embedder_rejected_waiter_counts_once_its_group_is_a_gang() {
    let (sink, _outcomes) = outcome_channel();
    let s = g0_waits_for_quota(sink);
    let g0 = member(0).id().clone();
    assert!(s.waiting().reject(&g0, "Quota", "over quota"));
    g1_waits_once_g0_was_decided(&s, Time::ZERO);
}

/// The other side of the rule: a waiter allowed before its group became a gang binds, and
/// once bound counts towards the gang's quorum.
#[test]
fn a_waiter_allowed_before_its_group_became_a_gang_counts_once_bound() {
    let (sink, _outcomes) = outcome_channel();
    let s = g0_waits_for_quota(sink);
    let g0 = member(0).id().clone();
    assert!(s.waiting().allow(&g0, "Quota"));
    s.update_group(PodGroup::gang("ml", "g", 2).unwrap(), Time::ZERO)
        .unwrap();
    s.run_binding_cycles(Time::ZERO);
    assert!(s.is_bound(&g0), "g-0 was allowed: it binds");

    s.add_pod(member(1), Time::ZERO).unwrap();
    s.schedule_one(Time::ZERO).unwrap();
    assert!(
        s.waiting().is_empty(),
        "g-1 passes: bound g-0 is its quorum"
    );
    s.run_binding_cycles(Time::ZERO);
    assert_eq!(s.stats().bound, 2);
    s.check().unwrap();
}
