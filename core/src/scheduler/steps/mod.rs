//! The driver's critical sections, each written once as a function over [`Parts`]: the
//! scheduler runs them on its locked components, the model checker on its pure states, and
//! the model checker's replay on a real scheduler, step by step. The scheduler's public
//! methods are these steps, composed.
//!
//! - `events.rs` — cluster events (pods, groups, nodes) and the move-all they announce;
//! - `cycle.rs` — the scheduling cycle: place and reserve, hand back for want of room, Permit;
//! - `activate.rs` — a Permit's activation of its gang's unscheduled members;
//! - `member_gone.rs` — Hardened pod-group cycle: a member deleted unscheduled asks its parked
//!   siblings again;
//! - `permit_release.rs` — Upstream: a pod Permit rejects released in its scheduling cycle;
//! - `pod_group_cycle.rs` — the pod-group cycle: a gang gathered, placed on one snapshot, committed
//!   or handed back whole (I9);
//! - `admitted.rs` — Hardened: a gang the pod-group cycle admitted, while it binds (its one
//!   deadline, and its release once it cannot reach quorum);
//! - `binding.rs` — the binding cycle: bind, or release and requeue (H2 for a failed gang);
//! - `timers.rs` — permit deadlines and the queue's flushes;
//! - `planted.rs` — the seam of the planted flaws that act inside a step (`checking` only).
//!
//! [`Parts`]: super::Parts

mod activate;
mod admitted;
mod binding;
mod cycle;
mod events;
mod member_gone;
mod permit_release;
#[cfg(feature = "checking")]
mod planted;
mod pod_group_cycle;
#[cfg(feature = "checking")]
mod rename;
mod timers;

// Every step, as the checkers drive them one by one (`checking::steps`); the scheduler itself
// composes only some of them by name.
#[cfg_attr(not(feature = "checking"), allow(unused_imports))]
mod all {
    pub use super::binding::{begin_binding, binding_cycle, end_binding, Binding, BindingOutcome};
    #[cfg(feature = "checking")]
    pub use super::cycle::place_and_reserve_unrecorded;
    pub use super::cycle::{hand_back_unfit, permit, place_and_reserve, record, Placed};
    pub use super::events::{
        announce, group_added, group_deleted, group_updated, node_added, node_deleted,
        node_updated, pod_added, pod_deleted, pod_updated,
    };
    pub use super::pod_group_cycle::{
        commit, gather, simulate, Gathered, GroupVerdict, Simulation, Trial,
        POD_GROUP_UNSCHEDULABLE,
    };
    pub use super::timers::{
        expire_deadlines, flush_backoff, flush_leftover, next_permit_deadline,
    };
}
#[cfg_attr(not(feature = "checking"), allow(unused_imports))]
pub use all::*;
