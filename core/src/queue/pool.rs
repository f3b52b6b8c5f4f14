/// The unschedulable pool as a set of queue slots (a sparse set): O(1) insertion and removal
/// (each slot's position is recorded; removal swaps the last member in), and a walk over the
/// members alone, so a cluster event costs nothing for pods that are elsewhere in the queue.
///
/// A recorded position counts only if the member there points back at the slot, so taking a
/// slot out never writes its position — a mass move out of the pool writes nothing per pod
/// here.
#[derive(Clone, Debug, Default)]
pub(super) struct Pool {
    members: Vec<u32>,
    /// `pos[slot]` is the slot's index in `members`, if `members` agrees.
    pos: Vec<u32>,
}

impl Pool {
    /// How many pods are in the pool.
    pub(super) fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether `slot` is in the pool.
    pub(super) fn contains(&self, slot: u32) -> bool {
        self.position(slot).is_some()
    }

    fn position(&self, slot: u32) -> Option<usize> {
        let at = *self.pos.get(slot as usize)? as usize;
        (self.members.get(at) == Some(&slot)).then_some(at)
    }

    /// The members, in no particular order.
    pub(super) fn members(&self) -> &[u32] {
        &self.members
    }

    /// Adds `slot`, which must not be in the pool.
    pub(super) fn insert(&mut self, slot: u32) {
        if self.pos.len() <= slot as usize {
            let len = (slot as usize + 1).max(2 * self.pos.len());
            self.pos.resize(len, 0);
        }
        debug_assert!(!self.contains(slot), "slot {slot} pooled twice");
        self.pos[slot as usize] = self.members.len() as u32;
        self.members.push(slot);
    }

    /// Takes `slot` out; whether it was in the pool.
    pub(super) fn remove(&mut self, slot: u32) -> bool {
        let Some(at) = self.position(slot) else {
            return false;
        };
        self.members.swap_remove(at);
        if let Some(&moved) = self.members.get(at) {
            self.pos[moved as usize] = at as u32;
        }
        true
    }

    /// Keeps only the members for which `keep` is true, in one pass.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(u32) -> bool) {
        let pos = &mut self.pos;
        let mut kept = 0;
        self.members.retain(|&slot| {
            if !keep(slot) {
                return false;
            }
            pos[slot as usize] = kept;
            kept += 1;
            true
        });
    }

    /// Verifies the position index (each member's position points at it; a slot listed twice
    /// fails, as only one of its positions can).
    pub(super) fn check(&self) -> Result<(), String> {
        for (i, &slot) in self.members.iter().enumerate() {
            if self.pos.get(slot as usize) != Some(&(i as u32)) {
                return Err(format!("pool has slot {slot} at {i}, indexed elsewhere"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;

    #[test]
    fn removes_from_the_middle_and_retains_in_one_pass() {
        let mut p = Pool::default();
        for slot in [4, 0, 7, 2] {
            p.insert(slot);
        }
        assert!(p.remove(0));
        assert!(!p.remove(0));
        p.check().unwrap();
        p.retain(|slot| slot != 7);
        p.check().unwrap();
        let mut left = p.members().to_vec();
        left.sort();
        assert_eq!(left, [2, 4]);
        assert!(p.contains(2) && !p.contains(7));
    }
}
