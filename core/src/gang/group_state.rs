use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use super::unscheduled_stamp::UnscheduledStamp;
use super::{GroupUpdateError, JoinGroupError};
use crate::{GroupKey, PodGroup};
use crate::{Pod, PodId, Time};

/// Where a member of a group is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberPlace {
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

/// A member of a group: its pod and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Member {
    pub(super) pod: Pod,
    pub(super) placement: MemberPlace,
    /// Assumed, and its Permit registered it to wait for other plugins while its group was no
    /// gang (see [`GroupState::wait_for_others`]); cleared when it leaves `Assumed`.
    pub(super) waited_for_others: bool,
}

/// The pod's id, the placement and the mark: equal members have equal ids, so this agrees
/// with `Eq` without hashing every field of the pod (the model checker hashes group states a
/// lot).
impl std::hash::Hash for Member {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.pod.id().hash(state);
        self.placement.hash(state);
        self.waited_for_others.hash(state);
    }
}

/// How many members are in each [`MemberPlace`], and the stamp of the last move into
/// `Unscheduled`. Every change of placement goes through [`moved`](PlacementCounts::moved).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct PlacementCounts {
    counts: [usize; 3],
    unscheduled: UnscheduledStamp,
}

impl PlacementCounts {
    fn of(&self, placement: MemberPlace) -> usize {
        self.counts[placement as usize]
    }

    fn moved(&mut self, from: Option<MemberPlace>, to: Option<MemberPlace>) {
        if let Some(from) = from {
            self.counts[from as usize] -= 1;
        }
        if let Some(to) = to {
            self.counts[to as usize] += 1;
        }
        if to == Some(MemberPlace::Unscheduled) {
            self.unscheduled = UnscheduledStamp::fresh();
        }
    }
}

/// What one pod group looks like to the scheduler, as pure data: its PodGroup object (if it
/// exists yet), every member pod with its place in the partition into unscheduled, assumed and
/// assigned (I5), and the current gang attempt. Deterministic and `Clone + Eq + Hash`, so
/// property tests and the model checker drive it directly; [`GroupRegistry`](super::GroupRegistry)
/// keeps them behind its lock. A member's place is one field of its entry, so a transition
/// is one lookup and the partition cannot be torn.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupState {
    pub(super) key: GroupKey,
    pub(super) group: Option<PodGroup>,
    pub(super) members: BTreeMap<PodId, Member>,
    pub(super) counts: PlacementCounts,
    pub(super) attempt: Option<GangAttempt>,
}

/// The members of a group in one [`MemberPlace`], in pod id order: a view, not a copy.
#[derive(Clone, Copy)]
pub struct Members<'a> {
    members: &'a BTreeMap<PodId, Member>,
    placement: MemberPlace,
    len: usize,
}

impl<'a> Members<'a> {
    /// How many.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `id` is one of them.
    pub fn contains(&self, id: &PodId) -> bool {
        self.members
            .get(id)
            .is_some_and(|m| m.placement == self.placement)
    }

    /// Their ids, in order.
    pub fn iter(&self) -> MembersIter<'a> {
        MembersIter {
            members: self.members.iter(),
            placement: self.placement,
        }
    }
}

impl<'a> IntoIterator for Members<'a> {
    type Item = &'a PodId;
    type IntoIter = MembersIter<'a>;

    fn into_iter(self) -> MembersIter<'a> {
        self.iter()
    }
}

/// The ids of a group's members in one [`MemberPlace`], in order ([`Members::iter`]).
pub struct MembersIter<'a> {
    members: std::collections::btree_map::Iter<'a, PodId, Member>,
    placement: MemberPlace,
}

impl<'a> Iterator for MembersIter<'a> {
    type Item = &'a PodId;

    fn next(&mut self) -> Option<&'a PodId> {
        let placement = self.placement;
        self.members
            .find(|(_, m)| m.placement == placement)
            .map(|(id, _)| id)
    }
}

impl fmt::Debug for Members<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl PartialEq<BTreeSet<PodId>> for Members<'_> {
    fn eq(&self, other: &BTreeSet<PodId>) -> bool {
        self.len == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<&BTreeSet<PodId>> for Members<'_> {
    fn eq(&self, other: &&BTreeSet<PodId>) -> bool {
        *self == **other
    }
}

impl GroupState {
    /// The state of group `key` with no object and no members.
    pub fn new(key: GroupKey) -> GroupState {
        GroupState {
            key,
            group: None,
            members: BTreeMap::new(),
            counts: PlacementCounts::default(),
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
                if min > old && min as usize > self.members.len() {
                    return Err(GroupUpdateError::MinCountAboveMembers {
                        group: new.clone(),
                        members: self.members.len(),
                    });
                }
            }
        }
        self.group = group;
        Ok(())
    }

    /// Adds a member: `bound` if it is already bound to a node (assigned), else unscheduled.
    pub fn add_pod(&mut self, pod: Pod, bound: bool) -> Result<(), JoinGroupError> {
        match GroupKey::of(&pod) {
            None => return Err(JoinGroupError::NoGroup(pod)),
            Some(key) if key != self.key => {
                return Err(JoinGroupError::OtherGroup {
                    pod,
                    group: self.key.clone(),
                })
            }
            Some(_) => {}
        }
        if self.members.contains_key(pod.id()) {
            return Err(JoinGroupError::AlreadyMember(pod));
        }
        let placement = if bound {
            MemberPlace::Assigned
        } else {
            MemberPlace::Unscheduled
        };
        self.counts.moved(None, Some(placement));
        let member = Member {
            pod,
            placement,
            waited_for_others: false,
        };
        self.members.insert(member.pod.id().clone(), member);
        Ok(())
    }

    /// Replaces a member's pod object; `false` (no-op) if it is not a member or names another
    /// group (a pod's group is immutable).
    pub fn update_pod(&mut self, pod: Pod) -> bool {
        if GroupKey::of(&pod).as_ref() != Some(&self.key) {
            return false;
        }
        match self.members.get_mut(pod.id()) {
            Some(member) => {
                member.pod = pod;
                true
            }
            None => false,
        }
    }

    /// The member was observed bound to a node: it is assigned from now on (and no longer
    /// waits in the attempt). `false` (no-op) if it is not a member or already assigned.
    pub fn bind_observed(&mut self, id: &PodId) -> bool {
        let Some(member) = self.members.get_mut(id) else {
            return false;
        };
        if member.placement == MemberPlace::Assigned {
            return false;
        }
        self.counts
            .moved(Some(member.placement), Some(MemberPlace::Assigned));
        member.placement = MemberPlace::Assigned;
        member.waited_for_others = false;
        self.leave_attempt(id);
        self.release_failed_attempt();
        true
    }

    /// Removes a member everywhere — including an assumed one, which upstream wrongly puts back
    /// into unscheduled (kubernetes#138422). `None` (no-op) if it is not a member.
    pub fn delete_pod(&mut self, id: &PodId) -> Option<Pod> {
        let member = self.members.remove(id)?;
        self.counts.moved(Some(member.placement), None);
        self.leave_attempt(id);
        self.release_failed_attempt();
        Some(member.pod)
    }

    /// Reserve: an unscheduled member is assumed. `false` (no-op) otherwise.
    pub fn assume(&mut self, id: &PodId) -> bool {
        self.move_member(id, MemberPlace::Unscheduled, MemberPlace::Assumed)
    }

    /// Unreserve: an assumed member goes back to unscheduled. Forgetting an unknown, deleted,
    /// unscheduled or bound pod is a no-op (`false`).
    pub fn forget(&mut self, id: &PodId) -> bool {
        if !self.move_member(id, MemberPlace::Assumed, MemberPlace::Unscheduled) {
            return false;
        }
        self.leave_attempt(id);
        self.release_failed_attempt();
        true
    }

    /// Hardened: assumed member `id`, of a group that is no gang, is registered to wait at
    /// Permit for other plugins (in the same critical section). If its group becomes a gang
    /// before it is bound or unreserved, the gang cannot tell how that wait ended — allowed,
    /// or rejected with its release still to come — so it must stop counting the member
    /// towards quorum (I3, [`waited_for_others`](Self::waited_for_others)). `false` (no-op)
    /// if `id` is not assumed or waits in a gang attempt.
    pub fn wait_for_others(&mut self, id: &PodId) -> bool {
        if self.waits_in_attempt(id) {
            return false;
        }
        match self.members.get_mut(id) {
            Some(member) if member.placement == MemberPlace::Assumed => {
                member.waited_for_others = true;
                true
            }
            _ => false,
        }
    }

    /// The members marked by [`wait_for_others`](Self::wait_for_others) and still assumed, in
    /// pod id order.
    pub fn waited_for_others(&self) -> impl Iterator<Item = &PodId> {
        self.members
            .iter()
            .filter(|(_, m)| m.waited_for_others)
            .map(|(id, _)| id)
    }

    /// Where member `id` is, if it is a member.
    pub fn place_of(&self, id: &PodId) -> Option<MemberPlace> {
        self.members.get(id).map(|m| m.placement)
    }

    /// Member `id`'s pod.
    pub fn pod(&self, id: &PodId) -> Option<&Pod> {
        self.members.get(id).map(|m| &m.pod)
    }

    /// Every member, in pod id order.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> {
        self.members.values().map(|m| &m.pod)
    }

    /// How many members the group has (upstream's `AllPodsCount`).
    pub fn all_pods_count(&self) -> usize {
        self.members.len()
    }

    /// Assumed plus assigned members (upstream's `ScheduledPodsCount`).
    pub fn scheduled_pods_count(&self) -> usize {
        self.counts.of(MemberPlace::Assumed) + self.counts.of(MemberPlace::Assigned)
    }

    /// A gang's minimum if fewer of its members are scheduled (assumed or assigned) than it:
    /// an admitted gang in this state can no longer complete its attempt (I9). `None` for a
    /// gang at quorum and for a group that is no gang.
    pub fn short_of_quorum(&self) -> Option<u32> {
        let min = self.min_count()?;
        (self.scheduled_pods_count() < min as usize).then_some(min)
    }

    /// The unscheduled members, in pod id order.
    pub fn unscheduled_pods(&self) -> Vec<Pod> {
        let mut pods = Vec::with_capacity(self.counts.of(MemberPlace::Unscheduled));
        pods.extend(
            self.members
                .values()
                .filter(|m| m.placement == MemberPlace::Unscheduled)
                .map(|m| m.pod.clone()),
        );
        pods
    }

    /// The stamp of this version of the group's unscheduled members: a fresh value whenever a
    /// member becomes unscheduled, so any member that was not unscheduled when the stamp was
    /// read is still not while the stamp is the same (the queue's activation candidates).
    pub(crate) fn unscheduled_stamp(&self) -> u64 {
        self.counts.unscheduled.get()
    }

    /// The activation of this group's unscheduled members (none if it has none).
    pub fn activation(&self) -> super::Activation {
        super::Activation::of_group(self.key(), self.counts.of(MemberPlace::Unscheduled))
    }

    /// The members in `placement`.
    pub fn members_in(&self, placement: MemberPlace) -> Members<'_> {
        Members {
            members: &self.members,
            placement,
            len: self.counts.of(placement),
        }
    }

    /// The assumed members' ids.
    pub fn assumed(&self) -> Members<'_> {
        self.members_in(MemberPlace::Assumed)
    }

    /// The assigned members' ids.
    pub fn assigned(&self) -> Members<'_> {
        self.members_in(MemberPlace::Assigned)
    }

    /// Whether the state holds nothing worth keeping: no members and no object.
    pub fn is_unused(&self) -> bool {
        self.members.is_empty() && self.group.is_none()
    }

    /// The current gang attempt, if one is open or failed.
    pub fn attempt(&self) -> Option<&GangAttempt> {
        self.attempt.as_ref()
    }

    /// Whether member `id` waits at Permit in the group's current attempt.
    pub fn waits_in_attempt(&self, id: &PodId) -> bool {
        self.attempt().is_some_and(|a| a.waiting().contains(id))
    }

    /// The deadline of the current attempt if it is live (open and not failed): what the
    /// timer must apply (H3).
    pub fn live_deadline(&self) -> Option<Time> {
        self.attempt
            .as_ref()
            .filter(|a| a.failure.is_none())
            .map(|a| a.deadline)
    }

    /// Parks assumed member `id` in the current attempt, opening one with deadline
    /// `now + timeout` if there is none (H3: one deadline per attempt), and returns the
    /// attempt's deadline. `None` (no-op) if `id` is not assumed or the attempt has failed.
    pub fn wait_in_attempt(&mut self, id: &PodId, now: Time, timeout: Duration) -> Option<Time> {
        if self.place_of(id) != Some(MemberPlace::Assumed)
            || self.attempt.as_ref().is_some_and(|a| a.failure.is_some())
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

    /// Moves member `id` from `from` to `to`; `false` (no-op) unless it is in `from`.
    fn move_member(&mut self, id: &PodId, from: MemberPlace, to: MemberPlace) -> bool {
        match self.members.get_mut(id) {
            Some(member) if member.placement == from => {
                member.placement = to;
                member.waited_for_others = false;
                self.counts.moved(Some(from), Some(to));
                true
            }
            _ => false,
        }
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
        if self.counts.of(MemberPlace::Assumed) == 0
            && self.attempt.as_ref().is_some_and(|a| a.failure.is_some())
        {
            self.attempt = None;
        }
    }

    /// Verifies the accounting invariant (I5) and the attempt's consistency; `Err` names the
    /// first violation.
    pub fn check(&self) -> Result<(), String> {
        let mut counted = PlacementCounts::default();
        for (id, member) in &self.members {
            if member.pod.id() != id {
                return Err(format!(
                    "{}: member {id} holds pod {} (I5)",
                    self.key,
                    member.pod.id()
                ));
            }
            counted.moved(None, Some(member.placement));
            if member.waited_for_others
                && (member.placement != MemberPlace::Assumed || self.waits_in_attempt(id))
            {
                return Err(format!(
                    "{}: {id} is marked as waiting for other plugins but is {:?}{} (I5)",
                    self.key,
                    member.placement,
                    if self.waits_in_attempt(id) {
                        " in a gang attempt"
                    } else {
                        ""
                    }
                ));
            }
        }
        if counted != self.counts {
            return Err(format!(
                "{}: {:?} counted, {:?} kept (I5)",
                self.key, counted, self.counts
            ));
        }
        if let Some(attempt) = &self.attempt {
            if let Some(stray) = attempt
                .waiting
                .iter()
                .find(|id| self.place_of(id) != Some(MemberPlace::Assumed))
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
            if attempt.failure.is_some() && self.counts.of(MemberPlace::Assumed) == 0 {
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
