//! The queue's pods by id: their slots, in a `Vec` while few, in a hash table once many.
//!
//! A hash table sized for five pods is 280 bytes, and a model checker copies a state's queue
//! at nearly every step (the breadth-first frontier's memory, docs/benchmarks.md, issue #41);
//! up to [`SMALL`] pods sit in a `Vec` of pairs instead, searched from the front (a pod id
//! compares its precomputed hash first), whose copy allocates exactly its length. Past it the
//! table keeps lookups constant-time for a busy cluster. Iteration order is unspecified in
//! both, as a hash table's is.

use std::collections::HashMap;

use crate::fast_hash::BuildFastHasher;
use crate::PodId;

/// Pods a `Vec` holds before the index becomes a hash table.
const SMALL: usize = 16;
/// A table shrunk to this many pods becomes a `Vec` again (below [`SMALL`], so that an index
/// at the border does not convert at every step).
const SHRINK: usize = 4;

/// Each known pod's slot.
#[derive(Clone, Debug)]
pub(super) enum SlotIndex {
    /// At most [`SMALL`] pods, each once.
    Small(Vec<(PodId, u32)>),
    /// More than [`SHRINK`] pods.
    Large(HashMap<PodId, u32, BuildFastHasher>),
}

impl Default for SlotIndex {
    fn default() -> SlotIndex {
        SlotIndex::Small(Vec::new())
    }
}

impl SlotIndex {
    /// How many pods.
    pub(super) fn len(&self) -> usize {
        match self {
            SlotIndex::Small(pairs) => pairs.len(),
            SlotIndex::Large(table) => table.len(),
        }
    }

    /// Pod `id`'s slot.
    pub(super) fn get(&self, id: &PodId) -> Option<&u32> {
        match self {
            SlotIndex::Small(pairs) => pairs.iter().find(|(known, _)| known == id).map(|(_, s)| s),
            SlotIndex::Large(table) => table.get(id),
        }
    }

    /// Files pod `id` at `slot`; the slot it had, if any.
    pub(super) fn insert(&mut self, id: PodId, slot: u32) -> Option<u32> {
        match self {
            SlotIndex::Small(pairs) => {
                if let Some((_, known)) = pairs.iter_mut().find(|(known, _)| *known == id) {
                    return Some(std::mem::replace(known, slot));
                }
                if pairs.len() < SMALL {
                    pairs.push((id, slot));
                } else {
                    let mut table: HashMap<PodId, u32, BuildFastHasher> =
                        std::mem::take(pairs).into_iter().collect();
                    table.insert(id, slot);
                    *self = SlotIndex::Large(table);
                }
                None
            }
            SlotIndex::Large(table) => table.insert(id, slot),
        }
    }

    /// Forgets pod `id`; its slot, if it had one.
    pub(super) fn remove(&mut self, id: &PodId) -> Option<u32> {
        match self {
            SlotIndex::Small(pairs) => {
                let at = pairs.iter().position(|(known, _)| known == id)?;
                Some(pairs.swap_remove(at).1)
            }
            SlotIndex::Large(table) => {
                let slot = table.remove(id);
                if table.len() <= SHRINK {
                    *self = SlotIndex::Small(std::mem::take(table).into_iter().collect());
                }
                slot
            }
        }
    }

    /// Every pod and its slot, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&PodId, &u32)> + '_ {
        let (small, large) = match self {
            SlotIndex::Small(pairs) => (Some(pairs.iter().map(|(id, slot)| (id, slot))), None),
            SlotIndex::Large(table) => (None, Some(table.iter())),
        };
        small
            .into_iter()
            .flatten()
            .chain(large.into_iter().flatten())
    }
}

impl std::ops::Index<&PodId> for SlotIndex {
    type Output = u32;

    /// Pod `id`'s slot; `id` must be known.
    fn index(&self, id: &PodId) -> &u32 {
        self.get(id).expect("a known pod")
    }
}

/// A pod given twice keeps its last slot, as a hash table's `collect` has it.
impl FromIterator<(PodId, u32)> for SlotIndex {
    fn from_iter<I: IntoIterator<Item = (PodId, u32)>>(pairs: I) -> SlotIndex {
        let mut index = SlotIndex::default();
        for (id, slot) in pairs {
            index.insert(id, slot);
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Through the `Vec` and the table and back, the index does what a hash table does.
    #[test]
    fn it_follows_a_hash_table_across_both_representations() {
        let ids: Vec<PodId> = (0..40).map(|n| PodId::new(format!("uid-{n}"))).collect();
        let mut index = SlotIndex::default();
        let mut reference = HashMap::new();
        let mut seed = 11u64;
        for step in 0..4000u32 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = &ids[((seed >> 33) % 40) as usize];
            if (step / 300) % 2 == 0 {
                assert_eq!(
                    index.insert(id.clone(), step),
                    reference.insert(id.clone(), step)
                );
            } else {
                assert_eq!(index.remove(id), reference.remove(id));
            }
            assert_eq!(index.len(), reference.len());
            assert_eq!(index.get(id), reference.get(id));
            let mut listed: Vec<(&PodId, &u32)> = index.iter().collect();
            let mut expected: Vec<(&PodId, &u32)> = reference.iter().collect();
            listed.sort();
            expected.sort();
            assert_eq!(listed, expected);
        }
        assert!(matches!(index, SlotIndex::Small(_)) || index.len() > SHRINK);
    }

    /// Up to `SMALL` pods the index is the `Vec`, past it the table: a table from the first pod
    /// is a correct index, slower for the few pods a queue mostly holds, which only this tells
    /// apart (found missing by mutation testing, issue #43: `<` turned `==`).
    #[test]
    fn it_is_a_vec_up_to_small_pods_and_a_table_past_them() {
        let mut index = SlotIndex::default();
        for n in 0..SMALL as u32 {
            index.insert(PodId::new(format!("uid-{n}")), n);
            assert!(matches!(index, SlotIndex::Small(_)), "{} pods", n + 1);
        }
        index.insert(PodId::new("uid-past"), SMALL as u32);
        assert!(matches!(index, SlotIndex::Large(_)));
        // Shrunk, it stays the table down to SHRINK + 1 pods and is the Vec again at SHRINK.
        for n in 0..SMALL - SHRINK {
            assert!(matches!(index, SlotIndex::Large(_)), "{} pods", index.len());
            assert_eq!(
                index.remove(&PodId::new(format!("uid-{n}"))),
                Some(n as u32)
            );
        }
        assert_eq!(index.len(), SHRINK + 1);
        assert!(matches!(index, SlotIndex::Large(_)));
        index.remove(&PodId::new("uid-past"));
        assert!(matches!(index, SlotIndex::Small(_)), "{SHRINK} pods");
    }
}
