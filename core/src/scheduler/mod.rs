//! The scheduler driver: a [`Scheduler`] wires the queue, the gang plugin, the waiting map and
//! a cache of node reservations into scheduling and binding cycles.
//!
//! 1. [`Resources`], [`Node`] — what a pod requests and a node offers.
//! 2. [`CacheState`] / [`Cache`] — node reservations: assumed and bound pods (I5).
//! 3. [`Placement`] ([`ResourceFit`] by default), [`Binder`] ([`InMemoryBinder`] by default).
//! 4. [`Scheduler`] — cluster events in; scheduling cycles ([`CycleOutcome`]), binding cycles
//!    and timers driven by the caller, or by [`RunningScheduler`]'s threads.

mod binder;
mod binding;
mod cache;
mod cache_rename;
#[cfg(test)]
mod cache_tests;
mod config;
mod cycle;
mod error;
mod node;
mod placement;
mod resources;
mod runner;
#[allow(clippy::module_inception)]
mod scheduler;
#[cfg(test)]
mod scheduler_tests;
mod stats;
mod timers;

pub use binder::{BindError, Binder, InMemoryBinder};
pub use cache::{
    AddBoundError, AddNodeError, AssumeError, Cache, CacheState, FinishBindingError, NodeView,
    PodPhase, RemoveNodeError, RemovedPod,
};
pub use config::SchedulerConfig;
pub use cycle::CycleOutcome;
pub use error::{GroupEventError, NodeEventError, PodEventError};
pub use node::Node;
pub use placement::{Placement, ResourceFit};
pub use resources::Resources;
pub use runner::RunningScheduler;
pub use scheduler::Scheduler;
pub use stats::SchedulerStats;
