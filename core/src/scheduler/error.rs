use thiserror::Error;

use crate::gang::{GroupUpdateError, JoinGroupError};
use crate::queue::QueueError;
use crate::{GroupKey, Pod, PodGroup};

/// Why [`Scheduler::add_pod`](super::Scheduler::add_pod) refused a pod. Nothing changed; the
/// pod is handed back ([`into_pod`](AddPodError::into_pod)).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AddPodError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(Pod),
    /// The pod is already known (added twice).
    #[error("pod {} is already known", .0.full_name())]
    AlreadyKnown(Pod),
    /// A bound pod names a node the scheduler does not know.
    #[error("pod {} is bound to unknown node {node}", .pod.id())]
    UnknownNode {
        /// The pod, handed back.
        pod: Pod,
        /// The node it names.
        node: String,
    },
    /// Its group refused it.
    #[error("pod is refused by its group: {0}")]
    Group(#[from] JoinGroupError),
    /// The queue refused it.
    #[error("pod is refused by the queue: {0}")]
    Queue(#[from] QueueError),
}

impl AddPodError {
    /// The pod that could not be added.
    pub fn into_pod(self) -> Pod {
        match self {
            AddPodError::ShutDown(pod)
            | AddPodError::AlreadyKnown(pod)
            | AddPodError::UnknownNode { pod, .. } => pod,
            AddPodError::Group(e) => e.into_pod(),
            AddPodError::Queue(QueueError::AlreadyQueued { pod, .. }) => pod,
        }
    }
}

/// Why [`Scheduler::update_pod`](super::Scheduler::update_pod) refused an update. Nothing
/// changed; the new object is handed back ([`into_pod`](UpdatePodError::into_pod)).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UpdatePodError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(Pod),
    /// The pod is newly bound to a node the scheduler does not know.
    #[error("pod {} is bound to unknown node {node}", .pod.id())]
    UnknownNode {
        /// The new object, handed back.
        pod: Pod,
        /// The node it names.
        node: String,
    },
}

impl UpdatePodError {
    /// The new object that was refused.
    pub fn into_pod(self) -> Pod {
        match self {
            UpdatePodError::ShutDown(pod) | UpdatePodError::UnknownNode { pod, .. } => pod,
        }
    }
}

/// Why [`Scheduler::delete_pod`](super::Scheduler::delete_pod) refused a delete. Nothing
/// changed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DeletePodError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown,
}

/// Why [`Scheduler::add_group`](super::Scheduler::add_group) refused a PodGroup. Nothing
/// changed; the group is handed back ([`into_group`](AddGroupError::into_group)).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AddGroupError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(PodGroup),
    /// The registry refused it (it exists already).
    #[error("group is refused: {0}")]
    Group(#[from] GroupUpdateError),
}

impl AddGroupError {
    /// The group that could not be added.
    pub fn into_group(self) -> PodGroup {
        match self {
            AddGroupError::ShutDown(group) => group,
            AddGroupError::Group(e) => e.into_group(),
        }
    }
}

/// Why [`Scheduler::update_group`](super::Scheduler::update_group) refused an update. Nothing
/// changed; the group is handed back ([`into_group`](UpdateGroupError::into_group)).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UpdateGroupError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(PodGroup),
    /// The registry refused it (no such group, or a min count above its members).
    #[error("group is refused: {0}")]
    Group(#[from] GroupUpdateError),
}

impl UpdateGroupError {
    /// The group that could not be updated.
    pub fn into_group(self) -> PodGroup {
        match self {
            UpdateGroupError::ShutDown(group) => group,
            UpdateGroupError::Group(e) => e.into_group(),
        }
    }
}

/// Why [`Scheduler::delete_group`](super::Scheduler::delete_group) refused a delete. Nothing
/// changed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeleteGroupError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(GroupKey),
}
