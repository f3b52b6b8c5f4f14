//! The cache's pods by id: a hash table, because the cache holds every assumed and bound pod
//! of the cluster and is asked about one of them at every event, cycle and bind; and one that
//! a clone shares, because the pod-group cycle places each gang on a clone of the whole cache.
//!
//! A B-tree keyed by [`PodId`] compared the looked-up uid with about log₂ *n* stored ones, each
//! behind its own allocation: at a million pods that was a quarter of a simulated run, spent
//! in `memcmp` and its cache misses (issue #23, docs/benchmarks.md). Here a lookup hashes the
//! id's precomputed hash and compares pointers with the one entry it finds.
//!
//! A clone shares the table (one reference count) instead of copying every pod: the pod-group
//! cycle's snapshot of the cache cost the whole cache per gang, 93% of a 139,000-pod run.
//! While the table is shared, each side writes its changes into an overlay of its own (an
//! entry, or its removal), read before the shared table; the first write once it is no longer
//! shared folds the overlay back in. A side that is never cloned never has an overlay.
//!
//! The table is a *set* of entries to everything that looks at the state: its equality and hash
//! do not depend on the order it holds them in, nor on how they are split between the shared
//! table and the overlay, and [`sorted`](PodTable::sorted) lists them in id order for whatever
//! must be deterministic (`Debug`, the first violation [`check`] reports).
//!
//! [`check`]: super::CacheState::check

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

use super::cache::PodEntry;
use crate::fast_hash::{hash_unordered, BuildFastHasher};
use crate::sync::Arc;
use crate::PodId;

type Table<V> = HashMap<PodId, V, BuildFastHasher>;

/// The cache's pods by id. Equal when they hold the same entries; hashed as that set, whatever
/// the order (keeps a model checker's state identity what it was with an ordered map).
#[derive(Clone, Default)]
pub(super) struct PodTable {
    /// The entries, shared with the clones made since the last write that found it unshared.
    shared: Arc<Table<PodEntry>>,
    /// This side's changes while `shared` is shared: an entry, or `None` for a removal.
    overlay: Table<Option<PodEntry>>,
    /// How many entries there are, overlay included.
    len: usize,
}

impl PodTable {
    pub(super) fn get(&self, id: &PodId) -> Option<&PodEntry> {
        match self.overlay.get(id) {
            Some(changed) => changed.as_ref(),
            None => self.shared.get(id),
        }
    }

    pub(super) fn get_mut(&mut self, id: &PodId) -> Option<&mut PodEntry> {
        if Arc::get_mut(&mut self.shared).is_some() {
            return self.own().and_then(|table| table.get_mut(id));
        }
        if !self.overlay.contains_key(id) {
            let entry = self.shared.get(id)?.clone();
            self.overlay.insert(id.clone(), Some(entry));
        }
        self.overlay.get_mut(id).and_then(Option::as_mut)
    }

    pub(super) fn contains_key(&self, id: &PodId) -> bool {
        self.get(id).is_some()
    }

    pub(super) fn insert(&mut self, id: PodId, entry: PodEntry) -> Option<PodEntry> {
        let was = match self.own() {
            Some(table) => table.insert(id, entry),
            None => {
                let was = self.get(&id).cloned();
                self.overlay.insert(id, Some(entry));
                was
            }
        };
        self.len += usize::from(was.is_none());
        was
    }

    pub(super) fn remove(&mut self, id: &PodId) -> Option<PodEntry> {
        let was = match self.own() {
            Some(table) => table.remove(id),
            None => {
                let was = self.get(id).cloned();
                if was.is_some() {
                    self.overlay.insert(id.clone(), None);
                }
                was
            }
        };
        self.len -= usize::from(was.is_some());
        was
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Every entry, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&PodId, &PodEntry)> + '_ {
        let unchanged = self
            .shared
            .iter()
            .filter(|(id, _)| !self.overlay.contains_key(*id));
        let changed = self
            .overlay
            .iter()
            .filter_map(|(id, entry)| Some((id, entry.as_ref()?)));
        unchanged.chain(changed)
    }

    /// Every entry, in pod id order.
    pub(super) fn sorted(&self) -> Vec<(&PodId, &PodEntry)> {
        let mut entries: Vec<_> = self.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries
    }

    /// The table to write in place, if no clone shares it — the overlay folded in first.
    fn own(&mut self) -> Option<&mut Table<PodEntry>> {
        let table = Arc::get_mut(&mut self.shared)?;
        for (id, change) in self.overlay.drain() {
            match change {
                Some(entry) => table.insert(id, entry),
                None => table.remove(&id),
            };
        }
        Some(table)
    }
}

impl FromIterator<(PodId, PodEntry)> for PodTable {
    fn from_iter<I: IntoIterator<Item = (PodId, PodEntry)>>(entries: I) -> PodTable {
        let table: Table<PodEntry> = entries.into_iter().collect();
        PodTable {
            len: table.len(),
            shared: Arc::new(table),
            overlay: Table::default(),
        }
    }
}

/// The same entries, however each side holds them.
impl PartialEq for PodTable {
    fn eq(&self, other: &PodTable) -> bool {
        self.len == other.len && self.iter().all(|(id, entry)| other.get(id) == Some(entry))
    }
}

impl Eq for PodTable {}

/// The set's hash: its size and its entries' own hashes summed (`hash_unordered`, as the
/// group registry and the waiting map hash their tables), so that the order the table holds
/// its entries in — which depends on its history — cannot show.
impl Hash for PodTable {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len);
        state.write_u64(hash_unordered(self.iter()));
    }
}

/// In pod id order, as the ordered map printed.
impl fmt::Debug for PodTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.sorted()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::PodPhase;
    use crate::Resources;

    fn entry(node: &str, cpu: u64) -> PodEntry {
        PodEntry {
            node: Arc::from(node),
            requests: Resources::new(cpu, 0),
            phase: PodPhase::Bound,
        }
    }

    fn hash_of(table: &PodTable) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        table.hash(&mut h);
        h.finish()
    }

    /// Two tables with the same entries, built in different orders and with a removal in one
    /// history, are equal and hash alike; a table that differs in one entry does not.
    #[test]
    fn equality_and_hash_are_the_sets() {
        let ids: Vec<PodId> = (0..200).map(|i| PodId::from(format!("p-{i}"))).collect();
        let forwards: PodTable = ids
            .iter()
            .map(|id| (id.clone(), entry("n1", 100)))
            .collect();
        let mut backwards = PodTable::default();
        backwards.insert(PodId::from("gone"), entry("n2", 5));
        for id in ids.iter().rev() {
            backwards.insert(id.clone(), entry("n1", 100));
        }
        backwards.remove(&PodId::from("gone"));
        assert_eq!(forwards, backwards);
        assert_eq!(hash_of(&forwards), hash_of(&backwards));
        let mut other = backwards.clone();
        assert_eq!(
            other.insert(ids[7].clone(), entry("n1", 101)),
            Some(entry("n1", 100))
        );
        assert_ne!(forwards, other);
        assert_ne!(hash_of(&forwards), hash_of(&other));
        let mut fewer = backwards.clone();
        fewer.remove(&ids[7]);
        assert_ne!(hash_of(&forwards), hash_of(&fewer));
    }

    /// A clone shares the table: each side's writes are its own (overlays), the sides stay
    /// equal to tables built from scratch with the same entries, and a side left alone folds
    /// its overlay back in at its next write.
    #[test]
    fn a_clone_shares_the_table_and_each_side_writes_its_own() {
        let id = |i: usize| PodId::from(format!("p-{i}"));
        let mut live: PodTable = (0..100).map(|i| (id(i), entry("n1", 1))).collect();
        let mut snapshot = live.clone();
        assert!(
            Arc::ptr_eq(&live.shared, &snapshot.shared),
            "shared, not copied"
        );
        snapshot.insert(id(100), entry("n2", 7));
        snapshot.remove(&id(0));
        snapshot.get_mut(&id(1)).unwrap().requests = Resources::new(9, 0);
        live.remove(&id(2));
        assert_eq!((live.len(), snapshot.len()), (99, 100));
        assert_eq!(live.get(&id(0)), Some(&entry("n1", 1)));
        assert_eq!(live.get(&id(100)), None);
        assert_eq!(snapshot.get(&id(0)), None);
        assert_eq!(snapshot.get(&id(1)), Some(&entry("n1", 9)));
        assert!(
            snapshot.contains_key(&id(2)),
            "the live side's removal is its own"
        );
        let rebuilt: PodTable = snapshot
            .sorted()
            .into_iter()
            .map(|(id, entry)| (id.clone(), entry.clone()))
            .collect();
        assert_eq!(snapshot, rebuilt);
        assert_eq!(hash_of(&snapshot), hash_of(&rebuilt));
        assert_eq!(snapshot.iter().count(), 100);
        drop(snapshot);
        live.insert(id(3), entry("n1", 1));
        assert!(live.overlay.is_empty(), "unshared again: folded back in");
        assert_eq!(live.len(), 99);
        assert_eq!(live.get(&id(2)), None);
    }

    /// `sorted` and `Debug` list the entries in id order.
    #[test]
    fn sorted_is_in_id_order() {
        let table: PodTable = ["c", "a", "b"]
            .into_iter()
            .map(|id| (PodId::from(id), entry("n1", 1)))
            .collect();
        let order: Vec<&str> = table.sorted().iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(order, ["a", "b", "c"]);
        let printed = format!("{table:?}");
        assert!(printed.find("\"a\"") < printed.find("\"b\""), "{printed}");
    }
}
