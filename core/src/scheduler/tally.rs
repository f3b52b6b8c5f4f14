//! What the driver counts: the scheduler's [`SchedulerStats`] and Permit waits, or nothing at
//! all for a model checker — counters that differ between two paths would make every path a
//! state of its own.

use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use super::SchedulerStats;
use crate::Time;

/// One thing the driver counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// A scheduling cycle ran (a pod was popped).
    Cycle,
    /// No node fit the popped pod.
    Unschedulable,
    /// A pod was bound.
    Bound,
    /// A bind failed.
    BindFailure,
    /// A pod was rejected at or while waiting at Permit; `timed_out` if by a deadline.
    PermitRejection {
        /// The rejection was a timeout.
        timed_out: bool,
    },
    /// A pod was deleted between its scheduling cycle and the end of its binding cycle.
    DeletedInFlight,
    /// The placement failed with an error (it panicked, or said so) rather than a verdict.
    PlacementError,
    /// User code — the placement, the binder or the outcome sink — panicked; it was caught.
    PluginPanic,
}

/// The driver's counters, kept in its state.
pub trait Tally: Clone + Default + fmt::Debug + PartialEq + Eq + Hash {
    /// When a pod's scheduling cycle recorded it: what a Permit wait is measured from.
    type Stamp: Copy + fmt::Debug + PartialEq + Eq + Hash;

    /// Whether this tally counts anything (a step that only counts skips the driver's lock
    /// when it does not).
    const COUNTS: bool;

    /// The stamp of a pod recorded at `now`.
    fn stamp(now: Time) -> Self::Stamp;

    /// Counts `what`.
    fn count(&mut self, what: Counted);

    /// Records that a pod recorded at `since` reached its binding cycle at `now`; returns its
    /// Permit wait, if this tally measures it.
    fn permit_wait(&mut self, since: Self::Stamp, now: Time) -> Option<Duration>;
}

/// The scheduler's tally: [`SchedulerStats`] and every Permit wait in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SchedulerTally {
    /// The counters.
    pub stats: SchedulerStats,
    /// For each pod that reached its binding cycle, how long it waited at Permit.
    pub permit_waits: Vec<u64>,
}

impl Tally for SchedulerTally {
    type Stamp = Time;
    const COUNTS: bool = true;

    fn stamp(now: Time) -> Time {
        now
    }

    fn count(&mut self, what: Counted) {
        let stats = &mut self.stats;
        match what {
            Counted::Cycle => stats.cycles += 1,
            Counted::Unschedulable => stats.unschedulable += 1,
            Counted::Bound => stats.bound += 1,
            Counted::BindFailure => stats.bind_failures += 1,
            Counted::PermitRejection { timed_out } => {
                stats.permit_rejections += 1;
                stats.permit_timeouts += u64::from(timed_out);
            }
            Counted::DeletedInFlight => stats.deleted_in_flight += 1,
            Counted::PlacementError => stats.placement_errors += 1,
            Counted::PluginPanic => stats.plugin_panics += 1,
        }
    }

    fn permit_wait(&mut self, since: Time, now: Time) -> Option<Duration> {
        let wait = now.saturating_duration_since(since);
        self.permit_waits.push(wait.as_nanos() as u64);
        Some(wait)
    }
}

#[cfg(feature = "checking")]
/// Counts nothing: a model checker's tally.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NoTally;

#[cfg(feature = "checking")]
impl Tally for NoTally {
    type Stamp = ();
    const COUNTS: bool = false;

    fn stamp(_: Time) {}

    fn count(&mut self, _: Counted) {}

    fn permit_wait(&mut self, _: (), _: Time) -> Option<Duration> {
        None
    }
}
