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
pub use crate::queue::AnonymousRecord;
pub use crate::scheduler::jobs::{AnyOrderJobs, FifoJobs, Job, JobQueue};
pub use crate::scheduler::parts::{Flaw, Parts};
pub use crate::scheduler::tally::{Counted, NoTally, SchedulerTally, Tally};
pub use crate::scheduler::{Assignment, DriverState};
pub use crate::symmetry;

use crate::scheduler::Scheduler;

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
