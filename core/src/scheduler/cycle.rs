use crate::gang::GroupKey;
use crate::queue::Popped;
use crate::{Cause, GangCycle, Pod, PodId, Status, Time};

use super::parts::Parts;
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
    /// A pod-group cycle ([`GangCycle::PodGroup`](super::GangCycle::PodGroup)): the popped
    /// member and the siblings it brought, placed together on one snapshot. Admitted, each
    /// placed member has its binding cycle queued (Hardened: allowed at once; Upstream: after
    /// its own Permit, the first ones waiting until the quorum member passes in this cycle);
    /// not admitted, every member is back in the queue and nothing is reserved (I9).
    PodGroup {
        /// The group.
        group: GroupKey,
        /// Whether the gang was admitted.
        admitted: bool,
        /// The group's status: success when admitted, else why not — kube-scheduler 1.36's
        /// "pod group is unschedulable", Hardened's quorum message, or the error that stopped
        /// the cycle. Its condition: [`pod_group_scheduled`](CycleOutcome::pod_group_scheduled).
        status: Status,
        /// What became of each member, in placing order.
        members: Vec<CycleOutcome>,
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
        self.schedule_on(&mut self.parts(), popped, now)
    }

    /// [`schedule`](Self::schedule) on `parts`: the scheduler's own, or those parts with a
    /// flaw planted (`checking::start_with_flaw`).
    pub(crate) fn schedule_on<P: Parts>(
        &self,
        parts: &mut P,
        popped: Popped,
        now: Time,
    ) -> CycleOutcome {
        let pod = popped.info.pod().clone();
        let group = pod.group_key().cloned();
        let (outcome, pods) = match group {
            Some(group) if self.inner.config.gang_cycle == GangCycle::PodGroup => {
                Self::run_pod_group_cycle(parts, popped, group, now)
            }
            _ => (Self::run_cycle(parts, popped, now), vec![pod]),
        };
        self.deliver_cycle_outcome(&outcome, &pods);
        outcome
    }

    /// Delivers what a cycle did to each pod whose attempt it ended (`pods`: the cycle's),
    /// once no lock is held.
    fn deliver_cycle_outcome(&self, outcome: &CycleOutcome, pods: &[Pod]) {
        let pod_of = |id: &PodId| pods.iter().find(|p| p.id() == id).cloned();
        let delivered = match outcome {
            CycleOutcome::Unschedulable { pod, status } => pod_of(pod).map(|pod| {
                let status = status.clone();
                PodOutcome::Unschedulable { pod, status }
            }),
            CycleOutcome::Released { pod, status, cause } => pod_of(pod).map(|pod| {
                let (status, cause) = (status.clone(), *cause);
                PodOutcome::Rejected { pod, status, cause }
            }),
            CycleOutcome::Dropped { pod } => pod_of(pod).map(|pod| PodOutcome::Dropped { pod }),
            CycleOutcome::PodGroup { members, .. } => {
                for member in members {
                    self.deliver_cycle_outcome(member, pods);
                }
                None
            }
            CycleOutcome::Allowed { .. }
            | CycleOutcome::Waiting { .. }
            | CycleOutcome::Rejected { .. } => None,
        };
        if let Some(delivered) = delivered {
            self.deliver(delivered);
        }
    }

    /// The pod-group cycle of `popped`, a member of `group` (`scheduler/steps/pod_group.rs`),
    /// and the members it took.
    fn run_pod_group_cycle<P: Parts>(
        parts: &mut P,
        popped: Popped,
        group: GroupKey,
        now: Time,
    ) -> (CycleOutcome, Vec<Pod>) {
        let _span = tracing::debug_span!("pod_group_cycle", gang = %group).entered();
        let pod = popped.info.pod().clone();
        match steps::gather(parts, popped, group, now) {
            Err(outcome) => (outcome, vec![pod]),
            Ok(gathered) => {
                let pods = gathered.members.iter().map(|m| m.info.pod().clone());
                let pods = pods.collect();
                let simulation = steps::simulate(parts, gathered);
                (steps::commit(parts, simulation, now), pods)
            }
        }
    }

    fn run_cycle<P: Parts>(parts: &mut P, popped: Popped, now: Time) -> CycleOutcome {
        let pod = popped.info.pod().clone();
        // The node is recorded once placed; Permit's decision is the gang plugin's event.
        let span = tracing::debug_span!(
            "scheduling_cycle",
            pod = %pod.id(),
            gang = pod.group(),
            node = tracing::field::Empty
        )
        .entered();
        match steps::place_and_reserve(parts, popped, now) {
            Err(outcome) => outcome,
            Ok(Placed::Unfit { pod, status }) => steps::hand_back_unfit(parts, pod, status, now),
            Ok(Placed::Reserved { pod, node } | Placed::Permitted { pod, node }) => {
                span.record("node", &*node);
                let (outcome, late) = steps::permit(parts, pod, node, now);
                if let Some(Placed::Permitted { pod, node }) = late {
                    steps::record_late(parts, &pod, node, now);
                }
                outcome
            }
        }
    }
}
