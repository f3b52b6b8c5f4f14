use std::fmt;

use super::latch::Latch;
use super::{Cause, PendingPlugin, Ticket, WaitingPods};
use crate::sync::Arc;
use crate::{PluginName, Pod, PodId, Status};

/// A handle on one pod's registration in the [`WaitingPods`] map: decide it, wait for its
/// decision, or look at it. Clones share the registration. A handle stays valid after the pod
/// is decided (its decision stays readable); deciding it again changes nothing and reports
/// `false`. A handle never decides a later registration of the same uid.
#[derive(Clone)]
pub struct WaitingPod {
    map: WaitingPods,
    ticket: Ticket,
    latch: Arc<Latch>,
}

impl WaitingPod {
    pub(super) fn new(map: WaitingPods, ticket: Ticket, latch: Arc<Latch>) -> Self {
        WaitingPod { map, ticket, latch }
    }

    /// The pod.
    pub fn pod(&self) -> &Pod {
        self.latch.pod()
    }

    /// The registration this handle acts on.
    pub fn ticket(&self) -> Ticket {
        self.ticket
    }

    /// The pod's uid.
    pub fn id(&self) -> &PodId {
        self.pod().id()
    }

    /// Clears `plugin`; once no plugin is pending the pod is allowed. Returns `true` only if
    /// this call made the decision (H4); the first decision wins (I1).
    pub fn allow(&self, plugin: &str) -> bool {
        self.map.allow_ticket(self.id(), Some(self.ticket), plugin)
    }

    /// Rejects the pod as `Unschedulable` with `message`, attributed to `plugin`. Returns
    /// `true` only if this call made the decision (H4); the first decision wins (I1).
    pub fn reject(&self, plugin: impl Into<PluginName>, message: &str) -> bool {
        let status = Status::unschedulable(message).with_plugin(plugin);
        self.map
            .reject_ticket(self.id(), Some(self.ticket), status, Cause::Rejected)
    }

    /// Preempts the pod: decided with an `Error` attributed to `plugin`, for
    /// [`Cause::Preempted`] — not a plugin's verdict on the pod, so its binding cycle sends it
    /// to back off and try again (upstream's `Preempt`). Returns `true` only if this call
    /// made the decision (H4).
    pub fn preempt(&self, plugin: impl Into<PluginName>, message: &str) -> bool {
        self.map.reject_ticket(
            self.id(),
            Some(self.ticket),
            preemption(plugin, message),
            Cause::Preempted,
        )
    }

    /// Blocks until the pod is decided and returns the decision: `Success`, or the rejection
    /// with the rejecting plugin. Every waiter is woken by the decision (I2).
    pub fn wait(&self) -> Status {
        self.latch.wait()
    }

    /// The decision if there is one yet, without blocking.
    pub fn decision(&self) -> Option<Status> {
        self.latch.peek()
    }

    /// Why the pod was decided, once it is.
    pub fn cause(&self) -> Option<Cause> {
        self.latch.cause()
    }

    /// The plugins this pod still waits for; empty once decided.
    pub fn pending_plugins(&self) -> Vec<PluginName> {
        self.pending().into_iter().map(|p| p.plugin).collect()
    }

    /// The plugins this pod still waits for, each with its wait and deadline, in
    /// registration order; empty once decided.
    pub fn pending(&self) -> Vec<PendingPlugin> {
        self.map.pending(self.id(), self.ticket)
    }
}

/// A preemption's status: an `Error` (upstream's `Preempt`), attributed to `plugin`, as the
/// binding cycle sees it — kube-scheduler's `WaitOnPermit` returns an error decision wrapped
/// as "waiting on permit for pod: <message>".
pub(crate) fn preemption(plugin: impl Into<PluginName>, message: &str) -> Status {
    Status::with_reason(
        crate::Code::Error,
        format!("waiting on permit for pod: {message}"),
    )
    .with_plugin(plugin)
}

impl fmt::Debug for WaitingPod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitingPod")
            .field("pod", self.pod())
            .field("ticket", &self.ticket)
            .field("decision", &self.decision())
            .finish()
    }
}
