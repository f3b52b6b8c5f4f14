//! Hooks for gangway's own checkers — the model checker (`gangway check`, `gangway-check`), its
//! replay on the threaded core, the fuzzer and the tests: the pure rules the plugin and the
//! driver decide with, the driver's steps and the parts they run on, the planted flaws, and the
//! renamings of symmetry reduction. Compiled only with the `checking` feature. **Not
//! semver-stable**: anything here may change in any release. An embedder needs none of it.

pub use crate::fresh_copies::FreshCopies;
pub use crate::gang::decide::{
    fail_attempt, hardened_permit, upstream_permit, AttemptVerdict, AttemptWaiting, UpstreamVerdict,
};
pub use crate::gang::flaw::GangFlaw;
pub use crate::gang::parts::{Batch, Expire, GangParts};
pub use crate::gang::planted::PlantedGang;
#[cfg(feature = "k8s")]
pub use crate::k8s::quantity::{
    planted_quantity_milli_value, planted_quantity_value, QuantityFlaw,
};
pub use crate::scheduler::check::{
    check_nothing_parked_for_room, leaked, parked_for_room, short_gangs_binding,
};
pub use crate::scheduler::driver_state::{AdmittedGroup, Assignment, DriverState};
pub use crate::scheduler::flaw::Flaw;
pub use crate::scheduler::jobs::{AnyOrderJobs, FifoJobs, Job, JobQueue};
pub use crate::scheduler::parts::Parts;
pub use crate::scheduler::planted::Planted;
pub use crate::scheduler::tally::{Counted, NoTally, SchedulerTally, Tally};

use crate::queue::{
    ClusterEvent, EventKind, Gate, QueuePlugins, QueueState, QueuedPodInfo, SortKey,
};
use crate::scheduler::Scheduler;
use crate::GroupKey;
use crate::{GroupRegistry, PodId, WaitingPods, WaitingState};

/// Renaming pods consistently across the pure states, for symmetry reduction.
pub mod symmetry {
    pub use crate::symmetry::*;
}

/// The gang plugin's operations, once, over [`GangParts`].
pub mod gang_ops {
    pub use crate::gang::ops::*;
}

/// The driver's steps, once, over [`Parts`].
pub mod steps {
    pub use crate::scheduler::steps::*;
}

/// The driver state of a model: jobs in any order, nothing counted.
pub type ModelDriver = DriverState<AnyOrderJobs, NoTally>;

/// A real scheduler's parts behind their locks, to run its steps one by one (the replay).
pub fn scheduler_parts(
    scheduler: &Scheduler,
) -> impl Parts<Jobs = FifoJobs, Tally = SchedulerTally> + '_ {
    scheduler.parts()
}

/// A copy of a real scheduler's driver state.
pub fn driver_state(scheduler: &Scheduler) -> DriverState {
    scheduler.inner.driver.snapshot()
}

/// A queue record with the pod left out (see [`anonymous_record`]).
pub type AnonymousRecord<'a> = crate::queue::AnonymousRecord<'a>;

/// Everything `info` says except which pod it is, for ordering interchangeable pods
/// canonically (two members with equal anonymous records are in the same place in the queue's
/// history).
pub fn anonymous_record(info: &QueuedPodInfo) -> AnonymousRecord<'_> {
    info.anonymous()
}

/// A copy of the waiting map's pure state without the latches, its shards merged, taken in one
/// critical section.
pub fn waiting_state(map: &WaitingPods) -> WaitingState<()> {
    map.state()
}

/// Which shard of `map` holds pod `id` (pods in different shards are decided under different
/// locks), for models that spread a gang over shards.
pub fn waiting_shard_of(map: &WaitingPods, id: &PodId) -> usize {
    map.shard_of(id)
}

/// Which shard of `registry` holds group `key` (groups in different shards change under
/// different locks), for models that put two gangs in different shards.
pub fn group_shard_of(registry: &GroupRegistry, key: &GroupKey) -> usize {
    registry.shard_of(key)
}

/// The outcomes a binding cycle's result stands for, as the scheduler delivers them to its
/// sink: for a runner that drives [`steps::begin_binding`] and [`steps::end_binding`] itself
/// (a binding cycle held between the two, as the driver differential holds one at PreBind).
pub fn binding_outcomes(outcome: steps::BindingOutcome) -> Vec<crate::scheduler::PodOutcome> {
    outcome.pod_outcomes()
}

/// The outcomes a scheduling cycle's result stands for, as the scheduler delivers them to its
/// sink (`pods`: the pods whose attempt the cycle ended): for a runner that drives the
/// scheduling cycle's steps itself (the `scheduler_events` fuzz target's split cycles).
pub fn cycle_outcomes(
    outcome: &crate::scheduler::CycleOutcome,
    pods: &[crate::Pod],
) -> Vec<crate::scheduler::PodOutcome> {
    crate::scheduler::by_hand::cycle_pod_outcomes(outcome, pods)
}

/// Builds `queue`'s derived indexes now — its pods by group, its pool by time parked —
/// whatever its size (a queue builds them only once it holds many pods), so that small queues
/// take the indexed paths too: for the checks that run them beside the full walks.
pub fn build_indexes(queue: &mut QueueState) {
    queue.build_indexes();
}

pub use crate::queue::flaw::QueueFlaw;

/// An empty queue with `flaw` planted in its own code, for a witness that a checker finds it
/// (the `queue_moves` fuzz target's, `GANGWAY_FUZZ_FLAW`). Every other way of building a queue
/// plants nothing.
pub fn queue_state_with_flaw(config: crate::QueueConfig, flaw: QueueFlaw) -> QueueState {
    QueueState::with_flaw(config, flaw)
}

/// An empty blocking queue consulting `plugins`, with `flaw` planted in its wake-ups
/// ([`QueueFlaw::WakesOneOnlyWhenEmpty`]), for a witness that the loom models of its blocking
/// `pop` find it. Its state plants nothing.
pub fn scheduling_queue_with_flaw(
    config: crate::QueueConfig,
    plugins: crate::sync::Arc<dyn crate::queue::QueuePlugins>,
    flaw: QueueFlaw,
) -> crate::queue::SchedulingQueue {
    crate::queue::SchedulingQueue::with_flaw(config, plugins, flaw)
}

/// [`Scheduler::start`](crate::Scheduler::start) with `flaw` planted in the scheduling and
/// binding cycles its threads run ([`Planted`] around the scheduler's own parts), for a witness
/// that a checker of the running scheduler (the shuttle suite) finds it. The timer and the
/// cluster events still run the real steps.
pub fn start_with_flaw<C>(
    scheduler: &Scheduler,
    clock: C,
    flaw: Flaw,
) -> crate::scheduler::RunningScheduler
where
    C: crate::Clock + Clone + 'static,
{
    scheduler.start_on(clock, flaw)
}

/// [`Scheduler::schedule_one`](crate::Scheduler::schedule_one) with `flaw` planted in the
/// cycle's steps ([`Planted`] around the scheduler's own parts), for a witness that a checker
/// driving the cycles itself (the loom models of the binding path) finds it. `None` if no pod
/// is active.
pub fn schedule_one_with_flaw(
    scheduler: &Scheduler,
    flaw: Flaw,
    now: crate::Time,
) -> Option<crate::scheduler::CycleOutcome> {
    let popped = scheduler.queue().try_pop()?;
    Some(scheduler.schedule_planted(flaw, popped, now))
}

/// [`build_indexes`] on a running scheduler's queue ([`Scheduler::queue`]), under its lock:
/// its cluster events then take the scoped moves (a pod added or a PodGroup changed visits
/// only its group's pods) however few pods it holds.
pub fn build_scheduling_queue_indexes(queue: &crate::queue::SchedulingQueue) {
    queue.critical_section(|state, _| state.build_indexes());
}

/// Runs `f` in one critical section of `queue`, on its state and its plugins, waking its
/// blocked poppers after as its own operations do: for the operations the locked queue does
/// not offer on its own (a pop of a pod tied at the head, a hand-back with the queue's own
/// record), run by a checker as the pure state runs them.
pub fn queue_critical_section<R>(
    queue: &crate::queue::SchedulingQueue,
    f: impl FnOnce(&mut QueueState, &dyn QueuePlugins) -> R,
) -> R {
    queue.critical_section(f)
}

/// `P` with every event's scope widened to everyone and no PreEnqueue shared by a group: the
/// queue's full walk, which the scoped moves must match pod for pod.
#[derive(Clone, Debug)]
pub struct FullWalk<P>(pub P);

impl<P: QueuePlugins> QueuePlugins for FullWalk<P> {
    fn pre_enqueue(&self, pod: &crate::Pod) -> Result<(), Gate> {
        self.0.pre_enqueue(pod)
    }

    fn registered(&self, plugin: &crate::PluginName, kind: EventKind) -> bool {
        self.0.registered(plugin, kind)
    }

    fn is_event_of_interest(&self, kind: EventKind) -> bool {
        self.0.is_event_of_interest(kind)
    }

    fn hint(
        &self,
        plugin: &crate::PluginName,
        pod: &crate::Pod,
        event: &ClusterEvent,
    ) -> Result<crate::QueueingHint, String> {
        self.0.hint(plugin, pod, event)
    }

    fn sort_key(&self, info: &QueuedPodInfo) -> SortKey {
        self.0.sort_key(info)
    }
}

/// Builds `cache`'s node index now — its nodes by class and fill — whatever its node count (a
/// cache builds it only once it holds many nodes), so that small caches take the indexed
/// placement too: for the checks that run it beside the full scan.
pub fn build_node_index(cache: &mut crate::scheduler::CacheState) {
    cache.build_node_index();
}

/// A real gang plugin's parts behind their locks (what its public methods run
/// `gang_ops` on), to run its operations through [`PlantedGang`] with a [`GangFlaw`] planted
/// (the `gang_plugin` fuzz target's witness).
pub fn gang_parts(
    gang: &crate::gang::GangScheduling,
) -> impl GangParts<Registration = crate::WaitingPod> + '_ {
    gang.parts()
}

// The waiting map's seams, for the `waiting_map` lockstep (model/src/waiting_lockstep/) and
// its fuzz target.

pub use crate::waiting::flaw::WaitingFlaw;

/// An empty waiting map handing its decisions to `sink`, with `flaw` planted in the map's own
/// code: for a witness that a checker finds it. No other constructor plants anything.
pub fn waiting_pods_with_flaw(sink: impl crate::DecisionSink, flaw: WaitingFlaw) -> WaitingPods {
    WaitingPods::with_flaw(sink, flaw)
}

/// The checks of `map` that its merged copy ([`waiting_state`]) cannot make: each shard's own
/// `WaitingState::check`, each pod in the shard its uid hashes to, and each waiting pod's latch
/// holding that pod and no decision (I1). `Err` names the first one broken.
pub fn check_waiting_shards(map: &WaitingPods) -> Result<(), String> {
    map.check_shards()
}

/// Rejects registration `ticket` of waiting pod `id` with `status`, for `cause` — what
/// `WaitingPods::reject_for` does for whichever registration waits, and what a handle's
/// `reject` does with its own status; `true` if this call decided it (H4). A stale ticket
/// decides nothing.
pub fn reject_registration(
    map: &WaitingPods,
    id: &PodId,
    ticket: crate::waiting::Ticket,
    status: crate::Status,
    cause: crate::Cause,
) -> bool {
    map.reject_ticket(id, Some(ticket), status, cause)
}

/// The status a preempted waiting pod is decided with (`WaitingPods::preempt`,
/// `WaitingPod::preempt`): an `Error` attributed to `plugin`.
pub fn preemption_status(plugin: impl Into<crate::PluginName>, message: &str) -> crate::Status {
    crate::waiting::preemption(plugin, message)
}

/// Decisions a batch made and published on their latches but has not yet handed to the map's
/// sink — what the gang plugin holds while it releases its own locks (H5). Handed over by
/// [`deliver`](Undelivered::deliver), or on drop.
#[must_use = "the decisions reach the sink when this is delivered or dropped"]
pub struct Undelivered(crate::waiting::Deliveries);

impl Undelivered {
    /// The decided pods, in decision order.
    pub fn ids(&self) -> Vec<PodId> {
        self.0.ids().cloned().collect()
    }

    /// Takes `other`'s decisions after these (same map), to be delivered in one call.
    pub fn append(&mut self, other: Undelivered) {
        self.0.append(other.0);
    }

    /// Hands every decision to the sink; how many there were.
    pub fn deliver(self) -> usize {
        self.0.deliver()
    }
}

/// `WaitingPods::allow_all`, its decisions held back for delivery (the gang plugin's quorum).
pub fn allow_all_deferred(
    map: &WaitingPods,
    ids: &[PodId],
    plugin: &str,
) -> Result<Undelivered, PodId> {
    map.allow_all_deferred(ids, plugin).map(Undelivered)
}

/// `WaitingPods::reject_all`, its decisions held back for delivery (the gang plugin's failed
/// attempt).
pub fn reject_all_deferred(
    map: &WaitingPods,
    ids: &[PodId],
    plugin: impl Into<crate::PluginName>,
    message: &str,
    cause: crate::Cause,
) -> Undelivered {
    Undelivered(map.reject_all_deferred(ids, plugin, message, cause))
}
