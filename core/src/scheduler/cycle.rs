use crate::queue::Popped;
use crate::{Cause, PodId, Status, Time};

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
    /// Rejected at Permit; its binding cycle releases it (`Mode::Hardened`, so that a failed
    /// gang goes back whole, H2).
    Rejected {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
    },
    /// Rejected at Permit and released in this very cycle — unreserved, forgotten and back in
    /// the queue — as kube-scheduler's scheduling cycle does (`Mode::Upstream`). No binding
    /// cycle runs for it; its [`PodOutcome::Rejected`] is delivered when the cycle ends.
    Released {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
        /// Why it was rejected.
        cause: Cause,
    },
    /// Rejected at Permit in this cycle after it was deleted (`Mode::Upstream`): released and
    /// gone, its [`PodOutcome::Dropped`] delivered when the cycle ends.
    Dropped {
        /// The pod.
        pod: PodId,
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
    /// decision can miss it; a pod that passes at Permit gets its binding cycle queued
    /// ([`run_binding_cycles`](Self::run_binding_cycles)), and so does one rejected there in
    /// `Mode::Hardened` (`Mode::Upstream` releases it in the cycle). `None`: nothing to pop.
    pub fn schedule_one(&self, now: Time) -> Option<CycleOutcome> {
        let popped = self.inner.queue.try_pop()?;
        Some(self.schedule(popped, now))
    }

    /// The scheduling cycle of `popped`: its steps back to back (`scheduler/steps/cycle.rs`);
    /// a pod that goes back unschedulable, or is released at Permit, is an outcome, delivered
    /// once no lock is held.
    pub(super) fn schedule(&self, popped: Popped, now: Time) -> CycleOutcome {
        let pod = popped.info.pod().clone();
        let outcome = self.run_cycle(popped, now);
        match &outcome {
            CycleOutcome::Unschedulable { status, .. } => {
                let status = status.clone();
                self.deliver(PodOutcome::Unschedulable { pod, status });
            }
            CycleOutcome::Released { status, cause, .. } => {
                let (status, cause) = (status.clone(), *cause);
                self.deliver(PodOutcome::Rejected { pod, status, cause });
            }
            CycleOutcome::Dropped { .. } => self.deliver(PodOutcome::Dropped { pod }),
            CycleOutcome::Allowed { .. }
            | CycleOutcome::Waiting { .. }
            | CycleOutcome::Rejected { .. } => {}
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
