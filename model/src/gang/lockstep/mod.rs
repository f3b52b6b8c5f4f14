//! The lockstep harness of the gang property tests (`tests/prop_gang.rs`): the real
//! [`GangScheduling`] plugin over a
//! [`WaitingPods::with_channel`](gangsched::WaitingPods::with_channel) map, run side by side
//! with the reference model [`GangModel`].
//!
//! A case has 2–3 groups (`g0`..`g2`, namespace `ml`) and up to [`MAX_PODS`] pods
//! (`p0`..`p7`), each naming one of the groups. An [`Op`] names a pod or a group by index, or
//! picks the k-th pod it applies to (indices taken modulo the case's numbers, so shrinking
//! never makes an operation invalid), and is skipped when its precondition fails:
//!
//! - pods arrive (unbound, or already bound) and are deleted (upstream: `on_pod_deleted` plus
//!   `WaitingPods::remove`, as kube-scheduler does; hardened: `on_pod_deleted` only);
//! - PodGroup objects are added, updated (any policy) and deleted;
//! - a queued pod that passes PreEnqueue is reserved (one scheduling cycle at a time) and
//!   reaches Permit — at once, or later with cluster events, timeouts and binding cycles in
//!   between — or its cycle fails before Permit and it is unreserved; a pod rejected at Permit
//!   is unreserved by its scheduling cycle at once, as kube-scheduler's `schedulingCycle` does
//!   — or, with [`Lockstep::deferring_permit_rejections`], only later, like a wait's rejection;
//! - time advances, with or without firing the timeouts (`WaitingPods::expire` and
//!   `GangScheduling::expire`);
//! - binding cycles: a pod whose wait ended in a rejection is unreserved (the failure path); an
//!   allowed pod is bound (`on_pod_bound`), or unreserved if it was deleted or bound elsewhere
//!   meanwhile;
//! - a waiting pod is rejected from outside (preemption), and a pod is bound by another binder.
//!
//! After every step [`Lockstep::run`] compares with the model: the step's result, every pod's
//! PreEnqueue status, every group (object, members, unscheduled / assumed / assigned, attempt),
//! every waiting pod with its deadline, and the decisions delivered on the channel. It also
//! checks `Groups::check()` and `WaitingState::check()` (I5), that its own bookkeeping of where
//! each pod is agrees with the registry and the map (I4 for the parts this layer sees), and, if
//! asked, gang atomicity (I3). [`Lockstep::settle`] ends a case: activity stops — the cycle in
//! flight reaches Permit, every timeout fires, every rejected pod is unreserved and every
//! allowed pod bound — and nothing may be left assumed without a live waiting or binding pod
//! (I6), and no attempt is left.
//!
//! Failures are `Err` with a message and the trace of the case; the harness does not depend on
//! proptest (the test binary owns the strategies).

mod check;
mod input;
mod step;

use std::time::Duration;

use crate::gang::GangModel;
use gangsched::checking::GangFlaw;
use gangsched::gang::GangScheduling;
use gangsched::sync::channel::Receiver;
use gangsched::{Decision, Mode, Pod, Time};
use gangsched::{GroupKey, Policy};

pub use input::{encode, DURATIONS, POLICIES};

/// The namespace of every pod and group.
pub const NS: &str = "ml";
/// The names of the groups a case may have.
pub const GROUPS: [&str; 3] = ["g0", "g1", "g2"];
/// The most pods a case has.
pub const MAX_PODS: usize = 8;
/// The plugin that rejects a waiting pod from outside, as preemption does.
pub const PREEMPTION: &str = "DefaultPreemption";

/// A failed check: what disagreed, with the trace of the case.
pub type Failure = String;

/// Returns `Err` with the message (and where) unless `$cond` holds.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!("{} at {}:{}", format_args!($($fmt)+), file!(), line!()));
        }
    };
}

/// Returns `Err` showing both sides (and where) unless `$left == $right`.
macro_rules! ensure_eq {
    ($left:expr, $right:expr) => {
        ensure_eq!($left, $right, "")
    };
    ($left:expr, $right:expr, $($fmt:tt)+) => {
        match (&$left, &$right) {
            (left, right) => {
                if !(*left == *right) {
                    return Err(format!(
                        "assertion failed: `(left == right)`\n  left: `{:?}`,\n right: `{:?}`: {} at {}:{}",
                        left,
                        right,
                        format_args!($($fmt)+),
                        file!(),
                        line!()
                    ));
                }
            }
        }
    };
}

use {ensure, ensure_eq}; // for the submodules, by path

/// An operation. `pod` names a pod directly; `pick` names the `pick`-th (modulo their number)
/// of the pods the operation applies to, in index order, so that most operations do something
/// and shrinking keeps them meaningful. An operation that applies to no pod is skipped.
///
/// With the `arbitrary` feature, cargo-fuzz generates these directly (the `gang_plugin`
/// target): each index from one byte, a duration from [`DURATIONS`] and a policy from
/// [`POLICIES`] (each by one byte, modulo), so an op costs 4 to 6 bytes ([`encode`] writes
/// them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Op {
    /// Pod `pod` is created (already bound to a node if `bound`), unless it exists.
    AddPod {
        /// The pod's index.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pod: usize,
        /// Whether it arrives bound.
        bound: bool,
    },
    /// A PodGroup object is created.
    AddGroup {
        /// The group's index.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        group: usize,
        /// Its policy.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::policy))]
        policy: Policy,
    },
    /// A PodGroup object changes.
    UpdateGroup {
        /// The group's index.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        group: usize,
        /// Its new policy.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::policy))]
        policy: Policy,
    },
    /// A PodGroup object is deleted.
    DeleteGroup {
        /// The group's index.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        group: usize,
    },
    /// A whole scheduling cycle for a queued pod that passes PreEnqueue: reserve, then Permit.
    Schedule {
        /// Which of the schedulable pods.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pick: usize,
    },
    /// A scheduling cycle starts for a queued pod that passes PreEnqueue: it is reserved. One
    /// cycle at a time; until `Permit`, no other starts.
    Reserve {
        /// Which of the schedulable pods.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pick: usize,
    },
    /// The scheduling cycle in flight reaches Permit.
    Permit,
    /// The scheduling cycle in flight fails before Permit (another plugin): it is unreserved.
    AbortCycle,
    /// Time passes; no timer fires.
    Tick(#[cfg_attr(feature = "arbitrary", arbitrary(with = input::duration))] Duration),
    /// Time passes, then the timers fire (both the map's and the gang's).
    Expire(#[cfg_attr(feature = "arbitrary", arbitrary(with = input::duration))] Duration),
    /// The cycle of a rejected pod unreserves it: the binding cycle of a pod whose wait was
    /// rejected, or (when deferred) the scheduling cycle of a pod rejected at Permit.
    Unreserve {
        /// Which of the rejected pods.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pick: usize,
    },
    /// The binding cycle of an allowed pod binds it; if the pod was deleted or bound elsewhere
    /// meanwhile the bind fails and it is unreserved.
    Bind {
        /// Which of the allowed pods.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pick: usize,
    },
    /// Preemption rejects a waiting pod.
    Preempt {
        /// Which of the waiting pods.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pick: usize,
    },
    /// Another binder binds a pod that exists and is not bound (`on_pod_bound`), whether it is
    /// queued or in the middle of a cycle of this scheduler.
    BindElsewhere {
        /// Which of the existing unbound pods.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pick: usize,
    },
    /// Pod `pod` is deleted, if it exists.
    Delete {
        /// The pod's index.
        #[cfg_attr(feature = "arbitrary", arbitrary(with = input::index))]
        pod: usize,
    },
}

/// Where the test believes a pod is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not created yet, or deleted and its cycle over.
    Absent,
    /// In the scheduling queue (unscheduled).
    Queued,
    /// Reserved, its cycle not yet at Permit.
    Reserved,
    /// Waiting at Permit.
    Waiting,
    /// Its wait was rejected, or (when deferred) Permit rejected it; its cycle will unreserve
    /// it.
    Rejected,
    /// Permit or the wait allowed it; its binding cycle will bind it.
    Allowed,
    /// Bound to a node.
    Bound,
}

/// A pod's [`Phase`], and what happened to it while its cycle was running. `deleted` marks a
/// pod deleted, and `bound_elsewhere` a pod bound by another binder, while its scheduling or
/// binding cycle was still running (`Reserved` to `Allowed`); the cycle still finishes, and a
/// bind at its end fails. `released` marks a pod that hardened Permit rejected: its group
/// released its reservation at once (P7), before its cycle's unreserve.
#[derive(Clone, Copy, Debug)]
struct Track {
    phase: Phase,
    deleted: bool,
    bound_elsewhere: bool,
    released: bool,
}

impl Track {
    fn new(phase: Phase) -> Track {
        Track {
            phase,
            deleted: false,
            bound_elsewhere: false,
            released: false,
        }
    }

    /// Where the pod ends once its cycle is over without binding it (unreserved, or its bind
    /// failed).
    fn after_cycle(&self) -> Track {
        if self.deleted {
            Track::new(Phase::Absent)
        } else if self.bound_elsewhere {
            Track::new(Phase::Bound)
        } else {
            Track::new(Phase::Queued)
        }
    }

    fn in_cycle(&self) -> bool {
        matches!(
            self.phase,
            Phase::Reserved | Phase::Waiting | Phase::Rejected | Phase::Allowed
        )
    }
}

/// The real plugin and the model side by side, with the test's own bookkeeping.
pub struct Lockstep {
    mode: Mode,
    gang: GangScheduling,
    decisions: Receiver<Decision>,
    model: GangModel,
    now: Time,
    pods: Vec<Pod>,
    groups: Vec<GroupKey>,
    track: Vec<Track>,
    /// Whether to check I3 after every step.
    check_i3: bool,
    /// Whether a pod rejected at Permit stays in its cycle until an `Unreserve` operation (or
    /// the settling), like a pod whose wait was rejected, instead of being unreserved by its
    /// scheduling cycle at once (kube-scheduler).
    defer_permit_rejections: bool,
    /// What was done, for failure messages (skipped operations are not listed).
    trace: Vec<String>,
    /// A flaw planted in the real plugin's operations (a fuzz target's witness), if any.
    flaw: Option<GangFlaw>,
}

/// Runs `ops` on a fresh [`Lockstep`] in `mode` (`groups` groups, pod `i` in group
/// `pod_groups[i]`), checking I3 after every step if `check_i3`, then settles it.
pub fn run_case(
    mode: Mode,
    check_i3: bool,
    groups: usize,
    pod_groups: &[usize],
    ops: &[Op],
) -> Result<(), Failure> {
    run_ops(Lockstep::new(mode, groups, pod_groups, check_i3), ops)
}

/// Runs `ops` on `lockstep`, then settles it.
pub fn run_ops(mut lockstep: Lockstep, ops: &[Op]) -> Result<(), Failure> {
    for &op in ops {
        lockstep.run(op)?;
    }
    lockstep.settle()
}
