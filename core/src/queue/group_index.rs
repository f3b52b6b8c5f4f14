//! The queue's pods that are not active, indexed by pod group: so that a cluster event that
//! can concern only one group's pods (a member added, its PodGroup added or updated: the gang
//! plugin's [`EventScope::Group`](super::EventScope::Group)) visits those pods in the
//! unschedulable pool and not the whole pool, and an activation of a gang's unscheduled members
//! visits those it can move (in the pool, backing off or in flight) and not the active ones.
//!
//! The index is derived data: it holds slots, never records, and a queue without it is the
//! same state (equality and hashing ignore it). It is built the first time a scoped move finds
//! the pool at [`GroupIndex::BUILD_FROM`] pods or more — small queues, such as the model
//! checker's, walk their few pods and never pay for it — and is kept up to date from then on
//! by every change to the pool. [`GroupIndex::check`] compares it with the pool.

use std::collections::{HashMap, HashSet};

use super::{QueuePlace, QueuedPodInfo};
use crate::fast_hash::BuildFastHasher;
use crate::{GroupKey, PluginName};

type SlotSet = HashSet<u32, BuildFastHasher>;

/// One group's pods that are not active.
#[derive(Clone, Debug, Default)]
pub(super) struct GroupPool {
    /// In the unschedulable pool, not gated (rejected in an attempt).
    pub(super) open: SlotSet,
    /// In the unschedulable pool, gated, by the plugin that gates them (usually one entry).
    pub(super) gated: Vec<(PluginName, SlotSet)>,
    /// Backing off (either backoff) or in flight, except those in `reserved`.
    pub(super) elsewhere: SlotSet,
    /// In flight and found past Reserve by an activation, when the gang's unscheduled stamp
    /// was `reserved_as_of` (`activation_candidates.rs`): while it still is, none of them is
    /// unscheduled, so an activation need not look at them.
    pub(super) reserved: SlotSet,
    /// The gang's unscheduled stamp `reserved` was found at.
    pub(super) reserved_as_of: u64,
}

impl GroupPool {
    fn is_empty(&self) -> bool {
        self.open.is_empty()
            && self.gated.is_empty()
            && self.elsewhere.is_empty()
            && self.reserved.is_empty()
    }

    fn len(&self) -> usize {
        self.open.len()
            + self.elsewhere.len()
            + self.reserved.len()
            + self.gated.iter().map(|(_, s)| s.len()).sum::<usize>()
    }

    /// Every slot filed, in no particular order.
    pub(super) fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.unreserved_slots().chain(self.reserved.iter().copied())
    }

    /// Every slot filed but those in flight found past Reserve, in no particular order.
    pub(super) fn unreserved_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.open
            .iter()
            .chain(self.gated.iter().flat_map(|(_, s)| s))
            .chain(&self.elsewhere)
            .copied()
    }

    /// Forgets which slots were found past Reserve unless it was at stamp `stamp`; from then
    /// on `reserved` is as of `stamp`.
    pub(super) fn reserved_as_of(&mut self, stamp: u64) {
        if self.reserved_as_of != stamp {
            self.elsewhere.extend(self.reserved.drain());
            self.reserved_as_of = stamp;
        }
    }
}

/// The queue's pods that name a group and are not active, by group key (pods without a group
/// are not indexed: no scoped event or activation concerns them).
#[derive(Clone, Debug, Default)]
pub(super) struct GroupIndex {
    groups: HashMap<GroupKey, GroupPool, BuildFastHasher>,
}

impl GroupIndex {
    /// The pool size from which a scoped move builds the index. Below it the full walk costs
    /// about what maintaining the index would.
    pub(super) const BUILD_FROM: usize = 64;

    /// The index of the pods in `slots`, placed at `places`.
    pub(super) fn build(slots: &[Option<QueuedPodInfo>], places: &[QueuePlace]) -> GroupIndex {
        let mut index = GroupIndex::default();
        for (slot, info) in slots.iter().enumerate() {
            if let Some(info) = info {
                index.insert(slot as u32, info, places[slot]);
            }
        }
        index
    }

    /// Files `slot`, holding `info`, placed at `place`, under its group (and, in the pool, its
    /// gate); an active pod or one without a group is not filed.
    pub(super) fn insert(&mut self, slot: u32, info: &QueuedPodInfo, place: QueuePlace) {
        let Some(key) = info.pod().group_key() else {
            return;
        };
        if matches!(place, QueuePlace::Active(_)) {
            return;
        }
        let group = self.groups.entry(key.clone()).or_default();
        let set = match info.gated_by() {
            _ if place != QueuePlace::Unschedulable => &mut group.elsewhere,
            None => &mut group.open,
            Some(plugin) => match group.gated.iter().position(|(p, _)| p == plugin) {
                Some(at) => &mut group.gated[at].1,
                None => {
                    group.gated.push((plugin.clone(), SlotSet::default()));
                    &mut group.gated.last_mut().expect("just pushed").1
                }
            },
        };
        let fresh = set.insert(slot);
        debug_assert!(fresh, "slot {slot} indexed twice");
    }

    /// Takes `slot`, filed under group `key` (wherever it is filed), out of the index.
    pub(super) fn remove(&mut self, slot: u32, key: Option<&GroupKey>) {
        let Some(key) = key else {
            return;
        };
        let Some(group) = self.groups.get_mut(key) else {
            debug_assert!(false, "slot {slot} of an unindexed group");
            return;
        };
        if !group.open.remove(&slot)
            && !group.elsewhere.remove(&slot)
            && !group.reserved.remove(&slot)
        {
            let at = group.gated.iter().position(|(_, s)| s.contains(&slot));
            debug_assert!(at.is_some(), "slot {slot} not indexed under its group");
            if let Some(at) = at {
                group.gated[at].1.remove(&slot);
                if group.gated[at].1.is_empty() {
                    group.gated.swap_remove(at);
                }
            }
        }
        if group.is_empty() {
            self.groups.remove(key);
        }
    }

    /// Group `key`'s pods that are not active, if any.
    pub(super) fn group(&self, key: &GroupKey) -> Option<&GroupPool> {
        self.groups.get(key)
    }

    /// Group `key`'s pods that are not active, if any, to update.
    pub(super) fn group_mut(&mut self, key: &GroupKey) -> Option<&mut GroupPool> {
        self.groups.get_mut(key)
    }

    /// Verifies that the index files exactly the queue's grouped pods that are not active,
    /// each under its group and where it is (in the pool: under its gate).
    pub(super) fn check(
        &self,
        slots: &[Option<QueuedPodInfo>],
        places: &[QueuePlace],
    ) -> Result<(), String> {
        let mut grouped = 0;
        for (slot, info) in slots.iter().enumerate() {
            let Some(info) = info else { continue };
            let Some(key) = info.pod().group_key() else {
                continue;
            };
            let place = places[slot];
            if matches!(place, QueuePlace::Active(_)) {
                continue;
            }
            grouped += 1;
            let slot = slot as u32;
            let filed = self.groups.get(key).is_some_and(|g| match info.gated_by() {
                _ if place == QueuePlace::InFlight => {
                    g.elsewhere.contains(&slot) || g.reserved.contains(&slot)
                }
                _ if place != QueuePlace::Unschedulable => g.elsewhere.contains(&slot),
                None => g.open.contains(&slot),
                Some(plugin) => g
                    .gated
                    .iter()
                    .any(|(p, s)| p == plugin && s.contains(&slot)),
            });
            if !filed {
                return Err(format!(
                    "{place:?} pod {} is not indexed under its group {key:?} as such",
                    info.id()
                ));
            }
        }
        let indexed: usize = self.groups.values().map(GroupPool::len).sum();
        if indexed != grouped {
            return Err(format!(
                "the group index files {indexed} slots, the queue has {grouped} grouped pods \
                 not active"
            ));
        }
        if self.groups.values().any(GroupPool::is_empty) {
            return Err("the group index keeps an empty group".into());
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "group_index_tests.rs"]
mod tests;
