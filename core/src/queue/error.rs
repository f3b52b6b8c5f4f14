use super::QueuePlace;
use crate::Pod;

/// An error returned when a pod is added to the scheduling queue. Hands the pod back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
