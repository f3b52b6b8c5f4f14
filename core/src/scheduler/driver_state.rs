//! The scheduler driver's own state, as pure data: the pods between their scheduling cycle and
//! the end of their binding cycle, the decisions waiting for a binding cycle, the counters and
//! whether the scheduler was shut down. The scheduler keeps it behind one lock; the model
//! checker keeps it in its states, with a job queue of any order and no counters.

use std::collections::{BTreeMap, BTreeSet};

use super::jobs::{FifoJobs, Job, JobQueue};
use super::tally::{SchedulerTally, Tally};
use crate::sync::Arc;
use crate::GroupKey;
use crate::{Cause, Decision, Pod, PodId, Status, Time};

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

/// A gang the Hardened pod-group cycle admitted whose members' binding cycles have not all
/// begun: the one deadline that bounds its binding (H3), and the members still waiting for a
/// binding cycle — those a bind failure that leaves the gang short of quorum, or the deadline,
/// releases.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AdmittedGroup {
    /// When the members whose binding has not begun are released.
    pub deadline: Time,
    /// The members allowed and not yet in a binding cycle.
    pub unclaimed: BTreeSet<PodId>,
}

/// The driver's state (see the module docs). `J` orders the jobs, `T` counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DriverState<J: JobQueue = FifoJobs, T: Tally = SchedulerTally> {
    assigned: BTreeMap<PodId, Assignment<T::Stamp>>,
    admitted: BTreeMap<GroupKey, AdmittedGroup>,
    jobs: J,
    tally: T,
    shut_down: bool,
    draining: bool,
}

impl<J: JobQueue, T: Tally> Default for DriverState<J, T> {
    fn default() -> Self {
        DriverState {
            assigned: BTreeMap::new(),
            admitted: BTreeMap::new(),
            jobs: J::default(),
            tally: T::default(),
            shut_down: false,
            draining: false,
        }
    }
}

impl<J: JobQueue, T: Tally> DriverState<J, T> {
    #[cfg(any(test, feature = "checking"))]
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
        let group = assignment.pod.group_key().cloned();
        self.leaves_unclaimed(group.as_ref(), id);
        self.assigned.get(id)
    }

    /// Its binding cycle is over: the assignment goes.
    pub fn finish(&mut self, id: &PodId) -> Option<Assignment<T::Stamp>> {
        let assignment = self.assigned.remove(id)?;
        self.leaves_unclaimed(assignment.pod.group_key(), id);
        Some(assignment)
    }

    /// The Hardened pod-group cycle admitted `group`, its members `members` recorded and
    /// allowed: their binding is bounded by `deadline` (H3). A gang still binding an earlier
    /// attempt's members (a member came back alone and was admitted beside them) keeps one
    /// entry: both attempts' members, the earlier deadline.
    pub fn admit_group(
        &mut self,
        group: GroupKey,
        members: impl IntoIterator<Item = PodId>,
        deadline: Time,
    ) {
        let members: BTreeSet<PodId> = members.into_iter().collect();
        if members.is_empty() {
            return;
        }
        let admitted = self.admitted.entry(group).or_insert(AdmittedGroup {
            deadline,
            unclaimed: BTreeSet::new(),
        });
        admitted.deadline = admitted.deadline.min(deadline);
        admitted.unclaimed.extend(members);
    }

    /// Whether `group` is an admitted gang whose members' binding has not all begun.
    pub fn is_admitted(&self, group: &GroupKey) -> bool {
        self.admitted.contains_key(group)
    }

    /// The admitted gangs whose members' binding has not all begun.
    pub fn admitted_groups(&self) -> impl Iterator<Item = (&GroupKey, &AdmittedGroup)> {
        self.admitted.iter()
    }

    /// The earliest deadline of an admitted gang's binding.
    pub fn next_binding_deadline(&self) -> Option<Time> {
        self.admitted.values().map(|g| g.deadline).min()
    }

    /// The admitted gangs whose binding deadline has passed at `now`.
    pub fn binding_deadlines_due(&self, now: Time) -> Vec<GroupKey> {
        self.admitted
            .iter()
            .filter(|(_, g)| g.deadline <= now)
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// The admitted gang `group` is released: each member still waiting for its binding
    /// cycle (allowed, its job not taken by a worker, not deleted) has its allowed decision replaced by a rejection with
    /// `status` and `cause`, marked, so that the first of their binding cycles hands them all
    /// back together (H2); the gang's deadline goes. Returns the members rejected.
    pub fn release_admitted(
        &mut self,
        group: &GroupKey,
        status: &Status,
        cause: Cause,
    ) -> Vec<Pod> {
        let Some(admitted) = self.admitted.remove(group) else {
            return Vec::new();
        };
        let mut released = Vec::with_capacity(admitted.unclaimed.len());
        for id in admitted.unclaimed {
            let Some(a) = self.assigned.get_mut(&id) else {
                continue;
            };
            // A worker that took the allowed job (`next_job`) has claimed it: its binding cycle
            // has begun and stays (found by loom, loom_pod_group_release's d2: rejected here,
            // the member still bound and left a stale rejection behind).
            if a.claimed || a.deleted || a.rejected {
                continue;
            }
            let Some(job) = self.jobs.take(&id) else {
                continue;
            };
            a.rejected = true;
            let pod = a.pod.clone();
            let waited = job.waited;
            let decision = Decision::new(pod.clone(), status.clone(), cause);
            self.jobs.push(Job { decision, waited });
            released.push(pod);
        }
        released
    }

    /// Pod `id` of `group` is no longer waiting for a binding cycle of its admitted gang.
    fn leaves_unclaimed(&mut self, group: Option<&GroupKey>, id: &PodId) {
        let Some(group) = group else { return };
        if let Some(admitted) = self.admitted.get_mut(group) {
            admitted.unclaimed.remove(id);
            if admitted.unclaimed.is_empty() {
                self.admitted.remove(group);
            }
        }
    }

    /// H2: the members of `pod`'s gang whose rejection is marked leave with `pod`'s binding
    /// cycle — their assignments and their jobs together, so no later binding cycle acts on a
    /// decision of an attempt already handed back. Deleted members, and members whose own
    /// binding cycle has begun (which ends them), stay. Each comes with its rejection, unless
    /// a worker had already taken its job (its binding cycle, about to claim it, will find
    /// nothing to do).
    pub fn take_rejected_siblings(
        &mut self,
        pod: &Pod,
    ) -> Vec<(Assignment<T::Stamp>, Option<Decision>)> {
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
                let decision = self.jobs.take(id).map(|job| job.decision);
                Some((self.finish(id)?, decision))
            })
            .collect()
    }

    /// The pods in binding, in id order.
    pub fn in_binding(&self) -> impl Iterator<Item = &PodId> {
        self.assigned.keys()
    }

    #[cfg(feature = "checking")]
    /// Every assignment, in pod id order.
    pub fn assignments(&self) -> impl Iterator<Item = (&PodId, &Assignment<T::Stamp>)> {
        self.assigned.iter()
    }

    /// The decisions waiting for a binding cycle.
    pub fn jobs(&self) -> &J {
        &self.jobs
    }

    /// The next job, in the queue's order, its pod's assignment claimed in the same critical
    /// section: the worker that takes a decision owns that attempt's binding cycle from here,
    /// so no sibling's hand-back (H2) or release takes the assignment from under it, and no
    /// decision outlives its attempt to meet the pod's next one. (Found by loom,
    /// `loom_pod_group_release`'s d2: a worker held a sibling's rejection unclaimed while a
    /// failed bind's hand-back took the sibling, which came back, was admitted again, and had
    /// its new attempt ended by the old rejection.) A job whose pod is not in binding or is
    /// claimed already — none while [`check`](Self::check) holds — is dropped.
    pub fn next_job(&mut self) -> Option<Job> {
        while let Some(job) = self.jobs.pop() {
            if self.claim(job.decision.pod.id()).is_some() {
                return Some(job);
            }
        }
        None
    }

    #[cfg(any(test, feature = "checking"))]
    /// Pod `id`'s job, out of turn (a model checker's binding worker picking it), its
    /// assignment claimed as [`next_job`](Self::next_job) does. `None` if it has no job, or
    /// its pod cannot be claimed (the job is then dropped).
    pub fn take_job(&mut self, id: &PodId) -> Option<Job> {
        let job = self.jobs.take(id)?;
        self.claim(id)?;
        Some(job)
    }

    #[cfg(test)]
    /// Pod `id`'s job, taken without claiming its pod (a test's way to a broken state).
    pub(crate) fn drop_job(&mut self, id: &PodId) -> Option<Job> {
        self.jobs.take(id)
    }

    /// The assignment of pod `id` if a binding cycle has claimed it (the worker that took its
    /// job, [`next_job`](Self::next_job)).
    pub fn claimed(&self, id: &PodId) -> Option<&Assignment<T::Stamp>> {
        self.assigned.get(id).filter(|a| a.claimed)
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

    #[cfg(feature = "checking")]
    /// The same state with its assignments and jobs replaced (a renaming's images).
    pub(crate) fn map_parts(
        &self,
        assigned: impl FnOnce(
            &BTreeMap<PodId, Assignment<T::Stamp>>,
        ) -> BTreeMap<PodId, Assignment<T::Stamp>>,
        admitted: impl FnOnce(&BTreeMap<GroupKey, AdmittedGroup>) -> BTreeMap<GroupKey, AdmittedGroup>,
        jobs: impl FnOnce(&J) -> J,
    ) -> DriverState<J, T> {
        DriverState {
            assigned: assigned(&self.assigned),
            admitted: admitted(&self.admitted),
            jobs: jobs(&self.jobs),
            tally: self.tally.clone(),
            shut_down: self.shut_down,
            draining: self.draining,
        }
    }

    /// Verifies the driver's own invariants: every job names a pod in binding, not claimed
    /// by a binding cycle, whose rejection mark agrees with it. `Err` names the first
    /// violation.
    pub fn check(&self) -> Result<(), String> {
        for job in self.jobs.jobs() {
            let id = job.decision.pod.id();
            let Some(assignment) = self.assigned.get(id) else {
                return Err(format!("{id} has a decision but is not in binding"));
            };
            if assignment.claimed {
                return Err(format!(
                    "{id} has a decision waiting but its binding cycle has begun"
                ));
            }
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
