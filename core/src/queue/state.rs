use std::collections::VecDeque;
use std::hash::Hash;
use std::time::Duration;

use super::compact_map::{CompactMap, CompactSet};
use super::config::BackoffClock;
#[cfg(feature = "checking")]
use super::flaw::QueueFlaw;
use super::gate_index::GateIndex;
use super::group_index::GroupIndex;
use super::keyed_heap::KeyedHeap;
use super::leftover_index::LeftoverIndex;
use super::pool::Pool;
use super::slot_index::SlotIndex;
use super::{ClusterEvent, QueueConfig, QueueError, QueuePlugins, QueuedPodInfo, SortKey};
use crate::{Pod, PodId, Time};

/// Where a queued pod is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueuePlace {
    /// Ready to be popped, in the active heap under this key.
    Active(SortKey),
    /// Backing off after an unschedulable attempt, until this expiry.
    Backoff(Time),
    /// Backing off after an error (no rejecting plugin), until this expiry; never popped early.
    ErrorBackoff(Time),
    /// Parked until an event of interest (gated pods included).
    Unschedulable,
    /// Popped, being scheduled; the queue records cluster events for it.
    InFlight,
}

/// A pod popped from the queue, with the scheduling cycle it was popped in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Popped {
    /// The pod's queue record (its attempt count already includes this attempt).
    pub info: QueuedPodInfo,
    /// The scheduling cycle number.
    pub cycle: u64,
}

/// How many pods are in each part of the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct QueueLengths {
    /// Ready to pop.
    pub active: usize,
    /// Backing off after an unschedulable attempt.
    pub backoff: usize,
    /// Backing off after an error.
    pub error_backoff: usize,
    /// In the unschedulable pool, gated pods included.
    pub unschedulable: usize,
    /// Of those, gated by a PreEnqueue plugin.
    pub gated: usize,
    /// Popped and not yet done.
    pub in_flight: usize,
}

impl QueueLengths {
    /// Publishes these lengths as kube-scheduler's pending-pods gauge
    /// ([`PENDING_PODS`](crate::telemetry::PENDING_PODS)): the gated pods under their own
    /// label, not among the unschedulable; both backoff heaps as `backoff`.
    pub(crate) fn publish(&self) {
        crate::telemetry::pending_pods(
            self.active,
            self.backoff + self.error_backoff,
            self.unschedulable.saturating_sub(self.gated),
            self.gated,
        );
    }

    /// No pod anywhere.
    pub const EMPTY: QueueLengths = QueueLengths {
        active: 0,
        backoff: 0,
        error_backoff: 0,
        unschedulable: 0,
        gated: 0,
        in_flight: 0,
    };

    /// These lengths with `n` pods ready to pop.
    pub const fn with_active(mut self, n: usize) -> QueueLengths {
        self.active = n;
        self
    }

    /// These lengths with `n` pods backing off after an unschedulable attempt.
    pub const fn with_backoff(mut self, n: usize) -> QueueLengths {
        self.backoff = n;
        self
    }

    /// These lengths with `n` pods backing off after an error.
    pub const fn with_error_backoff(mut self, n: usize) -> QueueLengths {
        self.error_backoff = n;
        self
    }

    /// These lengths with `n` pods in the unschedulable pool.
    pub const fn with_unschedulable(mut self, n: usize) -> QueueLengths {
        self.unschedulable = n;
        self
    }

    /// These lengths with `n` pods gated, of those in the unschedulable pool.
    pub const fn with_gated(mut self, n: usize) -> QueueLengths {
        self.gated = n;
        self
    }

    /// These lengths with `n` pods in flight.
    pub const fn with_in_flight(mut self, n: usize) -> QueueLengths {
        self.in_flight = n;
        self
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct InFlight {
    /// Events from this sequence number on happened during the pod's attempt.
    pub(super) since: u64,
    /// The pod was deleted while in flight; it must not come back.
    pub(super) deleted: bool,
}

/// A cluster event recorded while some pod was in flight; `target` names the one pod it
/// concerns, if it concerns only one (an update of that pod, its activation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Recorded {
    pub(super) seq: u64,
    pub(super) event: ClusterEvent,
    pub(super) target: Option<PodId>,
}

/// kube-scheduler's scheduling queue as pure data: the active heap, the backoff heaps, the
/// unschedulable pool (gated pods included) and the pods in flight with the cluster events
/// recorded during their attempts. Every transition is a `&mut self` method that takes the
/// time and the [`QueuePlugins`] as arguments, so proptest, the fuzzer and the model checker
/// drive it directly; [`SchedulingQueue`](super::SchedulingQueue) is this behind one lock.
///
/// Each known pod is in exactly one place (I4; [`check`](QueueState::check) verifies it), and
/// an event of interest that happens while a pod is in flight is replayed when the pod comes
/// back, so it is not parked in the unschedulable pool (I7).
///
/// Equality and hashing see the queue's contents — each pod's record and place, the pods in
/// flight, the recorded events, the cycle count — not how the indexes happen to be laid out,
/// so two queues that hold the same pods in the same places are one state to a model checker.
#[derive(Clone)]
pub struct QueueState {
    pub(super) config: QueueConfig,
    /// `config`'s backoff rules, precomputed.
    pub(super) clock: BackoffClock,
    /// Each known pod's slot in `slots`: a hash table, as every event, pop and attempt looks
    /// a pod up here (a B-tree's comparisons of ids grew with the queue; issue #23). Nothing
    /// walks it in its own order: what lists the pods sorts them by id.
    pub(super) ids: SlotIndex,
    /// The pods' records; a freed slot is `None` and listed in `free`.
    pub(super) slots: Vec<Option<QueuedPodInfo>>,
    /// Each slot's place (meaningless for a free slot). Kept apart from the records so that
    /// moving a pod writes a few bytes, not its record's cache lines.
    pub(super) places: Vec<QueuePlace>,
    pub(super) free: Vec<u32>,
    pub(super) active: CompactSet<(SortKey, PodId)>,
    pub(super) backoff: KeyedHeap<Time>,
    pub(super) error_backoff: KeyedHeap<Time>,
    /// The unschedulable pool, gated pods included.
    pub(super) pool: Pool,
    /// The pool by pod group, once a scoped move has needed it (derived: not part of the
    /// state's equality).
    pub(super) groups: Option<Box<GroupIndex>>,
    /// The pool by how long each pod has been parked, once a leftover flush has needed it
    /// (derived).
    pub(super) leftover: Option<Box<LeftoverIndex>>,
    /// The pool's gated pods by gate, once a move has needed it (derived).
    pub(super) gates: Option<Box<GateIndex>>,
    pub(super) in_flight: CompactMap<PodId, InFlight>,
    /// How many attempts in flight began at each sequence number (derived from `in_flight`):
    /// the oldest, which bounds the events kept, without a walk over every pod in flight.
    pub(super) flight_starts: CompactMap<u64, u32>,
    pub(super) events: VecDeque<Recorded>,
    pub(super) next_seq: u64,
    pub(super) cycle: u64,
    pub(super) gated: usize,
    pub(super) closed: bool,
    /// A bug planted by a checker (`checking::queue_state_with_flaw`).
    #[cfg(feature = "checking")]
    pub(super) flaw: Option<QueueFlaw>,
}

impl QueueState {
    /// An empty queue.
    pub fn new(config: QueueConfig) -> QueueState {
        QueueState {
            config,
            clock: config.backoff_clock(),
            ids: SlotIndex::default(),
            slots: Vec::new(),
            places: Vec::new(),
            free: Vec::new(),
            active: CompactSet::default(),
            backoff: KeyedHeap::default(),
            error_backoff: KeyedHeap::default(),
            pool: Pool::default(),
            groups: None,
            leftover: None,
            gates: None,
            in_flight: CompactMap::default(),
            flight_starts: CompactMap::default(),
            events: VecDeque::new(),
            next_seq: 0,
            cycle: 0,
            gated: 0,
            closed: false,
            #[cfg(feature = "checking")]
            flaw: None,
        }
    }

    /// An empty queue with `flaw` planted (for `checking::queue_state_with_flaw`).
    #[cfg(feature = "checking")]
    pub(crate) fn with_flaw(config: QueueConfig, flaw: QueueFlaw) -> QueueState {
        QueueState {
            flaw: Some(flaw),
            ..QueueState::new(config)
        }
    }

    /// Whether `flaw` is planted in this queue (see `planted!`).
    #[cfg(feature = "checking")]
    pub(crate) fn planted(&self, flaw: QueueFlaw) -> bool {
        self.flaw == Some(flaw)
    }

    /// The configuration.
    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    /// A new pod arrives at `now`: it enters the active queue unless a PreEnqueue plugin gates
    /// it (then it waits in the unschedulable pool). Fails if the pod is already known.
    pub fn add(
        &mut self,
        pod: Pod,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> Result<bool, QueueError> {
        if let Some(place) = self.place(pod.id()) {
            return Err(QueueError::AlreadyQueued { pod, place });
        }
        Ok(self.move_to_active(QueuedPodInfo::new(pod, now), now, plugins))
    }

    /// A queued pod's object changed. In flight: recorded as an event for its attempt, and the
    /// queue's record takes the new object, so a hand-back requeues the pod as it is now (as
    /// kube-scheduler's failure handler requeues the informer cache's copy). Active or
    /// backing off: updated in place. Unschedulable: its rejectors' hints decide whether the
    /// update moves it. Unknown: added like a new pod. Returns the pod's place afterwards.
    pub fn update(
        &mut self,
        old: Pod,
        new: Pod,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> QueuePlace {
        let id = new.id().clone();
        let event = ClusterEvent::UnscheduledPodUpdate {
            old,
            new: new.clone(),
        };
        match self.place(&id) {
            Some(QueuePlace::InFlight) if planted!(self, QueueFlaw::UpdateQueuesPodInFlight) => {
                self.move_to_active(QueuedPodInfo::new(new, now), now, plugins);
            }
            Some(QueuePlace::InFlight) => {
                self.record(event, Some(id.clone()));
                self.set_pod_refiled(&id, new);
            }
            Some(QueuePlace::Active(_)) => {
                let mut info = self.remove_entry(&id).expect("placed");
                info.set_pod(new);
                let key = plugins.sort_key(&info);
                self.insert(info, QueuePlace::Active(key));
            }
            Some(QueuePlace::Backoff(_) | QueuePlace::ErrorBackoff(_)) => {
                self.set_pod_refiled(&id, new);
            }
            Some(QueuePlace::Unschedulable) => {
                // Like any event: a gated pod moves only if its gate listens to pod updates,
                // and then PreEnqueue runs again.
                let slot = self.ids[&id];
                self.set_pod_refiled(&id, new);
                self.move_slots(&[slot], &event, now, plugins);
            }
            None => {
                self.move_to_active(QueuedPodInfo::new(new, now), now, plugins);
            }
        }
        self.place(&id).expect("the pod is known")
    }

    /// A pod was deleted: it leaves the queue. A pod in flight stays in flight until `done`,
    /// but will not be queued again. `false` (no-op) if it was unknown.
    pub fn delete(&mut self, id: &PodId) -> bool {
        if let Some(flight) = self.in_flight.get_mut(id) {
            flight.deleted = true;
            return true;
        }
        self.remove_entry(id).is_some()
    }

    /// Takes the first pod of the active queue, if any: it is in flight from now on, its
    /// attempt counted and last attempt's rejectors cleared. With
    /// [`pop_from_backoff`](QueueConfig::pop_from_backoff) and an empty active queue, the pod
    /// backing off for a rejection whose backoff ends first, ties in the active queue's order
    /// (kube-scheduler 1.36); never one in the error backoff.
    pub fn pop(&mut self) -> Option<Popped> {
        if let Some((_, id)) = self.active.first() {
            let id = id.clone();
            return self.pop_tied(&id);
        }
        let id: PodId = (*self.backoff_heads().first()?).clone();
        Some(self.start_attempt(&id))
    }

    /// With [`pop_from_backoff`](QueueConfig::pop_from_backoff) and an empty active queue, the
    /// pods backing off for a rejection that a pop could take next: those whose backoff ends
    /// first and that are tied in the active queue's order, by id; otherwise none.
    fn backoff_heads(&self) -> Vec<&PodId> {
        if !self.config.pop_from_backoff || !self.active.is_empty() {
            return Vec::new();
        }
        let Some((first, _)) = self.backoff.peek() else {
            return Vec::new();
        };
        let mut tied: Vec<(SortKey, &PodId)> = self
            .backoff
            .entries()
            .filter(|&(expiry, _)| expiry == first)
            .map(|(_, slot)| {
                let info = self.info_at(slot);
                (SortKey::priority(info), info.id())
            })
            .collect();
        tied.sort();
        let best = tied.first().map(|(key, _)| *key);
        tied.into_iter()
            .take_while(|(key, _)| Some(*key) == best)
            .map(|(_, id)| id)
            .collect()
    }

    /// How many pods a pop could take: the active ones, and with
    /// [`pop_from_backoff`](QueueConfig::pop_from_backoff) those backing off for a rejection.
    pub fn poppable_len(&self) -> usize {
        let backoff = if self.config.pop_from_backoff {
            self.backoff.len()
        } else {
            0
        };
        self.active.len() + backoff
    }

    /// The active pods tied with the head (the same sort key as the first), in pop order:
    /// the pods a queue with another tie-break between equal sort keys could pop next. A model
    /// checker explores every tie order through them (upstream's heap breaks ties arbitrarily).
    pub fn heads(&self) -> impl Iterator<Item = &PodId> {
        let head = self.active.first().map(|(key, _)| *key);
        self.active
            .iter()
            .map_while(move |(key, id)| (Some(*key) == head).then_some(id))
            .chain(self.backoff_heads())
    }

    /// Like [`pop`](Self::pop), but takes `id`, which must be one of [`heads`](Self::heads);
    /// `None`, changing nothing, otherwise.
    pub fn pop_tied(&mut self, id: &PodId) -> Option<Popped> {
        let Some(&(head, _)) = self.active.first() else {
            // 1.36's pop from backoff: one of the backoff heads.
            let tied = self.backoff_heads().contains(&id);
            return tied.then(|| self.start_attempt(id));
        };
        if self.place(id) != Some(QueuePlace::Active(head)) {
            return None;
        }
        Some(self.start_attempt(id))
    }

    /// Takes the queued pod `id` out of its place and puts it in flight: its attempt begins.
    pub(super) fn start_attempt(&mut self, id: &PodId) -> Popped {
        let id = id.clone();
        let mut info = self.remove_entry(&id).expect("queued pods are placed");
        let stale = planted!(self, QueueFlaw::KeepsStaleRejectors)
            .then(|| info.unschedulable_plugins.clone());
        info.start_attempt();
        if let Some(stale) = stale {
            info.unschedulable_plugins = stale;
        }
        self.cycle += 1;
        self.in_flight.insert(
            id,
            InFlight {
                since: self.next_seq,
                deleted: false,
            },
        );
        match self.flight_starts.get_mut(&self.next_seq) {
            Some(count) => *count += 1,
            None => {
                self.flight_starts.insert(self.next_seq, 1);
            }
        }
        self.insert(info.clone(), QueuePlace::InFlight);
        Popped {
            info,
            cycle: self.cycle,
        }
    }

    /// Ends pod `id`'s attempt as [`done`](Self::done) does and returns its record: a binding
    /// cycle past Permit keeps it, to hand the pod back with its attempts counted if its bind
    /// fails (kube-scheduler's binding goroutine calls `Done` once `WaitOnPermit` passed and
    /// keeps its `QueuedPodInfo` for the failure handler). `None`, changing nothing, if the
    /// pod is not in flight.
    pub fn take_done(&mut self, id: &PodId) -> Option<QueuedPodInfo> {
        if self.place(id) != Some(QueuePlace::InFlight) {
            return None;
        }
        self.end_attempt(id).flatten()
    }

    /// The pod's attempt is over (bound, or handed back): it stops being in flight and events
    /// nobody needs any more are dropped. Returns whether it was in flight.
    pub fn done(&mut self, id: &PodId) -> bool {
        self.end_attempt(id).is_some()
    }

    /// Ends `id`'s attempt: `None` if it was not in flight, else the record the queue still
    /// held of it in flight (none if it was deleted meanwhile).
    fn end_attempt(&mut self, id: &PodId) -> Option<Option<QueuedPodInfo>> {
        let flight = self.in_flight.remove(id)?;
        if let Some(count) = self.flight_starts.get_mut(&flight.since) {
            *count -= 1;
            if *count == 0 {
                self.flight_starts.remove(&flight.since);
            }
        }
        let record = self.forget_in_flight(id);
        self.prune_events();
        Some(record)
    }

    /// Closes the queue: `pop` on the concurrent queue returns `None` from now on, and every
    /// attempt in flight ends (as `done`), as kube-scheduler's close does — a hand-back after
    /// it finds the pod no longer in flight.
    pub fn close(&mut self) {
        self.closed = true;
        let in_flight: Vec<PodId> = self.in_flight.keys().cloned().collect();
        for id in in_flight {
            self.done(&id);
        }
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Where pod `id` is, if the queue knows it.
    pub fn place(&self, id: &PodId) -> Option<QueuePlace> {
        self.ids.get(id).map(|&slot| self.places[slot as usize])
    }

    /// Pod `id`'s queue record.
    pub fn info(&self, id: &PodId) -> Option<&QueuedPodInfo> {
        self.ids.get(id).map(|&slot| self.info_at(slot))
    }

    /// Every known pod and its place, in pod id order.
    pub fn places(&self) -> impl Iterator<Item = (&PodId, QueuePlace)> {
        self.pods().map(|(id, place, _)| (id, place))
    }

    /// Every known pod with its place and record, in pod id order (sorted on each call: for
    /// checkers and reports, not for a scheduling path).
    pub fn pods(&self) -> impl Iterator<Item = (&PodId, QueuePlace, &QueuedPodInfo)> {
        self.ids_in_order()
            .into_iter()
            .map(|(id, slot)| (id, self.places[slot as usize], self.info_at(slot)))
    }

    /// The active queue in pop order.
    pub fn active_order(&self) -> impl Iterator<Item = &PodId> {
        self.active.iter().map(|(_, id)| id)
    }

    /// How many pods are in each part.
    pub fn lengths(&self) -> QueueLengths {
        QueueLengths {
            active: self.active.len(),
            backoff: self.backoff.len(),
            error_backoff: self.error_backoff.len(),
            unschedulable: self.pool.len(),
            gated: self.gated,
            in_flight: self.in_flight.len(),
        }
    }

    /// When [`flush_backoff_completed`](Self::flush_backoff_completed) next has work: the
    /// earliest backoff expiry of any pod backing off — with an ordering window, the start of
    /// the window after it ([`QueueConfig::backoff_ends`]), since a pod whose expiry equals
    /// the truncated `now` still backs off.
    pub fn next_backoff_expiry(&self) -> Option<Time> {
        let first = |heap: &KeyedHeap<Time>| heap.peek().map(|(t, _)| t);
        let expiry = match (first(&self.backoff), first(&self.error_backoff)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        expiry.map(|e| self.clock.ends(e))
    }

    /// The earliest time at which [`flush_unschedulable_leftover`](Self::flush_unschedulable_leftover)
    /// would retry some pod of the unschedulable pool (it retries pods parked *longer* than the
    /// configured maximum, so one nanosecond after that). Gated pods count only with
    /// [`wildcards_move_gated`](QueueConfig::wildcards_move_gated): without it the flush never
    /// retries them, and a stale one would make every instant a deadline. One pass over the
    /// pool, or a look at the oldest once the queue is large.
    pub fn next_leftover_flush(&self) -> Option<Time> {
        let max = self.config.max_in_unschedulable;
        if let Some(leftover) = &self.leftover {
            let oldest = leftover.oldest(self.config.wildcards_move_gated);
            return oldest.map(|since| since + max + Duration::from_nanos(1));
        }
        let retried =
            |info: &&QueuedPodInfo| self.config.wildcards_move_gated || info.gated_by().is_none();
        self.pool
            .iter()
            .map(|slot| self.info_at(slot))
            .filter(retried)
            .map(|info| info.parked_since() + max + Duration::from_nanos(1))
            .min()
    }

    /// How many pods are ready to pop.
    pub fn active_len(&self) -> usize {
        self.active.len()
    }

    /// The number of scheduling cycles so far (pops).
    pub fn scheduling_cycle(&self) -> u64 {
        self.cycle
    }

    /// Records `event` if some pod is in flight, for replay when it comes back (I7).
    pub(super) fn record(&mut self, event: ClusterEvent, target: Option<PodId>) {
        if self.in_flight.is_empty() {
            return;
        }
        self.events.push_back(Recorded {
            seq: self.next_seq,
            event,
            target,
        });
        self.next_seq += 1;
    }

    /// Drops events older than every pod still in flight.
    fn prune_events(&mut self) {
        let oldest = self.flight_starts.keys().next().copied();
        while let Some(front) = self.events.front() {
            if oldest.is_some_and(|since| front.seq >= since) {
                break;
            }
            self.events.pop_front();
        }
    }

    /// Every known pod's slot, in pod id order (the table's own order is its hashes').
    pub(super) fn ids_in_order(&self) -> Vec<(&PodId, u32)> {
        let mut ids: Vec<(&PodId, u32)> = self.ids.iter().map(|(id, &slot)| (id, slot)).collect();
        ids.sort_unstable();
        ids
    }

    /// Every known pod's place and record, in no particular order.
    pub(super) fn entries(&self) -> impl Iterator<Item = (&PodId, QueuePlace, &QueuedPodInfo)> {
        self.ids
            .iter()
            .map(|(id, &slot)| (id, self.places[slot as usize], self.info_at(slot)))
    }

    pub(super) fn info_at(&self, slot: u32) -> &QueuedPodInfo {
        self.slots[slot as usize].as_ref().expect("slot in use")
    }

    pub(super) fn info_at_mut(&mut self, slot: u32) -> &mut QueuedPodInfo {
        self.slots[slot as usize].as_mut().expect("slot in use")
    }

    /// Takes a queued (not in flight) pod out of its place.
    pub(super) fn remove_entry(&mut self, id: &PodId) -> Option<QueuedPodInfo> {
        let slot = *self.ids.get(id)?;
        match self.places[slot as usize] {
            QueuePlace::Active(key) => {
                self.active.remove(&(key, id.clone()));
            }
            QueuePlace::Backoff(_) => {
                self.backoff.remove(slot);
                self.unindex_group(slot);
            }
            QueuePlace::ErrorBackoff(_) => {
                self.error_backoff.remove(slot);
                self.unindex_group(slot);
            }
            QueuePlace::Unschedulable => {
                self.unpool(slot);
            }
            QueuePlace::InFlight => return None,
        }
        let mut info = self.release(id, slot);
        if info.gated_by().is_some() {
            self.gated -= 1;
            info.set_gated_by(None);
        }
        Some(info)
    }

    /// Drops the record of a pod in flight (its attempt is over or it is being handed back)
    /// and returns it; `None` if the queue holds no record of `id` in flight.
    pub(super) fn forget_in_flight(&mut self, id: &PodId) -> Option<QueuedPodInfo> {
        let slot = self.ids.get(id).copied()?;
        (self.places[slot as usize] == QueuePlace::InFlight).then(|| self.release(id, slot))
    }

    /// Queued pod `id` (not active) takes object `pod`, filed in the group index under the
    /// group it names now.
    fn set_pod_refiled(&mut self, id: &PodId, pod: Pod) {
        let slot = self.ids[id];
        self.unindex_group(slot);
        self.info_at_mut(slot).set_pod(pod);
        if let Some(groups) = &mut self.groups {
            let info = self.slots[slot as usize].as_ref().expect("slot in use");
            groups.insert(slot, info, self.places[slot as usize]);
        }
    }

    /// Takes pooled `slot` out of the pool (and the group index); its record stays.
    pub(super) fn unpool(&mut self, slot: u32) {
        self.pool.remove(slot);
        if let Some(leftover) = &mut self.leftover {
            leftover.remove(slot, self.slots[slot as usize].as_ref().expect("pooled"));
        }
        if let Some(gates) = &mut self.gates {
            gates.remove(slot);
        }
        self.unindex_group(slot);
    }

    /// Takes `slot` out of the group index, if there is one; its record stays.
    pub(super) fn unindex_group(&mut self, slot: u32) {
        if let Some(groups) = &mut self.groups {
            let info = self.slots[slot as usize].as_ref().expect("slot in use");
            groups.remove(slot, info.pod().group_key());
        }
    }

    /// Frees `slot`, which holds pod `id`, and returns its record.
    fn release(&mut self, id: &PodId, slot: u32) -> QueuedPodInfo {
        if self.places[slot as usize] == QueuePlace::InFlight {
            self.unindex_group(slot);
        }
        self.ids.remove(id);
        self.free.push(slot);
        self.slots[slot as usize].take().expect("slot in use")
    }

    /// Files a pod the queue does not know in `place`.
    pub(super) fn insert(&mut self, info: QueuedPodInfo, place: QueuePlace) {
        let id = info.id().clone();
        let gated = info.gated_by().is_some();
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(info);
                self.places[slot as usize] = place;
                slot
            }
            None => {
                self.slots.push(Some(info));
                self.places.push(place);
                (self.slots.len() - 1) as u32
            }
        };
        self.index(slot, &id, place, gated);
        self.ids.insert(id, slot);
    }

    /// Files `slot` (pod `id`) in `place`'s index and counters (its record is filed by the
    /// caller).
    pub(super) fn index(&mut self, slot: u32, id: &PodId, place: QueuePlace, gated: bool) {
        match place {
            QueuePlace::Active(key) => {
                self.active.insert((key, id.clone()));
            }
            QueuePlace::Backoff(t) => self.backoff.push(slot, t),
            QueuePlace::ErrorBackoff(t) => self.error_backoff.push(slot, t),
            QueuePlace::Unschedulable => {
                self.pool.insert(slot);
                self.gated += usize::from(gated);
                let info = self.slots[slot as usize].as_ref().expect("filed");
                if let Some(leftover) = &mut self.leftover {
                    leftover.insert(slot, info);
                }
                if let Some(gates) = &mut self.gates {
                    gates.insert(slot, info);
                }
            }
            QueuePlace::InFlight => {}
        }
        if let Some(groups) = &mut self.groups {
            groups.insert(
                slot,
                self.slots[slot as usize].as_ref().expect("filed"),
                place,
            );
        }
    }
}
