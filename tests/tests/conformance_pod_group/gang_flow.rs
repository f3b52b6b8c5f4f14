//! `TestGangSchedulingFlow`'s `isDuringPodGroupSchedulingCycle` row (1.36,
//! `pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go`) as data, with one
//! row of gangway's beside it, and its driver; run in `conformance_pod_group.rs`, whose docs
//! list the adaptations.
//!
//! Copyright & License:
//!   - Copyright 2025 The Kubernetes Authors
//!   - Apache License, Version 2.0
//!   - <http://www.apache.org/licenses/LICENSE-2.0>

use gangsched::queue::QueuePlace;
use gangsched::scheduler::{CycleOutcome, Node};
use gangsched::{Code, GangCycle, Mode, PodGroup, Resources, Scheduler, SchedulerConfig, Time};

use super::algorithm_cases::Difference;
use super::fake_plugin::NODE;
use super::{ensure, group_members, id, member, names, settled, GROUP_UNSCHEDULABLE, PLUGINS_WAIT};

/// The pod under test's Permit on the snapshot (`wantPermitStatus`).
#[derive(Clone, Copy, Debug)]
pub enum WantPermit {
    /// `nil`: the group is admitted and the pod allowed.
    Allow,
    /// `Wait` with this message: the group is unschedulable, and the pod goes back with it.
    Wait(&'static str),
}

/// A `TestGangSchedulingFlow` row in a pod-group cycle: pg1 (a gang of 3) and pg2 (a gang of 4,
/// only p4 and p5, gated) in `ns1`, one node with room for `room` pods of one CPU.
pub struct FlowCase {
    pub name: &'static str,
    room: u64,
    /// pg1's members in placing order (the driver gives them falling priorities).
    members: &'static [&'static str],
    /// The pod under test.
    pod: &'static str,
    permit: WantPermit,
    /// `wantAllowedPods` besides the pod under test: allowed, they bind with it.
    allowed: &'static [&'static str],
    pub known_difference: Option<Difference>,
}

const GANG_WAIT: &str = "waiting for minCount pods from a gang to be scheduled";

pub const FLOW: &[FlowCase] = &[
    FlowCase {
        name: "final gang pod arrives at Permit during pod group scheduling cycle",
        room: 5,
        members: &["p2", "p3", "p1"],
        pod: "p1",
        permit: WantPermit::Allow,
        allowed: &["p2", "p3"],
        known_difference: None,
    },
    // Not an upstream row: upstream's "gang pod passes PreEnqueue, but waits at Permit" inside
    // a pod-group cycle. p2 and p1 are placed (2 of 3, so p1's Permit waits), p3 finds no room.
    FlowCase {
        name: "gang pod waits at Permit during pod group scheduling cycle (gangway)",
        room: 2,
        members: &["p2", "p1", "p3"],
        pod: "p1",
        permit: WantPermit::Wait(GANG_WAIT),
        allowed: &[],
        known_difference: None,
    },
];

/// Runs `case` in `mode` and `cycle`: one cycle, then the binding cycles.
pub fn run_flow(mode: Mode, cycle: GangCycle, case: &FlowCase) -> Result<(), String> {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(cycle);
    let s = Scheduler::new(config);
    let node = Node::new(NODE, Resources::new(case.room * 1_000, 256 << 30));
    s.add_node(node, Time::ZERO).expect("the node");
    for (group, min) in [("pg1", 3), ("pg2", 4)] {
        let group = PodGroup::gang("ns1", group, min).expect("valid fixture");
        s.add_group(group, Time::ZERO).expect("a group");
    }
    let pods = case.members.iter().zip((1..=case.members.len()).rev());
    let pods = pods.map(|(p, priority)| (*p, "pg1", priority as i32));
    for (p, group, priority) in [("p4", "pg2", 0), ("p5", "pg2", 0)].into_iter().chain(pods) {
        let pod = member("ns1", p, group).with_priority(priority);
        let pod = pod.with_requests(Resources::new(1_000, 1 << 30));
        s.add_pod(pod, Time::ZERO).expect("a pod");
    }
    let now = Time::from_millis(10);
    let (admitted, members) = group_members(s.schedule_one(now))?;
    ensure(names(&members) == case.members, || {
        format!("order {:?}", names(&members))
    })?;
    let outcome = |p: &str| members.iter().find(|(m, _)| m == p).map(|(_, o)| o);
    let (pod, got) = (case.pod, outcome(case.pod));
    match case.permit {
        WantPermit::Allow => {
            ensure(admitted, || format!("not admitted: {members:?}"))?;
            let allowed = matches!(got, Some(CycleOutcome::Allowed { node, .. }) if node == NODE);
            ensure(allowed, || format!("{pod}: want allowed, got {got:?}"))?;
            for p in case.allowed {
                // Upstream runs each placed member's Permit in order (`prepareForBindingCycle`):
                // p2 and p3 wait until p1 allows them; Hardened admits the group at once.
                let got = outcome(p);
                let ok = match got {
                    Some(CycleOutcome::Waiting { node, .. }) => {
                        mode == Mode::Upstream && node == NODE
                    }
                    Some(CycleOutcome::Allowed { node, .. }) => {
                        mode == Mode::Hardened && node == NODE
                    }
                    _ => false,
                };
                ensure(ok, || format!("{p}: got {got:?}"))?;
            }
            ensure(s.waiting().is_empty(), || {
                "an allowed pod still waits".into()
            })?;
        }
        WantPermit::Wait(why) => {
            ensure(!admitted, || format!("admitted: {members:?}"))?;
            let message = match got {
                Some(CycleOutcome::Unschedulable { status, .. })
                    if status.code() == Code::Unschedulable =>
                {
                    status.message()
                }
                _ => return Err(format!("{pod}: want unschedulable, got {got:?}")),
            };
            // Hardened's message is its own; upstream's is the real code's.
            let ok = match mode {
                Mode::Upstream => {
                    message == format!("{GROUP_UNSCHEDULABLE}, {why}, {PLUGINS_WAIT}")
                }
                _ => message.contains(why),
            };
            ensure(ok, || format!("{pod}: message {message:?}, got {got:?}"))?;
        }
    }
    s.run_binding_cycles(now);
    let mut bound = Vec::new();
    if let WantPermit::Allow = case.permit {
        bound.extend(case.members.iter().copied());
        bound.sort_unstable();
    }
    settled(&s, &["p1", "p2", "p3", "p4", "p5"], &bound)?;
    for p in ["p4", "p5"] {
        let place = s.queue().place(&id(p));
        ensure(place == Some(QueuePlace::Unschedulable), || {
            format!("{p}: {place:?}")
        })?;
    }
    Ok(())
}
