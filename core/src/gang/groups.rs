use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

use smallvec::SmallVec;

use super::{AddPodError, GroupKey, GroupState, GroupUpdateError, PodGroup};
use crate::fast_hash::{hash_unordered, BuildFastHasher};
use crate::{Pod, PodId};

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
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Groups {
    pub(super) states: HashMap<GroupKey, GroupState, BuildFastHasher>,
}

/// Independent of the map's order: the states' own hashes (each with the unkeyed fast hasher),
/// summed. Equal values hash alike, and nothing is allocated.
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
                &fmt::from_fn(|f| {
                    f.debug_map()
                        .entries(self.iter().map(|s| (s.key(), s)))
                        .finish()
                }),
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
    /// are refused with [`AddPodError::NoGroup`]; callers that see every pod can ignore that.
    pub fn add_pod(&mut self, pod: Pod, bound: bool) -> Result<(), AddPodError> {
        let Some(key) = GroupKey::of(&pod) else {
            return Err(AddPodError::NoGroup(pod));
        };
        let state = self
            .states
            .entry(key.clone())
            .or_insert_with(|| GroupState::new(key.clone()));
        let added = state.add_pod(pod, bound);
        self.drop_if_unused(&key);
        added
    }

    /// A pod's object changed (its group cannot change); `false` (no-op) if it is not a member.
    pub fn update_pod(&mut self, pod: Pod) -> bool {
        let Some(key) = GroupKey::of(&pod) else {
            return false;
        };
        self.states.get_mut(&key).is_some_and(|s| s.update_pod(pod))
    }

    /// A pod was observed bound; `false` (no-op) if it is not a member or already assigned.
    pub fn bind_observed(&mut self, pod: &Pod) -> bool {
        self.state_of_mut(pod)
            .is_some_and(|s| s.bind_observed(pod.id()))
    }

    /// A pod was deleted: it leaves its group everywhere; a group left with no members and no
    /// object is dropped. `None` (no-op) if it was not a member.
    pub fn delete_pod(&mut self, pod: &Pod) -> Option<Pod> {
        let key = GroupKey::of(pod)?;
        let deleted = self.states.get_mut(&key)?.delete_pod(pod.id());
        self.drop_if_unused(&key);
        deleted
    }

    /// A PodGroup object was created.
    pub fn add_group(&mut self, group: PodGroup) -> Result<(), GroupUpdateError> {
        let key = group.key().clone();
        let state = self
            .states
            .entry(key.clone())
            .or_insert_with(|| GroupState::new(key));
        if state.group().is_some() {
            return Err(GroupUpdateError::AlreadyExists(group));
        }
        state.set_group(Some(group))
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
        self.states
            .get_mut(&key)
            .expect("found above")
            .set_group(Some(group))?;
        Ok(old)
    }

    /// A PodGroup object was deleted; its members stay (gated until it comes back). `None`
    /// (no-op) if it did not exist.
    pub fn delete_group(&mut self, key: &GroupKey) -> Option<PodGroup> {
        let state = self.states.get_mut(key)?;
        let old = state.group().cloned()?;
        state
            .set_group(None)
            .expect("removing an object always succeeds");
        self.drop_if_unused(key);
        Some(old)
    }

    /// Takes a copy of every group of `other` (whose keys this one does not hold: the shards
    /// of a registry are disjoint).
    pub(crate) fn absorb(&mut self, other: &Groups) {
        self.states
            .extend(other.states.iter().map(|(k, s)| (k.clone(), s.clone())));
    }

    /// The state of group `key`.
    pub fn get(&self, key: &GroupKey) -> Option<&GroupState> {
        self.states.get(key)
    }

    /// The state of group `key`, to change it.
    pub fn get_mut(&mut self, key: &GroupKey) -> Option<&mut GroupState> {
        self.states.get_mut(key)
    }

    /// The state of the group `pod` names.
    pub fn state_of(&self, pod: &Pod) -> Option<&GroupState> {
        self.states.get(pod.group_key()?)
    }

    /// The state of the group `pod` names, to change it.
    pub fn state_of_mut(&mut self, pod: &Pod) -> Option<&mut GroupState> {
        self.states.get_mut(pod.group_key()?)
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

    /// Verifies every group's invariants (I5) and that no unused state is kept.
    pub fn check(&self) -> Result<(), String> {
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

    fn drop_if_unused(&mut self, key: &GroupKey) {
        if self.states.get(key).is_some_and(GroupState::is_unused) {
            self.states.remove(key);
        }
    }
}
