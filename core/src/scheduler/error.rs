use thiserror::Error;

use crate::gang::{AddPodError, GroupUpdateError};
use crate::queue::QueueError;
use crate::{Pod, PodGroup};

use super::{AddBoundError, AddNodeError, Node, RemoveNodeError};

/// Why a pod event was refused. Nothing changed; the pod is handed back where there is one.
#[derive(Debug, Error)]
pub enum PodEventError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(Pod),
    /// The pod is already known (added twice).
    #[error("pod {} is already known", .0.full_name())]
    AlreadyKnown(Pod),
    /// A bound pod names a node the scheduler does not know, or none.
    #[error("bound pod is refused: {0}")]
    Bound(#[from] AddBoundError),
    /// Its gang membership was refused.
    #[error("pod is refused by its group: {0}")]
    Group(#[from] AddPodError),
    /// The queue refused it.
    #[error("pod is refused by the queue: {0}")]
    Queue(#[from] QueueError),
}

/// Why a PodGroup event was refused.
#[derive(Debug, Error)]
pub enum GroupEventError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(PodGroup),
    /// The group registry refused it.
    #[error("group is refused: {0}")]
    Group(#[from] GroupUpdateError),
}

/// Why a node event was refused.
#[derive(Debug, Error)]
pub enum NodeEventError {
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(Option<Node>),
    /// A node with that name already exists.
    #[error("{0}")]
    Add(#[from] AddNodeError),
    /// No node has that name.
    #[error("{0}")]
    Remove(#[from] RemoveNodeError),
}
