//! The real waiting map and the reference model driven side by side by a list of [`Op`]s,
//! with every check made after every op. The real map is a [`Subject`](crate::ops::waiting::Subject): the pure
//! [`WaitingState`](gangsched::WaitingState) (the property test `tests/tests/prop_waiting.rs`)
//! or the sharded [`WaitingPods`](gangsched::WaitingPods) map ([`ShardedMap`]: the same
//! property test, and the `waiting_map` fuzz target). Both generate `Op`s and call
//! [`Lockstep::step`] (or [`run`]), so they check exactly the same things:
//!
//! - every answer equals the model's — add (ticket or error), allow (not waiting, still
//!   pending, allowed), each way of rejecting one pod, `allow_all` (all or none, naming the
//!   first pod not waiting), `reject_all`, `expire` (H4: exact decision reports);
//! - every decision equals the model's, in order — pod, status, cause, and the registration
//!   where the real map names it; for the sharded map these are the decisions its sink got,
//!   and a deferred batch holds exactly the model's, already on their latches, none delivered
//!   before it is (I1, H5);
//! - an expiry decides exactly the pods due (by the real map's deadlines before it), each
//!   rejected, in (deadline, pod) order, and leaves nothing due;
//! - the real map's `check()` (its deadline index, one entry per pod, each with a pending
//!   plugin, none twice); the sharded map's own checks too ([`ShardedMap`]: each shard's, the
//!   views, every handle's latch against the model, I1/I2);
//! - the same waiting pods as the model, each with the same pod object, registration and
//!   pending plugins (waits, deadlines, order); `len` and `next_deadline` equal; a decided pod
//!   is not waiting again unless re-added; every registration ever issued is waiting or
//!   decided, none lost (I1).
//!
//! Ops name pods, plugins, waits, clock steps and causes by small indexes, taken modulo
//! ([`PODS`], [`PLUGINS`], [`WAIT_STEP`], [`STEPS`], [`CAUSES`]): pods `p0`..`p5`, plugins
//! `A`, `B`, `C`, waits in steps of 2m30s up to 20m (the 15m cap is 6 steps), clock steps from
//! a nudge of 1 ns to 15 minutes, so that re-adds, deadline ties, the cap and "exactly at the
//! deadline" happen often.
//!
//! Not covered: `add_untimed` (the model has no registration without a deadline).

mod driver;
mod input;
mod ops;
mod pure_state;
mod rules;
mod sharded;

pub use driver::{run, Lockstep};
#[cfg(feature = "arbitrary")]
pub use input::decode;
pub use input::{bounded, runnable, MAX_OPS, MAX_PODS_PER_BATCH, MAX_WAITS};
pub use ops::{
    cause, message, plugin, pod_id, step, wait, How, Op, TicketChoice, CAUSES, PLUGINS, PODS,
    STEPS, WAIT_STEP, WAIT_STEPS,
};
pub use rules::on_model;
pub use sharded::ShardedMap;
