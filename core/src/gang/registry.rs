use std::fmt;

use super::{AddPodError, GroupKey, GroupState, GroupUpdateError, Groups, PodGroup};
use crate::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use crate::Pod;

/// The concurrent map of pod group states: [`Groups`] behind one reader-writer lock (reads —
/// [`with_state`](GroupRegistry::with_state), copies, counts, PreEnqueue — share it). Cluster events (pod and
/// PodGroup add, update, delete) feed it; the gang plugin reads and changes one group in one
/// critical section. Clones share the registry.
#[derive(Clone, Default)]
pub struct GroupRegistry {
    groups: Arc<RwLock<Groups>>,
}

impl GroupRegistry {
    /// An empty registry.
    pub fn new() -> GroupRegistry {
        GroupRegistry::default()
    }

    /// See [`Groups::add_pod`].
    pub fn add_pod(&self, pod: Pod, bound: bool) -> Result<(), AddPodError> {
        self.lock().add_pod(pod, bound)
    }

    /// See [`Groups::update_pod`].
    pub fn update_pod(&self, pod: Pod) -> bool {
        self.lock().update_pod(pod)
    }

    /// See [`Groups::bind_observed`].
    pub fn bind_observed(&self, pod: &Pod) -> bool {
        self.lock().bind_observed(pod)
    }

    /// See [`Groups::delete_pod`].
    pub fn delete_pod(&self, pod: &Pod) -> Option<Pod> {
        self.lock().delete_pod(pod)
    }

    /// See [`Groups::add_group`].
    pub fn add_group(&self, group: PodGroup) -> Result<(), GroupUpdateError> {
        self.lock().add_group(group)
    }

    /// See [`Groups::update_group`].
    pub fn update_group(&self, group: PodGroup) -> Result<PodGroup, GroupUpdateError> {
        self.lock().update_group(group)
    }

    /// See [`Groups::delete_group`].
    pub fn delete_group(&self, key: &GroupKey) -> Option<PodGroup> {
        self.lock().delete_group(key)
    }

    /// A copy of group `key`'s state.
    pub fn state(&self, key: &GroupKey) -> Option<GroupState> {
        self.read().get(key).cloned()
    }

    /// Runs `read` on group `key`'s state inside the registry's critical section, without
    /// copying it (e.g. to reach a gang's members in the waiting map, as Permit does). Keep
    /// `read` short: every gang operation waits for it. `None` if the group has no state.
    pub fn with_state<R>(&self, key: &GroupKey, read: impl FnOnce(&GroupState) -> R) -> Option<R> {
        self.read().get(key).map(read)
    }

    /// Runs `read` on every group's state in one critical section, without copying them.
    /// Keep `read` short: every gang operation waits for it.
    pub fn with_groups<R>(&self, read: impl FnOnce(&Groups) -> R) -> R {
        read(&self.read())
    }

    /// A copy of every group's state, taken in one critical section.
    pub fn snapshot(&self) -> Groups {
        self.read().clone()
    }

    /// How many groups have a state.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether no group has a state.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Exclusive access, for every change.
    pub(crate) fn lock(&self) -> RwLockWriteGuard<'_, Groups> {
        self.groups.write()
    }

    /// Shared access, for reads.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Groups> {
        self.groups.read()
    }
}

impl fmt::Debug for GroupRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupRegistry")
            .field("groups", &self.len())
            .finish()
    }
}
