//! What the driver's work came to: one [`PodOutcome`] per ended attempt of a pod, delivered to
//! the [`OutcomeSink`] the embedder installs after every lock is released; a
//! [`CycleOutcome`] per scheduling cycle and a [`Tick`] per tick of the timers, returned to
//! whoever drives the scheduler by hand.

use std::fmt;

use crate::sync::channel::{self, Receiver, Sender};
use crate::{Cause, GroupKey, Pod, PodId, Status};

use super::BindError;

/// How one scheduling attempt of a pod ended — what an embedder writes into the pod's
/// `PodScheduled` condition or an event. Every attempt ends in exactly one outcome: bound,
/// back in the queue (unschedulable, rejected at Permit, bind failed) or dropped (deleted
/// meanwhile). A pod still waiting at Permit has had no outcome yet.
///
/// Delivered to the scheduler's [`OutcomeSink`] for cycles driven by hand and for
/// [`start`](super::Scheduler::start)'s threads alike.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodOutcome {
    /// Bound to `node` (the binder said yes): the attempt succeeded.
    Bound {
        /// The pod.
        pod: Pod,
        /// The node it is bound to.
        node: String,
    },
    /// No node passed the placement — or the placement or reserving failed — in its
    /// scheduling cycle: back in the queue. `status` names the plugin that said no
    /// ([`Status::plugin`]); its code is [`Code::Error`](crate::Code::Error) when it was an
    /// error (a placement that panicked, a node gone), which backs off as an error.
    Unschedulable {
        /// The pod.
        pod: Pod,
        /// Why, from the plugin.
        status: Status,
    },
    /// Rejected at Permit — timed out, its gang failed, preempted, a sibling deleted, the
    /// scheduler shut down — and released: back in the queue.
    Rejected {
        /// The pod.
        pod: Pod,
        /// The rejection.
        status: Status,
        /// Why it was rejected.
        cause: Cause,
    },
    /// The binder failed (or panicked): released, and back in the queue's error backoff.
    BindFailed {
        /// The pod.
        pod: Pod,
        /// The binder's error.
        error: BindError,
    },
    /// Deleted while between its scheduling cycle and the end of its binding cycle: its
    /// reservation is released and it does not come back.
    Dropped {
        /// The pod.
        pod: Pod,
    },
}

impl PodOutcome {
    /// The pod.
    pub fn pod(&self) -> &Pod {
        match self {
            PodOutcome::Bound { pod, .. }
            | PodOutcome::Unschedulable { pod, .. }
            | PodOutcome::Rejected { pod, .. }
            | PodOutcome::BindFailed { pod, .. }
            | PodOutcome::Dropped { pod } => pod,
        }
    }

    /// Whether the pod is done with the scheduler (bound or dropped); otherwise it is back in
    /// the queue for another attempt.
    pub fn is_final(&self) -> bool {
        matches!(self, PodOutcome::Bound { .. } | PodOutcome::Dropped { .. })
    }

    /// The `PodScheduled` condition kube-scheduler would write for this outcome: `True` once
    /// bound; `False` with reason `Unschedulable` for a plugin's verdict (no node fits, a
    /// Permit rejection or timeout), `SchedulerError` for an error (a failed bind, a
    /// placement error); `None` for a dropped pod, which is gone.
    pub fn pod_scheduled(&self) -> Option<PodScheduled> {
        let unschedulable = |status: &Status| PodScheduled {
            status: false,
            // `handleSchedulingFailure` calls `ErrNoNodesAvailable` unschedulable too.
            reason: if status.code() == crate::Code::Error
                && status.message() != super::ResourceFit::NO_NODES
            {
                PodScheduled::SCHEDULER_ERROR
            } else {
                PodScheduled::UNSCHEDULABLE
            },
            message: status.message().to_owned(),
        };
        Some(match self {
            PodOutcome::Bound { .. } => PodScheduled {
                status: true,
                reason: "",
                message: String::new(),
            },
            PodOutcome::Unschedulable { status, .. } => unschedulable(status),
            // Upstream wraps a Permit rejection in a FitError over the one node the pod was
            // assumed on (`prepareForBindingCycle`, `bindingCycle`); an error stays itself.
            PodOutcome::Rejected { status, .. } if status.is_rejected() => PodScheduled {
                message: fit_error_on_one_node(status),
                ..unschedulable(status)
            },
            PodOutcome::Rejected { status, .. } => unschedulable(status),
            // kube-scheduler's DefaultBinder failing, as `RunBindPlugins` words it.
            PodOutcome::BindFailed { error, .. } => PodScheduled {
                status: false,
                reason: PodScheduled::SCHEDULER_ERROR,
                message: format!(
                    "running Bind plugin \"DefaultBinder\": {}",
                    match error {
                        BindError::Failed(why) => why.clone(),
                        other => other.to_string(),
                    }
                ),
            },
            PodOutcome::Dropped { .. } => return None,
        })
    }
}

/// A FitError's message for a pod whose one node said `status`: each of its reasons counted
/// once, sorted — "0/1 nodes are available: 1 over quota."
pub(crate) fn fit_error_on_one_node(status: &Status) -> String {
    let mut reasons: Vec<String> = status.reasons().iter().map(|r| format!("1 {r}")).collect();
    reasons.sort();
    format!("0/1 nodes are available: {}.", reasons.join(", "))
}

/// `<namespace>/<name> <what happened>`, e.g. `ml/trainer-0 bound to node-a`.
impl fmt::Display for PodOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.pod().full_name();
        match self {
            PodOutcome::Bound { node, .. } => write!(f, "{name} bound to {node}"),
            PodOutcome::Unschedulable { status, .. } => write!(f, "{name} unschedulable: {status}"),
            PodOutcome::Rejected { status, cause, .. } => {
                write!(f, "{name} rejected at permit ({cause:?}): {status}")
            }
            PodOutcome::BindFailed { error, .. } => write!(f, "{name} {error}"),
            PodOutcome::Dropped { .. } => write!(f, "{name} dropped: deleted in flight"),
        }
    }
}

/// A pod's `PodScheduled` condition as kube-scheduler writes it (see
/// [`PodOutcome::pod_scheduled`]): whether it is scheduled, the reason, the message.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodScheduled {
    /// `True` (bound) or `False`.
    pub status: bool,
    /// `Unschedulable`, `SchedulerError`, or empty when scheduled.
    pub reason: &'static str,
    /// The scheduler's message (empty when scheduled).
    pub message: String,
}

impl PodScheduled {
    /// The condition's type.
    pub const TYPE: &'static str = "PodScheduled";
    /// The reason for a plugin's verdict.
    pub const UNSCHEDULABLE: &'static str = "Unschedulable";
    /// The reason for an error.
    pub const SCHEDULER_ERROR: &'static str = "SchedulerError";

    /// `"True"` or `"False"`, as the API writes a condition's status.
    pub fn status_str(&self) -> &'static str {
        if self.status {
            "True"
        } else {
            "False"
        }
    }
}

/// Where a scheduler delivers its [`PodOutcome`]s. Called on the thread that ended the
/// attempt (the scheduling loop, a binding worker, or the embedder's own) with no gangway lock
/// held (H5), so it may call back into the scheduler; a panic in it is caught and counted
/// ([`SchedulerStats::plugin_panics`](super::SchedulerStats::plugin_panics)), never taking
/// the thread down. Keep it quick, or hand the outcome to a channel
/// ([`outcome_channel`]).
pub trait OutcomeSink: Send + Sync {
    /// Takes one outcome.
    fn deliver(&self, outcome: PodOutcome);
}

/// Any `Fn(PodOutcome)` is a sink.
impl<F> OutcomeSink for F
where
    F: Fn(PodOutcome) + Send + Sync,
{
    fn deliver(&self, outcome: PodOutcome) {
        self(outcome)
    }
}

/// The default sink: outcomes are not kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiscardOutcomes;

impl OutcomeSink for DiscardOutcomes {
    fn deliver(&self, _: PodOutcome) {}
}

/// The sending end of an [`outcome_channel`].
#[derive(Clone)]
pub struct OutcomeSender(Sender<PodOutcome>);

impl fmt::Debug for OutcomeSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OutcomeSender")
    }
}

impl OutcomeSink for OutcomeSender {
    /// Sends the outcome; if the receiver is gone nobody is listening and it is dropped.
    fn deliver(&self, outcome: PodOutcome) {
        let _ = self.0.send(outcome);
    }
}

/// An unbounded channel of outcomes: install the sender with
/// [`SchedulerBuilder::outcomes`](super::SchedulerBuilder::outcomes), read the receiver on a
/// thread of yours.
pub fn outcome_channel() -> (OutcomeSender, Receiver<PodOutcome>) {
    let (sender, receiver) = channel::unbounded();
    (OutcomeSender(sender), receiver)
}

/// What one scheduling cycle did with the pod it popped.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CycleOutcome {
    /// Placed and allowed at once: its binding cycle is queued.
    Allowed {
        /// The pod.
        pod: PodId,
        /// The node it is assumed on.
        node: String,
    },
    /// Placed; it waits at Permit for its gang.
    Waiting {
        /// The pod.
        pod: PodId,
        /// The node it is assumed on.
        node: String,
    },
    /// Rejected at Permit; its binding cycle releases it (`Mode::Hardened`, so that a failed
    /// gang goes back whole, H2).
    Rejected {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
    },
    /// Rejected at Permit and released in this very cycle — unreserved, forgotten and back in
    /// the queue — as kube-scheduler's scheduling cycle does (`Mode::Upstream`). No binding
    /// cycle runs for it; its [`PodOutcome::Rejected`] is delivered when the cycle ends.
    Released {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
        /// Why it was rejected.
        cause: Cause,
    },
    /// Rejected at Permit in this cycle after it was deleted (`Mode::Upstream`): released and
    /// gone, its [`PodOutcome::Dropped`] delivered when the cycle ends.
    Dropped {
        /// The pod.
        pod: PodId,
    },
    /// No node fits, or reserving failed: handed back to the queue.
    Unschedulable {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
    },
    /// A pod-group cycle ([`GangCycle::PodGroup`](super::GangCycle::PodGroup)): the popped
    /// member and the siblings it brought, placed together on one snapshot. Admitted, each
    /// placed member has its binding cycle queued (Hardened: allowed at once; Upstream: after
    /// its own Permit, the first ones waiting until the quorum member passes in this cycle);
    /// not admitted, every member is back in the queue and nothing is reserved (I9).
    PodGroup {
        /// The group.
        group: GroupKey,
        /// Whether the gang was admitted.
        admitted: bool,
        /// The group's status: success when admitted, else why not — kube-scheduler 1.36's
        /// "pod group is unschedulable", Hardened's quorum message, or the error that stopped
        /// the cycle. Its condition: [`pod_group_scheduled`](CycleOutcome::pod_group_scheduled).
        status: Status,
        /// What became of each member, in placing order.
        members: Vec<CycleOutcome>,
    },
}

/// What one [`Scheduler::tick`](super::Scheduler::tick) did.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    /// Waiting pods whose own permit deadline passed (Upstream's timer per pod): rejected,
    /// [`Cause::TimedOut`](crate::Cause::TimedOut).
    pub timed_out_pods: Vec<PodId>,
    /// Gangs whose attempt's deadline passed (Hardened): every waiting member rejected
    /// together, timed out — or, admitted by the pod-group cycle, whose binding deadline
    /// passed: every member whose binding cycle had not begun released, timed out (H3).
    pub timed_out_gangs: Vec<GroupKey>,
    /// Pods whose backoff had ended, moved to the active queue.
    pub backoff_completed: usize,
    /// Pods parked unschedulable for longer than the queue allows, retried.
    pub leftover_flushed: usize,
}

impl Tick {
    /// Whether it did nothing.
    pub fn is_empty(&self) -> bool {
        *self == Tick::default()
    }
}
