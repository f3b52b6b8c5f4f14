use std::fmt;

use super::Activation;
use crate::{Cause, Pod, Status, WaitingPod};

/// The outcome of [`GangScheduling::permit`](super::GangScheduling::permit).
///
/// `R` is what a waiting pod's registration hands back: a [`WaitingPod`] handle from the
/// plugin; `()` when a model runs the same operations on its pure states.
pub enum Permit<R = WaitingPod> {
    /// The pod may go on to binding now.
    Allow,
    /// The pod waits at Permit. It is already registered in the waiting map (so no sibling's
    /// decision can miss it); `activate` names the unscheduled siblings to move to the active
    /// queue so they are tried soon.
    Wait {
        /// The pod's registration in the waiting map, one pending plugin for each that asked
        /// it to wait.
        waiting: R,
        /// Unscheduled siblings to activate.
        activate: Activation,
        /// The step's `Wait` status when another plugin was the last to ask the pod to wait:
        /// its status, with the framework's reason appended (as `RunPermitPlugins` returns
        /// it). `None` when the gang plugin was ([`Permit::gang_wait_status`], made only when
        /// [`status`](Permit::status) asks, so the gang's Permit allocates none).
        status: Option<Status>,
    },
    /// The pod is rejected: unreserve it and hand it back to the queue.
    Reject {
        /// Why, as the scheduler reports it.
        status: Status,
        /// [`Cause::GangFailed`] if its gang attempt failed (Hardened), else
        /// [`Cause::Rejected`].
        cause: Cause,
        /// Unscheduled siblings to activate all the same: upstream's gang plugin activates
        /// them when it asks the pod to wait, before a later plugin rejects it.
        activate: Activation,
    },
}

/// The reason upstream's GangScheduling Permit gives for `Wait` (below quorum).
pub const GANG_WAIT_REASON: &str = "waiting for minCount pods from a gang to be scheduled";

/// The reason kube-scheduler's Permit step (`RunPermitPlugins`) appends to a `Wait`.
pub const PERMIT_WAIT_REASON: &str = "one or more plugins asked to wait and no plugin rejected pod";

impl<R> Permit<R> {
    /// A rejection that activates nobody.
    pub fn reject(status: Status, cause: Cause) -> Permit<R> {
        Permit::Reject {
            status,
            cause,
            activate: Activation::NONE,
        }
    }

    /// The `Wait` status of a pod only the gang plugin holds: the gang's reason and the
    /// framework's, attributed to no plugin (as upstream's).
    pub fn gang_wait_status() -> Status {
        Status::with_reason(crate::Code::Wait, GANG_WAIT_REASON)
            .with_appended_reason(PERMIT_WAIT_REASON)
    }

    /// The status kube-scheduler's Permit step (`RunPermitPlugins`) returns for this outcome:
    /// `Success` for [`Allow`](Permit::Allow); the wait status for [`Wait`](Permit::Wait); the
    /// rejection itself for [`Reject`](Permit::Reject).
    pub fn status(&self) -> Status {
        match self {
            Permit::Allow => Status::success(),
            Permit::Wait { status, .. } => status.clone().unwrap_or_else(Self::gang_wait_status),
            Permit::Reject { status, .. } => status.clone(),
        }
    }

    /// The unscheduled siblings this outcome activates.
    pub fn activate(&self) -> &Activation {
        match self {
            Permit::Allow => &Activation::NONE,
            Permit::Wait { activate, .. } | Permit::Reject { activate, .. } => activate,
        }
    }

    /// The decision this outcome is for `pod`, once it is one: allowed or rejected (a waiting
    /// pod's decision comes later, from the waiting map).
    pub fn decision(&self, pod: &Pod) -> Option<crate::Decision> {
        match self {
            Permit::Allow => Some(crate::Decision::allowed(pod.clone())),
            Permit::Wait { .. } => None,
            Permit::Reject { status, cause, .. } => {
                Some(crate::Decision::new(pod.clone(), status.clone(), *cause))
            }
        }
    }
}

impl fmt::Debug for Permit<WaitingPod> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Permit::Wait {
                waiting, activate, ..
            } => f
                .debug_struct("Wait")
                .field("pod", waiting.id())
                .field("activate", &activate.group())
                .finish(),
            other => fmt_decided(other, f),
        }
    }
}

impl fmt::Debug for Permit<()> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Permit::Wait { activate, .. } => f
                .debug_struct("Wait")
                .field("activate", &activate.group())
                .finish(),
            other => fmt_decided(other, f),
        }
    }
}

fn fmt_decided<R>(permit: &Permit<R>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match permit {
        Permit::Allow => f.write_str("Allow"),
        Permit::Reject { status, cause, .. } => f
            .debug_struct("Reject")
            .field("status", status)
            .field("cause", cause)
            .finish(),
        Permit::Wait { .. } => f.write_str("Wait"),
    }
}
