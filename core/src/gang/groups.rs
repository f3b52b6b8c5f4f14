use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::hash::{Hash, Hasher};

use smallvec::SmallVec;

use super::{GroupState, GroupUpdateError, JoinGroupError, ReserveError};

use crate::debug_map::DebugMap;
use crate::fast_hash::{hash_unordered, BuildFastHasher};
use crate::{GroupKey, PodGroup};
use crate::{Pod, PodId, Time};

/// Groups sorted for showing in key order: on the stack for up to eight groups (a model
/// checker's state, an ordinary scheduler's few gangs), so walking them allocates nothing.
type InKeyOrder<T> = SmallVec<[T; 8]>;

/// Every pod group the scheduler knows, as pure data: the group states keyed by
/// (namespace, name), fed by cluster events. A group's state lives while it has members or a
/// PodGroup object. [`GroupRegistry`](super::GroupRegistry) keeps it in shards, each behind its
/// own lock.
///
/// A pod's group is found with one hash lookup of the key the pod carries. Everything that
/// shows the groups — [`iter`](Groups::iter), `Debug`, `Hash` — goes in key order, so the
/// value is as deterministic as an ordered map.
///
/// It also indexes the deadline of every live gang attempt (open, not failed), exactly: an
/// attempt that closes, fails or empties leaves the index in the same step. Every change to a
/// group goes through [`Groups`]' own methods, which keep the index; so the registry keeps one
/// index per shard, as the waiting map does, and the timer finds due attempts without a
/// separate lock ([`expire`](Groups::expire), H3).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Groups {
    pub(super) states: HashMap<GroupKey, GroupState, BuildFastHasher>,
    /// `(deadline, group)` of every live attempt (derived from `states`, so not hashed).
    pub(super) deadlines: BTreeSet<(Time, GroupKey)>,
}

/// Independent of the map's order: the states' own hashes (each with the unkeyed fast hasher),
/// summed. Equal values hash alike, and nothing is allocated. The deadline index is a function
/// of the states and adds nothing.
impl Hash for Groups {
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        hasher.write_usize(self.states.len());
        hasher.write_u64(hash_unordered(self.states.values()));
    }
}

impl fmt::Debug for Groups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Groups")
            .field(
                "states",
                &DebugMap(self.iter().map(|s| (s.key(), s)).collect()),
            )
            .finish()
    }
}

impl Groups {
    /// No groups.
    pub fn new() -> Groups {
        Groups::default()
    }

    /// A pod was added (`bound` if it is already bound to a node). Pods that name no group
    /// are refused with [`JoinGroupError::NoGroup`]; callers that see every pod can ignore
    /// that.
    pub fn add_pod(&mut self, pod: Pod, bound: bool) -> Result<(), JoinGroupError> {
        let Some(key) = GroupKey::of(&pod) else {
            return Err(JoinGroupError::NoGroup(pod));
        };
        self.states
            .entry(key.clone())
            .or_insert_with(|| GroupState::new(key.clone()));
        self.change(&key, |state| state.add_pod(pod, bound))
            .expect("created above")
    }

    /// A pod's object changed (its group cannot change); `false` (no-op) if it is not a member.
    pub fn update_pod(&mut self, pod: Pod) -> bool {
        let Some(key) = GroupKey::of(&pod) else {
            return false;
        };
        self.change(&key, |s| s.update_pod(pod)).unwrap_or(false)
    }

    /// A pod was observed bound; `false` (no-op) if it is not a member or already assigned.
    /// (The plugin's rule for a member still waiting is [`observe_bound`](Groups::observe_bound).)
    pub fn bind_observed(&mut self, pod: &Pod) -> bool {
        self.change_of(pod, |s| s.bind_observed(pod.id()))
            .unwrap_or(false)
    }

    /// A pod was deleted: it leaves its group everywhere; a group left with no members and no
    /// object is dropped. `None` (no-op) if it was not a member. (The plugin's rule for a
    /// member still waiting is [`remove_member`](Groups::remove_member).)
    pub fn delete_pod(&mut self, pod: &Pod) -> Option<Pod> {
        self.change_of(pod, |s| s.delete_pod(pod.id())).flatten()
    }

    /// Reserve: an unscheduled member is assumed. Pods without a group: `Ok` (nothing to do).
    pub fn assume(&mut self, pod: &Pod) -> Result<(), ReserveError> {
        let Some(key) = pod.group_key() else {
            return Ok(());
        };
        match self.change(key, |state| state.assume(pod.id())) {
            None => Err(ReserveError::NoGroupState(pod.id().clone())),
            Some(false) => Err(ReserveError::NotUnscheduled(pod.id().clone())),
            Some(true) => Ok(()),
        }
    }

    /// Unreserve without a gang attempt's rule: an assumed member goes back to unscheduled.
    /// `false` (no-op) for an unknown, deleted, unscheduled or bound pod. (The plugin's rule
    /// for a member still waiting is [`unreserve`](Groups::unreserve).)
    pub fn forget(&mut self, pod: &Pod) -> bool {
        self.change_of(pod, |s| s.forget(pod.id())).unwrap_or(false)
    }

    /// A PodGroup object was created.
    pub fn add_group(&mut self, group: PodGroup) -> Result<(), GroupUpdateError> {
        let key = group.key().clone();
        let state = self
            .states
            .entry(key.clone())
            .or_insert_with(|| GroupState::new(key.clone()));
        if state.group().is_some() {
            return Err(GroupUpdateError::AlreadyExists(group));
        }
        self.change(&key, |s| s.set_group(Some(group)))
            .expect("created above")
    }

    /// A PodGroup object changed; returns the old one.
    pub fn update_group(&mut self, group: PodGroup) -> Result<PodGroup, GroupUpdateError> {
        let Some(old) = self
            .states
            .get(group.key())
            .and_then(|s| s.group())
            .cloned()
        else {
            return Err(GroupUpdateError::NotFound(group));
        };
        let key = group.key().clone();
        self.change(&key, |s| s.set_group(Some(group)))
            .expect("found above")?;
        Ok(old)
    }

    /// A PodGroup object was deleted; its members stay (gated until it comes back). `None`
    /// (no-op) if it did not exist.
    pub fn delete_group(&mut self, key: &GroupKey) -> Option<PodGroup> {
        let old = self.states.get(key)?.group().cloned()?;
        self.change(key, |s| s.set_group(None))?
            .expect("removing an object always succeeds");
        Some(old)
    }

    /// Takes a copy of every group of `other` (whose keys this one does not hold: the shards
    /// of a registry are disjoint).
    pub(crate) fn absorb(&mut self, other: &Groups) {
        self.states
            .extend(other.states.iter().map(|(k, s)| (k.clone(), s.clone())));
        self.deadlines.extend(other.deadlines.iter().cloned());
    }

    /// The state of group `key`.
    pub fn get(&self, key: &GroupKey) -> Option<&GroupState> {
        self.states.get(key)
    }

    /// The state of the group `pod` names.
    pub fn state_of(&self, pod: &Pod) -> Option<&GroupState> {
        self.states.get(pod.group_key()?)
    }

    /// Runs `f` on group `key`'s state, then brings the deadline index up to date with the
    /// attempt `f` left (opened, closed, failed or emptied) and drops the state if nothing is
    /// left in it. The one way a group changes. `None` if the group has no state.
    pub(super) fn change<R>(
        &mut self,
        key: &GroupKey,
        f: impl FnOnce(&mut GroupState) -> R,
    ) -> Option<R> {
        let state = self.states.get_mut(key)?;
        let before = state.live_deadline();
        let result = f(state);
        let after = state.live_deadline();
        let unused = state.is_unused();
        if before != after {
            if let Some(deadline) = before {
                self.deadlines.remove(&(deadline, key.clone()));
            }
            if let Some(deadline) = after {
                self.deadlines.insert((deadline, key.clone()));
            }
        }
        if unused {
            self.states.remove(key);
        }
        Some(result)
    }

    /// [`change`](Groups::change) on the group `pod` names.
    pub(crate) fn change_of<R>(
        &mut self,
        pod: &Pod,
        f: impl FnOnce(&mut GroupState) -> R,
    ) -> Option<R> {
        self.change(pod.group_key()?, f)
    }

    /// The earliest deadline of a live gang attempt.
    pub fn next_deadline(&self) -> Option<Time> {
        self.deadlines.first().map(|(deadline, _)| *deadline)
    }

    /// The live attempts' deadlines, earliest first.
    pub fn deadlines(&self) -> impl Iterator<Item = &(Time, GroupKey)> {
        self.deadlines.iter()
    }

    /// Every group state, in key order.
    pub fn iter(&self) -> impl Iterator<Item = &GroupState> {
        let mut states: InKeyOrder<&GroupState> = self.states.values().collect();
        states.sort_unstable_by(|a, b| a.key().cmp(b.key()));
        states.into_iter()
    }

    /// How many groups have a state.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether no group has a state.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// Whether `id` is a member of any group (a linear search, for checkers).
    pub fn is_member(&self, id: &PodId) -> bool {
        self.states.values().any(|s| s.pod(id).is_some())
    }

    /// Verifies every group's invariants (I5), that no unused state is kept, and that the
    /// deadline index holds exactly the live attempts.
    pub fn check(&self) -> Result<(), String> {
        let mut live = 0;
        for state in self.states.values() {
            let Some(deadline) = state.live_deadline() else {
                continue;
            };
            live += 1;
            if !self.deadlines.contains(&(deadline, state.key().clone())) {
                return Err(format!(
                    "{}: its live attempt's deadline {deadline} is not indexed",
                    state.key()
                ));
            }
        }
        if live != self.deadlines.len() {
            return Err(format!(
                "the attempt index holds {:?} for {live} live attempts",
                self.deadlines
            ));
        }
        let mut entries: InKeyOrder<_> = self.states.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (key, state) in entries {
            if state.key() != key {
                return Err(format!("state of {} filed under {key}", state.key()));
            }
            if state.is_unused() {
                return Err(format!("{key}: an unused state is kept"));
            }
            state.check()?;
        }
        Ok(())
    }
}
