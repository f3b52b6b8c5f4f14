//! The scheduler driven by hand: one call per scheduling cycle, binding cycle or tick of the
//! timers, each the driver's steps (`steps/`) composed on the scheduler's locked parts, at the
//! [`Time`] the caller gives — so a run is deterministic. [`start`](Scheduler::start)
//! (`runner.rs`) runs the same calls on threads.

use crate::queue::Popped;
use crate::{GangCycle, GroupKey, Pod, PodId, Time};

use super::parts::Parts;
use super::steps::{self, Placed};
use super::{CycleOutcome, PodOutcome, Scheduler, Tick};

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
    pub(super) fn deliver_cycle_outcome(&self, outcome: &CycleOutcome, pods: &[Pod]) {
        for delivered in cycle_pod_outcomes(outcome, pods) {
            self.deliver(delivered);
        }
    }

    /// The pod-group cycle of `popped`, a member of `group` (`steps/pod_group_cycle.rs`),
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
            Ok(Placed::Reserved { pod, node }) => {
                span.record("node", &*node);
                steps::permit(parts, pod, node, now)
            }
        }
    }

    /// Runs the binding cycle of every pod whose Permit decision has arrived, on this thread,
    /// in the order the decisions came, without blocking; returns how many ran. For embedders
    /// that drive the scheduler themselves (and for `gangway simulate`'s virtual time);
    /// [`start`](Self::start)'s workers do this on their own threads.
    pub fn run_binding_cycles(&self, now: Time) -> usize {
        let mut ran = 0;
        while self.run_binding_cycle(now) {
            ran += 1;
        }
        ran
    }

    /// Runs the binding cycle of the oldest decision waiting for one, if there is one, on this
    /// thread; `false` if none was waiting. [`run_binding_cycles`](Self::run_binding_cycles)
    /// one at a time, for embedders that interleave them with other work.
    pub fn run_binding_cycle(&self, now: Time) -> bool {
        let Some(job) = self.inner.driver.with(|d| d.next_job()) else {
            return false;
        };
        self.bind_job(&mut self.parts(), job, now);
        true
    }

    /// Applies everything that is due at `now`: permit deadlines (a gang attempt's in
    /// Hardened mode, each waiting pod's in Upstream), the backoff flush and the unschedulable
    /// leftover flush. Decisions it makes reach the binding cycles through their queue.
    /// For embedders driving the scheduler themselves; [`start`](Self::start) runs a timer
    /// thread that does this. Returns what it did: the pods and gang attempts that timed out
    /// (their [`PodOutcome::Rejected`](super::PodOutcome::Rejected) follows from their binding
    /// cycles) and how many pods the flushes moved.
    pub fn tick(&self, now: Time) -> Tick {
        let mut parts = self.parts();
        let (timed_out_pods, timed_out_gangs) = steps::expire_deadlines(&mut parts, now);
        Tick {
            timed_out_pods,
            timed_out_gangs,
            backoff_completed: steps::flush_backoff(&mut parts, now),
            leftover_flushed: steps::flush_leftover(&mut parts, now),
        }
    }

    /// The earliest time at which [`tick`](Self::tick) has work: a permit deadline, a backoff
    /// expiry, or a pod parked in the unschedulable pool for longer than the queue allows.
    pub fn next_deadline(&self) -> Option<Time> {
        [
            steps::next_permit_deadline(&mut self.parts()),
            self.inner.queue.next_backoff_expiry(),
            self.inner.queue.next_leftover_flush(),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

/// What a scheduling cycle's `outcome` tells the embedder, in order: one outcome for each pod
/// of `pods` (the cycle's) sent back unschedulable, released at Permit or dropped; each
/// member's, for a pod-group cycle. Allowed, waiting and rejected pods hear from their binding
/// cycles.
pub(crate) fn cycle_pod_outcomes(outcome: &CycleOutcome, pods: &[Pod]) -> Vec<PodOutcome> {
    let pod_of = |id: &PodId| pods.iter().find(|p| p.id() == id).cloned();
    match outcome {
        CycleOutcome::Unschedulable { pod, status } => pod_of(pod)
            .map(|pod| PodOutcome::Unschedulable {
                pod,
                status: status.clone(),
            })
            .into_iter()
            .collect(),
        CycleOutcome::Released { pod, status, cause } => pod_of(pod)
            .map(|pod| PodOutcome::Rejected {
                pod,
                status: status.clone(),
                cause: *cause,
            })
            .into_iter()
            .collect(),
        CycleOutcome::Dropped { pod } => pod_of(pod)
            .map(|pod| PodOutcome::Dropped { pod })
            .into_iter()
            .collect(),
        CycleOutcome::PodGroup { members, .. } => members
            .iter()
            .flat_map(|member| cycle_pod_outcomes(member, pods))
            .collect(),
        CycleOutcome::Allowed { .. }
        | CycleOutcome::Waiting { .. }
        | CycleOutcome::Rejected { .. } => Vec::new(),
    }
}
