//! Hooks for gangway's own checkers — the model checker (`gangway check`), its replay on the
//! threaded core, the fuzzer and the tests: the pure rules the plugin and the driver decide
//! with, the driver's steps and the parts they run on, the planted flaws, and the renamings of
//! symmetry reduction. **Not part of the documented API and not semver-stable**: anything here
//! may change in any release. An embedder needs none of it.

pub use crate::fresh_copies::FreshCopies;
pub use crate::gang::decide::{
    fail_attempt, hardened_permit, upstream_permit, AttemptVerdict, AttemptWaiting, UpstreamVerdict,
};
pub use crate::gang::parts::{Batch, Expire, GangParts};
pub use crate::scheduler::check::{leaked, short_gangs_binding};
pub use crate::scheduler::driver_state::{AdmittedGroup, Assignment, DriverState};
pub use crate::scheduler::jobs::{AnyOrderJobs, FifoJobs, Job, JobQueue};
pub use crate::scheduler::parts::{Flaw, Parts};
pub use crate::scheduler::planted::Planted;
pub use crate::scheduler::tally::{Counted, NoTally, SchedulerTally, Tally};

use crate::gang::GroupKey;
use crate::queue::{
    ClusterEvent, EventKind, Gate, QueuePlugins, QueueState, QueuedPodInfo, SortKey,
};
use crate::scheduler::Scheduler;
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
    crate::scheduler::PodOutcome::of_binding(outcome)
}

/// Builds `queue`'s derived indexes now — its pods by group, its pool by time parked —
/// whatever its size (a queue builds them only once it holds many pods), so that small queues
/// take the indexed paths too: for the checks that run them beside the full walks.
pub fn build_indexes(queue: &mut QueueState) {
    queue.build_indexes();
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
