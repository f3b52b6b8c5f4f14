use std::fmt;

use super::{GroupState, Groups};

use crate::sharded::Sharded;
use crate::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};
use crate::GroupKey;
use crate::Time;

/// The concurrent map of pod group states: [`Groups`] split by group key into shards, each
/// behind its own reader-writer lock (see `docs/architecture.md`), each with the deadline index
/// of its own live gang attempts. Everything the gang plugin does concerns one group, and takes
/// only that group's shard: binding workers finishing one gang do not wait for the scheduling
/// thread working on the next. Reads — [`with_state`](GroupRegistry::with_state), PreEnqueue —
/// share a shard; whole-registry views ([`snapshot`](GroupRegistry::snapshot),
/// [`len`](GroupRegistry::len)) read every shard at once. Cluster events reach it through the
/// plugin ([`GangScheduling`](super::GangScheduling)), whose rules every change goes through;
/// from outside it is read-only. Clones share the registry.
#[derive(Clone, Default)]
pub struct GroupRegistry {
    shards: Arc<Sharded<Groups>>,
}

impl GroupRegistry {
    /// An empty registry.
    pub fn new() -> GroupRegistry {
        GroupRegistry::default()
    }

    /// A copy of group `key`'s state.
    pub fn state(&self, key: &GroupKey) -> Option<GroupState> {
        self.read_key(key).get(key).cloned()
    }

    /// Runs `read` on group `key`'s state inside its shard's critical section, without
    /// copying it (e.g. to reach a gang's members in the waiting map, as Permit does). Keep
    /// `read` short: every operation on that shard's groups waits for it. `None` if the group
    /// has no state.
    pub fn with_state<R>(&self, key: &GroupKey, read: impl FnOnce(&GroupState) -> R) -> Option<R> {
        self.read_key(key).get(key).map(read)
    }

    /// Runs `read` on every group's state, as of one instant (every shard read-locked while
    /// they are gathered). `read` runs on a copy, with no lock held.
    pub fn with_groups<R>(&self, read: impl FnOnce(&Groups) -> R) -> R {
        read(&self.snapshot())
    }

    /// A copy of every group's state, taken in one critical section over all the shards.
    pub fn snapshot(&self) -> Groups {
        let mut all = Groups::new();
        for shard in self.shards.read_all() {
            all.absorb(&shard);
        }
        all
    }

    /// How many groups have a state.
    pub fn len(&self) -> usize {
        self.shards.read_all().iter().map(|s| s.len()).sum()
    }

    /// Whether no group has a state.
    pub fn is_empty(&self) -> bool {
        self.shards.read_all().iter().all(|s| s.is_empty())
    }

    /// How many locks the registry spreads its groups over (a power of two; 2 under loom).
    pub fn shards(&self) -> usize {
        self.shards.count()
    }

    #[cfg(feature = "checking")]
    /// Which shard (`0..shards()`) holds group `key`: groups in different shards change under
    /// different locks. Models use it (through `checking`) to put two gangs in different
    /// shards.
    pub(crate) fn shard_of(&self, key: &GroupKey) -> usize {
        self.index_of(key)
    }

    /// The earliest deadline of a live gang attempt in any shard.
    pub fn next_deadline(&self) -> Option<Time> {
        (0..self.shards.count())
            .filter_map(|index| self.shards.read_at(index).next_deadline())
            .min()
    }

    /// The shard of group `key`.
    fn index_of(&self, key: &GroupKey) -> usize {
        self.shards.index_of(key.fixed_hash())
    }

    /// Exclusive access to the shard holding group `key`, for every change to it.
    pub(crate) fn lock_key(&self, key: &GroupKey) -> RwLockWriteGuard<'_, Groups> {
        self.shards.write_at(self.index_of(key))
    }

    /// Shared access to the shard holding group `key`.
    pub(crate) fn read_key(&self, key: &GroupKey) -> RwLockReadGuard<'_, Groups> {
        self.shards.read_at(self.index_of(key))
    }

    /// Shared access to shard `index`.
    pub(crate) fn read_shard(&self, index: usize) -> RwLockReadGuard<'_, Groups> {
        self.shards.read_at(index)
    }

    /// Exclusive access to shard `index`.
    pub(crate) fn write_shard(&self, index: usize) -> RwLockWriteGuard<'_, Groups> {
        self.shards.write_at(index)
    }
}

impl fmt::Debug for GroupRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupRegistry")
            .field("groups", &self.len())
            .finish()
    }
}
