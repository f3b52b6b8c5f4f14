use std::fmt;

use crate::sync::channel::Sender;
use crate::{Pod, Status};

/// A permit decision as delivered to a [`DecisionSink`]: the pod, how it was decided
/// (`Success` when allowed; `Unschedulable` with the plugin when rejected or timed out; `Error`
/// when preempted) and why ([`Cause`]). Code that acts on a decision reads its cause, never
/// its message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// The pod that was decided; it is no longer in the waiting map.
    pub pod: Pod,
    /// The decision, exactly as [`WaitingPod::wait`](super::WaitingPod::wait) returns it.
    pub status: Status,
    /// Why it was decided so.
    pub cause: Cause,
}

impl Decision {
    /// A decision on `pod` with `status` for `cause`.
    pub fn new(pod: Pod, status: Status, cause: Cause) -> Decision {
        Decision { pod, status, cause }
    }

    /// `pod` allowed: `Success`, [`Cause::Allowed`].
    pub fn allowed(pod: Pod) -> Decision {
        Decision::new(pod, Status::success(), Cause::Allowed)
    }
}

/// Why a pod at Permit was decided the way it was. Every decision carries one, so that a
/// binding cycle, a counter or an embedder's pod condition can tell a timeout from a failed
/// gang or a deletion without reading a message.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// Every plugin it waited for allowed it (or Permit passed it at once).
    Allowed,
    /// A plugin rejected it; the status names the plugin.
    Rejected,
    /// A permit deadline passed: a plugin's wait (each waiting pod's own, upstream), or its gang
    /// attempt's one deadline (Hardened, H3).
    TimedOut,
    /// Its gang attempt failed as a whole (Hardened, H1): a waiting member was deleted or
    /// unreserved, or stopped waiting before quorum; a member arriving at a failed attempt is
    /// rejected for the same cause (H2).
    GangFailed,
    /// The pod was deleted while it waited (upstream's `RejectWaitingPod`: "removed").
    Deleted,
    /// A preemption took its place while it waited: an `Error`, not a plugin's verdict, so it
    /// backs off and is tried again (upstream's `Preempt`, kubernetes#135719).
    Preempted,
    /// The scheduler shut down while it waited.
    ShutDown,
}

impl Cause {
    /// Whether the pod was allowed.
    pub fn is_allowed(self) -> bool {
        self == Cause::Allowed
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::Allowed => "allowed",
            Cause::Rejected => "rejected",
            Cause::TimedOut => "timed out",
            Cause::GangFailed => "gang failed",
            Cause::Deleted => "deleted",
            Cause::Preempted => "preempted",
            Cause::ShutDown => "shut down",
        })
    }
}

/// Where decided pods go, so that a handful of binding workers can serve 100,000 waiting pods
/// without a thread per pod. Called exactly once per decided pod (I1), **after** every
/// gangway lock is released (H5), on the thread that made the decision; it may call back into
/// the waiting map. Implemented for closures and for channel senders.
pub trait DecisionSink: Send + Sync + 'static {
    /// Takes one decision.
    fn deliver(&self, decision: Decision);

    /// Takes the decisions one step made together — a gang allowed at quorum or rejected as a
    /// whole — in that step's order. By default one [`deliver`](Self::deliver) each; a sink
    /// can override it to hand them on in fewer messages (one wake-up for a gang of 10,000).
    fn deliver_all(&self, decisions: Vec<Decision>) {
        for decision in decisions {
            self.deliver(decision);
        }
    }
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
        write!(f, "{}: {} ({})", self.pod.id(), self.status, self.cause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Arc, Mutex};
    use crate::{PodId, WaitingPods};

    /// Records each call: the pods it was given.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<Vec<String>>>>);

    impl DecisionSink for Recorder {
        fn deliver(&self, decision: Decision) {
            self.0.lock().push(vec![decision.pod.name().to_owned()]);
        }

        fn deliver_all(&self, decisions: Vec<Decision>) {
            let names = decisions.iter().map(|d| d.pod.name().to_owned()).collect();
            self.0.lock().push(names);
        }
    }

    #[test]
    fn a_gang_decided_together_reaches_the_sink_in_one_call_a_single_pod_in_deliver() {
        let recorder = Recorder::default();
        let waiting = WaitingPods::with_sink(recorder.clone());
        for name in ["a", "b", "c", "d"] {
            waiting
                .add_untimed(crate::Pod::new(name, "ml", name), "GangScheduling".into())
                .unwrap();
        }
        let gang = ["c", "a", "b"].map(PodId::from);
        assert_eq!(waiting.allow_all(&gang, "GangScheduling"), Ok(3));
        assert!(waiting.reject(&PodId::from("d"), "GangScheduling", "no"));
        assert_eq!(
            *recorder.0.lock(),
            [vec!["c", "a", "b"], vec!["d"]],
            "the step's order, one call per step"
        );
    }

    #[test]
    fn by_default_deliver_all_delivers_each_in_order() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            move |d: Decision| seen.lock().push(d.pod.name().to_owned())
        };
        let decisions = ["x", "y"]
            .map(|n| Decision::allowed(crate::Pod::new(n, "ml", n)))
            .to_vec();
        DecisionSink::deliver_all(&sink, decisions);
        assert_eq!(*seen.lock(), ["x", "y"]);
    }

    /// A channel sender is a sink: each decision arrives on its receiver, in order; with the
    /// receiver gone the decision is dropped, not a panic. (Found missing by mutation testing:
    /// `deliver` emptied passed every unit test.)
    #[test]
    fn a_channel_sender_delivers_each_decision_to_its_receiver() {
        let (tx, rx) = crate::sync::channel::unbounded();
        for name in ["x", "y"] {
            tx.deliver(Decision::allowed(crate::Pod::new(name, "ml", name)));
        }
        let names: Vec<String> = std::iter::from_fn(|| rx.try_recv())
            .map(|d: Decision| d.pod.name().to_owned())
            .collect();
        assert_eq!(names, ["x", "y"]);
        drop(rx);
        tx.deliver(Decision::allowed(crate::Pod::new("z", "ml", "z")));
    }

    /// The words a cause and a decision print as: an embedder's log lines and events carry
    /// them. (Found missing by mutation testing: both `Display` impls emptied passed.)
    #[test]
    fn causes_and_decisions_print_as_documented() {
        let words = [
            (Cause::Allowed, "allowed"),
            (Cause::Rejected, "rejected"),
            (Cause::TimedOut, "timed out"),
            (Cause::GangFailed, "gang failed"),
            (Cause::Deleted, "deleted"),
            (Cause::Preempted, "preempted"),
            (Cause::ShutDown, "shut down"),
        ];
        for (cause, word) in words {
            assert_eq!(cause.to_string(), word);
        }
        let decision = Decision::new(
            crate::Pod::new("p", "ml", "p"),
            Status::unschedulable("no room").with_plugin("Fit"),
            Cause::Rejected,
        );
        let printed = decision.to_string();
        assert!(printed.starts_with("p: "), "{printed}");
        assert!(printed.contains("no room"), "{printed}");
        assert!(printed.ends_with(" (rejected)"), "{printed}");
    }
}
