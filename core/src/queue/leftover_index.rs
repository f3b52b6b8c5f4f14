//! The unschedulable pool ordered by how long each pod has been parked, so that the leftover
//! flush and its next deadline cost what is stale, not the pool's size (issue #23: with tens of
//! thousands of pods parked, the timer's flush and deadline walks were a quarter of a run).
//!
//! Derived data like the [group index](super::group_index): built by the first leftover flush
//! that finds the queue holding [`LeftoverIndex::BUILD_FROM`] pods or more, kept up to date by
//! every change to the pool from then on, ignored by the state's equality, and compared with
//! the pool by [`LeftoverIndex::check`].

use std::collections::BTreeSet;

use super::pool::Pool;
use super::QueuedPodInfo;
use crate::Time;

/// Pooled slots by (parked since, slot), the gated apart.
#[derive(Clone, Debug, Default)]
pub(super) struct LeftoverIndex {
    open: BTreeSet<(Time, u32)>,
    gated: BTreeSet<(Time, u32)>,
}

impl LeftoverIndex {
    /// The queue size from which the leftover flush builds the index.
    pub(super) const BUILD_FROM: usize = 64;

    /// The index of `pool`, whose records are in `slots`.
    pub(super) fn build(pool: &Pool, slots: &[Option<QueuedPodInfo>]) -> LeftoverIndex {
        let mut index = LeftoverIndex::default();
        for slot in pool.iter() {
            index.insert(
                slot,
                slots[slot as usize].as_ref().expect("pooled slot in use"),
            );
        }
        index
    }

    fn set(&mut self, info: &QueuedPodInfo) -> &mut BTreeSet<(Time, u32)> {
        if info.gated_by().is_some() {
            &mut self.gated
        } else {
            &mut self.open
        }
    }

    /// Files pooled `slot`, holding `info` as it is now.
    pub(super) fn insert(&mut self, slot: u32, info: &QueuedPodInfo) {
        let fresh = self.set(info).insert((info.parked_since(), slot));
        debug_assert!(fresh, "slot {slot} filed twice");
    }

    /// Takes `slot`, filed when it held `info` as it is now, out.
    pub(super) fn remove(&mut self, slot: u32, info: &QueuedPodInfo) {
        self.remove_filed(slot, info.parked_since(), info.gated_by().is_some());
    }

    /// Takes `slot`, filed as parked since `since` and gated or not, out.
    pub(super) fn remove_filed(&mut self, slot: u32, since: Time, gated: bool) {
        let set = if gated {
            &mut self.gated
        } else {
            &mut self.open
        };
        let filed = set.remove(&(since, slot));
        debug_assert!(filed, "slot {slot} not filed as its record says");
    }

    /// The slots parked longer than `max` at `now` (stale), in slot order; gated ones too.
    pub(super) fn stale(&self, now: Time, max: std::time::Duration) -> Vec<u32> {
        let mut stale: Vec<u32> = [&self.open, &self.gated]
            .into_iter()
            .flat_map(|set| {
                set.iter()
                    .take_while(|(since, _)| now - *since > max)
                    .map(|&(_, slot)| slot)
            })
            .collect();
        stale.sort_unstable();
        stale
    }

    /// The longest parked, gated ones included if `gated`.
    pub(super) fn oldest(&self, gated: bool) -> Option<Time> {
        let open = self.open.first().map(|&(t, _)| t);
        let gated = gated.then(|| self.gated.first().map(|&(t, _)| t)).flatten();
        open.into_iter().chain(gated).min()
    }

    /// Verifies that the index files exactly the pool's pods, each as its record says.
    pub(super) fn check(&self, pool: &Pool, slots: &[Option<QueuedPodInfo>]) -> Result<(), String> {
        for slot in pool.iter() {
            let info = slots[slot as usize].as_ref().expect("pooled slot in use");
            let set = if info.gated_by().is_some() {
                &self.gated
            } else {
                &self.open
            };
            if !set.contains(&(info.parked_since(), slot)) {
                return Err(format!(
                    "pooled pod {} is not in the leftover index as parked since {:?}",
                    info.id(),
                    info.parked_since()
                ));
            }
        }
        if self.open.len() + self.gated.len() != pool.len() {
            return Err(format!(
                "the leftover index files {} slots, the pool holds {}",
                self.open.len() + self.gated.len(),
                pool.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "leftover_index_tests.rs"]
mod tests;
