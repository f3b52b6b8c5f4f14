//! The scheduler driver's own state, as pure data: the pods between their scheduling cycle and
//! the end of their binding cycle, the decisions waiting for a binding cycle, the counters and
//! whether the scheduler was shut down. The scheduler keeps it behind one lock; the model
//! checker keeps it in its states, with a job queue of any order and no counters.

use std::collections::BTreeMap;

use super::jobs::{FifoJobs, Job, JobQueue};
use super::tally::{SchedulerTally, Tally};
use crate::sync::Arc;
use crate::{Decision, Pod, PodId, Time};

/// A pod that passed its scheduling cycle: what its binding cycle needs (its queue record
/// stays the queue's, which hands it back with it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Assignment<S> {
    /// The pod (a shared handle), so a sibling's hand-back can release it (H2).
    pub pod: Pod,
    /// The node it is assumed on.
    pub node: Arc<str>,
    /// When it was recorded (what its Permit wait is measured from).
    pub since: S,
    /// The pod was deleted before its binding cycle ended: it must not come back.
    pub deleted: bool,
    /// Its Permit rejection has been delivered (before its binding cycle runs), so the first
    /// binding cycle of a failed gang attempt can hand back every rejected member together
    /// (H2).
    pub rejected: bool,
    /// A binding cycle has begun for it: that cycle, and no other, ends it.
    pub claimed: bool,
}

/// The driver's state (see the module docs). `J` orders the jobs, `T` counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DriverState<J: JobQueue = FifoJobs, T: Tally = SchedulerTally> {
    assigned: BTreeMap<PodId, Assignment<T::Stamp>>,
    jobs: J,
    tally: T,
    shut_down: bool,
    draining: bool,
}

impl<J: JobQueue, T: Tally> Default for DriverState<J, T> {
    fn default() -> Self {
        DriverState {
            assigned: BTreeMap::new(),
            jobs: J::default(),
            tally: T::default(),
            shut_down: false,
            draining: false,
        }
    }
}

impl<J: JobQueue, T: Tally> DriverState<J, T> {
    /// Nothing assigned, no job, nothing counted.
    pub fn new() -> Self {
        Self::default()
    }

    /// A scheduling cycle records what the binding cycle will need, before Permit runs: a
    /// decision can come the instant Permit registers the pod, from any thread.
    pub fn record(&mut self, pod: &Pod, node: Arc<str>, now: Time) {
        let id = pod.id().clone();
        let assignment = Assignment {
            pod: pod.clone(),
            node,
            since: T::stamp(now),
            deleted: false,
            rejected: false,
            claimed: false,
        };
        self.assigned.insert(id, assignment);
    }

    /// A decision reached the driver (from Permit itself, `waited` false, or from the waiting
    /// map): a rejection is marked on the pod's assignment at once — before any binding cycle
    /// runs, so the first binding cycle of a failed gang attempt finds its rejected siblings
    /// (H2) — and the decision joins the jobs.
    pub fn decision_delivered(&mut self, decision: Decision, waited: bool) {
        if !decision.cause.is_allowed() {
            if let Some(assignment) = self.assigned.get_mut(decision.pod.id()) {
                assignment.rejected = true;
            }
        }
        self.jobs.push(Job { decision, waited });
    }

    /// The pod was deleted while in binding: its binding cycle must not bring it back.
    /// `false` if it is not in binding.
    pub fn mark_deleted(&mut self, id: &PodId) -> bool {
        match self.assigned.get_mut(id) {
            Some(assignment) => {
                assignment.deleted = true;
                true
            }
            None => false,
        }
    }

    /// The assignment of pod `id`, if it is in binding.
    pub fn assignment(&self, id: &PodId) -> Option<&Assignment<T::Stamp>> {
        self.assigned.get(id)
    }

    /// A binding cycle begins for pod `id`: its assignment is claimed, so that no gang's
    /// hand-back takes it from under the cycle, and returned. `None` if the pod is not in
    /// binding or another cycle has it (a stale or foreign decision).
    pub fn claim(&mut self, id: &PodId) -> Option<&Assignment<T::Stamp>> {
        let assignment = self.assigned.get_mut(id).filter(|a| !a.claimed)?;
        assignment.claimed = true;
        Some(assignment)
    }

    /// Its binding cycle is over: the assignment goes.
    pub fn finish(&mut self, id: &PodId) -> Option<Assignment<T::Stamp>> {
        self.assigned.remove(id)
    }

    /// H2: the members of `pod`'s gang whose rejection is marked leave with `pod`'s binding
    /// cycle — their assignments and their jobs together, so no later binding cycle acts on a
    /// decision of an attempt already handed back. Deleted members, and members whose own
    /// binding cycle has begun (which ends them), stay.
    pub fn take_rejected_siblings(&mut self, pod: &Pod) -> Vec<Assignment<T::Stamp>> {
        let ids: Vec<PodId> = self
            .assigned
            .iter()
            .filter(|(id, a)| {
                *id != pod.id() && a.rejected && !a.deleted && !a.claimed && same_group(&a.pod, pod)
            })
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter()
            .filter_map(|id| {
                self.jobs.take(id);
                self.assigned.remove(id)
            })
            .collect()
    }

    /// The pods in binding, in id order.
    pub fn in_binding(&self) -> impl Iterator<Item = &PodId> {
        self.assigned.keys()
    }

    /// Every assignment, in pod id order.
    pub fn assignments(&self) -> impl Iterator<Item = (&PodId, &Assignment<T::Stamp>)> {
        self.assigned.iter()
    }

    /// The decisions waiting for a binding cycle.
    pub fn jobs(&self) -> &J {
        &self.jobs
    }

    /// The next job, in the queue's order.
    pub fn next_job(&mut self) -> Option<Job> {
        self.jobs.pop()
    }

    /// Pod `id`'s job, out of turn (a model checker's binding worker picking it).
    pub fn take_job(&mut self, id: &PodId) -> Option<Job> {
        self.jobs.take(id)
    }

    /// The counters.
    pub fn tally(&self) -> &T {
        &self.tally
    }

    /// The counters, to count.
    pub fn tally_mut(&mut self) -> &mut T {
        &mut self.tally
    }

    /// Whether the scheduler was shut down (events are refused).
    pub fn is_shut_down(&self) -> bool {
        self.shut_down
    }

    /// The scheduler shuts down: events are refused from now on.
    pub fn shut_down(&mut self) {
        self.shut_down = true;
    }

    /// Whether binding workers should stop once the jobs run out.
    pub fn is_draining(&self) -> bool {
        self.draining
    }

    /// Binding workers stop once the jobs run out.
    pub fn drain(&mut self) {
        self.draining = true;
    }

    /// The same state with its assignments and jobs replaced (a renaming's images).
    pub(crate) fn map_parts(
        &self,
        assigned: impl FnOnce(
            &BTreeMap<PodId, Assignment<T::Stamp>>,
        ) -> BTreeMap<PodId, Assignment<T::Stamp>>,
        jobs: impl FnOnce(&J) -> J,
    ) -> DriverState<J, T> {
        DriverState {
            assigned: assigned(&self.assigned),
            jobs: jobs(&self.jobs),
            tally: self.tally.clone(),
            shut_down: self.shut_down,
            draining: self.draining,
        }
    }

    /// Verifies the driver's own invariants: every job names a pod in binding whose rejection
    /// mark agrees with it. `Err` names the first violation.
    pub fn check(&self) -> Result<(), String> {
        for job in self.jobs.jobs() {
            let id = job.decision.pod.id();
            let Some(assignment) = self.assigned.get(id) else {
                return Err(format!("{id} has a decision but is not in binding"));
            };
            if assignment.rejected == job.decision.cause.is_allowed() {
                return Err(format!(
                    "{id}: its rejection mark ({}) disagrees with its decision ({})",
                    assignment.rejected, job.decision.cause
                ));
            }
        }
        Ok(())
    }
}

/// Whether `a` and `b` name the same pod group.
fn same_group(a: &Pod, b: &Pod) -> bool {
    a.group_key().is_some() && a.group_key() == b.group_key()
}
