//! Where the trace generators' choices come from: a seeded generator (`gangway differential
//! --generate-gang N`, `--generate-driver N`) or a list of bytes that proptest (or a fuzzer)
//! supplies ([`ByteChoices`]), so that a shrunk list is a shorter, simpler trace of the same
//! kind — the generators build each op against gangway's runner either way, so every trace is
//! valid.

use crate::simulate::generate::SplitMix64;

/// A source of choices for a trace generator.
pub trait Choices {
    /// A choice in `lo..=hi` (`lo <= hi`).
    fn range(&mut self, lo: u64, hi: u64) -> u64;

    /// Whether the choices have run out; a generator ends its trace there.
    fn exhausted(&self) -> bool {
        false
    }
}

impl Choices for SplitMix64 {
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        SplitMix64::range(self, lo, hi)
    }
}

/// Choices read from bytes: each choice takes as many bytes as its range needs (one for up to
/// 256 values), modulo the range. Once the bytes run out every choice is the lowest and
/// [`exhausted`](Choices::exhausted) says so. Fewer bytes make a shorter trace and smaller
/// bytes the earlier arms of a generator's choice, which is what shrinking wants.
#[derive(Clone, Debug)]
pub struct ByteChoices<'a> {
    bytes: &'a [u8],
    next: usize,
}

impl<'a> ByteChoices<'a> {
    /// Choices from `bytes`, the first byte first.
    pub fn new(bytes: &'a [u8]) -> ByteChoices<'a> {
        ByteChoices { bytes, next: 0 }
    }
}

impl Choices for ByteChoices<'_> {
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let span = u128::from(hi - lo) + 1;
        let (mut value, mut reach) = (0u128, 1u128);
        while reach < span {
            let byte = self.bytes.get(self.next).copied().unwrap_or(0);
            self.next = (self.next + 1).min(self.bytes.len());
            value = value << 8 | u128::from(byte);
            reach <<= 8;
        }
        lo + (value % span) as u64
    }

    fn exhausted(&self) -> bool {
        self.next >= self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_pick_modulo_the_range_and_run_out_at_the_lowest() {
        let mut choices = ByteChoices::new(&[7, 1, 2, 255]);
        assert_eq!(choices.range(0, 4), 2);
        assert_eq!(
            choices.range(10, 10),
            10,
            "a range of one value takes no byte"
        );
        // 1 << 8 | 2 = 258, modulo 1000 values.
        assert_eq!(choices.range(0, 999), 258);
        assert!(!choices.exhausted());
        assert_eq!(choices.range(0, 109), 255 % 110);
        assert!(choices.exhausted());
        assert_eq!(choices.range(3, 9), 3);
        assert_eq!(choices.range(0, u64::MAX), 0);
    }
}
