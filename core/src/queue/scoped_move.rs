//! A move for an event that concerns one pod group ([`EventScope::Group`]): the pods of that
//! group in the unschedulable pool are visited, through the [group index](super::group_index),
//! instead of the whole pool — with the same outcome, pod for pod, as the full walk
//! (`prop_queue_scoped_move` runs both side by side).
//!
//! Two facts make it exact. The plugins promise that the event's hints skip every pod outside
//! the group ([`QueuePlugins::event_scope`]), and no pod waits in the pool without a rejecting
//! plugin ([`QueueState::check`]), so the full walk moves no pod outside the group. And where
//! PreEnqueue answers alike for a whole group ([`QueuePlugins::gates_by_group`]) and runs on
//! the way into backoff too (1.36's pop from backoff), a gated member the event concerns is
//! gated again by the same plugin, unchanged, as long as that plugin still gates the group:
//! the group's pods gated by it are then left unvisited, so a gang's arrivals cost one
//! PreEnqueue each, not one per gated sibling (issue #23: a gang of 100,000 arrived in 420 s).

use super::gate_index::GateIndex;
use super::group_index::GroupIndex;
use super::{QueuePlace, QueuePlugins, QueueState, QueuedPodInfo, Requeue};
use crate::{GroupKey, PodId, Time};

#[cfg(doc)]
use super::EventScope;

impl QueueState {
    /// Whether the group index is there to be used, building it if the queue has grown to
    /// [`GroupIndex::BUILD_FROM`] pods.
    pub(super) fn group_index_ready(&mut self) -> bool {
        if self.groups.is_none() && self.ids.len() >= GroupIndex::BUILD_FROM {
            self.index_groups();
        }
        self.groups.is_some()
    }

    /// Builds the group index now, if it is not there.
    fn index_groups(&mut self) {
        if self.groups.is_none() {
            self.groups = Some(Box::new(GroupIndex::build(&self.slots, &self.places)));
        }
    }

    /// Whether the gate index is there to be used, building it once the pool holds
    /// [`GateIndex::BUILD_FROM`] gated pods (with fewer there is little to skip, and a queue
    /// that never gates — `move_all/100k`'s — never pays for the build).
    pub(super) fn gate_index_ready(&mut self) -> bool {
        if self.gates.is_none() && self.gated >= GateIndex::BUILD_FROM {
            self.gates = Some(Box::new(GateIndex::build(&self.pool, &self.slots)));
        }
        self.gates.is_some()
    }

    #[cfg(any(test, feature = "checking"))]
    /// Builds every derived index now (the checkers' seam): the group, gate and leftover
    /// indexes.
    pub(crate) fn build_indexes(&mut self) {
        self.index_groups();
        if self.gates.is_none() {
            self.gates = Some(Box::new(GateIndex::build(&self.pool, &self.slots)));
        }
        if self.leftover.is_none() {
            self.leftover = Some(Box::new(super::leftover_index::LeftoverIndex::build(
                &self.pool,
                &self.slots,
            )));
        }
    }

    /// The pods of group `key` the queue holds outside the active queue — in the unschedulable
    /// pool, backing off or in flight: the only ones an activation can move or record — in pod
    /// id order. Through the group index once the queue is large, so that activating a gang's
    /// unscheduled members costs what it moves, not the gang's size (issue #23).
    pub fn group_members_not_active(&mut self, key: &GroupKey) -> Vec<PodId> {
        let mut ids: Vec<PodId> = if self.group_index_ready() {
            let index = self.groups.as_ref().expect("the group index is built");
            index.group(key).map_or_else(Vec::new, |group| {
                group
                    .slots()
                    .map(|slot| self.info_at(slot).id().clone())
                    .collect()
            })
        } else {
            self.ids
                .iter()
                .filter(|&(_, &slot)| !matches!(self.places[slot as usize], QueuePlace::Active(_)))
                .filter(|&(_, &slot)| self.info_at(slot).pod().group_key() == Some(key))
                .map(|(id, _)| id.clone())
                .collect()
        };
        ids.sort_unstable();
        ids
    }

    /// The move of `move_all_to_active_or_backoff` for an event whose scope is group `key`:
    /// `decide` is asked for the group's pooled pods, in slot order as the full walk asks,
    /// except gated ones PreEnqueue would gate again unchanged. Returns how many left the pool.
    pub(super) fn move_group(
        &mut self,
        key: &GroupKey,
        now: Time,
        plugins: &dyn QueuePlugins,
        decide: impl Fn(&QueuedPodInfo) -> Option<Requeue>,
    ) -> usize {
        let index = self.groups.as_ref().expect("the group index is built");
        let Some(group) = index.group(key) else {
            return 0;
        };
        let mut visit: Vec<u32> = group.open.iter().copied().collect();
        // (Its members backing off or in flight are not in the pool: no move concerns them.)
        // PreEnqueue's verdict for the group, asked of one member, if it speaks for all.
        let shared_gate = (plugins.gates_by_group() && self.clock.pre_enqueue_at_backoff)
            .then(|| group.gated.iter().flat_map(|(_, s)| s).next())
            .flatten()
            .map(|&slot| plugins.pre_enqueue(self.info_at(slot).pod()));
        for (plugin, gated) in &group.gated {
            let still_gated = matches!(&shared_gate, Some(Err(gate)) if gate.plugin == *plugin);
            if !still_gated {
                visit.extend(gated.iter().copied());
            }
        }
        visit.sort_unstable();
        self.move_listed(&visit, now, plugins, decide)
    }
}
