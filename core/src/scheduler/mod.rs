//! The scheduler driver: a [`Scheduler`] wires the queue, the gang plugin, the waiting map and
//! a cache of node reservations into scheduling and binding cycles.
//!
//! 1. [`Node`] — what a node offers (a pod's requests are [`Resources`](crate::Resources)).
//! 2. [`CacheState`] / [`Cache`] — node reservations: assumed and bound pods (I5).
//! 3. [`Placement`] ([`ResourceFit`] by default), [`Binder`] ([`InMemoryBinder`] by default).
//! 4. [`Scheduler`] — cluster events in; scheduling cycles ([`CycleOutcome`]), binding cycles
//!    and timers driven by the caller, or by [`RunningScheduler`]'s threads.
//! 5. [`SchedulerPlugins`] — the queue plugins the scheduler runs (the gang's gate and hints,
//!    NodeResourcesFit's hints).
//!
//! Under the hood every step of the driver is one function over the parts it touches
//! (`steps/`, over the `Parts` of `parts.rs`), and the driver's own state is pure data
//! (`driver_state.rs`): the scheduler runs the steps on its locked components, the model
//! checker on its pure states (see docs/architecture.md).

#[cfg(all(test, feature = "checking"))]
mod activation_window_tests;
#[cfg(test)]
mod admitted_tests;
mod binder;
mod builder;
pub(crate) mod by_hand;
mod cache;
mod cache_check;
#[cfg(feature = "checking")]
mod cache_rename;
#[cfg(test)]
mod cache_tests;
pub(crate) mod check;
#[cfg(test)]
mod check_tests;
mod config;
#[cfg(feature = "checking")]
mod driver_rename;
pub(crate) mod driver_state;
#[cfg(test)]
mod driver_state_tests;
mod error;
#[cfg(feature = "checking")]
pub(crate) mod flaw;
pub(crate) mod jobs;
mod locked;
#[cfg(test)]
mod member_gone_tests;
mod node;
mod node_index;
mod node_view;
mod outcome;
pub(crate) mod parts;
mod placement;
#[cfg(feature = "checking")]
pub(crate) mod planted;
mod plugins;
mod pod_group_condition;
#[cfg(test)]
mod pod_group_cycle_tests;
mod pod_table;
mod runner;
#[allow(clippy::module_inception)]
mod scheduler;
#[cfg(test)]
mod scheduler_tests;
mod stats;
pub(crate) mod steps;
pub(crate) mod tally;

pub use binder::{BindError, Binder, InMemoryBinder};
pub use builder::SchedulerBuilder;
pub use cache::{
    AddBoundError, AddNodeError, AssumeError, Cache, CacheState, FinishBindingError, PodPhase,
    RemoveNodeError, RemovedPod, UpdateNodeError,
};
pub use check::{Invariant, Violation};
pub use config::{GangCycle, SchedulerConfig};
pub(crate) use driver_state::DriverState;
pub use error::{
    AddGroupError, AddPodError, DeleteGroupError, DeletePodError, UpdateGroupError, UpdatePodError,
};
pub use node::Node;
pub use node_view::NodeView;
pub use outcome::{
    outcome_channel, CycleOutcome, DiscardOutcomes, OutcomeSender, OutcomeSink, PodOutcome,
    PodScheduled, Tick,
};
pub use placement::{Placement, ResourceFit};
pub use plugins::{gang_hint, ReadGroups, SchedulerPlugins, GANG_HINT_EVENTS};
pub use pod_group_condition::PodGroupScheduled;
pub use runner::RunningScheduler;
pub use scheduler::Scheduler;
pub use stats::SchedulerStats;
