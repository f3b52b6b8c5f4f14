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
        write!(f, "{}: {}", self.pod.id(), self.status)
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
            .map(|n| Decision {
                pod: crate::Pod::new(n, "ml", n),
                status: Status::success(),
            })
            .to_vec();
        DecisionSink::deliver_all(&sink, decisions);
        assert_eq!(*seen.lock(), ["x", "y"]);
    }
}
