//! kube-scheduler's `TestGangSchedulingFlow` (pkg/scheduler/framework/plugins/gangscheduling,
//! 1.36) as data: the table `tests/tests/conformance_gang.rs` runs against gangway's gang
//! plugin, and [`export`] turns each case into a gang trace that
//! `tests/tests/conformance_gang_differential.rs` runs through the real plugin
//! (`upstream/cmd/gangtrace`) as well. The adaptations are listed in `conformance_gang.rs`.
//!
//! Copyright & License:
//!   - Copyright 2025 The Kubernetes Authors
//!   - Apache License, Version 2.0
//!   - <http://www.apache.org/licenses/LICENSE-2.0>

use std::collections::BTreeMap;

use gangsched::{Code, Pod, PodGroup, Policy, Status};
use gangway_cli::differential::gang_trace::GangOp;

/// The fixtures' namespace.
pub const NS: &str = "ns1";

/// The pod group fixtures: pg1 a gang of 3, pg2 a gang of 4, pg3 Basic, all in `ns1`.
pub fn group(name: &str) -> PodGroup {
    let policy = match name {
        "pg1" => Policy::Gang { min_count: 3 },
        "pg2" => Policy::Gang { min_count: 4 },
        "pg3" => Policy::Basic,
        other => panic!("no pod group fixture {other:?}"),
    };
    PodGroup::new(NS, name, policy).expect("valid fixture")
}

/// The pod fixtures: p1–p3 in pg1, p4–p5 in pg2, `basic-pod` in pg3, `non-gang` in no group;
/// uid = name.
pub fn pod(name: &str) -> Pod {
    let group = match name {
        "p1" | "p2" | "p3" => Some("pg1"),
        "p4" | "p5" => Some("pg2"),
        "basic-pod" => Some("pg3"),
        "non-gang" => None,
        other => panic!("no pod fixture {other:?}"),
    };
    let pod = Pod::new(name, NS, name);
    match group {
        Some(g) => pod.with_group(g),
        None => pod,
    }
}

/// The PreEnqueue status a case wants.
#[derive(Clone, Copy, Debug)]
pub enum PreEnqueue {
    /// It passes.
    Success,
    /// `UnschedulableAndUnresolvable` with this message.
    Gated(&'static str),
}

impl PreEnqueue {
    /// The status.
    pub fn status(self) -> Status {
        match self {
            PreEnqueue::Success => Status::success(),
            PreEnqueue::Gated(msg) => Status::with_reason(Code::UnschedulableAndUnresolvable, msg),
        }
    }
}

/// The Permit outcome a case wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WantPermit {
    /// Allowed at once.
    Allow,
    /// Waits for its gang.
    Wait,
    /// Rejected with this code (no upstream flow case rejects; kept so the table can say so).
    Reject(Code),
}

/// One row of `TestGangSchedulingFlow`.
pub struct FlowCase {
    /// The case's name, upstream's.
    pub name: &'static str,
    /// PodGroup objects present.
    pub groups: &'static [&'static str],
    /// Member pods present besides the pod under test.
    pub pods: &'static [&'static str],
    /// Pods already waiting at Permit (each reserved and permitted, in order, before the pod
    /// under test).
    pub waiting: &'static [&'static str],
    /// The pod under test.
    pub pod: &'static str,
    /// What PreEnqueue says of the pod under test.
    pub pre_enqueue: PreEnqueue,
    /// `None` when PreEnqueue gates the pod (upstream stops there).
    pub permit: Option<WantPermit>,
    /// Unscheduled siblings the pod under test's Permit activates.
    pub activated: &'static [&'static str],
    /// Waiting pods the pod under test's Permit allows; every other waiting pod still waits.
    pub allowed: &'static [&'static str],
}

/// PreEnqueue's message while the pod group does not exist (1.36's words).
pub const NO_GROUP_MSG: &str = "waiting for pods's pod group \"pg1\" to appear in scheduling queue";
/// PreEnqueue's message while fewer than min count members exist.
pub const QUORUM_MSG: &str = "waiting for minCount pods from a gang to appear in scheduling queue";

/// The cases.
pub const FLOW: &[FlowCase] = &[
    FlowCase {
        name: "non-gang pod succeeds immediately",
        groups: &["pg1", "pg2", "pg3"],
        pods: &[],
        waiting: &[],
        pod: "non-gang",
        pre_enqueue: PreEnqueue::Success,
        permit: Some(WantPermit::Allow),
        activated: &[],
        allowed: &[],
    },
    FlowCase {
        name: "basic policy pod succeeds immediately",
        groups: &["pg1", "pg2", "pg3"],
        pods: &[],
        waiting: &[],
        pod: "basic-pod",
        pre_enqueue: PreEnqueue::Success,
        permit: Some(WantPermit::Allow),
        activated: &[],
        allowed: &[],
    },
    FlowCase {
        name: "gang pod fails PreEnqueue when pod group is not yet created",
        groups: &[],
        pods: &["p2", "p3", "p4", "p5"],
        waiting: &[],
        pod: "p1",
        pre_enqueue: PreEnqueue::Gated(NO_GROUP_MSG),
        permit: None,
        activated: &[],
        allowed: &[],
    },
    FlowCase {
        name: "gang pod fails PreEnqueue when quorum is not met",
        groups: &["pg1", "pg2"],
        pods: &["p2", "p4", "p5"], // only p1 and p2 of pg1 (min count 3) exist
        waiting: &[],
        pod: "p1",
        pre_enqueue: PreEnqueue::Gated(QUORUM_MSG),
        permit: None,
        activated: &[],
        allowed: &[],
    },
    FlowCase {
        name: "gang pod passes PreEnqueue, but waits at Permit",
        groups: &["pg1", "pg2"],
        pods: &["p2", "p3", "p4", "p5"],
        waiting: &["p2", "p4", "p5"],
        pod: "p1",
        pre_enqueue: PreEnqueue::Success,
        // p1 assumed: 2 of pg1 scheduled, fewer than 3, so it waits and activates p3.
        permit: Some(WantPermit::Wait),
        activated: &["p3"],
        allowed: &[],
    },
    FlowCase {
        name: "final gang pod arrives at Permit and allows all waiting pods from a gang",
        groups: &["pg1", "pg2"],
        pods: &["p2", "p3", "p4", "p5"],
        waiting: &["p2", "p3", "p4", "p5"],
        pod: "p1",
        pre_enqueue: PreEnqueue::Success,
        // p1 assumed: 3 of pg1 scheduled, so p1 passes and allows p2, p3; p4, p5 (pg2, 2 of 4)
        // go on waiting.
        permit: Some(WantPermit::Allow),
        activated: &[],
        allowed: &["p2", "p3"],
    },
];

/// `case` as a gang trace: its PodGroups and pods created, PreEnqueue for the pod under test
/// and — if it passes, as upstream stops otherwise — each waiting pod scheduled (assume,
/// Reserve, Permit), then the pod under test.
pub fn export(case: &FlowCase) -> Vec<GangOp> {
    let mut ops = Vec::new();
    for name in case.groups {
        let min_count = match group(name).policy() {
            Policy::Gang { min_count } => Some(min_count),
            _ => None,
        };
        ops.push(GangOp::Group {
            group: (*name).to_owned(),
            min_count,
        });
    }
    for name in case.pods.iter().chain([&case.pod]) {
        ops.push(GangOp::Add {
            pod: (*name).to_owned(),
            group: pod(name).group().map(str::to_owned),
            priority: 0,
        });
    }
    ops.push(GangOp::PreEnqueue {
        pod: case.pod.to_owned(),
    });
    if matches!(case.pre_enqueue, PreEnqueue::Success) {
        for name in case.waiting.iter().chain([&case.pod]) {
            ops.push(GangOp::Schedule {
                pod: (*name).to_owned(),
                node: None,
                hold: false,
                plugins: BTreeMap::new(),
            });
        }
    }
    ops
}
