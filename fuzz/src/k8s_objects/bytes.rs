//! The input as a stream of choices: every byte string is an input, and one that runs out
//! reads as zeros (the shortest, most ordinary choice).

/// The input's bytes, read front to back.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    /// A reader of `data`.
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data, pos: 0 }
    }

    /// The next byte, or 0 once the input has run out.
    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A choice among `n` (the next byte modulo `n`).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// Whether the input has run out.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
}
