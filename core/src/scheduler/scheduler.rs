use std::collections::BTreeMap;

use crate::gang::GANG_SCHEDULING;
use crate::queue::{ClusterEvent, PluginSet, QueuedPodInfo};
use crate::sync::channel::{self, Receiver, Sender};
use crate::sync::{Arc, Mutex};
use crate::{GangScheduling, GroupKey, Pod, PodGroup, PodId, QueueingHint, SchedulingQueue};
use crate::{Time, WaitingPods};

use super::{
    AddBoundError, Binder, Cache, GroupEventError, InMemoryBinder, Node, NodeEventError, Placement,
    PodEventError, PodPhase, ResourceFit, SchedulerConfig, SchedulerStats,
};

/// A gang-scheduling core an embedder drives: the scheduling queue with the gang plugin's
/// PreEnqueue and hints, the group registry, the waiting-pod map, a cache of node reservations,
/// a [`Placement`] that picks nodes and a [`Binder`] that binds.
///
/// Cluster events come in through `add_pod`, `update_pod`, `delete_pod`, `add_group`, … in
/// upstream's order (group registry, then cache, then queue). A scheduling cycle
/// ([`schedule_one`](Self::schedule_one)) pops a pod, places, assumes, reserves and runs
/// Permit; a pod that passes Permit — at once or after waiting — reaches its binding cycle
/// ([`run_binding_cycles`](Self::run_binding_cycles)) through a channel, without a thread per
/// waiting pod. [`start`](Self::start) runs all of it on threads with timers; without it the
/// embedder (or `gangway simulate`, in virtual time) calls the steps itself.
///
/// Keeps I4 (each pod in one place: queue, waiting, binding or bound), I5 (node reservations
/// equal the assumed and bound pods) and I6 (a failed binding cycle releases the reservation).
#[derive(Clone)]
pub struct Scheduler {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) config: SchedulerConfig,
    pub(super) gang: GangScheduling,
    pub(super) waiting: WaitingPods,
    pub(super) queue: SchedulingQueue,
    pub(super) cache: Cache,
    pub(super) placement: Arc<dyn Placement>,
    pub(super) binder: Arc<dyn Binder>,
    /// Pods between their scheduling cycle and the end of their binding cycle (shared with
    /// the waiting map's decision sink, which marks rejections as they are made).
    pub(super) assigned: Arc<Mutex<BTreeMap<PodId, Assignment>>>,
    pub(super) jobs: Sender<Job>,
    pub(super) job_queue: Receiver<Job>,
    pub(super) stats: Mutex<SchedulerStats>,
    /// Permit waits, apart from the counters so that reading those stays cheap.
    pub(super) permit_waits: Mutex<Vec<u64>>,
    pub(super) shut_down: Mutex<bool>,
}

/// A pod that passed its scheduling cycle: where it goes and its queue record.
pub(super) struct Assignment {
    pub(super) info: QueuedPodInfo,
    pub(super) node: String,
    pub(super) since: Time,
    /// The pod was deleted before its binding cycle ended: it must not come back.
    pub(super) deleted: bool,
    /// Its Permit rejection, marked when the decision is made (before its binding cycle
    /// runs), so the first binding cycle of a failed gang attempt can hand back every
    /// rejected member together (H2).
    pub(super) rejected: bool,
}

/// Work for a binding worker.
pub(super) enum Job {
    /// A pod's Permit decision: allowed or rejected at once (`waited` false), or decided while
    /// it waited in the waiting map.
    Decided {
        /// The decision.
        decision: crate::Decision,
        /// It came from the waiting map (the pod waited at Permit).
        waited: bool,
    },
    /// Stop (one per worker, at shutdown).
    Stop,
}

impl Scheduler {
    /// A scheduler with the default [`ResourceFit`] placement and an [`InMemoryBinder`].
    pub fn new(config: SchedulerConfig) -> Scheduler {
        Scheduler::with(config, ResourceFit, InMemoryBinder::default())
    }

    /// A scheduler with your own placement and binder.
    pub fn with(
        config: SchedulerConfig,
        placement: impl Placement + 'static,
        binder: impl Binder + 'static,
    ) -> Scheduler {
        let (jobs, job_queue) = channel::unbounded();
        let assigned = Arc::new(Mutex::new(BTreeMap::<PodId, Assignment>::new()));
        let sink = jobs.clone();
        let marks = assigned.clone();
        let waiting = WaitingPods::with_sink(move |d: crate::Decision| {
            if !d.status.is_success() {
                if let Some(a) = marks.lock().get_mut(d.pod.id()) {
                    a.rejected = true;
                }
            }
            let _ = sink.send(Job::Decided {
                decision: d,
                waited: true,
            });
        });
        let gang =
            GangScheduling::with_timeout(config.mode, waiting.clone(), config.permit_timeout);
        let plugins = Scheduler::queue_plugins(gang.clone());
        let queue = SchedulingQueue::new(config.queue, Arc::new(plugins));
        Scheduler {
            inner: Arc::new(Inner {
                config,
                gang,
                waiting,
                queue,
                cache: Cache::default(),
                placement: Arc::new(placement),
                binder: Arc::new(binder),
                assigned,
                jobs,
                job_queue,
                stats: Mutex::new(SchedulerStats::default()),
                permit_waits: Mutex::new(Vec::new()),
                shut_down: Mutex::new(false),
            }),
        }
    }

    /// The queue plugins the scheduler runs: `gang`'s PreEnqueue gate and hints, and
    /// NodeResourcesFit's hint (freed room or a new node may help a pod that fit nowhere, I7).
    pub fn queue_plugins(gang: GangScheduling) -> PluginSet {
        let fit_hint = |_: &Pod, _: &ClusterEvent| Ok(QueueingHint::Queue);
        let mut plugins = PluginSet::new().with_gang(gang);
        for kind in ResourceFit::HINT_EVENTS {
            plugins = plugins.with_hint(ResourceFit::PLUGIN, kind, fit_hint);
        }
        plugins
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
        &self.inner.waiting
    }

    /// The cache of node reservations.
    pub fn cache(&self) -> &Cache {
        &self.inner.cache
    }

    /// Counters so far (a copy of a few integers: cheap to poll).
    pub fn stats(&self) -> SchedulerStats {
        *self.inner.stats.lock()
    }

    /// For each pod that reached its binding cycle, how long it waited at Permit, in
    /// nanoseconds (zero when it was allowed at once), in the order the decisions came.
    pub fn permit_waits(&self) -> Vec<u64> {
        self.inner.permit_waits.lock().clone()
    }

    /// Pods between their scheduling cycle and the end of their binding cycle.
    pub fn in_binding(&self) -> Vec<PodId> {
        self.inner.assigned.lock().keys().cloned().collect()
    }

    /// Whether [`shutdown`](super::RunningScheduler::shutdown) or
    /// [`close`](Self::close) was called.
    pub fn is_shut_down(&self) -> bool {
        *self.inner.shut_down.lock()
    }

    /// Stops taking events and closes the queue (a blocked `pop` returns). Pods still waiting
    /// at Permit are rejected, so every waiter wakes.
    pub fn close(&self) {
        *self.inner.shut_down.lock() = true;
        self.inner.queue.close();
        for waiting in self.inner.waiting.snapshot() {
            waiting.reject(GANG_SCHEDULING, "scheduler shut down");
        }
    }

    /// A pod was created (or first seen). Unbound: the group registry learns it, then the queue
    /// (gated by PreEnqueue if its gang is incomplete), and its gated siblings are asked again.
    /// Bound (it names a node): the registry counts it assigned and the cache reserves its
    /// resources.
    pub fn add_pod(&self, pod: Pod, now: Time) -> Result<(), PodEventError> {
        if self.is_shut_down() {
            return Err(PodEventError::ShutDown(pod));
        }
        if self.inner.queue.place(pod.id()).is_some()
            || self.inner.cache.with(|c| c.phase(pod.id()).is_some())
        {
            return Err(PodEventError::AlreadyKnown(pod));
        }
        if let Some(node) = pod.node() {
            // Refused before anything changes; then registry, cache, queue (upstream's order).
            if self.inner.cache.with(|c| c.node(node).is_none()) {
                let (pod, node) = (pod.id().clone(), node.to_owned());
                return Err(AddBoundError::UnknownNode { pod, node }.into());
            }
            self.inner.gang.on_pod_added(pod.clone(), true)?;
            self.inner.cache.add_bound(&pod)?;
            self.moved(ClusterEvent::AssignedPodAdd(pod), now);
            return Ok(());
        }
        self.inner.gang.on_pod_added(pod.clone(), false)?;
        self.inner.queue.add(pod.clone(), now)?;
        self.moved(ClusterEvent::UnscheduledPodAdd(pod), now);
        Ok(())
    }

    /// A pod's object changed. Newly naming a node: the binding is observed (the cache and
    /// registry count it bound). Otherwise the registry and the queue see the new object.
    pub fn update_pod(&self, old: Pod, new: Pod, now: Time) -> Result<(), PodEventError> {
        if self.is_shut_down() {
            return Err(PodEventError::ShutDown(new));
        }
        if new.node().is_some() && old.node().is_none() {
            self.inner.cache.add_bound(&new)?;
            self.inner.gang.on_pod_bound(&new);
            self.inner.queue.delete(new.id());
            self.moved(ClusterEvent::AssignedPodAdd(new), now);
            return Ok(());
        }
        self.inner.gang.on_pod_updated(new.clone());
        if new.node().is_none() && self.inner.queue.place(new.id()).is_some() {
            self.inner.queue.update(old, new, now);
        }
        Ok(())
    }

    /// A pod was deleted. It leaves its group (Hardened: a waiting gang attempt fails whole)
    /// and the queue; if it was waiting at Permit its entry is rejected, so its binding cycle
    /// releases the reservation (I6); if it was bound, its resources are freed and announced.
    /// `Ok(false)`: the pod was unknown (no-op).
    pub fn delete_pod(&self, pod: &Pod, now: Time) -> Result<bool, PodEventError> {
        if self.is_shut_down() {
            return Err(PodEventError::ShutDown(pod.clone()));
        }
        let id = pod.id();
        let member = self.inner.gang.on_pod_deleted(pod).is_some();
        let queued = self.inner.queue.delete(id);
        let binding = match self.inner.assigned.lock().get_mut(id) {
            Some(assignment) => {
                assignment.deleted = true;
                true
            }
            None => false,
        };
        if binding {
            // Its binding cycle (running, or started by its Permit decision) cleans up; make
            // sure a decision comes if it is still waiting.
            self.inner
                .waiting
                .reject(id, GANG_SCHEDULING, "pod deleted while waiting");
            return Ok(true);
        }
        let removed = self.inner.cache.remove_pod(id);
        if removed.is_some() {
            self.moved(ClusterEvent::AssignedPodDelete(pod.clone()), now);
        }
        Ok(member || queued || removed.is_some())
    }

    /// A PodGroup object was created; its gated members are asked again.
    pub fn add_group(&self, group: PodGroup, now: Time) -> Result<(), GroupEventError> {
        if self.is_shut_down() {
            return Err(GroupEventError::ShutDown(group));
        }
        self.inner.gang.on_group_added(group.clone())?;
        self.moved(ClusterEvent::PodGroupAdd(group), now);
        Ok(())
    }

    /// A PodGroup object changed (e.g. its min count); its gated members are asked again.
    pub fn update_group(&self, group: PodGroup, now: Time) -> Result<(), GroupEventError> {
        if self.is_shut_down() {
            return Err(GroupEventError::ShutDown(group));
        }
        let old = self.inner.gang.on_group_updated(group.clone())?;
        self.moved(ClusterEvent::PodGroupUpdate { old, new: group }, now);
        Ok(())
    }

    /// A PodGroup object was deleted; `Ok(false)` if it did not exist.
    pub fn delete_group(&self, key: &GroupKey) -> Result<bool, GroupEventError> {
        if self.is_shut_down() {
            let group = PodGroup::gang(key.namespace(), key.name(), 1).expect("min count 1");
            return Err(GroupEventError::ShutDown(group));
        }
        Ok(self.inner.gang.on_group_deleted(key).is_some())
    }

    /// A node joined: pods that found no room are asked again.
    pub fn add_node(&self, node: Node, now: Time) -> Result<(), NodeEventError> {
        if self.is_shut_down() {
            return Err(NodeEventError::ShutDown(Some(node)));
        }
        let name = node.name().to_owned();
        self.inner.cache.add_node(node)?;
        self.moved(ClusterEvent::NodeAdd(name.as_str().into()), now);
        Ok(())
    }

    /// A node left; the pods the cache had on it are returned (their own delete events
    /// follow from the cluster).
    pub fn delete_node(&self, name: &str) -> Result<Vec<PodId>, NodeEventError> {
        if self.is_shut_down() {
            return Err(NodeEventError::ShutDown(None));
        }
        Ok(self.inner.cache.remove_node(name)?)
    }

    /// Verifies what can be checked from outside a cycle: the cache's accounting (I5), the
    /// queue's places (I4), and that every assumed pod is in a binding cycle (I6).
    pub fn check(&self) -> Result<(), String> {
        self.inner.cache.with(|c| c.check())?;
        self.inner.queue.snapshot().check()?;
        let leaked = self.leaked_reservations();
        if !leaked.is_empty() {
            return Err(format!("assumed without a binding cycle (I6): {leaked:?}"));
        }
        Ok(())
    }

    /// Pods assumed on a node with no binding cycle to end their reservation (I6: empty).
    pub fn leaked_reservations(&self) -> Vec<PodId> {
        let assigned = self.inner.assigned.lock();
        self.inner.cache.with(|c| {
            c.assumed()
                .filter(|id| !assigned.contains_key(*id))
                .cloned()
                .collect()
        })
    }

    /// Whether pod `id` is bound in the cache.
    pub fn is_bound(&self, id: &PodId) -> bool {
        self.inner.cache.with(|c| c.phase(id)) == Some(PodPhase::Bound)
    }

    pub(super) fn moved(&self, event: ClusterEvent, now: Time) -> usize {
        self.inner
            .queue
            .move_all_to_active_or_backoff(event, None, now)
    }
}
