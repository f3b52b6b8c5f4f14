//! Gang scheduling: pod groups, their state, and the GangScheduling plugin.
//!
//! 1. The PodGroup object ([`PodGroup`](crate::PodGroup), [`GroupKey`](crate::GroupKey)) is
//!    the ground floor's; here its scheduling.
//! 2. [`GroupState`] — one group as pure data: members, unscheduled / assumed / assigned, the
//!    current gang attempt.
//! 3. [`Groups`] — every group as pure data; [`GroupRegistry`] — that split into shards by
//!    group key, each behind its own lock.
//! 4. [`GangScheduling`] — the plugin: PreEnqueue, Reserve, Unreserve, Permit, queueing hints,
//!    in [`Mode::Upstream`](crate::Mode) or [`Mode::Hardened`](crate::Mode). Its operations
//!    are written once (`ops.rs`) over the parts they touch (`parts.rs`), and decide with
//!    pure rules (`decide.rs`, `member_events.rs`) that the model checker runs too.
//! 5. Errors, one per operation.

mod activation;
#[cfg(test)]
mod alarm_tests;
pub(crate) mod decide;
mod error;
pub(crate) mod feasible;
#[cfg(feature = "checking")]
pub(crate) mod flaw;
mod gate;
mod group_object_ops;
mod group_state;
#[cfg(test)]
mod group_state_tests;
#[cfg(test)]
mod group_state_views_tests;
mod groups;
mod member_events;
#[cfg(test)]
mod member_events_tests;
pub(crate) mod ops;
pub(crate) mod parts;
mod permit;
mod permit_plugins;
#[cfg(test)]
mod permit_with_tests;
#[cfg(feature = "checking")]
pub(crate) mod planted;
pub(crate) mod plugin;
#[cfg(test)]
mod plugin_tests;
mod registry;
#[cfg(test)]
mod registry_tests;
#[cfg(feature = "checking")]
mod rename;
mod unscheduled_stamp;

pub use activation::Activation;
pub use decide::GangRules;
pub use error::{GroupUpdateError, JoinGroupError, ReserveError};
pub use feasible::Feasibility;
pub use gate::{gang_pre_enqueue, gang_queueing_hint};
pub use group_state::{GangAttempt, GroupState, MemberPlace, Members, MembersIter};
pub use groups::Groups;
pub use member_events::RemovedMember;
pub use permit::{Permit, GANG_WAIT_REASON, PERMIT_WAIT_REASON};
pub use permit_plugins::{PermitPlugin, PermitPlugins, PermitPluginsError, PermitVerdict};
pub use plugin::{GangEvent, GangScheduling, DEFAULT_PERMIT_TIMEOUT, GANG_SCHEDULING};
pub use registry::GroupRegistry;
