use super::Cause;
use crate::sync::{Condvar, Mutex};
use crate::{Pod, Status};

/// One waiting pod's decision latch: the decision once made, and the condition variable its
/// waiters sleep on. The decision is published exactly once, by the caller that took the pod
/// out of the waiting state, while it still holds the shard's lock (lock order: shard, then
/// latch), so a decision is visible on the latch the moment the pod leaves the map. Waiters
/// hold only the latch's lock. It also holds the registered pod, so a
/// [`WaitingPod`](super::WaitingPod) handle is the map and this one allocation.
#[derive(Debug)]
pub(crate) struct Latch {
    pod: Pod,
    decision: Mutex<Option<(Status, Cause)>>,
    decided: Condvar,
}

impl Latch {
    /// The undecided latch of `pod`'s registration.
    pub(crate) fn new(pod: Pod) -> Latch {
        Latch {
            pod,
            decision: Mutex::new(None),
            decided: Condvar::new(),
        }
    }

    /// The registered pod.
    pub(crate) fn pod(&self) -> &Pod {
        &self.pod
    }

    /// Stores the decision and wakes every waiter (I2). Called once per latch.
    pub(crate) fn publish(&self, status: Status, cause: Cause) {
        let mut decision = self.decision.lock();
        debug_assert!(decision.is_none(), "a latch is published once");
        *decision = Some((status, cause));
        self.decided.notify_all();
    }

    /// Blocks until the decision is published and returns it.
    pub(crate) fn wait(&self) -> Status {
        let mut decision = self.decision.lock();
        loop {
            if let Some((status, _)) = decision.as_ref() {
                return status.clone();
            }
            self.decided.wait(&mut decision);
        }
    }

    /// The decision, if published.
    pub(crate) fn peek(&self) -> Option<Status> {
        self.decision
            .lock()
            .as_ref()
            .map(|(status, _)| status.clone())
    }

    /// Why the pod was decided, if it was.
    pub(crate) fn cause(&self) -> Option<Cause> {
        self.decision.lock().as_ref().map(|(_, cause)| *cause)
    }
}
