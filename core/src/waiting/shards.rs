//! The waiting map's shards: its pods spread by uid hash over [`Sharded`] states (see
//! `sharded.rs` for the locking), and the counter its registrations are numbered from.

use super::batch::StateOf;
use super::latch::Latch;
use super::state::WaitingState;
use crate::sharded::{Locked, Sharded};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};
use crate::PodId;

/// What each shard holds.
pub(super) type State = WaitingState<Arc<Latch>>;

/// Every shard of one map, and the counter its registrations are numbered from.
pub(super) struct Shards {
    shards: Sharded<State>,
    /// The next registration's ticket. Drawn under the registering shard's write lock, only
    /// once the pod is known to be new, so the tickets run in registration order as one
    /// state's do.
    next_ticket: AtomicU64,
}

impl Shards {
    /// Empty shards.
    pub(super) fn new() -> Shards {
        Shards {
            shards: Sharded::new(),
            next_ticket: AtomicU64::new(0),
        }
    }

    /// How many shards there are.
    pub(super) fn count(&self) -> usize {
        self.shards.count()
    }

    /// The shard that holds pod `id`, by the hash fixed in the id.
    pub(super) fn index_of(&self, id: &PodId) -> usize {
        self.shards.index_of(id.fixed_hash())
    }

    /// Shared access to pod `id`'s shard.
    pub(super) fn read(&self, id: &PodId) -> RwLockReadGuard<'_, State> {
        self.read_at(self.index_of(id))
    }

    /// Exclusive access to pod `id`'s shard.
    pub(super) fn write(&self, id: &PodId) -> RwLockWriteGuard<'_, State> {
        self.write_at(self.index_of(id))
    }

    /// Shared access to shard `index`.
    pub(super) fn read_at(&self, index: usize) -> RwLockReadGuard<'_, State> {
        self.shards.read_at(index)
    }

    /// Exclusive access to shard `index`.
    pub(super) fn write_at(&self, index: usize) -> RwLockWriteGuard<'_, State> {
        self.shards.write_at(index)
    }

    /// Exclusive access to every shard that holds a pod of `ids`, taken in shard order.
    pub(super) fn write_many(&self, ids: &[PodId]) -> LockedPods<'_> {
        LockedPods {
            shards: self,
            locked: self
                .shards
                .write_many(ids.iter().map(|id| self.index_of(id))),
        }
    }

    /// Shared access to every shard, taken in shard order: a consistent view of the whole map.
    pub(super) fn read_all(&self) -> Vec<RwLockReadGuard<'_, State>> {
        self.shards.read_all()
    }

    /// Numbers a registration; call with the registering shard's write lock held.
    pub(super) fn draw_ticket(&self) -> u64 {
        // Relaxed is enough: every draw happens under a shard lock, and whoever reads the
        // counter for a view of the whole map holds every shard's lock.
        self.next_ticket.fetch_add(1, Ordering::Relaxed)
    }

    #[cfg(any(test, feature = "checking"))]
    /// The ticket the next registration will get; call with every shard locked.
    pub(super) fn next_ticket(&self) -> u64 {
        self.next_ticket.load(Ordering::Relaxed)
    }
}

/// The write locks of the shards a gang's members fall in.
pub(super) struct LockedPods<'a> {
    shards: &'a Shards,
    locked: Locked<'a, State>,
}

impl StateOf<Arc<Latch>> for LockedPods<'_> {
    fn state_of(&mut self, id: &PodId) -> &mut State {
        self.locked.at(self.shards.index_of(id))
    }
}
