use std::fmt;
use std::time::Duration;

use super::batch::{allow_all_in, reject_all_in};
#[cfg(feature = "checking")]
use super::flaw::WaitingFlaw;
use super::handle::preemption;
use super::latch::Latch;
use super::shards::Shards;
#[cfg(any(test, feature = "checking"))]
use super::state::WaitingState;
use super::state::{AllowOutcome, Decided, PendingPlugin};
use super::{AddError, Cause, Decision, DecisionSink, WaitingPod, WaitingRef};
use crate::sync::channel::{self, Receiver};
use crate::sync::{Arc, Mutex};
use crate::time::{Alarm, Deadlines};
use crate::{PluginName, Pod, PodId, Status, Time};

/// The waiting-pod map: every pod parked at Permit until it is allowed, rejected or times out.
///
/// It is a [`WaitingState`](super::WaitingState) split by uid hash into shards, each behind its own lock, so that
/// threads deciding different pods do not wait for each other; a gang's decision locks the
/// shards of all its members at once, in shard order (see `docs/architecture.md`). Each pod
/// is decided exactly once (I1): the first decision takes the pod out of the map, publishes it
/// on the pod's latch and wakes its waiters (I2), and every later `allow`/`reject` reports
/// `false` (H4). Decisions reach the binding side either through [`WaitingPod::wait`] or
/// through a [`DecisionSink`] — a channel or callback called after the locks are released (H5)
/// — so 100,000 pods can wait with a handful of threads.
/// Timeouts take effect only through [`expire`](WaitingPods::expire), called by a
/// [`TimerDriver`](crate::TimerDriver) or a test.
///
/// Clones share the map.
///
/// ```
/// use std::time::Duration;
/// use gangsched::{Pod, Time, WaitingPods};
///
/// let (waiting, decisions) = WaitingPods::with_channel();
/// let pod = Pod::new("uid-1", "default", "trainer-0");
/// let wp = waiting
///     .add(pod, [("GangScheduling".into(), Duration::from_secs(300))], Time::ZERO)
///     .unwrap();
///
/// // The last gang member's Permit allows it; this call made the decision.
/// assert!(waiting.allow(wp.id(), "GangScheduling"));
/// assert!(!wp.reject("GangScheduling", "too late")); // the first decision wins
/// assert!(wp.wait().is_success());
/// assert_eq!(decisions.recv().unwrap().pod.name(), "trainer-0");
/// assert!(waiting.is_empty());
/// ```
#[derive(Clone)]
pub struct WaitingPods {
    shared: Arc<Shared>,
}

pub(super) struct Shared {
    shards: Shards,
    sink: Option<Box<dyn DecisionSink>>,
    alarm: Mutex<Option<Alarm>>,
    /// A bug planted for a witness (`checking::waiting_pods_with_flaw`).
    #[cfg(feature = "checking")]
    flaw: Option<WaitingFlaw>,
}

impl WaitingPods {
    /// An empty map whose decisions are observed only through [`WaitingPod`] handles.
    pub fn new() -> WaitingPods {
        WaitingPods::build(None)
    }

    /// An empty map that hands every decision to `sink` (I1: once per pod, H5: no lock held).
    pub fn with_sink(sink: impl DecisionSink) -> WaitingPods {
        WaitingPods::build(Some(Box::new(sink)))
    }

    /// An empty map and the channel on which every decision arrives.
    pub fn with_channel() -> (WaitingPods, Receiver<Decision>) {
        let (tx, rx) = channel::unbounded();
        (WaitingPods::with_sink(tx), rx)
    }

    fn build(sink: Option<Box<dyn DecisionSink>>) -> WaitingPods {
        WaitingPods {
            shared: Arc::new(Shared {
                shards: Shards::new(),
                sink,
                alarm: Mutex::new(None),
                #[cfg(feature = "checking")]
                flaw: None,
            }),
        }
    }

    /// An empty map handing its decisions to `sink`, with `flaw` planted (for witnesses).
    #[cfg(feature = "checking")]
    pub(crate) fn with_flaw(sink: impl DecisionSink, flaw: WaitingFlaw) -> WaitingPods {
        WaitingPods {
            shared: Arc::new(Shared {
                shards: Shards::new(),
                sink: Some(Box::new(sink)),
                alarm: Mutex::new(None),
                flaw: Some(flaw),
            }),
        }
    }

    /// Whether `flaw` is planted in this map (see `planted!`).
    #[cfg(feature = "checking")]
    fn planted(&self, flaw: WaitingFlaw) -> bool {
        self.shared.flaw == Some(flaw)
    }

    /// Parks `pod` at Permit: one pending entry per plugin in `plugin_waits`, each with its
    /// deadline `now + wait` (waits capped at 15 minutes). Do this before the next scheduling
    /// cycle starts, so that a sibling's allow cannot miss it.
    ///
    /// Fails, handing the pod back, if it is already waiting, or no plugin or the same plugin
    /// twice is named.
    pub fn add<I>(&self, pod: Pod, plugin_waits: I, now: Time) -> Result<WaitingPod, AddError>
    where
        I: IntoIterator<Item = (PluginName, Duration)>,
    {
        let (waiting, earlier) = self.add_quietly(pod, plugin_waits, now)?;
        if earlier {
            self.ring_alarm();
        }
        Ok(waiting)
    }

    /// [`add`](Self::add) without ringing the alarm: `true` beside the handle if the caller
    /// must [`ring_alarm`](Self::ring_alarm) once its own locks are released (the gang
    /// registers a Basic member under its group's lock).
    pub(crate) fn add_quietly<I>(
        &self,
        pod: Pod,
        plugin_waits: I,
        now: Time,
    ) -> Result<(WaitingPod, bool), AddError>
    where
        I: IntoIterator<Item = (PluginName, Duration)>,
    {
        let latch = Arc::new(Latch::new(pod.clone()));
        let shards = &self.shared.shards;
        let mut state = shards.write(pod.id());
        let before = state.next_deadline();
        let ticket = state.add_numbered(pod, plugin_waits, now, latch.clone(), |_| {
            shards.draw_ticket()
        })?;
        // Earlier than its shard's earliest: possibly the map's (a spare ring is harmless).
        let earlier = state.next_deadline() != before;
        drop(state);
        Ok((WaitingPod::new(self.clone(), ticket, latch), earlier))
    }

    /// Wakes the timer, if one is attached, to look at the deadlines again.
    pub(crate) fn ring_alarm(&self) {
        if let Some(alarm) = &*self.shared.alarm.lock() {
            alarm.ring();
        }
    }

    /// Parks `pod` at Permit for `plugin` with **no deadline in this map**: `plugin` owns the
    /// timeout and must decide the pod itself (with [`reject_all`](Self::reject_all) or
    /// [`reject`](Self::reject)); [`expire`](Self::expire) never touches it. The hardened gang
    /// registers its members this way, so that a member times out only with its whole attempt
    /// (H1, H3).
    pub fn add_untimed(&self, pod: Pod, plugin: PluginName) -> Result<WaitingPod, AddError> {
        let latch = Arc::new(Latch::new(pod.clone()));
        let shards = &self.shared.shards;
        let ticket =
            shards
                .write(pod.id())
                .add_untimed_numbered(pod, plugin, latch.clone(), |_| shards.draw_ticket())?;
        Ok(WaitingPod::new(self.clone(), ticket, latch))
    }

    /// Clears `plugin` for every pod in `ids` in one critical section — all or none: if any of
    /// them is not waiting, nothing changes and its id is returned. Otherwise returns how many
    /// pods this call allowed. No other decision can land between two of them, which makes a
    /// gang's quorum one linearization point (H1).
    pub fn allow_all(&self, ids: &[PodId], plugin: &str) -> Result<usize, PodId> {
        let deliveries = self.allow_all_deferred(ids, plugin)?;
        Ok(deliveries.deliver())
    }

    /// Rejects every pod in `ids` that is still waiting, in one critical section, as
    /// `Unschedulable` with `message` attributed to `plugin`, for `cause`; returns how many
    /// this call decided (H1: a gang is rejected as a whole).
    pub fn reject_all(
        &self,
        ids: &[PodId],
        plugin: impl Into<PluginName>,
        message: &str,
        cause: Cause,
    ) -> usize {
        self.reject_all_deferred(ids, plugin, message, cause)
            .deliver()
    }

    /// [`allow_all`](Self::allow_all), handing the decisions back for delivery once the
    /// caller has released its own locks (H5).
    pub(crate) fn allow_all_deferred(
        &self,
        ids: &[PodId],
        plugin: &str,
    ) -> Result<Deliveries, PodId> {
        let mut locked = self.shared.shards.write_many(ids);
        let decided = allow_all_in(&mut locked, ids, plugin)?;
        Ok(self.published(decided))
    }

    /// [`reject_all`](Self::reject_all), handing the decisions back for delivery once the
    /// caller has released its own locks (H5).
    pub(crate) fn reject_all_deferred(
        &self,
        ids: &[PodId],
        plugin: impl Into<PluginName>,
        message: &str,
        cause: Cause,
    ) -> Deliveries {
        let status = Status::unschedulable(message).with_plugin(plugin);
        let mut locked = self.shared.shards.write_many(ids);
        let decided = reject_all_in(&mut locked, ids, &status, cause);
        self.published(decided)
    }

    /// Publishes each decision on its latch (the shards' locks are held by the caller).
    fn published(&self, decided: Vec<Decided<Arc<Latch>>>) -> Deliveries {
        for d in &decided {
            d.latch.publish(d.status.clone(), d.cause);
        }
        Deliveries {
            map: self.clone(),
            decided,
        }
    }

    /// Waiting pod `id`'s registration, borrowed: decide it without taking a handle (no
    /// reference count is touched). `None` if it is not waiting.
    pub fn find<'a>(&'a self, id: &'a PodId) -> Option<WaitingRef<'a>> {
        let ticket = self.shared.shards.read(id).get(id)?.ticket();
        Some(WaitingRef::new(self, id, ticket))
    }

    /// The handle of waiting pod `id`, if it is waiting.
    pub fn get(&self, id: &PodId) -> Option<WaitingPod> {
        let state = self.shared.shards.read(id);
        let entry = state.get(id)?;
        Some(WaitingPod::new(
            self.clone(),
            entry.ticket(),
            entry.latch().clone(),
        ))
    }

    /// Clears `plugin` for waiting pod `id`; returns `true` if this call allowed the pod (it
    /// was the last pending plugin). Unknown or decided pods: `false`, nothing changes.
    pub fn allow(&self, id: &PodId, plugin: &str) -> bool {
        self.allow_ticket(id, None, plugin)
    }

    /// Rejects waiting pod `id` as `Unschedulable` with `message`, attributed to `plugin`
    /// ([`Cause::Rejected`]); returns `true` if this call decided it (H4). Unknown or decided
    /// pods: `false`.
    pub fn reject(&self, id: &PodId, plugin: impl Into<PluginName>, message: &str) -> bool {
        let status = Status::unschedulable(message).with_plugin(plugin);
        self.reject_ticket(id, None, status, Cause::Rejected)
    }

    /// Rejects waiting pod `id` with `status` for `cause` (a shutdown, a failed gang): what
    /// [`reject`](Self::reject) does with a cause of the caller's; `true` if this call decided
    /// it (H4).
    pub fn reject_for(&self, id: &PodId, status: Status, cause: Cause) -> bool {
        self.reject_ticket(id, None, status, cause)
    }

    /// Preempts waiting pod `id`: decided with an `Error` attributed to `plugin`, for
    /// [`Cause::Preempted`] (upstream's `Preempt`: not a verdict on the pod, which backs off
    /// and is tried again); `true` if this call decided it (H4).
    pub fn preempt(&self, id: &PodId, plugin: impl Into<PluginName>, message: &str) -> bool {
        self.reject_ticket(id, None, preemption(plugin, message), Cause::Preempted)
    }

    /// The pod was deleted: takes it out of the map, rejecting it with "removed" (no plugin,
    /// as upstream's `RejectWaitingPod`) for [`Cause::Deleted`], so that its waiter wakes.
    /// Returns its handle, decided, if it was waiting; `None` (a no-op) otherwise.
    pub fn remove(&self, id: &PodId) -> Option<WaitingPod> {
        let decided = {
            let mut state = self.shared.shards.write(id);
            let removed = Status::unschedulable("removed");
            let decided = state.reject(id, None, removed, Cause::Deleted)?;
            decided.latch.publish(decided.status.clone(), decided.cause);
            decided
        };
        let handle = WaitingPod::new(self.clone(), decided.ticket, decided.latch.clone());
        self.deliver(decided);
        Some(handle)
    }

    /// Rejects every pod whose earliest pending deadline is at or before `now`, with
    /// "rejected due to timeout after waiting `<d>` at plugin `<p>`", and returns those decisions
    /// in deadline order. The only way a timeout takes effect.
    pub fn expire(&self, now: Time) -> Vec<Decision> {
        let shards = &self.shared.shards;
        let skips_due_now = planted!(self, WaitingFlaw::ExpirySkipsPodDueNow);
        let mut decided = Vec::new();
        for index in 0..shards.count() {
            if shards
                .read_at(index)
                .next_deadline()
                .is_none_or(|d| d > now || (skips_due_now && d == now))
            {
                continue;
            }
            let mut state = shards.write_at(index);
            let mut part = state.expire_dated(now);
            for (_, d) in &part {
                d.latch.publish(d.status.clone(), d.cause);
            }
            drop(state);
            decided.append(&mut part);
        }
        // Each shard's part is in (deadline, id) order, as the whole map's would be.
        if !planted!(self, WaitingFlaw::ExpiryInShardOrder) {
            decided.sort_by(|(a, x), (b, y)| (a, x.pod.id()).cmp(&(b, y.pod.id())));
        }
        decided
            .into_iter()
            .map(|(_, d)| {
                let decision = Decision::new(d.pod.clone(), d.status.clone(), d.cause);
                self.deliver(d);
                decision
            })
            .collect()
    }

    /// The earliest deadline of any waiting pod.
    pub fn next_deadline(&self) -> Option<Time> {
        let shards = &self.shared.shards;
        (0..shards.count())
            .filter_map(|index| shards.read_at(index).next_deadline())
            .min()
    }

    /// How many pods are waiting.
    pub fn len(&self) -> usize {
        self.shared.shards.read_all().iter().map(|s| s.len()).sum()
    }

    /// Whether no pod is waiting.
    pub fn is_empty(&self) -> bool {
        self.shared.shards.read_all().iter().all(|s| s.is_empty())
    }

    /// How many locks the map spreads its pods over (a power of two; 2 under loom).
    pub fn shards(&self) -> usize {
        self.shared.shards.count()
    }

    #[cfg(feature = "checking")]
    /// Which shard (`0..shards()`) holds pod `id`: pods in different shards are decided under
    /// different locks. Models use it (through `checking`) to put a gang's members in more
    /// than one shard.
    pub(crate) fn shard_of(&self, id: &PodId) -> usize {
        self.shared.shards.index_of(id)
    }

    /// Handles of every waiting pod, in pod id order, taken in one critical section.
    pub fn snapshot(&self) -> Vec<WaitingPod> {
        let shards = self.shared.shards.read_all();
        let mut handles: Vec<WaitingPod> = shards
            .iter()
            .flat_map(|state| state.iter())
            .map(|e| WaitingPod::new(self.clone(), e.ticket(), e.latch().clone()))
            .collect();
        handles.sort_unstable_by(|a, b| a.id().cmp(b.id()));
        handles
    }

    /// Calls `f` on every pod waiting at the time of the call. Unlike upstream's
    /// `IterateOverWaitingPods`, `f` runs with no lock held (H5): it may allow, reject, add or
    /// remove pods of this map. A pod decided while the iteration runs is still visited, and
    /// deciding it again reports `false`.
    pub fn for_each(&self, mut f: impl FnMut(&WaitingPod)) {
        for pod in self.snapshot() {
            f(&pod);
        }
    }

    #[cfg(any(test, feature = "checking"))]
    /// A copy of the pure state without the latches, for checkers: the shards merged, taken
    /// in one critical section.
    pub(crate) fn state(&self) -> WaitingState<()> {
        let shards = self.shared.shards.read_all();
        let next_ticket = self.shared.shards.next_ticket();
        WaitingState::merged(shards.iter().map(|s| &**s), next_ticket, |_| ())
    }

    #[cfg(feature = "checking")]
    /// The checks a merged copy cannot make, for checkers, in one critical section: each
    /// shard's own [`WaitingState::check`]; each pod in the shard its uid hashes to; each
    /// waiting pod's latch holds that pod and no decision (I1: a decision takes the pod out of
    /// the map as it publishes). `Err` names the first one broken. (The tickets against the
    /// map's one counter are the merged copy's `check`.)
    pub(crate) fn check_shards(&self) -> Result<(), String> {
        let shards = self.shared.shards.read_all();
        for (index, state) in shards.iter().enumerate() {
            state.check().map_err(|e| format!("shard {index}: {e}"))?;
            for entry in state.iter() {
                let id = entry.pod().id();
                let home = self.shared.shards.index_of(id);
                if home != index {
                    return Err(format!("pod {id} is in shard {index}, its uid's is {home}"));
                }
                if entry.latch().pod() != entry.pod() {
                    return Err(format!(
                        "pod {id}'s latch holds {}",
                        entry.latch().pod().id()
                    ));
                }
                if let Some(status) = entry.latch().peek() {
                    return Err(format!(
                        "pod {id} waits with a decision on its latch: {status}"
                    ));
                }
            }
        }
        Ok(())
    }

    pub(super) fn allow_ticket(
        &self,
        id: &PodId,
        ticket: Option<super::Ticket>,
        plugin: &str,
    ) -> bool {
        let decided = {
            let mut state = self.shared.shards.write(id);
            match state.allow(id, ticket, plugin) {
                AllowOutcome::Allowed(decided) => {
                    decided.latch.publish(decided.status.clone(), decided.cause);
                    decided
                }
                AllowOutcome::NotWaiting | AllowOutcome::StillPending => return false,
            }
        };
        self.deliver(decided);
        true
    }

    pub(crate) fn reject_ticket(
        &self,
        id: &PodId,
        ticket: Option<super::Ticket>,
        status: Status,
        cause: Cause,
    ) -> bool {
        let decided = {
            let mut state = self.shared.shards.write(id);
            let Some(decided) = state.reject(id, ticket, status, cause) else {
                return planted!(self, WaitingFlaw::RejectClaimsADecidedPod);
            };
            decided.latch.publish(decided.status.clone(), decided.cause);
            if planted!(self, WaitingFlaw::DeliversUnderLock) {
                // The flaw: the sink and telemetry run under the shard's lock.
                self.deliver(decided);
                return true;
            }
            decided
        };
        self.deliver(decided);
        true
    }

    pub(super) fn pending(&self, id: &PodId, ticket: super::Ticket) -> Vec<PendingPlugin> {
        let state = self.shared.shards.read(id);
        match state.get(id) {
            Some(entry) if entry.ticket() == ticket => entry.pending().to_vec(),
            _ => Vec::new(),
        }
    }

    /// Hands a decision to the sink; never called with a gangway lock held (H5).
    fn deliver(&self, decided: Decided<Arc<Latch>>) {
        decided_event(&decided.pod, &decided.status, decided.cause);
        if let Some(sink) = &self.shared.sink {
            sink.deliver(Decision::new(decided.pod, decided.status, decided.cause));
        }
    }
}

/// Decisions already published on their latches but not yet handed to the sink. Delivered by
/// [`deliver`](Deliveries::deliver) or on drop — which the holder does after releasing its own
/// locks, so no sink runs under a gangway lock (H5).
#[must_use = "decisions reach the sink when this is delivered or dropped: do it after unlocking"]
pub(crate) struct Deliveries {
    map: WaitingPods,
    decided: Vec<Decided<Arc<Latch>>>,
}

impl Deliveries {
    /// Takes `other`'s decisions after this one's (same map), to be delivered in one call.
    pub(crate) fn append(&mut self, mut other: Deliveries) {
        self.decided.append(&mut other.decided);
    }

    /// The decided pods' ids, in decision order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &PodId> {
        self.decided.iter().map(|d| d.pod.id())
    }

    /// Hands every decision to the sink; returns how many there were.
    pub(crate) fn deliver(self) -> usize {
        self.decided.len() // dropping `self` delivers them
    }
}

impl Drop for Deliveries {
    fn drop(&mut self) {
        let decided = std::mem::take(&mut self.decided);
        if tracing::enabled!(tracing::Level::DEBUG) {
            for d in &decided {
                decided_event(&d.pod, &d.status, d.cause);
            }
        }
        match (&self.map.shared.sink, decided.len()) {
            (None, _) | (_, 0) => {}
            (Some(sink), 1) => {
                let d = decided.into_iter().next().expect("one decision");
                sink.deliver(Decision::new(d.pod, d.status, d.cause));
            }
            (Some(sink), _) => sink.deliver_all(
                decided
                    .into_iter()
                    .map(|d| Decision::new(d.pod, d.status, d.cause))
                    .collect(),
            ),
        }
    }
}

/// The event for a waiting pod's decision, told once every lock is released (H5).
fn decided_event(pod: &Pod, status: &Status, cause: Cause) {
    if status.is_success() {
        tracing::debug!(pod = %pod.id(), gang = pod.group(), "waiting pod: allowed");
    } else {
        tracing::debug!(
            pod = %pod.id(),
            gang = pod.group(),
            plugin = status.plugin().map(|p| p.as_str()),
            cause = %cause,
            reason = status.message(),
            "waiting pod: rejected"
        );
    }
}

impl Default for WaitingPods {
    fn default() -> Self {
        WaitingPods::new()
    }
}

impl Deadlines for WaitingPods {
    fn expire(&self, now: Time) {
        WaitingPods::expire(self, now);
    }

    fn next_deadline(&self) -> Option<Time> {
        WaitingPods::next_deadline(self)
    }

    fn ring_on_earlier_deadline(&self, alarm: Alarm) {
        *self.shared.alarm.lock() = Some(alarm);
    }
}

impl fmt::Debug for WaitingPods {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitingPods")
            .field("len", &self.len())
            .field("next_deadline", &self.next_deadline())
            .finish()
    }
}

#[cfg(test)]
#[path = "map_tests.rs"]
mod tests;
