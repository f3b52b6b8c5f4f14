use super::QueuePlace;
use crate::{Pod, PodId};

/// An error returned when a pod is added to the scheduling queue. Hands the pod back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueueError {
    /// The pod is already queued (or in flight, for `add`).
    #[error("pod {} is already in the scheduling queue ({place:?})", .pod.id())]
    AlreadyQueued {
        /// The pod, handed back.
        pod: Pod,
        /// Where it already is.
        place: QueuePlace,
    },
}

/// An error returned when a pod is handed back from its attempt with the queue's own record
/// ([`QueueState::hand_back`](super::QueueState::hand_back)). Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandBackError {
    /// The pod is not in flight.
    #[error("pod {0} is not in flight")]
    NotInFlight(PodId),
    /// A record handed back with a gang ([`QueueState::hand_back_gang_with`](super::QueueState::hand_back_gang_with))
    /// is of a pod queued again meanwhile.
    #[error("pod {} is already in the scheduling queue ({place:?})", .pod.id())]
    AlreadyQueued {
        /// The pod.
        pod: Pod,
        /// Where it already is.
        place: QueuePlace,
    },
}
