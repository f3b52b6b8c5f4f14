//! The unschedulable pool's gated pods by the PreEnqueue plugin that gates them, so that a
//! cluster event skips — without visiting them — the gated pods whose gate did not register
//! for it: such a pod moves only for events its gate listens to (upstream's
//! `isPodWorthRequeuing` for gated pods). A gang that can no longer complete (a member deleted)
//! stays gated for good, and every later event walked past each of its members (issue #23: a
//! million-pod run with deletes spent a sixth of its time there).
//!
//! Derived data like the [group index](super::group_index): built by the first non-wildcard
//! move that finds [`GateIndex::BUILD_FROM`] gated pods or more in the pool, kept up to date by
//! every change to the pool from then on, ignored by the state's equality, and compared with the
//! pool by [`GateIndex::check`].

use super::pool::Pool;
use super::QueuedPodInfo;
use crate::PluginName;

/// Gated pooled slots, one bit set per gating plugin.
#[derive(Clone, Debug, Default)]
pub(super) struct GateIndex {
    by_gate: Vec<(PluginName, Pool)>,
}

impl GateIndex {
    /// The number of gated pods from which a move builds the index.
    pub(super) const BUILD_FROM: usize = 64;

    /// The index of `pool`, whose records are in `slots`.
    pub(super) fn build(pool: &Pool, slots: &[Option<QueuedPodInfo>]) -> GateIndex {
        let mut index = GateIndex::default();
        for slot in pool.iter() {
            index.insert(
                slot,
                slots[slot as usize].as_ref().expect("pooled slot in use"),
            );
        }
        index
    }

    /// Files pooled `slot` under the plugin that gates `info`, if one does.
    pub(super) fn insert(&mut self, slot: u32, info: &QueuedPodInfo) {
        let Some(gate) = info.gated_by() else {
            return;
        };
        match self.by_gate.iter_mut().find(|(p, _)| p == gate) {
            Some((_, pool)) => pool.insert(slot),
            None => {
                let mut pool = Pool::default();
                pool.insert(slot);
                self.by_gate.push((gate.clone(), pool));
            }
        }
    }

    /// Takes `slot` out, whatever gates it.
    pub(super) fn remove(&mut self, slot: u32) {
        for (_, pool) in &mut self.by_gate {
            if pool.remove(slot) {
                return;
            }
        }
    }

    /// The slots gated by a plugin for which `skips` is true, as a mask of the pool's words;
    /// `None` if there are none.
    pub(super) fn mask(&self, skips: impl Fn(&PluginName) -> bool) -> Option<Vec<u64>> {
        let mut mask: Option<Vec<u64>> = None;
        for (plugin, pool) in &self.by_gate {
            if pool.len() == 0 || !skips(plugin) {
                continue;
            }
            let words = mask.get_or_insert_with(Vec::new);
            pool.or_into(words);
        }
        mask
    }

    /// Verifies that the index files exactly the pool's gated pods, each under its gate.
    pub(super) fn check(&self, pool: &Pool, slots: &[Option<QueuedPodInfo>]) -> Result<(), String> {
        let mut gated = 0;
        for slot in pool.iter() {
            let info = slots[slot as usize].as_ref().expect("pooled slot in use");
            let Some(gate) = info.gated_by() else {
                continue;
            };
            gated += 1;
            let filed = self
                .by_gate
                .iter()
                .any(|(p, filed)| p == gate && filed.contains(slot));
            if !filed {
                return Err(format!(
                    "gated pod {} is not indexed under {gate}",
                    info.id()
                ));
            }
        }
        let indexed: usize = self.by_gate.iter().map(|(_, p)| p.len()).sum();
        if indexed != gated {
            return Err(format!(
                "the gate index files {indexed} slots, the pool {gated} gated pods"
            ));
        }
        for (_, filed) in &self.by_gate {
            filed.check()?;
        }
        Ok(())
    }
}
