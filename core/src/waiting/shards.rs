//! The waiting map's locks: its pods spread by uid hash over a fixed number of shards, each a
//! [`WaitingState`] behind its own reader-writer lock, so that threads deciding different pods
//! neither wait for each other nor share a cache line. A decision on one pod takes one shard's
//! lock. A decision on a gang takes the write lock of every shard its members fall in, in shard
//! order — the one lock order, so two gangs cannot deadlock — and holds them all, so the gang
//! is still decided in one step (H1). Views of the whole map take every shard's read lock, in
//! the same order.

use smallvec::SmallVec;

use super::batch::StateOf;
use super::latch::Latch;
use super::state::WaitingState;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use crate::PodId;

/// How many shards a map has (a power of two, at most 255). Under loom two: few enough that
/// the models stay small, enough that a gang's members can fall in different shards.
pub(super) const SHARDS: usize = if cfg!(loom) { 2 } else { 64 };

/// What each shard holds.
pub(super) type State = WaitingState<Arc<Latch>>;

/// One shard, on cache lines of its own (128 bytes: the adjacent-line prefetcher pairs lines).
#[repr(align(128))]
struct Shard(RwLock<State>);

/// Every shard of one map, and the counter its registrations are numbered from.
pub(super) struct Shards {
    shards: Box<[Shard]>,
    /// The next registration's ticket. Drawn under the registering shard's write lock, only
    /// once the pod is known to be new, so the tickets run in registration order as one
    /// state's do.
    next_ticket: AtomicU64,
}

impl Shards {
    /// [`SHARDS`] empty shards.
    pub(super) fn new() -> Shards {
        Shards {
            shards: (0..SHARDS)
                .map(|_| Shard(RwLock::new(WaitingState::new())))
                .collect(),
            next_ticket: AtomicU64::new(0),
        }
    }

    /// How many shards there are.
    pub(super) fn count(&self) -> usize {
        self.shards.len()
    }

    /// The shard that holds pod `id`: bits of the hash fixed in the id, above those the
    /// shard's own table uses first.
    pub(super) fn index_of(&self, id: &PodId) -> usize {
        (id.fixed_hash() >> 40) as usize & (self.shards.len() - 1)
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
        self.shards[index].0.read()
    }

    /// Exclusive access to shard `index`.
    pub(super) fn write_at(&self, index: usize) -> RwLockWriteGuard<'_, State> {
        self.shards[index].0.write()
    }

    /// Exclusive access to every shard that holds a pod of `ids`, taken in shard order.
    pub(super) fn write_many(&self, ids: &[PodId]) -> Locked<'_> {
        let mut touched = [false; SHARDS];
        for id in ids {
            touched[self.index_of(id)] = true;
        }
        let mut slots = [NOT_LOCKED; SHARDS];
        let mut guards = SmallVec::new();
        for (index, _) in touched.iter().enumerate().filter(|(_, t)| **t) {
            slots[index] = guards.len() as u8;
            guards.push(self.write_at(index));
        }
        Locked {
            shards: self,
            slots,
            guards,
        }
    }

    /// Shared access to every shard, taken in shard order: a consistent view of the whole map.
    pub(super) fn read_all(&self) -> Vec<RwLockReadGuard<'_, State>> {
        (0..self.count()).map(|i| self.read_at(i)).collect()
    }

    /// Numbers a registration; call with the registering shard's write lock held.
    pub(super) fn draw_ticket(&self) -> u64 {
        // Relaxed is enough: every draw happens under a shard lock, and whoever reads the
        // counter for a view of the whole map holds every shard's lock.
        self.next_ticket.fetch_add(1, Ordering::Relaxed)
    }

    /// The ticket the next registration will get; call with every shard locked.
    pub(super) fn next_ticket(&self) -> u64 {
        self.next_ticket.load(Ordering::Relaxed)
    }
}

/// A shard a batch has not locked, in [`Locked::slots`].
const NOT_LOCKED: u8 = u8::MAX;

/// The write locks of the shards a gang's members fall in, taken in shard order.
pub(super) struct Locked<'a> {
    shards: &'a Shards,
    /// For each shard, where its guard is in `guards` ([`NOT_LOCKED`] if it is not locked).
    slots: [u8; SHARDS],
    guards: SmallVec<[RwLockWriteGuard<'a, State>; 4]>,
}

impl StateOf<Arc<Latch>> for Locked<'_> {
    fn state_of(&mut self, id: &PodId) -> &mut State {
        let slot = self.slots[self.shards.index_of(id)];
        assert_ne!(
            slot, NOT_LOCKED,
            "a batch locks the shard of every pod it names"
        );
        &mut self.guards[usize::from(slot)]
    }
}
