//! Pods parked at Permit and their decisions.
//!
//! 1. [`WaitingState`] — the map as pure data (`&mut self` transitions, no locks, no clock).
//! 2. [`WaitingPods`] — that state split into shards, each behind its own lock, with decision
//!    delivery.
//! 3. [`WaitingPod`] — a handle on one pod: allow, reject, wait.
//! 4. [`Decision`] and [`DecisionSink`] — how decided pods reach the binding workers.
//! 5. [`AddError`] — why a pod could not start waiting.

mod batch;
mod decision;
mod error;
#[cfg(feature = "checking")]
pub(crate) mod flaw;
mod found;
mod handle;
mod latch;
mod map;
#[cfg(feature = "checking")]
mod rename;
mod shards;

mod state;
#[cfg(test)]
mod state_tests;

/// The receiving end of [`WaitingPods::with_channel`]'s decisions, and its error once every
/// sender is gone.
pub use crate::sync::channel::{Receiver, RecvError};
pub use decision::{Cause, Decision, DecisionSink};
pub use error::AddError;
pub use found::WaitingRef;
#[cfg(feature = "checking")]
pub(crate) use handle::preemption;
pub use handle::WaitingPod;
pub(crate) use map::Deliveries;
pub use map::WaitingPods;
pub use state::{
    timeout_message, AllowOutcome, Decided, PendingPlugin, Ticket, WaitingEntry, WaitingState,
    MAX_PERMIT_WAIT,
};
