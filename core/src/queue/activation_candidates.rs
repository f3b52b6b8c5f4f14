//! The pods a gang member's Permit activation must look at: its group's pods outside the
//! active queue, less those in flight that an earlier activation already found past Reserve.
//!
//! A Permit that waits activates the gang's unscheduled members (upstream's gang plugin). The
//! queue lists the group's pods it could move or record an activation for — in the pool,
//! backing off or in flight — and the gang registry says which of them are unscheduled. In a
//! Permit barrier every member that has waited stays *in flight* until its binding cycle's
//! WaitOnPermit passes, so the *k*-th member's activation listed the *k* − 1 waiting before it
//! only for the registry to say each is assumed: a gang of 10,000 spent most of its 12–15 s
//! there (issue #23, docs/benchmarks.md).
//!
//! Now the scheduler hands back what the registry said — the in-flight candidates it found
//! past Reserve — with the group's *unscheduled stamp* ([`GroupState`]'s, fresh whenever a
//! member becomes unscheduled), and the next activation of the group skips them as long as the
//! group's stamp is still that one: no member has become unscheduled since, so each of them is
//! still not unscheduled, and the registry would only have said so again. A new stamp (a
//! member forgotten, handed back, added) returns them to the candidates. The queue's record of
//! them is derived data in its group index, outside its equality; queues too small for the
//! index list every candidate, as before.
//!
//! [`GroupState`]: crate::gang::GroupState

use super::{QueuePlace, QueueState};
use crate::{GroupKey, PodId};

impl QueueState {
    /// The pods of group `key` an activation must look at, in pod id order, each with whether
    /// it is in flight: the group's pods outside the active queue, less those in flight that
    /// [`note_past_reserve`](QueueState::note_past_reserve) recorded at the group's unscheduled
    /// stamp `stamp` (the registry's stamp now). Without the group index: every such pod.
    pub(crate) fn activation_candidates(
        &mut self,
        key: &GroupKey,
        stamp: u64,
    ) -> Vec<(PodId, bool)> {
        let ids: Vec<PodId> = if self.group_index_ready() {
            let index = self.groups.as_mut().expect("the group index is built");
            let Some(group) = index.group_mut(key) else {
                return Vec::new();
            };
            group.reserved_as_of(stamp);
            let slots: Vec<u32> = group.unreserved_slots().collect();
            let mut ids: Vec<PodId> = slots
                .into_iter()
                .map(|slot| self.info_at(slot).id().clone())
                .collect();
            ids.sort_unstable();
            ids
        } else {
            self.group_members_not_active(key)
        };
        ids.into_iter()
            .map(|id| {
                let in_flight = self.place(&id) == Some(QueuePlace::InFlight);
                (id, in_flight)
            })
            .collect()
    }

    /// Records that the registry found pods `ids` of group `key`, in flight, past Reserve
    /// (not unscheduled) when the group's unscheduled stamp was `stamp`: activations at the
    /// same stamp skip them. A pod no longer in flight is left out; without the group index
    /// nothing is recorded.
    pub(crate) fn note_past_reserve(&mut self, key: &GroupKey, ids: &[PodId], stamp: u64) {
        if self.groups.is_none() || ids.is_empty() {
            return;
        }
        let slots: Vec<u32> = ids
            .iter()
            .filter_map(|id| self.ids.get(id).copied())
            .filter(|&slot| self.places[slot as usize] == QueuePlace::InFlight)
            .collect();
        let index = self.groups.as_mut().expect("the group index is built");
        let Some(group) = index.group_mut(key) else {
            return;
        };
        group.reserved_as_of(stamp);
        for slot in slots {
            if group.elsewhere.remove(&slot) {
                group.reserved.insert(slot);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::state_tests::{checked, id, plugins, NODE};
    use super::*;
    use crate::{Pod, Time};

    /// A queue of gang "g"'s members m-00 … m-69 (enough for the group index) with m-00 …
    /// m-04 popped: in flight.
    fn gang_with_five_in_flight() -> (QueueState, GroupKey) {
        let mut q = QueueState::new(super::super::QueueConfig::default());
        for i in 0..70 {
            let name = format!("m-{i:02}");
            let pod = Pod::new(&*name, "ns", &name).with_group("g");
            q.add(pod, Time::ZERO, &plugins()).unwrap();
        }
        for _ in 0..5 {
            q.pop().expect("active");
        }
        q.build_indexes();
        checked(&q);
        (q, GroupKey::new("ns", "g"))
    }

    fn ids(candidates: &[(PodId, bool)]) -> Vec<&str> {
        candidates.iter().map(|(id, _)| id.as_str()).collect()
    }

    /// Members noted past Reserve at a stamp are skipped at that stamp, listed again at any
    /// other; a member that leaves flight is no longer noted; the index stays true to the
    /// queue throughout.
    #[test]
    fn members_past_reserve_are_skipped_while_the_stamp_holds() {
        let (mut q, key) = gang_with_five_in_flight();
        let all = q.activation_candidates(&key, 1);
        assert_eq!(ids(&all), ["m-00", "m-01", "m-02", "m-03", "m-04"]);
        assert!(all.iter().all(|(_, in_flight)| *in_flight));
        q.note_past_reserve(&key, &[id("m-01"), id("m-03"), id("m-69")], 1);
        checked(&q);
        assert_eq!(
            ids(&q.activation_candidates(&key, 1)),
            ["m-00", "m-02", "m-04"],
            "m-69 is active, never noted"
        );
        // A member became unscheduled: a new stamp lists every member again.
        assert_eq!(ids(&q.activation_candidates(&key, 2)).len(), 5);
        // Noted at a stamp that is no longer the group's: forgotten at the next.
        q.note_past_reserve(&key, &[id("m-02")], 2);
        assert_eq!(
            ids(&q.activation_candidates(&key, 2)),
            ["m-00", "m-01", "m-03", "m-04"]
        );
        // m-02 leaves flight (rejected, to the pool) and is a candidate again, not in flight.
        q.add_unschedulable_if_not_present(
            q.info(&id("m-02")).unwrap().clone().rejected_by(NODE),
            Time::ZERO,
            &plugins(),
        )
        .unwrap();
        checked(&q);
        let now = q.activation_candidates(&key, 2);
        assert_eq!(ids(&now), ["m-00", "m-01", "m-02", "m-03", "m-04"]);
        assert_eq!(now[2], (id("m-02"), false));
        checked(&q);
    }

    /// Without the group index (a queue below its size) nothing is noted and every member
    /// outside the active queue is a candidate.
    #[test]
    fn a_small_queue_lists_every_member_outside_the_active_queue() {
        let mut q = QueueState::new(super::super::QueueConfig::default());
        for name in ["a", "b", "c"] {
            let pod = Pod::new(name, "ns", name).with_group("g");
            q.add(pod, Time::ZERO, &plugins()).unwrap();
        }
        q.pop().expect("active");
        let key = GroupKey::new("ns", "g");
        q.note_past_reserve(&key, &[id("a")], 1);
        assert_eq!(q.activation_candidates(&key, 1), [(id("a"), true)]);
        checked(&q);
    }
}
