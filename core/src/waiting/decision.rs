use std::fmt;

use crate::sync::channel::Sender;
use crate::{Pod, Status};

/// A permit decision as delivered to a [`DecisionSink`]: the pod and how it was decided
/// (`Success` when allowed; `Unschedulable` with the plugin when rejected or timed out).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// The pod that was decided; it is no longer in the waiting map.
    pub pod: Pod,
    /// The decision, exactly as [`WaitingPod::wait`](super::WaitingPod::wait) returns it.
    pub status: Status,
}

/// Where decided pods go, so that a handful of binding workers can serve 100,000 waiting pods
/// without a thread per pod. Called exactly once per decided pod (I1), **after** every
/// gangway lock is released (H5), on the thread that made the decision; it may call back into
/// the waiting map. Implemented for closures and for channel senders.
pub trait DecisionSink: Send + Sync + 'static {
    /// Takes one decision.
    fn deliver(&self, decision: Decision);
}

impl<F> DecisionSink for F
where
    F: Fn(Decision) + Send + Sync + 'static,
{
    fn deliver(&self, decision: Decision) {
        self(decision)
    }
}

impl DecisionSink for Sender<Decision> {
    /// Sends the decision; if the receiver is gone nobody is listening and it is dropped.
    fn deliver(&self, decision: Decision) {
        let _ = self.send(decision);
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pod.id(), self.status)
    }
}
