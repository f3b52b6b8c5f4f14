//! The real queue and the model driven side by side by a list of [`Op`]s, with every check
//! made after every op. The property test (`tests/tests/prop_queue.rs`) and the fuzz target
//! (`fuzz/fuzz_targets/queue_moves.rs`) both generate `Op`s and call [`Lockstep::step`] (or
//! [`run`]), so they check exactly the same things:
//!
//! - every result of the real [`QueueState`] equals the model's;
//! - [`QueueState::check`] passes (I4: each pod in exactly one place, indexes agree);
//! - [`QueueModel::agrees_with`] the queue: same pods, places, records, lengths, active
//!   pop order, cycle count;
//! - I7, from the driver's own log of the events each attempt saw (not the model's): a pod
//!   handed back with no rejecting plugin, or whose attempt saw a wildcard or an event one of
//!   its rejecting plugins' hints says `Queue` (or fails) for, does not park in the
//!   unschedulable pool unless PreEnqueue gates it; for a gang, if that holds for any
//!   member, no member parks.
//!
//! Ops name pods by small indexes so that shrinking keeps them meaningful: the universe is
//! [`POD_NAMES`]; a *pick* below 128 names the pick-th pod in flight (modulo their number,
//! in id order), or, when none is, the universe pod `pick % 8`; a pick of 128 or more names
//! universe pod `pick % 8` directly.

#[cfg(doc)]
use gangsched::queue::QueueState;

#[cfg(doc)]
use super::QueueModel;

mod driver;
mod input;
mod ops;

pub use driver::{run, Lockstep};
#[cfg(feature = "arbitrary")]
pub use input::decode;
pub use input::{bounded, runnable, Input, Setup, MAX_OPS, MAX_PODS_PER_OP};
pub use ops::{event, pod_id, rejectors, universe_pod, Op, EVENTS, POD_NAMES, PRIORITIES, STEPS};
