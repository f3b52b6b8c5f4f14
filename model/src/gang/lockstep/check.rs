//! The checks: the real side against the model, I3 (gang atomicity) after a step, and I6 once
//! activity stops.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gangsched::gang::{MemberPlace, DEFAULT_PERMIT_TIMEOUT, GANG_SCHEDULING};

use gangsched::waiting::{PendingPlugin, MAX_PERMIT_WAIT};
use gangsched::GroupKey;
use gangsched::{Pod, PodId, Time};

use super::step::pod_index;
use super::{ensure, ensure_eq, Failure, Lockstep, Op, Phase, Track};
use crate::ops::gang::GangOp;

/// For each group at the start of a step: its min count (if it is a gang) and how many of its
/// members were already admitted (assigned, or allowed at Permit and still binding).
pub(super) type Admitted = BTreeMap<GroupKey, (Option<u32>, usize)>;

impl Lockstep {
    pub(super) fn admitted(&self) -> Admitted {
        let groups = self.gang.registry().snapshot();
        groups
            .iter()
            .map(|state| {
                let binding = state
                    .pods()
                    .filter(|p| {
                        let t = self.track[pod_index(p.id())];
                        t.phase == Phase::Allowed && !t.deleted && !t.bound_elsewhere
                    })
                    .count();
                let admitted = state.assigned().len() + binding;
                (state.key().clone(), (state.min_count(), admitted))
            })
            .collect()
    }

    /// I3, gang atomicity. A Permit at quorum allows every waiting member of the attempt in
    /// that one step, in both modes, and a failed attempt allows none; so the members of one
    /// gang attempt that pass Permit are exactly the members of one gang that pass in one step.
    /// Their number must be 0 or at least `min_count` minus the members already admitted:
    /// assigned, or allowed by an earlier attempt and still binding. (Counting only assigned
    /// members, as a literal reading of I3 in docs/guarantees.md would, would also flag a legitimate extra member that
    /// passes alone while the quorum it joins is still binding.)
    pub(super) fn gang_atomicity(
        &self,
        before: &Admitted,
        passed: &[usize],
    ) -> Result<(), Failure> {
        let mut per_group: BTreeMap<GroupKey, BTreeSet<PodId>> = BTreeMap::new();
        for &i in passed {
            if self.track[i].deleted || self.track[i].bound_elsewhere {
                continue; // this scheduler will not bind it
            }
            let key = GroupKey::of(&self.pods[i]).expect("every pod names a group");
            per_group
                .entry(key)
                .or_default()
                .insert(self.pods[i].id().clone());
        }
        for (key, members) in per_group {
            let Some(&(Some(min), admitted)) = before.get(&key) else {
                continue; // not a gang
            };
            let need = (min as usize).saturating_sub(admitted);
            ensure!(
                members.len() >= need,
                "I3: {} of gang {} (min count {}, {} admitted) passed Permit alone: {:?}",
                members.len(),
                key,
                min,
                admitted,
                members
            );
        }
        Ok(())
    }

    /// Everything the real side shows must equal the model, and the invariants hold.
    pub(super) fn agree(&self) -> Result<(), Failure> {
        let groups = self.gang.registry().snapshot();
        groups.check().map_err(|e| format!("Groups::check: {e}"))?;
        let waiting = gangsched::checking::waiting_state(self.gang.waiting());
        waiting
            .check()
            .map_err(|e| format!("WaitingState::check: {e}"))?;

        // Every group, field by field.
        let real_keys: Vec<&GroupKey> = groups.iter().map(|s| s.key()).collect();
        let mut model_keys: Vec<&GroupKey> = self.model.groups().iter().map(|g| &g.key).collect();
        model_keys.sort();
        ensure_eq!(real_keys, model_keys, "known groups");
        for state in groups.iter() {
            let key = state.key();
            let model = self.model.group(key).expect("same keys");
            ensure_eq!(state.group(), model.object.as_ref(), "{} object", key);
            let real_pods: BTreeSet<&Pod> = state.pods().collect();
            let model_pods: BTreeSet<&Pod> = model.members.iter().map(|m| &m.pod).collect();
            ensure_eq!(real_pods, model_pods, "{} members", key);
            let unscheduled: BTreeSet<PodId> = state
                .unscheduled_pods()
                .iter()
                .map(|p| p.id().clone())
                .collect();
            use MemberPlace::{Assigned, Assumed, Unscheduled};
            ensure_eq!(unscheduled, model.ids(Unscheduled), "{} unscheduled", key);
            ensure_eq!(state.assumed(), &model.ids(Assumed), "{} assumed", key);
            ensure_eq!(state.assigned(), &model.ids(Assigned), "{} assigned", key);
            let real_attempt = state
                .attempt()
                .map(|a| (a.deadline(), a.waiting().clone(), a.failure()));
            let model_attempt = model
                .attempt
                .as_ref()
                .map(|a| (a.deadline, a.waiting.clone(), a.failure.as_deref()));
            ensure_eq!(real_attempt, model_attempt, "{} attempt", key);
        }

        // Every waiting pod, with what it waits for.
        let real_waiting: Vec<(Pod, Vec<PendingPlugin>)> = waiting
            .iter()
            .map(|e| (e.pod().clone(), e.pending().to_vec()))
            .collect();
        let mut model_waiting: Vec<(Pod, Vec<PendingPlugin>)> = self
            .model
            .waiting()
            .iter()
            .map(|w| {
                let pending = PendingPlugin {
                    plugin: GANG_SCHEDULING,
                    wait: match w.deadline {
                        Some(_) => DEFAULT_PERMIT_TIMEOUT,
                        None => Duration::MAX,
                    },
                    deadline: w.deadline.unwrap_or(Time::MAX),
                };
                (w.pod.clone(), vec![pending])
            })
            .collect();
        model_waiting.sort_by(|a, b| a.0.id().cmp(b.0.id()));
        ensure_eq!(real_waiting, model_waiting, "waiting pods");
        let model_next = self.model.waiting().iter().filter_map(|w| w.deadline).min();
        ensure_eq!(self.gang.waiting().next_deadline(), model_next);
        // An open attempt's deadline is indexed (the index may also hold stale ones).
        let open = self
            .model
            .groups()
            .iter()
            .filter_map(|g| g.attempt.as_ref())
            .filter(|a| a.failure.is_none())
            .map(|a| a.deadline)
            .min();
        if let Some(open) = open {
            let next = self.gang.next_deadline();
            ensure!(
                next.is_some_and(|n| n <= open),
                "open attempt due at {} but next deadline is {:?}",
                open,
                next
            );
        }

        // PreEnqueue of every pod, member or not.
        for p in &self.pods {
            ensure_eq!(
                self.real(GangOp::PreEnqueue(p.clone())).pre_enqueue(),
                self.model.pre_enqueue(p),
                "pre_enqueue {}",
                p.id()
            );
        }

        // The test's bookkeeping agrees with the registry and the map: each pod is in exactly
        // the place its phase says.
        for (i, p) in self.pods.iter().enumerate() {
            let t = self.track[i];
            let placement = groups.state_of(p).and_then(|s| s.place_of(p.id()));
            let expected = match t.phase {
                _ if t.deleted => None,
                _ if t.bound_elsewhere => Some(MemberPlace::Assigned),
                Phase::Absent => None,
                Phase::Queued => Some(MemberPlace::Unscheduled),
                Phase::Bound => Some(MemberPlace::Assigned),
                // Rejected at hardened Permit: released at once, its unreserve still to come.
                Phase::Rejected if t.released => Some(MemberPlace::Unscheduled),
                Phase::Reserved | Phase::Waiting | Phase::Rejected | Phase::Allowed => {
                    Some(MemberPlace::Assumed)
                }
            };
            ensure_eq!(placement, expected, "{} is {:?}", p.id(), t);
            let is_waiting = waiting.get(p.id()).is_some();
            ensure_eq!(is_waiting, t.phase == Phase::Waiting, "{} waiting", p.id());
        }
        Ok(())
    }

    /// Activity stops: the cycle in flight reaches Permit, every timeout fires, every rejected
    /// pod is unreserved and every allowed pod bound, until nothing is in a cycle. Then I6:
    /// nothing is left assumed (without a live waiting or binding pod, or at all), and no
    /// attempt is left.
    pub fn settle(&mut self) -> Result<(), Failure> {
        for _ in 0..5 {
            self.run(Op::Permit)?;
            self.run(Op::Expire(MAX_PERMIT_WAIT))?;
            while self.track.iter().any(|t| t.phase == Phase::Rejected) {
                self.run(Op::Unreserve { pick: 0 })?;
            }
            while self.track.iter().any(|t| t.phase == Phase::Allowed) {
                self.run(Op::Bind { pick: 0 })?;
            }
            if !self.track.iter().any(Track::in_cycle) {
                break;
            }
        }
        let busy: Vec<(usize, Track)> = self
            .track
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, t)| t.in_cycle())
            .collect();
        ensure!(busy.is_empty(), "activity does not stop: {:?}", busy);
        ensure!(self.gang.waiting().is_empty(), "pods left waiting");
        // I6: every assumed pod has a live waiting or binding pod — and none is left.
        for state in self.gang.registry().snapshot().iter() {
            for id in state.assumed() {
                let t = self.track[pod_index(id)];
                ensure!(
                    matches!(t.phase, Phase::Waiting | Phase::Allowed),
                    "I6: {} stays assumed in {} with no waiting or binding pod ({:?})",
                    id,
                    state.key(),
                    t
                );
            }
            ensure!(state.assumed().is_empty(), "I6: {} assumed", state.key());
            ensure!(
                state.attempt().is_none(),
                "{}: attempt left over: {:?}",
                state.key(),
                state.attempt()
            );
        }
        Ok(())
    }
}
