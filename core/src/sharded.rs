//! A value split into shards by hash, each behind its own reader-writer lock on cache lines of
//! its own: the waiting-pod map's shards (by uid) and the group registry's (by group key). An
//! operation on one key takes one shard's lock, so threads working on different keys neither
//! wait for each other nor bounce one lock word between cores. An operation on many keys takes
//! the write lock of every shard they fall in, in shard order — the one lock order, so two
//! such operations cannot deadlock — and holds them all, so it is still one step. Views of the
//! whole value take every shard's read lock, in the same order.

use smallvec::SmallVec;

use crate::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// How many shards (a power of two, at most 255). Under loom two: few enough that the models
/// stay small, enough that related keys can fall in different shards.
pub(crate) const SHARDS: usize = if cfg!(loom) { 2 } else { 64 };

/// One shard, on cache lines of its own (128 bytes: the adjacent-line prefetcher pairs lines).
#[repr(align(128))]
struct Shard<T>(RwLock<T>);

/// [`SHARDS`] values of `T`, each behind its own lock.
pub(crate) struct Sharded<T> {
    shards: Box<[Shard<T>]>,
}

impl<T: Default> Sharded<T> {
    /// [`SHARDS`] default values.
    pub(crate) fn new() -> Sharded<T> {
        Sharded {
            shards: (0..SHARDS).map(|_| Shard(RwLock::default())).collect(),
        }
    }
}

impl<T: Default> Default for Sharded<T> {
    fn default() -> Self {
        Sharded::new()
    }
}

impl<T> Sharded<T> {
    /// How many shards there are.
    pub(crate) fn count(&self) -> usize {
        self.shards.len()
    }

    /// The shard of a key whose hash is `hash`: bits above those a shard's own table uses
    /// first.
    pub(crate) fn index_of(&self, hash: u64) -> usize {
        (hash >> 40) as usize & (self.shards.len() - 1)
    }

    /// Shared access to shard `index`.
    pub(crate) fn read_at(&self, index: usize) -> RwLockReadGuard<'_, T> {
        self.shards[index].0.read()
    }

    /// Exclusive access to shard `index`.
    pub(crate) fn write_at(&self, index: usize) -> RwLockWriteGuard<'_, T> {
        self.shards[index].0.write()
    }

    /// Shared access to every shard, taken in shard order: a consistent view of the whole.
    pub(crate) fn read_all(&self) -> Vec<RwLockReadGuard<'_, T>> {
        (0..self.count()).map(|i| self.read_at(i)).collect()
    }

    /// Exclusive access to every shard in `indices` (any order, repeats allowed), taken in
    /// shard order.
    pub(crate) fn write_many(&self, indices: impl IntoIterator<Item = usize>) -> Locked<'_, T> {
        let mut touched = [false; SHARDS];
        for index in indices {
            touched[index] = true;
        }
        let mut slots = [NOT_LOCKED; SHARDS];
        let mut guards = SmallVec::new();
        for (index, _) in touched.iter().enumerate().filter(|(_, t)| **t) {
            slots[index] = guards.len() as u8;
            guards.push(self.write_at(index));
        }
        Locked { slots, guards }
    }
}

/// A shard [`Locked`] does not hold, in its slot table.
const NOT_LOCKED: u8 = u8::MAX;

/// The write locks of some shards, taken in shard order.
pub(crate) struct Locked<'a, T> {
    /// For each shard, where its guard is in `guards` ([`NOT_LOCKED`] if it is not locked).
    slots: [u8; SHARDS],
    guards: SmallVec<[RwLockWriteGuard<'a, T>; 4]>,
}

impl<T> Locked<'_, T> {
    /// Shard `index`, which must be one of those locked.
    pub(crate) fn at(&mut self, index: usize) -> &mut T {
        let slot = self.slots[index];
        assert_ne!(slot, NOT_LOCKED, "a batch locks every shard it names");
        &mut self.guards[usize::from(slot)]
    }
}
