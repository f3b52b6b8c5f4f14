use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::gang::GANG_SCHEDULING;
use crate::sync::Arc;
use crate::{Cause, GangScheduling, GroupKey, Pod, PodGroup, PodId, SchedulingQueue, Status};
use crate::{GangCycle, Mode, PermitPlugins};
use crate::{Time, WaitingPods};

use super::jobs::Job;
use super::locked::{Driver, SchedulerParts, StepGate};
use super::parts::Parts;
use super::steps;
use super::{
    AddGroupError, AddNodeError, AddPodError, Binder, Cache, DeleteGroupError, DeletePodError,
    InMemoryBinder, Node, OutcomeSink, Placement, PodOutcome, PodPhase, RemoveNodeError,
    ResourceFit, SchedulerConfig, SchedulerStats, UpdateGroupError, UpdateNodeError,
    UpdatePodError, Violation,
};
use crate::panic_message::panic_message;

/// A gang-scheduling core an embedder drives: the scheduling queue with the gang plugin's
/// PreEnqueue and hints, the group registry, the waiting-pod map, a cache of node reservations,
/// a [`Placement`] that picks nodes and a [`Binder`] that binds.
///
/// Cluster events come in through `add_pod`, `update_pod`, `delete_pod`, `add_group`, … in
/// upstream's order (group registry, then cache, then queue). A scheduling cycle
/// ([`schedule_one`](Self::schedule_one)) pops a pod, places, assumes, reserves and runs
/// Permit; a pod that passes Permit — at once or after waiting — reaches its binding cycle
/// ([`run_binding_cycles`](Self::run_binding_cycles)) through the driver's job queue, without
/// a thread per waiting pod. [`start`](Self::start) runs all of it on threads with timers;
/// without it the embedder (or `gangway simulate`, in virtual time) calls the steps itself.
///
/// Every step is one function over the scheduler's parts (`scheduler/steps/`), the same code
/// the model checker runs on its own states (docs/verification.md).
///
/// Keeps I4 (each pod in one place: queue, waiting, binding or bound), I5 (node reservations
/// equal the assumed and bound pods) and I6 (a failed binding cycle releases the reservation).
#[derive(Clone)]
pub struct Scheduler {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(super) config: SchedulerConfig,
    pub(super) gang: GangScheduling,
    pub(super) queue: SchedulingQueue,
    pub(super) cache: Cache,
    pub(super) placement: Arc<dyn Placement>,
    pub(super) binder: Arc<dyn Binder>,
    /// The embedder's Permit plugins besides the gang's.
    pub(super) permit_plugins: PermitPlugins,
    /// Where every pod's outcome goes.
    pub(super) outcomes: Arc<dyn OutcomeSink>,
    /// The driver's own state, shared with the waiting map's sink.
    pub(crate) driver: Arc<Driver>,
    /// See [`StepGate`]: what makes [`Scheduler::check`] safe while the threads run.
    pub(super) step_gate: StepGate,
}

impl Scheduler {
    /// A scheduler with the default [`ResourceFit`] placement and an [`InMemoryBinder`].
    pub fn new(config: SchedulerConfig) -> Scheduler {
        Scheduler::with(config, ResourceFit, InMemoryBinder::default())
    }

    /// A scheduler with your own placement and binder (and no outcome sink: see
    /// [`builder`](Scheduler::builder)).
    pub fn with(
        config: SchedulerConfig,
        placement: impl Placement + 'static,
        binder: impl Binder + 'static,
    ) -> Scheduler {
        Scheduler::builder(config)
            .placement(placement)
            .binder(binder)
            .build()
    }

    /// The configuration.
    pub fn config(&self) -> &SchedulerConfig {
        &self.inner.config
    }

    /// The scheduling queue.
    pub fn queue(&self) -> &SchedulingQueue {
        &self.inner.queue
    }

    /// The gang plugin (with the group registry).
    pub fn gang(&self) -> &GangScheduling {
        &self.inner.gang
    }

    /// The waiting-pod map.
    pub fn waiting(&self) -> &WaitingPods {
        self.inner.gang.waiting()
    }

    /// The cache of node reservations.
    pub fn cache(&self) -> &Cache {
        &self.inner.cache
    }

    /// Counters so far (a copy of a few integers: cheap to poll).
    pub fn stats(&self) -> SchedulerStats {
        self.inner.driver.read(|d| d.tally().stats)
    }

    /// For each pod that reached its binding cycle, how long it waited at Permit, in
    /// nanoseconds (zero when it was allowed at once), in the order the decisions came.
    pub fn permit_waits(&self) -> Vec<u64> {
        self.inner.driver.read(|d| d.tally().permit_waits.clone())
    }

    /// Pods between their scheduling cycle and the end of their binding cycle.
    pub fn in_binding(&self) -> Vec<PodId> {
        self.inner
            .driver
            .read(|d| d.in_binding().cloned().collect())
    }

    /// Whether [`shutdown`](super::RunningScheduler::shutdown) or
    /// [`close`](Self::close) was called.
    pub fn is_shut_down(&self) -> bool {
        self.inner.driver.read(|d| d.is_shut_down())
    }

    /// Stops taking events and closes the queue (a blocked `pop` returns). Pods still waiting
    /// at Permit are rejected for [`Cause::ShutDown`], so every waiter wakes and every
    /// reservation is released by its binding cycle.
    pub fn close(&self) {
        self.inner.driver.with(|d| d.shut_down());
        self.inner.queue.close();
        let shut_down = Status::unschedulable("scheduler shut down").with_plugin(GANG_SCHEDULING);
        for waiting in self.waiting().snapshot() {
            self.waiting()
                .reject_for(waiting.id(), shut_down.clone(), Cause::ShutDown);
        }
    }

    /// A pod was created (or first seen). Unbound: the group registry learns it, then the queue
    /// (gated by PreEnqueue if its gang is incomplete), and its gated siblings are asked again.
    /// Bound (it names a node): the registry counts it assigned and the cache reserves its
    /// resources. Refused, handing the pod back, before anything changes.
    pub fn add_pod(&self, pod: Pod, now: Time) -> Result<(), AddPodError> {
        steps::pod_added(&mut self.parts(), pod, now)
    }

    /// A pod's object changed. Newly naming a node: the binding is observed (the cache and
    /// registry count it bound). Otherwise the registry and the queue see the new object.
    pub fn update_pod(&self, old: Pod, new: Pod, now: Time) -> Result<(), UpdatePodError> {
        steps::pod_updated(&mut self.parts(), old, new, now)
    }

    /// A pod was deleted. It leaves its group (Hardened: a waiting gang attempt fails whole)
    /// and the queue; if it was waiting at Permit its entry is rejected, so its binding cycle
    /// releases the reservation (I6); if it was bound, its resources are freed and announced.
    /// `Ok(false)`: the pod was unknown (no-op).
    pub fn delete_pod(&self, pod: &Pod, now: Time) -> Result<bool, DeletePodError> {
        steps::pod_deleted(&mut self.parts(), pod, now)
    }

    /// A PodGroup object was created; its gated members are asked again.
    pub fn add_group(&self, group: PodGroup, now: Time) -> Result<(), AddGroupError> {
        steps::group_added(&mut self.parts(), group, now)
    }

    /// A PodGroup object changed (e.g. its min count); its gated members are asked again.
    pub fn update_group(&self, group: PodGroup, now: Time) -> Result<(), UpdateGroupError> {
        steps::group_updated(&mut self.parts(), group, now)
    }

    /// A PodGroup object was deleted; `Ok(false)` if it did not exist.
    pub fn delete_group(&self, key: &GroupKey) -> Result<bool, DeleteGroupError> {
        steps::group_deleted(&mut self.parts(), key)
    }

    /// A node joined: pods that found no room are asked again.
    pub fn add_node(&self, node: Node, now: Time) -> Result<(), AddNodeError> {
        steps::node_added(&mut self.parts(), node, now)
    }

    /// A node changed — capacity, labels or taints (a cordon is a taint): the cache keeps the
    /// pods on it, and pods that found no node are asked again. `Ok(false)`: nothing changed.
    pub fn update_node(&self, node: Node, now: Time) -> Result<bool, UpdateNodeError> {
        steps::node_updated(&mut self.parts(), node, now)
    }

    /// A node left: nothing is placed there any more. The pods assumed on or bound to it are
    /// returned; they keep their room there until their own deletes (or forgets) come, as in
    /// kube-scheduler's cache, so a node of the name that comes back first has them again.
    /// `NodeDelete` is announced: a pod rejected by a plugin without queueing hints (an
    /// embedder's Permit plugin) is tried again.
    pub fn delete_node(&self, name: &str, now: Time) -> Result<Vec<PodId>, RemoveNodeError> {
        steps::node_deleted(&mut self.parts(), name, now)
    }

    /// Verifies the cache's accounting (I5), the queue's places (I4), the driver's jobs, and
    /// that every assumed pod is in a binding cycle (I6). Safe at any time, also while
    /// [`start`](Self::start)'s threads run: it waits for the steps that move a pod between
    /// components in several critical sections (a scheduling cycle's assume-to-record, a
    /// binding cycle's end) to finish, and holds new ones off while it copies the states, so a
    /// pod half way through such a step is never reported. Those steps run no user code, so
    /// the wait is short; a placement or binder still running is not waited for.
    pub fn check(&self) -> Result<(), Violation> {
        let _quiet = self.inner.step_gate.quiet();
        self.check_now()
    }

    /// [`check`](Self::check) without waiting: the states as they are, a step half done
    /// included (the checkers' witness that the wait is needed).
    pub(crate) fn check_now(&self) -> Result<(), Violation> {
        let cache = self.inner.cache.snapshot();
        let queue = self.inner.queue.snapshot();
        let driver = self.inner.driver.snapshot();
        super::check::check(&cache, &queue, &driver)?;
        // I9 holds at every step only where the pod-group cycle admits a gang in one step.
        let config = &self.inner.config;
        if config.gang_cycle == GangCycle::PodGroup && config.mode == Mode::Hardened {
            let waiting = self.waiting_for_gang();
            super::check::check_no_hold_and_wait(&driver, &waiting)?;
            if driver.admitted_groups().next().is_some() {
                let groups = self.inner.gang.registry().snapshot();
                super::check::check_no_short_gang_binding(&driver, |key| groups.get(key))?;
            }
        }
        Ok(())
    }

    /// I9: the pods holding a node reservation while they wait at Permit for their gang. With
    /// [`GangCycle::PodGroup`] none between scheduling cycles (Hardened: at every step, and
    /// [`check`](Self::check) verifies it); with the Permit barrier, every member that waits.
    pub fn held_and_waiting(&self) -> Vec<PodId> {
        let _quiet = self.inner.step_gate.quiet();
        let driver = self.inner.driver.snapshot();
        super::check::held_and_waiting(&driver, &self.waiting_for_gang())
    }

    /// The pods waiting at Permit for the gang plugin.
    fn waiting_for_gang(&self) -> Vec<PodId> {
        let mut ids = Vec::new();
        self.waiting().for_each(|w| {
            if w.pending_plugins().contains(&GANG_SCHEDULING) {
                ids.push(w.id().clone());
            }
        });
        ids
    }

    /// Pods assumed on a node with no binding cycle to end their reservation (I6: empty);
    /// like [`check`](Self::check), it never counts a pod half way through a step.
    pub fn leaked_reservations(&self) -> Vec<PodId> {
        let _quiet = self.inner.step_gate.quiet();
        let cache = self.inner.cache.snapshot();
        let driver = self.inner.driver.snapshot();
        super::check::leaked(&cache, &driver)
    }

    /// Hands `outcome` to the sink — no lock is held — catching and counting its panic.
    pub(super) fn deliver(&self, outcome: PodOutcome) {
        let sink = &self.inner.outcomes;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| sink.deliver(outcome))) {
            self.inner
                .caught_panic("outcome sink", &panic_message(&*panic));
        }
    }

    /// Runs `job`'s binding cycle on `parts` and delivers its outcomes.
    pub(super) fn bind_job<P: Parts>(&self, parts: &mut P, job: Job, now: Time) {
        let outcome = steps::binding_cycle(parts, job, now);
        for outcome in outcome.pod_outcomes() {
            self.deliver(outcome);
        }
    }

    /// Whether pod `id` is bound in the cache.
    pub fn is_bound(&self, id: &PodId) -> bool {
        self.inner.cache.with(|c| c.phase(id)) == Some(PodPhase::Bound)
    }

    /// The scheduler's parts behind their locks, for its steps.
    pub(crate) fn parts(&self) -> SchedulerParts<'_> {
        SchedulerParts::new(&self.inner)
    }
}
