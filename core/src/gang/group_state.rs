use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{AddPodError, GroupKey, GroupUpdateError, PodGroup};
use crate::{Pod, PodId, Time};

/// Where a member of a group is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Placement {
    /// Neither reserved nor bound.
    Unscheduled,
    /// Reserved on a node (assumed) but not yet bound.
    Assumed,
    /// Bound to a node (observed).
    Assigned,
}

/// One attempt of a gang to pass Permit together (hardened mode): the members that passed
/// Permit with `Wait` and are parked in the waiting map, and the attempt's one deadline (H3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GangAttempt {
    pub(super) deadline: Time,
    pub(super) waiting: BTreeSet<PodId>,
    pub(super) failure: Option<String>,
}

impl GangAttempt {
    /// When the attempt times out: set when its first member waits, never moved.
    pub fn deadline(&self) -> Time {
        self.deadline
    }

    /// The members parked at Permit in this attempt.
    pub fn waiting(&self) -> &BTreeSet<PodId> {
        &self.waiting
    }

    /// Why the attempt failed, once it has. A failed attempt lingers until no member of the
    /// group is assumed any more, and any member reaching Permit meanwhile is rejected too (H2).
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

/// What one pod group looks like to the scheduler, as pure data: its PodGroup object (if it
/// exists yet), every member pod, the partition of members into unscheduled, assumed and
/// assigned (I5), and the current gang attempt. Deterministic and `Clone + Eq + Hash`, so
/// property tests and the model checker drive it directly; [`GroupRegistry`](super::GroupRegistry)
/// keeps each one behind its own lock.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupState {
    pub(super) key: GroupKey,
    pub(super) group: Option<PodGroup>,
    pub(super) pods: BTreeMap<PodId, Pod>,
    pub(super) unscheduled: BTreeSet<PodId>,
    pub(super) assumed: BTreeSet<PodId>,
    pub(super) assigned: BTreeSet<PodId>,
    pub(super) attempt: Option<GangAttempt>,
}

impl GroupState {
    /// The state of group `key` with no object and no members.
    pub fn new(key: GroupKey) -> GroupState {
        GroupState {
            key,
            group: None,
            pods: BTreeMap::new(),
            unscheduled: BTreeSet::new(),
            assumed: BTreeSet::new(),
            assigned: BTreeSet::new(),
            attempt: None,
        }
    }

    /// The group's key.
    pub fn key(&self) -> &GroupKey {
        &self.key
    }

    /// The PodGroup object, once it exists.
    pub fn group(&self) -> Option<&PodGroup> {
        self.group.as_ref()
    }

    /// The gang quorum, if the object exists and is a gang.
    pub fn min_count(&self) -> Option<u32> {
        self.group.as_ref().and_then(PodGroup::min_count)
    }

    /// Sets (or with `None` removes) the PodGroup object. Refuses an object for another key,
    /// and raising a gang's min count above its current number of members.
    pub fn set_group(&mut self, group: Option<PodGroup>) -> Result<(), GroupUpdateError> {
        if let Some(new) = &group {
            if new.key() != &self.key {
                return Err(GroupUpdateError::OtherGroup {
                    group: new.clone(),
                    state: self.key.clone(),
                });
            }
            let old_min = self.min_count();
            if let (Some(old), Some(min)) = (old_min, new.min_count()) {
                if min > old && min as usize > self.pods.len() {
                    return Err(GroupUpdateError::MinCountAboveMembers {
                        group: new.clone(),
                        members: self.pods.len(),
                    });
                }
            }
        }
        self.group = group;
        Ok(())
    }

    /// Adds a member: `bound` if it is already bound to a node (assigned), else unscheduled.
    pub fn add_pod(&mut self, pod: Pod, bound: bool) -> Result<(), AddPodError> {
        match GroupKey::of(&pod) {
            None => return Err(AddPodError::NoGroup(pod)),
            Some(key) if key != self.key => {
                return Err(AddPodError::OtherGroup {
                    pod,
                    group: self.key.clone(),
                })
            }
            Some(_) => {}
        }
        if self.pods.contains_key(pod.id()) {
            return Err(AddPodError::AlreadyMember(pod));
        }
        let id = pod.id().clone();
        if bound {
            self.assigned.insert(id.clone());
        } else {
            self.unscheduled.insert(id.clone());
        }
        self.pods.insert(id, pod);
        Ok(())
    }

    /// Replaces a member's pod object; `false` (no-op) if it is not a member or names another
    /// group (a pod's group is immutable).
    pub fn update_pod(&mut self, pod: Pod) -> bool {
        if GroupKey::of(&pod).as_ref() != Some(&self.key) {
            return false;
        }
        match self.pods.get_mut(pod.id()) {
            Some(slot) => {
                *slot = pod;
                true
            }
            None => false,
        }
    }

    /// The member was observed bound to a node: it is assigned from now on (and no longer
    /// waits in the attempt). `false` (no-op) if it is not a member or already assigned.
    pub fn bind_observed(&mut self, id: &PodId) -> bool {
        if !self.pods.contains_key(id) || self.assigned.contains(id) {
            return false;
        }
        self.unscheduled.remove(id);
        self.assumed.remove(id);
        self.assigned.insert(id.clone());
        self.leave_attempt(id);
        self.release_failed_attempt();
        true
    }

    /// Removes a member everywhere — including an assumed one, which upstream wrongly puts back
    /// into unscheduled (kubernetes#138422). `None` (no-op) if it is not a member.
    pub fn delete_pod(&mut self, id: &PodId) -> Option<Pod> {
        let pod = self.pods.remove(id)?;
        self.unscheduled.remove(id);
        self.assumed.remove(id);
        self.assigned.remove(id);
        self.leave_attempt(id);
        self.release_failed_attempt();
        Some(pod)
    }

    /// Reserve: an unscheduled member is assumed. `false` (no-op) otherwise.
    pub fn assume(&mut self, id: &PodId) -> bool {
        if !self.unscheduled.remove(id) {
            return false;
        }
        self.assumed.insert(id.clone());
        true
    }

    /// Unreserve: an assumed member goes back to unscheduled. Forgetting an unknown, deleted,
    /// unscheduled or bound pod is a no-op (`false`).
    pub fn forget(&mut self, id: &PodId) -> bool {
        if !self.assumed.remove(id) {
            return false;
        }
        self.unscheduled.insert(id.clone());
        self.leave_attempt(id);
        self.release_failed_attempt();
        true
    }

    /// Where member `id` is, if it is a member.
    pub fn placement(&self, id: &PodId) -> Option<Placement> {
        if self.unscheduled.contains(id) {
            Some(Placement::Unscheduled)
        } else if self.assumed.contains(id) {
            Some(Placement::Assumed)
        } else if self.assigned.contains(id) {
            Some(Placement::Assigned)
        } else {
            None
        }
    }

    /// Member `id`'s pod.
    pub fn pod(&self, id: &PodId) -> Option<&Pod> {
        self.pods.get(id)
    }

    /// Every member, in pod id order.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> {
        self.pods.values()
    }

    /// How many members the group has (upstream's `AllPodsCount`).
    pub fn all_pods_count(&self) -> usize {
        self.pods.len()
    }

    /// Assumed plus assigned members (upstream's `ScheduledPodsCount`).
    pub fn scheduled_pods_count(&self) -> usize {
        self.assumed.len() + self.assigned.len()
    }

    /// The unscheduled members, in pod id order.
    pub fn unscheduled_pods(&self) -> Vec<Pod> {
        self.unscheduled
            .iter()
            .map(|id| self.pods[id].clone())
            .collect()
    }

    /// The assumed members' ids.
    pub fn assumed(&self) -> &BTreeSet<PodId> {
        &self.assumed
    }

    /// The assigned members' ids.
    pub fn assigned(&self) -> &BTreeSet<PodId> {
        &self.assigned
    }

    /// Whether the state holds nothing worth keeping: no members and no object.
    pub fn is_unused(&self) -> bool {
        self.pods.is_empty() && self.group.is_none()
    }

    /// The current gang attempt, if one is open or failed.
    pub fn attempt(&self) -> Option<&GangAttempt> {
        self.attempt.as_ref()
    }

    /// Parks assumed member `id` in the current attempt, opening one with deadline
    /// `now + timeout` if there is none (H3: one deadline per attempt), and returns the
    /// attempt's deadline. `None` (no-op) if `id` is not assumed or the attempt has failed.
    pub fn wait_in_attempt(&mut self, id: &PodId, now: Time, timeout: Duration) -> Option<Time> {
        if !self.assumed.contains(id) || self.attempt.as_ref().is_some_and(|a| a.failure.is_some())
        {
            return None;
        }
        let attempt = self.attempt.get_or_insert_with(|| GangAttempt {
            deadline: now + timeout,
            waiting: BTreeSet::new(),
            failure: None,
        });
        attempt.waiting.insert(id.clone());
        Some(attempt.deadline)
    }

    /// The attempt reached quorum and its members were allowed: it is over.
    pub fn close_attempt(&mut self) -> Option<GangAttempt> {
        self.attempt.take()
    }

    /// The attempt failed for `reason`: returns the members parked in it (to be rejected
    /// together, H1) and keeps the failure until every reservation is released (H2). No-op
    /// (empty) if no attempt is open.
    pub fn fail_attempt(&mut self, reason: &str) -> Vec<PodId> {
        let Some(attempt) = self.attempt.as_mut().filter(|a| a.failure.is_none()) else {
            return Vec::new();
        };
        attempt.failure = Some(reason.to_owned());
        let waiting = std::mem::take(&mut attempt.waiting);
        self.release_failed_attempt();
        waiting.into_iter().collect()
    }

    /// `id` no longer waits in the attempt. An open attempt left with nobody waiting is over:
    /// the next member to wait opens a new one with a fresh deadline (H3).
    fn leave_attempt(&mut self, id: &PodId) {
        let Some(attempt) = &mut self.attempt else {
            return;
        };
        attempt.waiting.remove(id);
        if attempt.failure.is_none() && attempt.waiting.is_empty() {
            self.attempt = None;
        }
    }

    /// A failed attempt is forgotten once no member of the group is assumed any more (its own
    /// reservations, and those of members still binding from an earlier attempt).
    fn release_failed_attempt(&mut self) {
        if self.assumed.is_empty() && self.attempt.as_ref().is_some_and(|a| a.failure.is_some()) {
            self.attempt = None;
        }
    }

    /// Verifies the accounting invariant (I5) and the attempt's consistency; `Err` names the
    /// first violation.
    pub fn check(&self) -> Result<(), String> {
        let sets = [&self.unscheduled, &self.assumed, &self.assigned];
        let total: usize = sets.iter().map(|s| s.len()).sum();
        if total != self.pods.len() {
            return Err(format!(
                "{}: {total} placements for {} members (I5)",
                self.key,
                self.pods.len()
            ));
        }
        for id in self.pods.keys() {
            if sets.iter().filter(|s| s.contains(id)).count() != 1 {
                return Err(format!(
                    "{}: member {id} is not in exactly one place (I5)",
                    self.key
                ));
            }
        }
        if let Some(attempt) = &self.attempt {
            if let Some(stray) = attempt
                .waiting
                .iter()
                .find(|id| !self.assumed.contains(*id))
            {
                return Err(format!(
                    "{}: {stray} waits in the attempt but is not assumed",
                    self.key
                ));
            }
            if attempt.failure.is_some() && !attempt.waiting.is_empty() {
                return Err(format!(
                    "{}: a failed attempt still has waiting members",
                    self.key
                ));
            }
            if attempt.failure.is_some() && self.assumed.is_empty() {
                return Err(format!(
                    "{}: a failed attempt outlived its reservations",
                    self.key
                ));
            }
        }
        if let Some(group) = &self.group {
            if group.key() != &self.key {
                return Err(format!("{}: holds the object of {}", self.key, group.key()));
            }
        }
        Ok(())
    }
}
