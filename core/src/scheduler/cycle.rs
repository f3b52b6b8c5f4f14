use crate::queue::Popped;
use crate::{PodId, Status, Time};

use super::steps::{self, Placed};
use super::{PodOutcome, Scheduler};

/// What one scheduling cycle did with the pod it popped.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CycleOutcome {
    /// Placed and allowed at once: its binding cycle is queued.
    Allowed {
        /// The pod.
        pod: PodId,
        /// The node it is assumed on.
        node: String,
    },
    /// Placed; it waits at Permit for its gang.
    Waiting {
        /// The pod.
        pod: PodId,
        /// The node it is assumed on.
        node: String,
    },
    /// Rejected at Permit; its binding cycle releases it.
    Rejected {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
    },
    /// No node fits, or reserving failed: handed back to the queue.
    Unschedulable {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
    },
}

impl Scheduler {
    /// One scheduling cycle, if a pod is active: pop, place, assume, reserve, Permit. A pod
    /// that waits is registered in the waiting map before this returns, so no sibling's
    /// decision can miss it; a pod that passes or is rejected at Permit gets its binding cycle
    /// queued ([`run_binding_cycles`](Self::run_binding_cycles)). `None`: nothing to pop.
    pub fn schedule_one(&self, now: Time) -> Option<CycleOutcome> {
        let popped = self.inner.queue.try_pop()?;
        Some(self.schedule(popped, now))
    }

    /// The scheduling cycle of `popped`: its steps back to back (`scheduler/steps/cycle.rs`);
    /// a pod that goes back unschedulable is an outcome, delivered once no lock is held.
    pub(super) fn schedule(&self, popped: Popped, now: Time) -> CycleOutcome {
        let pod = popped.info.pod().clone();
        let outcome = self.run_cycle(popped, now);
        if let CycleOutcome::Unschedulable { status, .. } = &outcome {
            let status = status.clone();
            self.deliver(PodOutcome::Unschedulable { pod, status });
        }
        outcome
    }

    fn run_cycle(&self, popped: Popped, now: Time) -> CycleOutcome {
        let pod = popped.info.pod().clone();
        // The node is recorded once placed; Permit's decision is the gang plugin's event.
        let span = tracing::debug_span!(
            "scheduling_cycle",
            pod = %pod.id(),
            gang = pod.group(),
            node = tracing::field::Empty
        )
        .entered();
        let mut parts = self.parts();
        match steps::place_and_reserve(&mut parts, popped, now) {
            Err(outcome) => outcome,
            Ok(Placed::Unfit { pod, status }) => {
                steps::hand_back_unfit(&mut parts, pod, status, now)
            }
            Ok(Placed::Reserved { pod, node } | Placed::Permitted { pod, node }) => {
                span.record("node", &*node);
                let (outcome, late) = steps::permit(&mut parts, pod, node, now);
                if let Some(Placed::Permitted { pod, node }) = late {
                    steps::record_late(&mut parts, &pod, node, now);
                }
                outcome
            }
        }
    }
}
