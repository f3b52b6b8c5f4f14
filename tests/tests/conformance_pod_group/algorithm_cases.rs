//! `TestPodGroupSchedulingAlgorithm` (1.36, `pkg/scheduler/schedule_one_podgroup_test.go`) as
//! data, each row with the outcome `TestSubmitPodGroupAlgorithmResult` gives its algorithm
//! result; run by `run_algorithm` in `conformance_pod_group.rs`, whose docs list the
//! adaptations.
//!
//! Copyright & License:
//!   - Copyright The Kubernetes Authors
//!   - Apache License, Version 2.0
//!   - <http://www.apache.org/licenses/LICENSE-2.0>

use super::fake_plugin::S::{self, Error, Nil, Unresolvable, Unsched, Wait};

/// The group status `podGroupSchedulingAlgorithm` returns (`expectedGroupStatusCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum G {
    /// `Success`: the group is admitted.
    Success,
    /// `Unschedulable`: every pod goes back.
    Unschedulable,
    /// `Error`: every pod goes back with an error.
    Error,
}

/// What a case wants of one mode.
#[derive(Clone, Copy, Debug)]
pub struct Want {
    /// `expectedGroupStatusCode`.
    pub group: G,
    /// `expectedPodStatus`, in placing order: the pods tried (none after an error), each with
    /// its code — `Nil`, `Unsched` or `Error`.
    pub pods: &'static [(&'static str, S)],
    /// `expectBound` of the `TestSubmitPodGroupAlgorithmResult` case with this outcome: bound
    /// after the binding cycles; every other pod goes back to the queue (`expectFailed`).
    pub bound: &'static [&'static str],
}

/// A difference between gangway's `Mode::Upstream` and the real code: what gangway does, and
/// a piece of the driver's error that shows it.
pub type Difference = (&'static str, &'static str);

/// One row of `TestPodGroupSchedulingAlgorithm`.
pub struct AlgorithmCase {
    /// Upstream's name.
    pub name: &'static str,
    /// The fake's `filterStatus`.
    pub filter: &'static [(&'static str, S)],
    /// The fake's `permitStatus`.
    pub permit: &'static [(&'static str, S)],
    /// What the real code does (`Mode::Upstream`).
    pub upstream: Want,
    /// What `Mode::Hardened` does where it differs, and why.
    pub hardened: Option<(&'static str, Want)>,
    /// Where gangway's `Mode::Upstream` disagrees with the real code. The driver asserts the
    /// case fails so, so the row fails once gangway is fixed.
    pub known_difference: Option<Difference>,
}

/// The group's members, in upstream's `QueuedPodInfos` order.
pub const PODS: [&str; 3] = ["p1", "p2", "p3"];
const ALL_NIL: &[(&str, S)] = &[("p1", Nil), ("p2", Nil), ("p3", Nil)];
const ALL_UNSCHED: &[(&str, S)] = &[("p1", Unsched), ("p2", Unsched), ("p3", Unsched)];
const ALL_BOUND: &[&str] = &["p1", "p2", "p3"];
/// Why Hardened differs where the fake asks a member to wait.
const REFUSES_WAIT: &str = "Hardened turns another Permit plugin's wait on a member into that \
                            plugin's error (H1: only its gang holds a member at Permit), and an \
                            error ends the cycle for the whole group, as upstream's errors do";
/// Hardened where the fake asks p1 to wait.
const P1_WAIT_IS_AN_ERROR: Want = Want {
    group: G::Error,
    pods: &[("p1", Error)],
    bound: &[],
};

/// The ported rows (the four that need preemption are left out).
pub const ALGORITHM: &[AlgorithmCase] = &[
    AlgorithmCase {
        name: "All pods feasible",
        filter: ALL_NIL,
        permit: ALL_NIL,
        upstream: Want {
            group: G::Success,
            pods: ALL_NIL,
            bound: ALL_BOUND,
        },
        hardened: None,
        known_difference: None,
    },
    AlgorithmCase {
        name: "All pods feasible, two waiting",
        filter: ALL_NIL,
        permit: &[("p1", Wait), ("p2", Wait), ("p3", Nil)],
        // No submit case of this name: bound by submit's rule (a feasible group's placed pods).
        upstream: Want {
            group: G::Success,
            pods: ALL_NIL,
            bound: ALL_BOUND,
        },
        hardened: Some((REFUSES_WAIT, P1_WAIT_IS_AN_ERROR)),
        known_difference: None,
    },
    AlgorithmCase {
        name: "All pods feasible, but all waiting",
        filter: ALL_NIL,
        permit: &[("p1", Wait), ("p2", Wait), ("p3", Wait)],
        upstream: Want {
            group: G::Unschedulable,
            pods: ALL_NIL,
            bound: &[],
        },
        hardened: Some((REFUSES_WAIT, P1_WAIT_IS_AN_ERROR)),
        known_difference: None,
    },
    AlgorithmCase {
        name: "All pods feasible, but last waiting",
        filter: ALL_NIL,
        permit: &[("p1", Nil), ("p2", Nil), ("p3", Wait)],
        upstream: Want {
            group: G::Success,
            pods: ALL_NIL,
            bound: ALL_BOUND,
        },
        hardened: Some((
            REFUSES_WAIT,
            Want {
                group: G::Error,
                pods: &[("p1", Nil), ("p2", Nil), ("p3", Error)],
                bound: &[],
            },
        )),
        known_difference: None,
    },
    AlgorithmCase {
        name: "All pods feasible, one waiting, one unschedulable",
        filter: ALL_NIL,
        permit: &[("p1", Wait), ("p2", Unsched), ("p3", Nil)],
        upstream: Want {
            group: G::Success,
            pods: &[("p1", Nil), ("p2", Unsched), ("p3", Nil)],
            bound: &["p1", "p3"],
        },
        hardened: Some((REFUSES_WAIT, P1_WAIT_IS_AN_ERROR)),
        known_difference: None,
    },
    AlgorithmCase {
        name: "All pods unschedulable",
        filter: &[("p1", Unresolvable), ("p2", Unsched), ("p3", Unsched)],
        permit: &[],
        upstream: Want {
            group: G::Unschedulable,
            pods: ALL_UNSCHED,
            bound: &[],
        },
        hardened: None,
        known_difference: None,
    },
    AlgorithmCase {
        name: "Any filter returned Error",
        filter: &[("p1", Nil), ("p2", Error), ("p3", Nil)],
        permit: ALL_NIL,
        upstream: Want {
            group: G::Error,
            pods: &[("p1", Nil), ("p2", Error)],
            bound: &[],
        },
        hardened: None,
        known_difference: None,
    },
    AlgorithmCase {
        name: "Any permit returned Error",
        filter: ALL_NIL,
        permit: &[("p1", Nil), ("p2", Error), ("p3", Nil)],
        upstream: Want {
            group: G::Error,
            pods: &[("p1", Nil), ("p2", Error)],
            bound: &[],
        },
        hardened: None,
        known_difference: None,
    },
    AlgorithmCase {
        name: "Any filter returned Error while waiting on preemption",
        filter: &[("p1", Unsched), ("p2", Error), ("p3", Nil)],
        permit: ALL_NIL,
        upstream: Want {
            group: G::Error,
            pods: &[("p1", Unsched), ("p2", Error)],
            bound: &[],
        },
        hardened: None,
        known_difference: None,
    },
    AlgorithmCase {
        name: "Any permit returned Error while waiting on preemption",
        filter: &[("p1", Unsched), ("p2", Nil), ("p3", Nil)],
        permit: &[("p1", Nil), ("p2", Error), ("p3", Nil)],
        upstream: Want {
            group: G::Error,
            pods: &[("p1", Unsched), ("p2", Error)],
            bound: &[],
        },
        hardened: None,
        known_difference: None,
    },
];
