use std::fmt;
use std::time::Duration;

use super::decide::{AttemptWaiting, GangRules};
use super::parts::{Batch, Expire, GangParts};
use super::{
    ops, Activation, GroupRegistry, GroupUpdateError, Groups, JoinGroupError, Permit, ReserveError,
};
use crate::sync::{Arc, Mutex};
use crate::time::{Alarm, Deadlines};
use crate::waiting::{AddError, Deliveries};
use crate::{
    Cause, Mode, PermitPlugins, PluginName, Pod, PodId, QueueingHint, Status, Time, WaitingPod,
    WaitingPods,
};
use crate::{GroupKey, PodGroup};

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
///
/// Every operation takes the locks of the group it concerns and delegates to the pure rules
/// (`gang/decide.rs`, `gang/member_events.rs`) — the same code the model checker runs.
#[derive(Clone)]
pub struct GangScheduling {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) rules: GangRules,
    pub(super) registry: GroupRegistry,
    pub(super) waiting: WaitingPods,
    /// Rung when an attempt opens with a deadline earlier than its shard's earliest.
    pub(super) alarm: Mutex<Option<Alarm>>,
}

/// A cluster event the gang plugin's queueing hints look at.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
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
                rules: GangRules::new(mode, timeout),
                registry: GroupRegistry::new(),
                waiting,
                alarm: Mutex::new(None),
            }),
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.inner.rules.mode
    }

    /// The Permit wait.
    pub fn timeout(&self) -> Duration {
        self.inner.rules.timeout
    }

    /// The group registry.
    pub fn registry(&self) -> &GroupRegistry {
        &self.inner.registry
    }

    /// The pods a Permit outcome's `activation` activates, as the registry has them now (right
    /// after the Permit: the gang's unscheduled members, in pod id order, the list upstream's
    /// plugin activates). The scheduler does not list them: it asks its queue for the few not
    /// already active.
    pub fn activated(&self, activation: &Activation) -> Vec<Pod> {
        activation.group().map_or_else(Vec::new, |key| {
            activation.pods(&self.inner.registry.read_key(key))
        })
    }

    /// The waiting-pod map.
    pub fn waiting(&self) -> &WaitingPods {
        &self.inner.waiting
    }

    /// A pod was added (`bound` if already bound to a node). Pods that name no group are
    /// ignored (`Ok`).
    pub fn on_pod_added(&self, pod: Pod, bound: bool) -> Result<(), JoinGroupError> {
        ops::pod_added(&mut self.parts(), pod, bound)
    }

    /// A pod's object changed; `false` (no-op) if it is not a known member.
    pub fn on_pod_updated(&self, pod: Pod) -> bool {
        ops::pod_updated(&mut self.parts(), pod)
    }

    /// A pod was observed bound to a node; `false` (no-op) if unknown or already assigned.
    /// Hardened: if it was still waiting in a gang attempt (bound by someone else), its waiting
    /// entry is rejected so its binding cycle ends; it now counts as assigned towards quorum.
    pub fn on_pod_bound(&self, pod: &Pod) -> bool {
        ops::pod_bound(&mut self.parts(), pod)
    }

    /// A pod was deleted: it leaves its group. Hardened: if it was waiting at Permit, its whole
    /// gang attempt is rejected (H1), the deleted pod for [`Cause::Deleted`], its siblings for
    /// [`Cause::GangFailed`]. Upstream: only the group state changes; the caller rejects the
    /// pod's own waiting entry (`WaitingPods::remove`). `None` (no-op) if it was not a member.
    pub fn on_pod_deleted(&self, pod: &Pod) -> Option<Pod> {
        ops::pod_deleted(&mut self.parts(), pod)
    }

    /// A PodGroup object was created.
    pub fn on_group_added(&self, group: PodGroup) -> Result<(), GroupUpdateError> {
        ops::group_added(&mut self.parts(), group)
    }

    /// A PodGroup object changed; returns the old one.
    pub fn on_group_updated(&self, group: PodGroup) -> Result<PodGroup, GroupUpdateError> {
        ops::group_updated(&mut self.parts(), group)
    }

    /// A PodGroup object was deleted; `None` (no-op) if it did not exist.
    pub fn on_group_deleted(&self, key: &GroupKey) -> Option<PodGroup> {
        ops::group_deleted(&mut self.parts(), key)
    }

    /// PreEnqueue: may `pod` enter the active queue? Success for pods without a group and for
    /// Basic groups; `UnschedulableAndUnresolvable` while the PodGroup object is missing or a
    /// gang has fewer than `min_count` members ([`gang_pre_enqueue`](super::gang_pre_enqueue)
    /// under the group's registry shard lock).
    pub fn pre_enqueue(&self, pod: &Pod) -> Status {
        ops::pre_enqueue(&self.parts(), pod)
    }

    /// Reserve: the pod is assumed in its group. Pods without a group: `Ok` (nothing to do).
    pub fn reserve(&self, pod: &Pod) -> Result<(), ReserveError> {
        ops::reserve(&mut self.parts(), pod)
    }

    /// Unreserve: the pod's reservation is released (assumed → unscheduled). Hardened: if it
    /// was waiting in an open gang attempt, the attempt fails and every other waiting member is
    /// rejected with it (H1). Unknown, deleted or unassumed pods: no-op.
    pub fn unreserve(&self, pod: &Pod) {
        ops::unreserve(&mut self.parts(), pod)
    }

    /// Permit, at the end of the pod's scheduling cycle, after [`reserve`](Self::reserve).
    ///
    /// Below quorum (assumed + assigned < `min_count`) the pod waits: it is registered in the
    /// waiting map before this returns. At quorum it passes and its waiting siblings are
    /// allowed — upstream: one `allow` each, after the group lock is released; hardened: all
    /// in one critical section of the waiting map, or, if one of them is no longer waiting, the
    /// whole attempt is rejected, this pod included (H1). Hardened members wait without a
    /// timer of their own; the attempt's deadline (H3) is applied by
    /// [`expire`](Self::expire). A pod that Hardened Permit rejects no longer counts as
    /// reserved in its group from that moment (its caller's unreserve is then a no-op there),
    /// so a late unreserve cannot lend it to the next member's quorum.
    pub fn permit(&self, pod: &Pod, now: Time) -> Permit {
        ops::permit(&mut self.parts(), pod, now)
    }

    /// The whole Permit step for `pod`, reserved on `node`: this plugin's Permit and the
    /// embedder's `others` (user code, called with no lock held; a panic is the plugin's
    /// error), folded as kube-scheduler's `RunPermitPlugins` folds them — the first rejection
    /// wins and later plugins are not asked; every plugin that asks the pod to wait gets its
    /// own pending entry and timer (capped at 15 minutes), and the pod is registered once for
    /// all of them.
    ///
    /// Upstream runs this plugin first, as the default profile does: its quorum allows the
    /// waiting siblings at once, even if a later plugin then rejects this pod (a partial gang,
    /// docs/races.md). Hardened runs the others first and this plugin last, so that a gang's
    /// quorum stays its one linearization point (H1); a gang member another plugin asks to
    /// wait is rejected with an error, since only its gang may hold it at Permit.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gangsched::{
    ///     Code, GangScheduling, Mode, Permit, PermitPlugin, PermitPlugins, PermitVerdict,
    ///     PluginName, Pod, Time, WaitingPods,
    /// };
    /// use gangsched::sync::Arc;
    ///
    /// struct Quota;
    /// impl PermitPlugin for Quota {
    ///     fn name(&self) -> PluginName {
    ///         "Quota".into()
    ///     }
    ///     fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
    ///         PermitVerdict::wait(Duration::from_secs(30))
    ///     }
    /// }
    ///
    /// let gang = GangScheduling::new(Mode::Upstream, WaitingPods::new());
    /// let quota = PermitPlugins::new([Arc::new(Quota) as Arc<dyn PermitPlugin>]).unwrap();
    /// let pod = Pod::new("a", "ns", "a").with_node("n1");
    /// let permit = gang.permit_with(&pod, "n1", &quota, Time::ZERO);
    /// assert_eq!(permit.status().code(), Code::Wait);
    /// let Permit::Wait { waiting, .. } = permit else {
    ///     panic!("the quota plugin holds the pod")
    /// };
    /// assert_eq!(waiting.pending_plugins(), ["Quota"]);
    /// assert!(gang.waiting().allow(waiting.id(), "Quota"));
    /// ```
    pub fn permit_with(&self, pod: &Pod, node: &str, others: &PermitPlugins, now: Time) -> Permit {
        ops::permit_with(&mut self.parts(), pod, node, others, now)
    }

    /// Hardened: rejects every gang attempt whose deadline is at or before `now`, each as a
    /// whole (H1, H3), with upstream's timeout message, for [`Cause::TimedOut`]. Returns the
    /// groups it timed out, in (deadline, group) order. Upstream mode keeps no attempts; its members time out in the
    /// waiting map.
    pub fn expire(&self, now: Time) -> Vec<GroupKey> {
        ops::expire(&mut self.parts(), now)
    }

    /// The earliest deadline of any live gang attempt.
    pub fn next_deadline(&self) -> Option<Time> {
        self.inner.registry.next_deadline()
    }

    /// The queueing hint for `pod`, rejected by this plugin, after `event`: `Queue` when a
    /// sibling was added, when its PodGroup appeared, or when its gang's min count was lowered;
    /// `QueueSkip` otherwise ([`gang_queueing_hint`](super::gang_queueing_hint)).
    pub fn queueing_hint(&self, pod: &Pod, event: GangEvent<'_>) -> QueueingHint {
        super::gang_queueing_hint(pod, event)
    }

    /// The plugin's parts behind their locks, for the operations of `ops.rs`.
    pub(crate) fn parts(&self) -> LockedGang<'_> {
        LockedGang { inner: &self.inner }
    }
}

/// The plugin's registry and waiting map as [`GangParts`]: each call takes the locks it
/// needs — a registry shard, then the waiting map's shards (the lock order) — and delivers
/// what was decided once they are released.
pub(crate) struct LockedGang<'a> {
    inner: &'a Inner,
}

impl GangParts for LockedGang<'_> {
    type Registration = WaitingPod;

    fn rules(&self) -> GangRules {
        self.inner.rules
    }

    fn read_group<R>(&self, key: &GroupKey, read: impl FnOnce(&Groups) -> R) -> R {
        read(&self.inner.registry.read_key(key))
    }

    fn write_group<R>(
        &mut self,
        key: &GroupKey,
        change: impl FnOnce(&mut Groups, &mut Batch<'_, WaitingPod>) -> R,
    ) -> R {
        let mut batch = Deferred {
            map: &self.inner.waiting,
            deliveries: None,
            ring: false,
        };
        let (result, earlier) = {
            let mut groups = self.inner.registry.lock_key(key);
            let before = groups.next_deadline();
            let result = change(&mut groups, &mut batch);
            let after = groups.next_deadline();
            (result, after.is_some_and(|a| before.is_none_or(|b| a < b)))
        };
        drop(batch); // delivers, now that the group lock is released (H5)
        if earlier {
            // Earlier than its shard's earliest: possibly the registry's (a spare ring is
            // harmless).
            if let Some(alarm) = &*self.inner.alarm.lock() {
                alarm.ring();
            }
        }
        result
    }

    fn add_waiting(
        &mut self,
        pod: Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<WaitingPod, AddError> {
        self.inner.waiting.add(pod, waits.iter().cloned(), now)
    }

    fn allow_waiting(&mut self, id: &PodId, plugin: &str) -> bool {
        self.inner.waiting.allow(id, plugin)
    }

    fn remove_waiting(&mut self, id: &PodId) -> bool {
        self.inner.waiting.remove(id).is_some()
    }

    fn expire_waiting(&mut self, now: Time) -> Vec<PodId> {
        let decided = self.inner.waiting.expire(now);
        decided.into_iter().map(|d| d.pod.id().clone()).collect()
    }

    fn next_waiting_deadline(&self) -> Option<Time> {
        self.inner.waiting.next_deadline()
    }

    fn group_parts(&self) -> usize {
        self.inner.registry.shards()
    }

    fn part_deadline(&self, part: usize) -> Option<Time> {
        self.inner.registry.read_shard(part).next_deadline()
    }

    fn expire_part(
        &mut self,
        part: usize,
        expire: &mut Expire<'_, WaitingPod>,
    ) -> Vec<(Time, GroupKey)> {
        let mut batch = Deferred {
            map: &self.inner.waiting,
            deliveries: None,
            ring: false,
        };
        let done = expire(&mut self.inner.registry.write_shard(part), &mut batch);
        drop(batch); // delivers the batch, with no group lock held (H5)
        done
    }

    fn next_attempt_deadline(&self) -> Option<Time> {
        self.inner.registry.next_deadline()
    }
}

impl Deadlines for GangScheduling {
    fn expire(&self, now: Time) {
        GangScheduling::expire(self, now);
    }

    fn next_deadline(&self) -> Option<Time> {
        GangScheduling::next_deadline(self)
    }

    fn ring_on_earlier_deadline(&self, alarm: Alarm) {
        *self.inner.alarm.lock() = Some(alarm);
    }
}

/// The waiting map for a critical section under a group lock: decisions are published on the
/// pods' latches at once and delivered when this is dropped, after the lock (H5).
struct Deferred<'a> {
    map: &'a WaitingPods,
    deliveries: Option<Deliveries>,
    /// A registration moved the map's earliest deadline: the timer is woken at the end.
    ring: bool,
}

/// Delivers the decisions and wakes the timer, now that the group lock is released (H5).
impl Drop for Deferred<'_> {
    fn drop(&mut self) {
        drop(self.deliveries.take());
        if self.ring {
            self.map.ring_alarm();
        }
    }
}

impl Deferred<'_> {
    fn keep(&mut self, more: Deliveries) {
        match &mut self.deliveries {
            Some(deliveries) => deliveries.append(more),
            None => self.deliveries = Some(more),
        }
    }
}

impl AttemptWaiting for Deferred<'_> {
    type Registration = WaitingPod;

    fn allow_all(&mut self, ids: &[PodId]) -> Result<(), PodId> {
        let deliveries = self
            .map
            .allow_all_deferred(ids, super::GANG_SCHEDULING.as_str())?;
        self.keep(deliveries);
        Ok(())
    }

    fn reject_waiting(
        &mut self,
        ids: &[PodId],
        reason: &str,
        cause: Cause,
        rejected: &mut dyn FnMut(&PodId),
    ) {
        if ids.is_empty() {
            return;
        }
        let deliveries = self
            .map
            .reject_all_deferred(ids, super::GANG_SCHEDULING, reason, cause);
        deliveries.ids().for_each(rejected);
        self.keep(deliveries);
    }

    fn add_untimed(&mut self, pod: &Pod) -> Result<WaitingPod, AddError> {
        self.map.add_untimed(pod.clone(), super::GANG_SCHEDULING)
    }

    fn add_timed(
        &mut self,
        pod: &Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<WaitingPod, AddError> {
        let (waiting, earlier) = self
            .map
            .add_quietly(pod.clone(), waits.iter().cloned(), now)?;
        self.ring |= earlier;
        Ok(waiting)
    }
}

impl fmt::Debug for GangScheduling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GangScheduling")
            .field("mode", &self.inner.rules.mode)
            .field("timeout", &self.inner.rules.timeout)
            .field("groups", &self.inner.registry.len())
            .finish()
    }
}
