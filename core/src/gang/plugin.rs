use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use super::{
    AddPodError, GroupKey, GroupRegistry, GroupUpdateError, Groups, PodGroup, ReserveError,
};
use crate::sync::{Arc, Mutex};
use crate::time::Alarm;
use crate::{Mode, PluginName, Pod, QueueingHint, Status, Time, WaitingPods};

/// The plugin's name, as kube-scheduler spells it.
pub const GANG_SCHEDULING: PluginName = PluginName::new_static("GangScheduling");

/// How long a gang member waits at Permit for its siblings (upstream's 5 minutes).
pub const DEFAULT_PERMIT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The GangScheduling plugin: the gate before the queue (PreEnqueue), reservation bookkeeping
/// (Reserve, Unreserve), the barrier (Permit) and the queueing hints, over a [`GroupRegistry`]
/// and a [`WaitingPods`] map. Clones share everything.
///
/// In [`Mode::Upstream`] it behaves exactly like kube-scheduler 1.36: a fixed wait per pod, at
/// quorum an `allow` on each waiting sibling one by one, and no cascade when one member times
/// out or is rejected. In [`Mode::Hardened`] (the default) each gang attempt has one
/// linearization point (H1): quorum allows every waiting member in one critical section of the
/// waiting map, and a timeout, delete or unreserve of any waiting member rejects all of them
/// together; members wait without a timer of their own, and the attempt has one deadline (H3),
/// applied by [`expire`](GangScheduling::expire).
#[derive(Clone)]
pub struct GangScheduling {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) mode: Mode,
    pub(super) timeout: Duration,
    pub(super) registry: GroupRegistry,
    pub(super) waiting: WaitingPods,
    /// Hardened: the deadline of every attempt opened and not closed at quorum; one that failed
    /// or emptied stays until its deadline (checked on expiry).
    pub(super) attempts: Mutex<BTreeSet<(Time, GroupKey)>>,
    /// Rung when an attempt opens with a deadline earlier than every other.
    pub(super) alarm: Mutex<Option<Alarm>>,
}

/// A cluster event the gang plugin's queueing hints look at.
#[derive(Clone, Copy, Debug)]
pub enum GangEvent<'a> {
    /// An unscheduled or assigned pod was added.
    PodAdded(&'a Pod),
    /// A PodGroup object was created.
    GroupAdded(&'a PodGroup),
    /// A PodGroup object changed.
    GroupUpdated {
        /// Before.
        old: &'a PodGroup,
        /// After.
        new: &'a PodGroup,
    },
}

impl GangScheduling {
    /// The plugin in `mode` over `waiting`, with a fresh registry and the default 5-minute wait.
    pub fn new(mode: Mode, waiting: WaitingPods) -> GangScheduling {
        GangScheduling::with_timeout(mode, waiting, DEFAULT_PERMIT_TIMEOUT)
    }

    /// The plugin with a Permit wait of `timeout` (per pod upstream, per attempt hardened;
    /// capped at 15 minutes like every Permit wait).
    pub fn with_timeout(mode: Mode, waiting: WaitingPods, timeout: Duration) -> GangScheduling {
        GangScheduling {
            inner: Arc::new(Inner {
                mode,
                timeout: timeout.min(crate::waiting::MAX_PERMIT_WAIT),
                registry: GroupRegistry::new(),
                waiting,
                attempts: Mutex::new(BTreeSet::new()),
                alarm: Mutex::new(None),
            }),
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.inner.mode
    }

    /// The Permit wait.
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The group registry.
    pub fn registry(&self) -> &GroupRegistry {
        &self.inner.registry
    }

    /// The waiting-pod map.
    pub fn waiting(&self) -> &WaitingPods {
        &self.inner.waiting
    }

    /// A pod was added (`bound` if already bound to a node). Pods that name no group are
    /// ignored (`Ok`).
    pub fn on_pod_added(&self, pod: Pod, bound: bool) -> Result<(), AddPodError> {
        match self.inner.registry.add_pod(pod, bound) {
            Err(AddPodError::NoGroup(_)) => Ok(()),
            other => other,
        }
    }

    /// A pod's object changed; `false` (no-op) if it is not a known member.
    pub fn on_pod_updated(&self, pod: Pod) -> bool {
        self.inner.registry.update_pod(pod)
    }

    /// A pod was observed bound to a node; `false` (no-op) if unknown or already assigned.
    /// Hardened: if it was still waiting in a gang attempt (bound by someone else), its waiting
    /// entry is rejected so its binding cycle ends; it now counts as assigned towards quorum.
    pub fn on_pod_bound(&self, pod: &Pod) -> bool {
        let mut groups = self.inner.registry.lock_for(pod);
        let in_attempt = self.hardened_waiter(&groups, pod);
        if !groups.bind_observed(pod) {
            return false;
        }
        let deliveries = in_attempt.then(|| {
            let ids = [pod.id().clone()];
            self.inner
                .waiting
                .reject_all_deferred(&ids, GANG_SCHEDULING, "bound by another binder")
        });
        drop(groups);
        drop(deliveries); // delivers, now that the group lock is released
        true
    }

    /// A pod was deleted: it leaves its group. Hardened: if it was waiting at Permit, its whole
    /// gang attempt is rejected, the deleted pod included (H1). Upstream: only the group state
    /// changes; the caller rejects the pod's own waiting entry (`WaitingPods::remove`).
    /// `None` (no-op) if it was not a member.
    pub fn on_pod_deleted(&self, pod: &Pod) -> Option<Pod> {
        let mut groups = self.inner.registry.lock_for(pod);
        let in_attempt = self.hardened_waiter(&groups, pod);
        let deleted = groups.delete_pod(pod)?;
        if !in_attempt {
            return Some(deleted);
        }
        let reason = format!("gang member {} was deleted", pod.full_name());
        let mut members = groups
            .state_of_mut(pod)
            .map(|s| s.fail_attempt(&reason))
            .unwrap_or_default();
        members.push(pod.id().clone());
        let deliveries = self
            .inner
            .waiting
            .reject_all_deferred(&members, GANG_SCHEDULING, &reason);
        drop(groups);
        deliveries.deliver();
        super::permit::gang_failed(pod.group_key(), &reason);
        Some(deleted)
    }

    /// A PodGroup object was created.
    pub fn on_group_added(&self, group: PodGroup) -> Result<(), GroupUpdateError> {
        self.inner.registry.add_group(group)
    }

    /// A PodGroup object changed; returns the old one.
    pub fn on_group_updated(&self, group: PodGroup) -> Result<PodGroup, GroupUpdateError> {
        self.inner.registry.update_group(group)
    }

    /// A PodGroup object was deleted; `None` (no-op) if it did not exist.
    pub fn on_group_deleted(&self, key: &GroupKey) -> Option<PodGroup> {
        self.inner.registry.delete_group(key)
    }

    /// PreEnqueue: may `pod` enter the active queue? Success for pods without a group and for
    /// Basic groups; `UnschedulableAndUnresolvable` while the PodGroup object is missing or a
    /// gang has fewer than `min_count` members ([`gang_pre_enqueue`](super::gang_pre_enqueue)
    /// under the group's registry shard lock).
    pub fn pre_enqueue(&self, pod: &Pod) -> Status {
        super::gang_pre_enqueue(&self.inner.registry.read_for(pod), pod)
    }

    /// Reserve: the pod is assumed in its group. Pods without a group: `Ok` (nothing to do).
    pub fn reserve(&self, pod: &Pod) -> Result<(), ReserveError> {
        if GroupKey::of(pod).is_none() {
            return Ok(());
        }
        let mut groups = self.inner.registry.lock_for(pod);
        let Some(state) = groups.state_of_mut(pod) else {
            return Err(ReserveError::NoGroupState(pod.id().clone()));
        };
        if state.assume(pod.id()) {
            Ok(())
        } else {
            Err(ReserveError::NotUnscheduled(pod.id().clone()))
        }
    }

    /// Unreserve: the pod's reservation is released (assumed → unscheduled). Hardened: if it
    /// was waiting in an open gang attempt, the attempt fails and every other waiting member is
    /// rejected with it (H1). Unknown, deleted or unassumed pods: no-op.
    pub fn unreserve(&self, pod: &Pod) {
        let mut groups = self.inner.registry.lock_for(pod);
        let in_attempt = self.hardened_waiter(&groups, pod);
        let Some(state) = groups.state_of_mut(pod) else {
            return;
        };
        let reason = in_attempt.then(|| format!("gang member {} was unreserved", pod.full_name()));
        let deliveries = reason.as_ref().map(|r| self.fail_and_reject(state, r));
        state.forget(pod.id());
        drop(groups);
        drop(deliveries); // delivers, now that the group lock is released
        if let Some(reason) = reason {
            super::permit::gang_failed(pod.group_key(), &reason);
        }
    }

    /// The queueing hint for `pod`, rejected by this plugin, after `event`: `Queue` when a
    /// sibling was added, when its PodGroup appeared, or when its gang's min count was lowered;
    /// `QueueSkip` otherwise ([`gang_queueing_hint`](super::gang_queueing_hint)).
    pub fn queueing_hint(&self, pod: &Pod, event: GangEvent<'_>) -> QueueingHint {
        super::gang_queueing_hint(pod, event)
    }
}

impl GangScheduling {
    /// Hardened mode, and `pod` waits at Permit in its group's open attempt.
    fn hardened_waiter(&self, groups: &Groups, pod: &Pod) -> bool {
        self.inner.mode == Mode::Hardened
            && groups
                .state_of(pod)
                .and_then(|s| s.attempt())
                .is_some_and(|a| a.waiting().contains(pod.id()))
    }
}

impl fmt::Debug for GangScheduling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GangScheduling")
            .field("mode", &self.inner.mode)
            .field("timeout", &self.inner.timeout)
            .field("groups", &self.inner.registry.len())
            .finish()
    }
}
