//! An ordered map (and set) that keeps a few entries in one sorted `Vec` and many in a B-tree.
//!
//! The queue's ordered indexes (the active heap's order, the pods in flight, the flight
//! starts) hold a handful of entries in a model checker's state and thousands in a busy
//! cluster. A `BTreeMap` allocates a whole node (eleven entries) for the first entry, and a
//! state's queue is copied at nearly every step of a model check: there the nodes were most of
//! the memory of a breadth-first frontier (docs/benchmarks.md, issue #41). Up to
//! [`SMALL`] entries live in a sorted `Vec`, whose clone allocates exactly its length; past it
//! a `BTreeMap` keeps inserts and removals logarithmic. Equality, hashing and iteration are by
//! entries in key order, whichever the representation.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Entries a sorted `Vec` holds before the map becomes a B-tree.
const SMALL: usize = 32;
/// A B-tree shrunk to this many entries becomes a `Vec` again (below [`SMALL`], so that a map
/// at the border does not convert at every step).
const SHRINK: usize = 8;

/// An ordered map: a sorted `Vec` while small, a `BTreeMap` once large.
#[derive(Clone)]
pub(crate) enum CompactMap<K, V> {
    /// At most [`SMALL`] entries, sorted by key, keys unique.
    Small(Vec<(K, V)>),
    /// More than [`SHRINK`] entries.
    Large(BTreeMap<K, V>),
}

impl<K, V> Default for CompactMap<K, V> {
    fn default() -> CompactMap<K, V> {
        CompactMap::Small(Vec::new())
    }
}

impl<K: Ord, V> CompactMap<K, V> {
    /// How many entries.
    pub(crate) fn len(&self) -> usize {
        match self {
            CompactMap::Small(entries) => entries.len(),
            CompactMap::Large(map) => map.len(),
        }
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn position<Q: Ord + ?Sized>(entries: &[(K, V)], key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value at `key`.
    pub(crate) fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        match self {
            CompactMap::Small(entries) => Self::position(entries, key).ok().map(|i| &entries[i].1),
            CompactMap::Large(map) => map.get(key),
        }
    }

    /// The value at `key`, to change.
    pub(crate) fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        match self {
            CompactMap::Small(entries) => match Self::position(entries, key) {
                Ok(i) => Some(&mut entries[i].1),
                Err(_) => None,
            },
            CompactMap::Large(map) => map.get_mut(key),
        }
    }

    /// Whether `key` has a value.
    pub(crate) fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.get(key).is_some()
    }

    /// Sets `key`'s value; the one it replaces, if any.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self {
            CompactMap::Small(entries) => match Self::position(entries, &key) {
                Ok(i) => Some(std::mem::replace(&mut entries[i].1, value)),
                Err(i) if entries.len() < SMALL => {
                    entries.insert(i, (key, value));
                    None
                }
                Err(_) => {
                    let mut map: BTreeMap<K, V> = std::mem::take(entries).into_iter().collect();
                    map.insert(key, value);
                    *self = CompactMap::Large(map);
                    None
                }
            },
            CompactMap::Large(map) => map.insert(key, value),
        }
    }

    /// Takes `key`'s value out.
    pub(crate) fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        match self {
            CompactMap::Small(entries) => match Self::position(entries, key) {
                Ok(i) => Some(entries.remove(i).1),
                Err(_) => None,
            },
            CompactMap::Large(map) => {
                let value = map.remove(key);
                if map.len() <= SHRINK {
                    *self = CompactMap::Small(std::mem::take(map).into_iter().collect());
                }
                value
            }
        }
    }

    /// The entries in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        let (small, large) = match self {
            CompactMap::Small(entries) => (Some(entries.iter().map(|(k, v)| (k, v))), None),
            CompactMap::Large(map) => (None, Some(map.iter())),
        };
        small
            .into_iter()
            .flatten()
            .chain(large.into_iter().flatten())
    }

    /// The keys in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// The entry with the least key.
    pub(crate) fn first_key_value(&self) -> Option<(&K, &V)> {
        match self {
            CompactMap::Small(entries) => entries.first().map(|(k, v)| (k, v)),
            CompactMap::Large(map) => map.first_key_value(),
        }
    }
}

impl<K: Ord, V: PartialEq> PartialEq for CompactMap<K, V> {
    fn eq(&self, other: &CompactMap<K, V>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<K: Ord, V: Eq> Eq for CompactMap<K, V> {}

/// Hashes as a `BTreeMap` of the same entries does: the length, then each entry in order.
impl<K: Ord + Hash, V: Hash> Hash for CompactMap<K, V> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for entry in self.iter() {
            entry.hash(state);
        }
    }
}

impl<K: Ord + fmt::Debug, V: fmt::Debug> fmt::Debug for CompactMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Later entries win over earlier ones of the same key, as `BTreeMap`'s `collect` has it.
impl<K: Ord, V> FromIterator<(K, V)> for CompactMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> CompactMap<K, V> {
        let map: BTreeMap<K, V> = entries.into_iter().collect();
        if map.len() <= SMALL {
            CompactMap::Small(map.into_iter().collect())
        } else {
            CompactMap::Large(map)
        }
    }
}

/// An ordered set: a [`CompactMap`] to nothing.
#[derive(Clone)]
pub(crate) struct CompactSet<K>(CompactMap<K, ()>);

impl<K> Default for CompactSet<K> {
    fn default() -> CompactSet<K> {
        CompactSet(CompactMap::default())
    }
}

impl<K: Ord> PartialEq for CompactSet<K> {
    fn eq(&self, other: &CompactSet<K>) -> bool {
        self.0 == other.0
    }
}

impl<K: Ord> Eq for CompactSet<K> {}

impl<K: Ord> FromIterator<K> for CompactSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(keys: I) -> CompactSet<K> {
        CompactSet(keys.into_iter().map(|key| (key, ())).collect())
    }
}

impl<K: Ord> CompactSet<K> {
    /// How many members.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `key`; whether it was new.
    pub(crate) fn insert(&mut self, key: K) -> bool {
        self.0.insert(key, ()).is_none()
    }

    /// Takes `key` out; whether it was in.
    pub(crate) fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.0.remove(key).is_some()
    }

    /// Whether `key` is in.
    pub(crate) fn contains<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.0.contains_key(key)
    }

    /// The least member.
    pub(crate) fn first(&self) -> Option<&K> {
        self.0.first_key_value().map(|(k, _)| k)
    }

    /// The members in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &K> + '_ {
        self.0.keys()
    }
}

/// Hashes as a `BTreeSet` of the same members does.
impl<K: Ord + Hash> Hash for CompactSet<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for key in self.iter() {
            key.hash(state);
        }
    }
}

impl<K: Ord + fmt::Debug> fmt::Debug for CompactSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    fn hash_of(value: &impl Hash) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    /// Through the Vec and the B-tree and back, the map does what a BTreeMap does, and equal
    /// contents are equal and hash alike whichever the representation.
    #[test]
    fn it_follows_a_btree_map_across_both_representations() {
        let mut compact = CompactMap::default();
        let mut reference = BTreeMap::new();
        let mut seed = 7u64;
        for step in 0..4000u64 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = (seed >> 33) % 64;
            // Grow for a while, then shrink, then grow again: both conversions happen.
            let grow = (step / 500) % 2 == 0;
            if grow {
                assert_eq!(compact.insert(key, step), reference.insert(key, step));
            } else {
                assert_eq!(compact.remove(&key), reference.remove(&key));
            }
            assert_eq!(compact.len(), reference.len());
            assert!(compact.iter().eq(reference.iter()));
            assert_eq!(compact.first_key_value(), reference.first_key_value());
            assert_eq!(compact.get(&key), reference.get(&key));
            assert_eq!(hash_of(&compact), hash_of(&reference));
        }
    }

    #[test]
    fn equal_contents_are_equal_whatever_the_representation() {
        let mut large = CompactMap::default();
        for key in 0..40u32 {
            large.insert(key, ());
        }
        for key in 10..40u32 {
            large.remove(&key);
        }
        assert!(matches!(large, CompactMap::Large(_)));
        let mut small = CompactMap::default();
        for key in (0..10u32).rev() {
            small.insert(key, ());
        }
        assert!(matches!(small, CompactMap::Small(_)));
        assert_eq!(large, small);
        assert_eq!(hash_of(&large), hash_of(&small));
    }

    /// The Vec holds up to [`SMALL`] entries and the next insert makes a B-tree; a collect
    /// picks the form its length asks for. (Either form is a correct map: only a test of the
    /// form tells a Vec grown past `SMALL` from the B-tree.)
    #[test]
    fn it_is_a_vec_up_to_small_entries_and_a_btree_past_them() {
        let mut map = CompactMap::default();
        for key in 0..SMALL {
            map.insert(key, ());
        }
        assert!(matches!(map, CompactMap::Small(_)), "{SMALL} entries");
        map.insert(SMALL, ());
        assert!(matches!(map, CompactMap::Large(_)), "{} entries", SMALL + 1);
        let collected: CompactMap<usize, ()> = (0..SMALL).map(|key| (key, ())).collect();
        assert!(matches!(collected, CompactMap::Small(_)));
        let collected: CompactMap<usize, ()> = (0..=SMALL).map(|key| (key, ())).collect();
        assert!(matches!(collected, CompactMap::Large(_)));
    }

    /// Maps differ when an entry's key or value does, at the same length too; sets when a
    /// member does.
    #[test]
    fn different_entries_are_not_equal() {
        let map = |entries: &[(u8, u8)]| entries.iter().copied().collect::<CompactMap<u8, u8>>();
        assert_eq!(map(&[(1, 1), (2, 2)]), map(&[(2, 2), (1, 1)]));
        assert_ne!(map(&[(1, 1), (2, 2)]), map(&[(1, 1), (2, 3)]));
        assert_ne!(map(&[(1, 1), (2, 2)]), map(&[(1, 1), (3, 2)]));
        assert_ne!(map(&[(1, 1)]), map(&[(1, 1), (2, 2)]));
        let set = |members: &[u8]| members.iter().copied().collect::<CompactSet<u8>>();
        assert_eq!(set(&[1, 2]), set(&[2, 1]));
        assert_ne!(set(&[1, 2]), set(&[1, 3]));
        assert!(set(&[]).is_empty() && !set(&[1]).is_empty());
    }

    #[test]
    fn a_set_follows_a_btree_set() {
        let mut compact = CompactSet::default();
        let mut reference = BTreeSet::new();
        for key in [5u8, 3, 9, 3, 1, 200, 7] {
            assert_eq!(compact.insert(key), reference.insert(key));
        }
        assert!(compact.remove(&9));
        reference.remove(&9);
        assert_eq!(compact.first(), reference.first());
        assert!(compact.iter().eq(reference.iter()));
        assert_eq!(hash_of(&compact), hash_of(&reference));
        assert!(compact.contains(&200) && !compact.contains(&9));
    }
}
