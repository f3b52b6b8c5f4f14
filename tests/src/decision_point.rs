use std::time::Duration;

use gangsched::sync::channel::{Receiver, RecvError};
use gangsched::{Decision, Pod, Status, Time, WaitingPod, WaitingPods};

/// The plugin name the models wait on.
pub const GANG: &str = "GangScheduling";
/// A second plugin, for models with two pending plugins.
pub const OTHER: &str = "Other";

/// One pod waiting at Permit, as the loom models drive it: the decisions that can race, the
/// blocking wait, and the delivery channel. Every implementation registers the pod at
/// [`Time::ZERO`].
pub trait DecisionPoint: Send + Sync + 'static {
    /// A pod waiting for each `(plugin, wait)`.
    fn waiting_for(plugins: &[(&'static str, Duration)]) -> Self
    where
        Self: Sized;
    /// Clears `plugin`; `true` if this call allowed the pod.
    fn allow(&self, plugin: &'static str) -> bool;
    /// Rejects; `true` if this call decided.
    fn reject(&self, plugin: &'static str, message: &str) -> bool;
    /// The pod was deleted; `true` if this call decided.
    fn remove(&self) -> bool;
    /// The timer fired at `now`; the rejection if this call timed the pod out.
    fn expire(&self, now: Time) -> Option<Status>;
    /// Blocks until decided.
    fn wait(&self) -> Status;
    /// The decision so far.
    fn decision(&self) -> Option<Status>;
    /// Whether the pod is still in the waiting map.
    fn registered(&self) -> bool;
    /// Blocks for the next delivered decision.
    fn next_delivery(&self) -> Result<Decision, RecvError>;
    /// A delivered decision, if one is ready.
    fn try_delivery(&self) -> Option<Decision>;
}

/// The real thing: a [`WaitingPods`] map with a delivery channel and one registered pod.
#[derive(Debug)]
pub struct RealPod {
    /// The map.
    pub map: WaitingPods,
    /// The pod's handle.
    pub pod: WaitingPod,
    /// Where the map delivers decisions.
    pub decisions: Receiver<Decision>,
}

impl DecisionPoint for RealPod {
    fn waiting_for(plugins: &[(&'static str, Duration)]) -> Self {
        let (map, decisions) = WaitingPods::with_channel();
        let waits = plugins.iter().map(|&(p, d)| (p.into(), d));
        let pod = map
            .add(Pod::new("p", "ns", "p-0"), waits, Time::ZERO)
            .expect("a fresh map accepts the pod");
        RealPod {
            map,
            pod,
            decisions,
        }
    }

    fn allow(&self, plugin: &'static str) -> bool {
        self.pod.allow(plugin)
    }

    fn reject(&self, plugin: &'static str, message: &str) -> bool {
        self.map.reject(self.pod.id(), plugin, message)
    }

    fn remove(&self) -> bool {
        self.map.remove(self.pod.id()).is_some()
    }

    fn expire(&self, now: Time) -> Option<Status> {
        let mut expired = self.map.expire(now);
        assert!(expired.len() <= 1, "one pod can time out only once");
        expired.pop().map(|d| d.status)
    }

    fn wait(&self) -> Status {
        self.pod.wait()
    }

    fn decision(&self) -> Option<Status> {
        self.pod.decision()
    }

    fn registered(&self) -> bool {
        let by_get = self.map.get(self.pod.id()).is_some();
        assert_eq!(by_get, self.map.len() == 1, "get and len agree");
        by_get
    }

    fn next_delivery(&self) -> Result<Decision, RecvError> {
        self.decisions.recv()
    }

    fn try_delivery(&self) -> Option<Decision> {
        self.decisions.try_recv()
    }
}
