//! A reference model of the GangScheduling plugin and the waiting-pod map together: the
//! sequential specification that [`gangsched::GangScheduling`] over a [`gangsched::WaitingPods`]
//! map is checked against, in [`Mode::Upstream`](gangsched::Mode) and in
//! [`Mode::Hardened`](gangsched::Mode).
//!
//! It is deliberately naive: a `Vec` of group records, each with a `Vec` of members that carry
//! their own placement, a `Vec` of waiting pods, linear scans, no locks, no deadline index, no
//! deferred deliveries. Every decision is appended to an outbox in the order it is made, the
//! way the real map hands decisions to its channel. Property tests run it in lockstep with the
//! real plugin and compare every result, every group, every waiting pod and every decision.
//!
//! The rules it specifies are listed on [`GangModel`]. The code is split the same way:
//! `rules.rs` holds the state and the rules shared by several operations (leaving an attempt,
//! failing one, forgetting what is unused), `plugin.rs` the cluster events and the plugin's
//! operations, `waiting.rs` the timeouts and the waiting map.

pub mod lockstep;
mod plugin;
mod rules;
#[cfg(test)]
mod tests;
mod waiting;

pub use rules::{GangModel, ModelAttempt, ModelGroup, ModelMember, ModelPermit, ModelWaiter};
