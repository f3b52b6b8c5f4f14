//! What the driver's steps run on, as one trait: the scheduler's components behind their locks
//! (production), a model checker's pure states, or a real scheduler driven step by step by a
//! replay. The steps (`steps/`) are written once over it; each method here is one critical
//! section.

use crate::gang::parts::GangParts;
use crate::queue::{QueuePlugins, QueueState};
use crate::{GangCycle, Mode, PermitPlugins, Pod, Status};

#[cfg(feature = "checking")]
use super::flaw::Flaw;
use super::jobs::JobQueue;
use super::tally::{Counted, Tally};
use super::{BindError, CacheState, DriverState};

/// The parts a driver step touches (see the module docs).
///
/// Lock order in production, which no step breaks because no call here runs inside another:
/// the queue, then a registry shard (the queue's plugins read it), then waiting-map shards,
/// then a latch; the cache, the driver state and each waiting-map or registry call on their
/// own. Decisions reach [`DriverState::decision_delivered`] after every lock is released (H5).
pub trait Parts {
    /// The gang plugin's parts.
    type Gang: GangParts;
    /// The order the driver's jobs run in.
    type Jobs: JobQueue;
    /// What the driver counts.
    type Tally: Tally;

    /// Upstream's behaviour or gangway's guarantees.
    fn mode(&self) -> Mode;

    /// How gangs are scheduled: the Permit barrier or the pod-group cycle.
    fn gang_cycle(&self) -> GangCycle;

    /// Whether the deliberate bug `flaw` is planted (a checker's witness): only with the
    /// `checking` feature, and only [`Planted`](super::planted::Planted) parts say yes.
    #[cfg(feature = "checking")]
    fn planted(&self, flaw: Flaw) -> bool {
        let _ = flaw;
        false
    }

    /// Runs `f` — several critical sections that together move a pod from one component to
    /// another (a scheduling cycle's assume, reserve and record; a binding cycle's end) — so
    /// that [`Scheduler::check`](super::Scheduler::check) never sees it half done. `f` runs
    /// no user code. Production holds a shared step gate that `check` takes exclusively; a
    /// model, whose actions are atomic, just runs `f`.
    fn unobserved<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R
    where
        Self: Sized,
    {
        f(self)
    }

    /// The gang plugin (registry and waiting map).
    fn gang(&mut self) -> &mut Self::Gang;

    /// One critical section of the scheduling queue, with its plugins.
    fn queue<R>(&mut self, f: impl FnOnce(&mut QueueState, &dyn QueuePlugins) -> R) -> R;

    /// One critical section of the node cache.
    fn cache<R>(&mut self, f: impl FnOnce(&mut CacheState) -> R) -> R;

    /// One critical section of the driver's own state.
    fn driver<R>(&mut self, f: impl FnOnce(&mut DriverState<Self::Jobs, Self::Tally>) -> R) -> R;

    /// A look at the scheduling queue, changing nothing. Steps look before a change that may
    /// be a no-op, so that a model's states keep sharing the part it would not change.
    fn read_queue<R>(&self, f: impl FnOnce(&QueueState) -> R) -> R;

    /// A look at the node cache, changing nothing.
    fn read_cache<R>(&self, f: impl FnOnce(&CacheState) -> R) -> R;

    /// A look at the driver's own state, changing nothing.
    fn read_driver<R>(&self, f: impl FnOnce(&DriverState<Self::Jobs, Self::Tally>) -> R) -> R;

    /// Placement: a node for `pod`, or why none fits. User code; it sees the cache under the
    /// cache's lock and must not call back into the scheduler. Production catches its panic
    /// as an error status ([`Code::Error`](crate::Code::Error)), counted.
    fn place(&mut self, pod: &Pod) -> Result<String, Status>;

    /// Placement on `snapshot`, the copy of the cache a pod-group cycle places its gang on
    /// (the members placed before this one assumed there): as [`place`](Self::place), with no
    /// lock held. Production catches its panic the same way.
    fn place_on(&mut self, pod: &Pod, snapshot: &CacheState) -> Result<String, Status>;

    /// The embedder's Permit plugins, asked after (Upstream) or before (Hardened) the gang
    /// plugin's Permit with no lock held; a panic in one is caught as its error, counted. A
    /// model has none.
    fn permit_plugins(&self) -> PermitPlugins {
        PermitPlugins::none()
    }

    /// Bind: writes `pod`'s binding to `node`. User code, called with no gangway lock held.
    /// Production catches its panic as [`BindError::Panicked`], counted.
    fn bind(&mut self, pod: &Pod, node: &str) -> Result<(), BindError>;
}

/// Counts `what` in `p`'s driver state, if its tally counts.
pub(crate) fn count<P: Parts>(p: &mut P, what: Counted) {
    if <P::Tally as Tally>::COUNTS {
        p.driver(|d| d.tally_mut().count(what));
    }
}
