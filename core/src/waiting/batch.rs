//! Decisions on a whole gang at once — allow every member or none, reject every member — over
//! one [`WaitingState`] or over the shards of a [`WaitingPods`](super::WaitingPods), whose
//! caller holds the write lock of every shard the gang touches. One implementation serves both,
//! so the sharded map decides exactly as the single state it is checked against.

use super::state::{Decided, WaitingEntry, WaitingState};
use super::Cause;
use crate::{PodId, Status};

/// Where each pod's entry lives: the state itself, or the locked shard that holds the pod.
pub(super) trait StateOf<L> {
    /// The state that holds (or would hold) pod `id`.
    fn state_of(&mut self, id: &PodId) -> &mut WaitingState<L>;
}

impl<L> StateOf<L> for WaitingState<L> {
    fn state_of(&mut self, _: &PodId) -> &mut WaitingState<L> {
        self
    }
}

/// Clears `plugin` for every pod in `ids`, all or none (see [`WaitingState::allow_all`]). Each
/// entry is taken out once (one lookup per pod) and put back only if a pod is missing or it
/// still waits for another plugin.
pub(super) fn allow_all_in<L>(
    states: &mut impl StateOf<L>,
    ids: &[PodId],
    plugin: &str,
) -> Result<Vec<Decided<L>>, PodId> {
    let mut taken: Vec<WaitingEntry<L>> = Vec::with_capacity(ids.len());
    for id in ids {
        match states.state_of(id).pods.remove(id) {
            Some(entry) => taken.push(entry),
            None if taken.iter().any(|e| e.pod.id() == id) => {} // named twice
            None => {
                for entry in taken {
                    let id = entry.pod.id().clone();
                    states.state_of(&id).pods.insert(id, entry);
                }
                return Err(id.clone());
            }
        }
    }
    let mut allowed = Vec::with_capacity(taken.len());
    for entry in taken {
        let id = entry.pod.id().clone();
        allowed.extend(states.state_of(&id).clear_taken(id, entry, plugin));
    }
    Ok(allowed)
}

/// Rejects every pod in `ids` that is still waiting with `status`, for `cause`; the decisions
/// in `ids` order.
pub(super) fn reject_all_in<L>(
    states: &mut impl StateOf<L>,
    ids: &[PodId],
    status: &Status,
    cause: Cause,
) -> Vec<Decided<L>> {
    ids.iter()
        .filter_map(|id| states.state_of(id).reject(id, None, status.clone(), cause))
        .collect()
}

impl<L> WaitingState<L> {
    /// Clears `plugin` for `entry` (pod `id`, taken out of this state with its deadline still
    /// indexed): decided if nothing is left pending, otherwise filed back, re-indexed if its
    /// earliest deadline moved.
    fn clear_taken(
        &mut self,
        id: PodId,
        mut entry: WaitingEntry<L>,
        plugin: &str,
    ) -> Option<Decided<L>> {
        let Some(index) = entry.pending.iter().position(|p| p.plugin == plugin) else {
            self.pods.insert(id, entry);
            return None;
        };
        let before = entry.earliest().deadline;
        entry.pending.remove(index);
        if entry.pending.is_empty() {
            return Some(self.decided(entry, before, Status::success(), Cause::Allowed));
        }
        let after = entry.earliest().deadline;
        if after != before {
            self.deadlines.remove(&(before, id.clone()));
            self.index(after, &id);
        }
        self.pods.insert(id, entry);
        None
    }

    #[cfg(any(test, feature = "checking"))]
    /// One state holding every pod of `parts` (disjoint shards), numbering its next
    /// registration `next_ticket`, with the latches replaced by `f(latch)`.
    pub(super) fn merged<'a, M>(
        parts: impl IntoIterator<Item = &'a WaitingState<L>>,
        next_ticket: u64,
        mut f: impl FnMut(&L) -> M,
    ) -> WaitingState<M>
    where
        L: 'a,
    {
        let mut whole = WaitingState::new();
        for part in parts {
            let part = part.map_latches(&mut f);
            whole.pods.extend(part.pods);
            whole.deadlines.extend(part.deadlines);
        }
        whole.next_ticket = next_ticket;
        whole
    }
}
