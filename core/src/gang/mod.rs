//! Gang scheduling: pod groups, their state, and the GangScheduling plugin.
//!
//! 1. [`PodGroup`], [`Policy`], [`GroupKey`] — the PodGroup object.
//! 2. [`GroupState`] — one group as pure data: members, unscheduled / assumed / assigned, the
//!    current gang attempt.
//! 3. [`Groups`] — every group as pure data; [`GroupRegistry`] — that split into shards by
//!    group key, each behind its own lock.
//! 4. [`GangScheduling`] — the plugin: PreEnqueue, Reserve, Unreserve, Permit, queueing hints,
//!    in [`Mode::Upstream`](crate::Mode) or [`Mode::Hardened`](crate::Mode).
//! 5. Errors, one per operation.

mod decide;
mod error;
mod gate;
mod group_key;
mod group_state;
#[cfg(test)]
mod group_state_tests;
mod groups;
mod permit;
mod plugin;
#[cfg(test)]
mod plugin_tests;
mod pod_group;
mod registry;
mod rename;

pub use decide::{
    fail_attempt, hardened_permit, upstream_permit, AttemptVerdict, AttemptWaiting, UpstreamVerdict,
};
pub use error::{AddPodError, GroupUpdateError, PodGroupError, ReserveError};
pub use gate::{gang_hint, gang_pre_enqueue, gang_queueing_hint, GANG_HINT_EVENTS};
pub use group_key::GroupKey;
pub use group_state::{GangAttempt, GroupState, Members, MembersIter, Placement};
pub use groups::Groups;
pub use permit::Permit;
pub use plugin::{GangEvent, GangScheduling, DEFAULT_PERMIT_TIMEOUT, GANG_SCHEDULING};
pub use pod_group::{PodGroup, Policy};
pub use registry::GroupRegistry;
