/// A min-heap of queue slots by key (a backoff expiry), with each slot's position recorded so
/// that a slot can be removed from the middle in O(log n) — the shape of kube-scheduler's own
/// heap with its item index. Equal keys pop in an order fixed by the history of pushes and
/// removals (deterministic, but not by slot).
///
/// Pushing a slot whose key is not smaller than its parent's costs one comparison, which makes
/// a mass move into backoff (`move_all_to_active_or_backoff`) linear.
#[derive(Clone, Debug, Default)]
pub(super) struct KeyedHeap<K> {
    heap: Vec<(K, u32)>,
    /// `pos[slot]` is the slot's index in `heap`, or [`ABSENT`].
    pos: Vec<u32>,
    /// No entry is greater than this: an upper bound, still one after removals.
    bound: Option<(K, u32)>,
}

const ABSENT: u32 = u32::MAX;

/// Key order. Entries with equal keys are not ordered among themselves: an entry equal to its
/// parent stays where it lands, so pushing many equal keys costs one comparison each.
fn less<K: Ord>(a: (K, u32), b: (K, u32)) -> bool {
    a.0 < b.0
}

impl<K: Ord + Copy + std::fmt::Debug> KeyedHeap<K> {
    /// How many slots are in the heap.
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// The key `slot` is filed under, if it is in the heap.
    pub(super) fn key_of(&self, slot: u32) -> Option<K> {
        let at = *self.pos.get(slot as usize)?;
        (at != ABSENT).then(|| self.heap[at as usize].0)
    }

    /// Makes room for `more` entries among slots below `slots`, so that a mass move grows
    /// each array once.
    pub(super) fn reserve(&mut self, more: usize, slots: usize) {
        self.heap.reserve(more);
        if self.pos.len() < slots {
            self.pos.resize(slots, ABSENT);
        }
    }

    /// Every entry, in the heap's (partial) order.
    pub(super) fn entries(&self) -> impl Iterator<Item = (K, u32)> + '_ {
        self.heap.iter().copied()
    }

    /// The smallest entry.
    pub(super) fn peek(&self) -> Option<(K, u32)> {
        self.heap.first().copied()
    }

    /// Files `slot` under `key`; the slot must not be in the heap.
    pub(super) fn push(&mut self, slot: u32, key: K) {
        let at = self.heap.len();
        if self.pos.len() <= slot as usize {
            let len = (slot as usize + 1).max(2 * self.pos.len());
            self.pos.resize(len, ABSENT);
        }
        debug_assert_eq!(self.pos[slot as usize], ABSENT, "slot {slot} filed twice");
        self.heap.push((key, slot));
        self.pos[slot as usize] = at as u32;
        // A mass move mostly pushes keys in order. An entry above every other stays where it
        // lands, and that is known without reading its parent (far behind, out of cache).
        match self.bound {
            Some(bound) if less((key, slot), bound) => self.sift_up(at),
            _ => self.bound = Some((key, slot)),
        }
    }

    /// Takes `slot` out, returning its key, if it was in the heap.
    pub(super) fn remove(&mut self, slot: u32) -> Option<K> {
        let at = *self.pos.get(slot as usize)?;
        if at == ABSENT {
            return None;
        }
        let at = at as usize;
        let last = self.heap.len() - 1;
        self.swap(at, last);
        let (key, _) = self.heap.pop().expect("not empty");
        self.pos[slot as usize] = ABSENT;
        if self.heap.is_empty() {
            self.bound = None;
        }
        if at < self.heap.len() {
            self.sift_down(at);
            self.sift_up(at);
        }
        Some(key)
    }

    /// Verifies the heap order and the position index.
    pub(super) fn check(&self) -> Result<(), String> {
        for (i, &(key, slot)) in self.heap.iter().enumerate() {
            if i > 0 && less((key, slot), self.heap[(i - 1) / 2]) {
                return Err(format!("backoff heap out of order at {i}"));
            }
            if self.pos.get(slot as usize) != Some(&(i as u32)) {
                return Err(format!(
                    "backoff heap has slot {slot} at {i}, indexed elsewhere"
                ));
            }
        }
        if let Some(&top) = self.heap.iter().max_by_key(|(key, _)| *key) {
            if self.bound.is_none_or(|bound| less(bound, top)) {
                return Err(format!(
                    "backoff heap holds {top:?} above its bound {:?}",
                    self.bound
                ));
            }
        }
        let indexed = self.pos.iter().filter(|&&p| p != ABSENT).count();
        if indexed != self.heap.len() {
            return Err(format!(
                "backoff heap indexes {indexed} slots, holds {}",
                self.heap.len()
            ));
        }
        Ok(())
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }

    fn sift_up(&mut self, mut at: usize) {
        let item = self.heap[at];
        while at > 0 {
            let parent = (at - 1) / 2;
            let above = self.heap[parent];
            if !less(item, above) {
                break;
            }
            self.heap[at] = above;
            self.pos[above.1 as usize] = at as u32;
            at = parent;
        }
        self.heap[at] = item;
        self.pos[item.1 as usize] = at as u32;
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let left = 2 * at + 1;
            if left >= self.heap.len() {
                break;
            }
            let right = left + 1;
            let child = if right < self.heap.len() && less(self.heap[right], self.heap[left]) {
                right
            } else {
                left
            };
            if !less(self.heap[child], self.heap[at]) {
                break;
            }
            self.swap(at, child);
            at = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::KeyedHeap;

    #[test]
    fn pops_in_key_order_and_removes_from_the_middle() {
        let mut h = KeyedHeap::default();
        for (slot, key) in [(0, 5), (1, 3), (2, 9), (3, 3), (4, 1), (5, 7)] {
            h.push(slot, key);
            h.check().unwrap();
        }
        assert_eq!(h.remove(2), Some(9));
        assert_eq!(h.remove(2), None);
        assert_eq!(h.key_of(5), Some(7));
        h.check().unwrap();
        let mut order = Vec::new();
        while let Some((key, slot)) = h.peek() {
            order.push((key, slot));
            h.remove(slot);
            h.check().unwrap();
        }
        let keys: Vec<i32> = order.iter().map(|&(key, _)| key).collect();
        assert_eq!(keys, [1, 3, 3, 5, 7]);
        assert_eq!((order[0].1, order[3].1, order[4].1), (4, 0, 5));
        assert_eq!(h.len(), 0);
    }

    /// Through thousands of pushes and removals with many equal keys, the heap's least key
    /// is a sorted set's, and its order and index stay sound (a wrong parent or child in a
    /// sift breaks one of them).
    #[test]
    fn it_follows_a_sorted_set_through_pushes_and_removals() {
        let mut h = KeyedHeap::default();
        let mut reference = std::collections::BTreeSet::new();
        let mut keys = vec![None; 200];
        let mut seed = 11u64;
        for step in 0..3000u32 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let slot = ((seed >> 33) % 200) as u32;
            let key = ((seed >> 45) % 40) as u32;
            if step % 5 == 0 {
                let least = reference.first().copied();
                assert_eq!(h.peek().map(|(key, _)| key), least.map(|(key, _)| key));
                if let Some((key, slot)) = h.peek() {
                    assert_eq!(h.remove(slot), Some(key));
                    reference.remove(&(key, slot));
                    keys[slot as usize] = None;
                }
            } else if let Some(old) = keys[slot as usize].take() {
                assert_eq!(h.remove(slot), Some(old));
                reference.remove(&(old, slot));
            } else {
                h.push(slot, key);
                reference.insert((key, slot));
                keys[slot as usize] = Some(key);
            }
            h.check().unwrap();
            assert_eq!(h.len(), reference.len());
            assert_eq!(h.key_of(slot), keys[slot as usize]);
        }
    }

    /// `reserve` makes room for the slots it is told of, and never shrinks the index.
    #[test]
    fn reserve_makes_room_for_the_slots_it_names() {
        let mut h: KeyedHeap<u32> = KeyedHeap::default();
        h.reserve(10, 20);
        assert!(h.heap.capacity() >= 10);
        assert_eq!(h.pos.len(), 20);
        h.reserve(0, 5);
        assert_eq!(h.pos.len(), 20);
        h.push(19, 1);
        assert_eq!(h.pos.len(), 20, "slot 19 had room");
    }

    /// The position index grows by doubling, so that pushes in slot order cost amortised
    /// constant time.
    #[test]
    fn the_position_index_grows_by_doubling() {
        let mut h = KeyedHeap::default();
        let lengths: Vec<usize> = (0..9u32)
            .map(|slot| {
                h.push(slot, slot);
                h.pos.len()
            })
            .collect();
        assert_eq!(lengths, [1, 2, 4, 4, 8, 8, 8, 8, 16]);
    }

    /// The check finds an entry below its parent, though not below the root nor the
    /// root's children.
    #[test]
    fn the_check_finds_an_entry_below_its_parent() {
        let mut h = KeyedHeap::default();
        for (slot, key) in [0, 10, 20, 30, 40, 50].into_iter().enumerate() {
            h.push(slot as u32, key);
        }
        h.check().unwrap();
        h.heap[5].0 = 15; // its parent, at 2, has 20
        let found = h.check().expect_err("out of order");
        assert!(found.contains("out of order at 5"), "{found}");
    }
}
