//! The scheduling queue, with gang gating.
//!
//! 1. [`QueuedPodInfo`] — a pod as the queue keeps it.
//! 2. [`ClusterEvent`], [`EventKind`] — what may make a rejected pod schedulable.
//! 3. [`QueuePlugins`] — PreEnqueue gates, queueing hints and the queue order
//!    ([`PluginSet`] builds one from closures; [`NoPlugins`]; the scheduler's own set, with the
//!    gang plugin, is [`SchedulerPlugins`](crate::scheduler::SchedulerPlugins)).
//! 4. [`QueueConfig`] — backoff and flush timing.
//! 5. [`QueueState`] — the queue as pure data; [`SchedulingQueue`] — that behind one lock,
//!    with a blocking `pop`.

mod activation_candidates;
mod compact_map;
mod config;
mod error;
mod event;
#[cfg(feature = "checking")]
pub(crate) mod flaw;
#[cfg(test)]
mod flush_tests;
mod gate_index;
#[cfg(test)]
mod gate_index_tests;
#[cfg(test)]
mod group_backoff_tests;
mod group_index;
mod info;
mod keyed_heap;
mod leftover_index;
mod plugins;
mod pool;
mod pop_specific;
#[cfg(test)]
mod pre_enqueue_tests;
#[cfg(feature = "checking")]
mod rename;
mod requeue;
#[cfg(test)]
mod requeue_tests;
mod scheduling_queue;
#[cfg(test)]
mod scheduling_queue_tests;
mod scoped_move;
#[cfg(test)]
mod scoped_move_tests;
mod slot_index;
mod state;
mod state_check;
#[cfg(test)]
mod state_check_tests;
mod state_identity;
#[cfg(test)]
mod state_tests;

pub use config::QueueConfig;
pub use error::{HandBackError, QueueError};
pub use event::{ClusterEvent, EventKind, EventScope};
pub use info::QueuedPodInfo;
pub use plugins::{Gate, NoPlugins, PluginSet, QueuePlugins, SortKey};
#[cfg(feature = "checking")]
pub(crate) use rename::AnonymousRecord;
pub use requeue::Requeue;
pub use scheduling_queue::SchedulingQueue;
pub use state::{Popped, QueueLengths, QueuePlace, QueueState};
