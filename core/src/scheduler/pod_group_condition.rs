//! The `PodGroupScheduled` condition a pod-group cycle leaves on its PodGroup.

use crate::{Code, Status};

use super::CycleOutcome;

/// A PodGroup's `PodGroupScheduled` condition as kube-scheduler 1.36 writes it at the end of
/// each pod-group cycle (`submitPodGroupAlgorithmResult`, `updatePodGroupCondition`): `True`
/// with reason `Scheduled` when the gang was admitted, else `False` with reason
/// `Unschedulable` (the group's message, "pod group is unschedulable" upstream) or
/// `SchedulerError` (the error). An embedder that mirrors it into the API writes it only when
/// [`supersedes`](Self::supersedes) says so, as kube-scheduler does.
///
/// ```
/// use gangsched::scheduler::PodGroupScheduled;
///
/// let scheduled = PodGroupScheduled::scheduled();
/// let unschedulable = PodGroupScheduled::unschedulable("pod group is unschedulable");
/// assert!(scheduled.supersedes(Some(&unschedulable)));
/// // A later cycle for extra members does not take a scheduled group back to False.
/// assert!(!unschedulable.supersedes(Some(&scheduled)));
/// assert!(!scheduled.supersedes(Some(&scheduled)));
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodGroupScheduled {
    /// `True` (admitted) or `False`.
    pub status: bool,
    /// `Scheduled`, `Unschedulable` or `SchedulerError`.
    pub reason: &'static str,
    /// The group's message (empty when scheduled).
    pub message: String,
}

impl PodGroupScheduled {
    /// The condition's type.
    pub const TYPE: &'static str = "PodGroupScheduled";
    /// The reason of an admitted group.
    pub const SCHEDULED: &'static str = "Scheduled";
    /// The reason of a group that was not admitted.
    pub const UNSCHEDULABLE: &'static str = "Unschedulable";
    /// The reason of a cycle that ended in an error.
    pub const SCHEDULER_ERROR: &'static str = "SchedulerError";

    /// An admitted group's condition.
    pub fn scheduled() -> PodGroupScheduled {
        PodGroupScheduled {
            status: true,
            reason: Self::SCHEDULED,
            message: String::new(),
        }
    }

    /// The condition of a group not admitted, with `message`.
    pub fn unschedulable(message: impl Into<String>) -> PodGroupScheduled {
        PodGroupScheduled {
            status: false,
            reason: Self::UNSCHEDULABLE,
            message: message.into(),
        }
    }

    /// The condition a cycle with the group's `status` leaves.
    pub fn from_status(status: &Status) -> PodGroupScheduled {
        match status.code() {
            Code::Success => PodGroupScheduled::scheduled(),
            Code::Error => PodGroupScheduled {
                reason: Self::SCHEDULER_ERROR,
                ..PodGroupScheduled::unschedulable(status.message())
            },
            _ => PodGroupScheduled::unschedulable(status.message()),
        }
    }

    /// Whether this condition is to be written over `existing`: it changes something, and it
    /// does not take a scheduled group back to `False` (kube-scheduler keeps `True` when a
    /// later cycle for extra members fails).
    pub fn supersedes(&self, existing: Option<&PodGroupScheduled>) -> bool {
        match existing {
            Some(existing) if existing.status && !self.status => false,
            Some(existing) => existing != self,
            None => true,
        }
    }

    /// `"True"` or `"False"`, as the API writes a condition's status.
    pub fn status_str(&self) -> &'static str {
        ["False", "True"][usize::from(self.status)]
    }
}

impl CycleOutcome {
    /// The `PodGroupScheduled` condition a pod-group cycle leaves on its group; `None` for a
    /// single pod's cycle.
    pub fn pod_group_scheduled(&self) -> Option<PodGroupScheduled> {
        match self {
            CycleOutcome::PodGroup { status, .. } => Some(PodGroupScheduled::from_status(status)),
            _ => None,
        }
    }
}
