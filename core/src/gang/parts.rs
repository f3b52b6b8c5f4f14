//! What the gang plugin's operations run on, as one trait: production's registry shards and
//! waiting map behind their locks ([`GangScheduling`](super::GangScheduling)), or a model's
//! pure states (`gangway check`). The operations themselves (`ops.rs`) are written once,
//! over this trait; each method here is one critical section.

use std::time::Duration;

use super::decide::{AttemptWaiting, GangRules};
#[cfg(feature = "checking")]
use super::flaw::GangFlaw;
use super::Groups;
use crate::waiting::AddError;
use crate::GroupKey;
use crate::{PluginName, Pod, PodId, Time};

/// The waiting map as a critical section under a group's lock sees it.
pub type Batch<'a, R> = dyn AttemptWaiting<Registration = R> + 'a;

/// An expiry over one part of the groups (see [`GangParts::expire_part`]).
pub type Expire<'e, R> = dyn FnMut(&mut Groups, &mut Batch<'_, R>) -> Vec<(Time, GroupKey)> + 'e;

/// The parts a gang operation touches. Decisions made through them reach the waiting map's
/// sink once the critical section that made them has ended, with no lock held (H5).
pub trait GangParts {
    /// A waiting pod's registration ([`WaitingPod`](crate::WaitingPod) in production, `()`
    /// in models).
    type Registration;

    /// The mode and the Permit wait.
    fn rules(&self) -> GangRules;

    /// Shared access to the groups held with `key`'s (production: its registry shard's read
    /// lock).
    fn read_group<R>(&self, key: &GroupKey, read: impl FnOnce(&Groups) -> R) -> R;

    /// Exclusive access to the groups held with `key`'s, and the waiting map for decisions on
    /// the gang's members made inside the same critical section (production: its registry
    /// shard's write lock, then the members' waiting-map shards). The decisions are delivered
    /// when it ends.
    fn write_group<R>(
        &mut self,
        key: &GroupKey,
        change: impl FnOnce(&mut Groups, &mut Batch<'_, Self::Registration>) -> R,
    ) -> R;

    /// Registers `pod` as waiting for each plugin in `waits` until `now + wait` (upstream's
    /// one timer per plugin), in a critical section of the waiting map alone.
    fn add_waiting(
        &mut self,
        pod: Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<Self::Registration, AddError>;

    /// Clears `plugin` for waiting pod `id`, in a critical section of the waiting map alone;
    /// `true` if this call allowed it.
    fn allow_waiting(&mut self, id: &PodId, plugin: &str) -> bool;

    /// The pod was deleted: its waiting entry, if any, is rejected with upstream's "removed"
    /// for [`Cause::Deleted`](crate::Cause::Deleted); `true` if this call decided it.
    fn remove_waiting(&mut self, id: &PodId) -> bool;

    /// Every waiting pod whose own deadline is at or before `now` times out (upstream's one
    /// timer per waiting pod; Hardened members have none); returns them.
    fn expire_waiting(&mut self, now: Time) -> Vec<PodId>;

    /// The earliest deadline of a waiting pod's own.
    fn next_waiting_deadline(&self) -> Option<Time>;

    /// How many parts the groups are kept in, each changed in critical sections of its own
    /// (production: the registry's shards; a model: one).
    fn group_parts(&self) -> usize;

    /// The earliest deadline of a live attempt in part `part` of the groups.
    fn part_deadline(&self, part: usize) -> Option<Time>;

    /// Runs `expire` on part `part` of the groups in one critical section, and returns what
    /// it returned; its decisions reach the sink once the section has ended (H5).
    fn expire_part(
        &mut self,
        part: usize,
        expire: &mut Expire<'_, Self::Registration>,
    ) -> Vec<(Time, GroupKey)>;

    /// The earliest deadline of a live attempt.
    fn next_attempt_deadline(&self) -> Option<Time>;

    /// Whether the deliberate bug `flaw` is planted (a checker's witness,
    /// [`PlantedGang`](crate::checking::PlantedGang)); only with the `checking` feature.
    #[cfg(feature = "checking")]
    fn planted(&self, flaw: GangFlaw) -> bool {
        let _ = flaw;
        false
    }
}
