//! The hasher of gangway's lookup tables (groups by key, waiting pods by uid): a multiply-rotate
//! hash over 8-byte words, a few instructions per uid. Keys are pod uids (UUIDs the API server
//! generates) and group keys (hashed once with SipHash when built), not attacker-chosen data,
//! so a keyed hash's flooding resistance buys nothing here; the tables are deterministic too,
//! which the model checker relies on.

use std::hash::{BuildHasherDefault, Hash, Hasher};

const K: u64 = 0x517c_c1b7_2722_0a95;

/// Multiply-rotate hashing over 8-byte words.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // Folds the high bits down: the table uses the low bits for the bucket and the top
        // seven for the tag.
        self.0 ^ (self.0 >> 29)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.mix(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
}

/// Builds [`FastHasher`]s.
pub(crate) type BuildFastHasher = BuildHasherDefault<FastHasher>;

/// A hash of `items` that does not depend on their order: each item's own hash, summed. For
/// the `Hash` of a hash map, so that equal maps hash alike whatever their insertion history;
/// nothing is allocated.
pub(crate) fn hash_unordered<T: Hash>(items: impl Iterator<Item = T>) -> u64 {
    items.fold(0u64, |sum, item| {
        let mut one = FastHasher::default();
        item.hash(&mut one);
        sum.wrapping_add(one.finish())
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn uids_of_one_gang_spread_over_the_table() {
        let build = BuildFastHasher::default();
        let hashes: HashSet<u64> = (0..10_000)
            .map(|m| build.hash_one(format!("00000000-{m:04x}-4000-8000-{m:012x}")))
            .collect();
        assert_eq!(hashes.len(), 10_000, "no two uids collide");
        let buckets: HashSet<u64> = hashes.iter().map(|h| h & 0x3fff).collect();
        assert!(
            buckets.len() > 5_000,
            "{} of 16,384 low-bit buckets",
            buckets.len()
        );
    }

    #[test]
    fn every_byte_counts() {
        let build = BuildFastHasher::default();
        let a = build.hash_one("abcdefgh-1");
        assert_ne!(a, build.hash_one("abcdefgh-2"));
        assert_ne!(a, build.hash_one("abcdefgh-1\0"));
        assert_ne!(build.hash_one(""), build.hash_one("\0"));
    }

    /// The table takes its bucket from the low bits, so `finish` folds the high bits of the
    /// state down into them.
    #[test]
    fn the_high_bits_reach_the_bucket() {
        let low = |state: u64| FastHasher(state).finish() & 0xffff;
        assert_ne!(low(1 << 40), low(0));
        assert_ne!(low(1 << 44), low(0));
    }

    /// Integers hashed on their own (a `u8` tag, a `usize` length prefix) go through their own
    /// methods, and each value counts.
    #[test]
    fn every_integer_width_counts() {
        let build = BuildFastHasher::default();
        assert_ne!(build.hash_one(1u8), build.hash_one(2u8));
        assert_ne!(build.hash_one(1usize), build.hash_one(2usize));
        assert_ne!(build.hash_one(1u64), build.hash_one(2u64));
        assert_ne!(build.hash_one(vec![7u64]), build.hash_one(vec![7u64, 7]));
    }
}
