//! The model's records and places, the `QueueModel` state, its timing, reading and basic
//! transitions (add, update, delete, pop, done).

use std::collections::BTreeSet;
use std::time::Duration;

use gangsched::queue::{PluginSet, QueueError, QueueLengths, QueuePlace, SortKey};
use gangsched::{ClusterEvent, PluginName, Pod, PodId, QueueConfig, QueuedPodInfo, Time};

/// A pod as the model keeps it: the model's counterpart of [`QueuedPodInfo`], with every
/// field public.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// The pod object.
    pub pod: Pod,
    /// When it entered the queue or last failed.
    pub timestamp: Time,
    /// When it first entered the active queue.
    pub initial_attempt: Option<Time>,
    /// How often it was popped.
    pub attempts: u32,
    /// Attempts a plugin rejected (saturating).
    pub unschedulable_count: u8,
    /// Attempts in a row that failed with an error (saturating), zero after a rejection.
    pub consecutive_errors: u8,
    /// The plugins that found it unschedulable in its last attempt (and a gate that held it).
    pub unschedulable_plugins: BTreeSet<PluginName>,
    /// The plugins it was left pending on in its last attempt.
    pub pending_plugins: BTreeSet<PluginName>,
    /// The PreEnqueue plugin that gates it, while it is gated.
    pub gated_by: Option<PluginName>,
    /// When a leftover flush last left it where it was (upstream's `FlushTimestamp`).
    pub flushed_at: Option<Time>,
}

impl ModelInfo {
    /// The failures the backoff doubles over: the consecutive errors if the last failure was
    /// one, else the rejections (kube-scheduler 1.36's `getBackoffTime`).
    pub fn backoff_count(&self) -> u32 {
        u32::from(if self.consecutive_errors > 0 {
            self.consecutive_errors
        } else {
            self.unschedulable_count
        })
    }

    /// A failed attempt, counted: a rejection if a plugin rejected it or left it pending,
    /// else an error.
    pub fn count_failure(&mut self) {
        if self.unschedulable_plugins.is_empty() && self.pending_plugins.is_empty() {
            self.consecutive_errors = self.consecutive_errors.saturating_add(1);
        } else {
            self.unschedulable_count = self.unschedulable_count.saturating_add(1);
            self.consecutive_errors = 0;
        }
    }

    /// A pod arriving at `now`, never tried.
    pub fn new(pod: Pod, now: Time) -> ModelInfo {
        ModelInfo {
            pod,
            timestamp: now,
            initial_attempt: None,
            attempts: 0,
            unschedulable_count: 0,
            consecutive_errors: 0,
            unschedulable_plugins: BTreeSet::new(),
            pending_plugins: BTreeSet::new(),
            gated_by: None,
            flushed_at: None,
        }
    }

    /// The model's copy of a real queue record. (The real record shows its flush time only
    /// through [`QueuedPodInfo::parked_since`]; a flush time not after the timestamp changes
    /// nothing, so it is copied as `None`.)
    pub fn of(info: &QueuedPodInfo) -> ModelInfo {
        ModelInfo {
            pod: info.pod().clone(),
            timestamp: info.timestamp(),
            initial_attempt: info.initial_attempt(),
            attempts: info.attempts(),
            unschedulable_count: info.unschedulable_count(),
            consecutive_errors: info.consecutive_errors(),
            unschedulable_plugins: info.unschedulable_plugins().iter().cloned().collect(),
            pending_plugins: info.pending_plugins().iter().cloned().collect(),
            gated_by: info.gated_by().cloned(),
            flushed_at: Some(info.parked_since()).filter(|&t| t > info.timestamp()),
        }
    }

    /// Whether this record says exactly what `info` says (as `ModelInfo::of(info) == *self`,
    /// without copying).
    pub fn matches(&self, info: &QueuedPodInfo) -> bool {
        self.pod == *info.pod()
            && self.timestamp == info.timestamp()
            && self.initial_attempt == info.initial_attempt()
            && self.attempts == info.attempts()
            && self.unschedulable_count == info.unschedulable_count()
            && self.consecutive_errors == info.consecutive_errors()
            && self
                .unschedulable_plugins
                .iter()
                .eq(info.unschedulable_plugins())
            && self.pending_plugins.iter().eq(info.pending_plugins())
            && self.gated_by.as_ref() == info.gated_by()
            && self.parked_since() == info.parked_since()
    }

    /// Since when a leftover flush counts the pod as parked: its timestamp, or its last flush
    /// if that is later.
    pub fn parked_since(&self) -> Time {
        match self.flushed_at {
            Some(f) if f > self.timestamp => f,
            _ => self.timestamp,
        }
    }

    /// The pod's id.
    pub fn id(&self) -> &PodId {
        self.pod.id()
    }

    /// Whether any plugin rejected it (unschedulable or pending).
    pub fn has_rejectors(&self) -> bool {
        !self.unschedulable_plugins.is_empty() || !self.pending_plugins.is_empty()
    }

    /// PrioritySort's key: higher priority first, then the earlier timestamp.
    pub fn sort_key(&self) -> SortKey {
        SortKey {
            rank: -i64::from(self.pod.priority()),
            time: self.timestamp,
        }
    }
}

/// Where the model keeps a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelPlace {
    /// Ready to pop.
    Active,
    /// Backing off after an unschedulable attempt, until this expiry.
    Backoff(Time),
    /// Backing off after an error, until this expiry.
    ErrorBackoff(Time),
    /// In the unschedulable pool (gated or not).
    Unschedulable,
    /// Popped; its attempt is not over.
    InFlight {
        /// Deleted during the attempt: it will not be queued again.
        deleted: bool,
        /// The events its attempt saw, oldest first.
        seen: Vec<ClusterEvent>,
    },
}

/// A pod popped from the model: its record (attempt already counted) and the cycle number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelPopped {
    /// The pod's record as popped.
    pub info: ModelInfo,
    /// The scheduling cycle it was popped in (the first pop is cycle 1).
    pub cycle: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Record {
    pub(super) info: ModelInfo,
    pub(super) place: ModelPlace,
}

impl Record {
    /// The place as the real queue names it (the active queue's sort key included).
    pub(super) fn queue_place(&self) -> QueuePlace {
        match self.place {
            ModelPlace::Active => QueuePlace::Active(self.info.sort_key()),
            ModelPlace::Backoff(t) => QueuePlace::Backoff(t),
            ModelPlace::ErrorBackoff(t) => QueuePlace::ErrorBackoff(t),
            ModelPlace::Unschedulable => QueuePlace::Unschedulable,
            ModelPlace::InFlight { .. } => QueuePlace::InFlight,
        }
    }
}

/// The reference model of the scheduling queue. See the [module documentation](super) for the
/// rules it specifies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueModel {
    pub(super) config: QueueConfig,
    /// Every known pod, in id order.
    pub(super) records: Vec<Record>,
    /// Pops so far.
    pub(super) cycle: u64,
    pub(super) closed: bool,
}

impl QueueModel {
    /// An empty queue with `config`'s timing.
    pub fn new(config: QueueConfig) -> QueueModel {
        QueueModel {
            config,
            records: Vec::new(),
            cycle: 0,
            closed: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    // ---- timing -------------------------------------------------------------------------

    /// The backoff after `attempts` attempts: 0 before the first, then the initial backoff
    /// times 2^(attempts−1), capped at the maximum.
    pub fn backoff(&self, attempts: u32) -> Duration {
        self.backoff_capped(attempts, self.config.max_backoff)
    }

    /// [`backoff`](Self::backoff) capped at `cap` instead of the maximum.
    fn backoff_capped(&self, attempts: u32, cap: Duration) -> Duration {
        if attempts == 0 {
            return Duration::ZERO;
        }
        1u32.checked_shl(attempts - 1)
            .and_then(|factor| self.config.initial_backoff.checked_mul(factor))
            .map_or(cap, |d| d.min(cap))
    }

    /// `info`'s backoff expiry: its timestamp plus [`backoff`](Self::backoff), truncated to
    /// the ordering window if there is one; `None` — no backoff at all, kube-scheduler's
    /// zero time — before its first failure or with `max_backoff` zero.
    pub fn expiry(&self, info: &ModelInfo) -> Option<Time> {
        self.expiry_capped(info, self.config.max_backoff)
    }

    /// [`expiry`](Self::expiry) with the backoff capped at `cap`.
    fn expiry_capped(&self, info: &ModelInfo, cap: Duration) -> Option<Time> {
        let failures = info.backoff_count();
        if failures == 0 || self.config.max_backoff.is_zero() {
            return None;
        }
        Some(self.truncate(info.timestamp + self.backoff_capped(failures, cap)))
    }

    /// The expiry of `info` as one of `size` members of a gang handed back with one backoff:
    /// with [`group_backoff_scales_with_size`](QueueConfig::group_backoff_scales_with_size)
    /// and more than one member, its backoff is capped at `max_backoff` × √size (whole
    /// nanoseconds, as Go's `time.Duration(float64(max) * math.Sqrt(size))`) instead of at
    /// `max_backoff`; otherwise [`expiry`](Self::expiry).
    pub fn expiry_in_gang(&self, info: &ModelInfo, size: usize) -> Option<Time> {
        if !self.config.group_backoff_scales_with_size || size <= 1 {
            return self.expiry(info);
        }
        let max = self.config.max_backoff.as_nanos() as f64;
        let cap = Duration::from_nanos((max * (size as f64).sqrt()).min(u64::MAX as f64) as u64);
        self.expiry_capped(info, cap)
    }

    /// Whether a pod whose backoff ends at `expiry` still backs off at `now`.
    pub fn backing_off(&self, expiry: Time, now: Time) -> bool {
        match self.config.ordering_window {
            None => expiry > now,
            Some(_) => expiry >= self.truncate(now),
        }
    }

    fn truncate(&self, t: Time) -> Time {
        match self.config.ordering_window {
            Some(w) if !w.is_zero() => {
                let w = u64::try_from(w.as_nanos()).unwrap_or(u64::MAX);
                Time::from_nanos(t.as_nanos() - t.as_nanos() % w)
            }
            _ => t,
        }
    }

    // ---- reading ------------------------------------------------------------------------

    pub(super) fn find(&self, id: &PodId) -> Option<usize> {
        self.records.iter().position(|r| r.info.id() == id)
    }

    pub(super) fn record(&self, id: &PodId) -> Option<&Record> {
        self.find(id).map(|i| &self.records[i])
    }

    /// Where pod `id` is, as the real queue names it.
    pub fn place(&self, id: &PodId) -> Option<QueuePlace> {
        self.record(id).map(Record::queue_place)
    }

    /// Where pod `id` is, as the model keeps it.
    pub fn model_place(&self, id: &PodId) -> Option<&ModelPlace> {
        self.record(id).map(|r| &r.place)
    }

    /// Pod `id`'s record.
    pub fn info(&self, id: &PodId) -> Option<&ModelInfo> {
        self.record(id).map(|r| &r.info)
    }

    /// The events pod `id`'s current attempt has seen, if it is in flight.
    pub fn seen(&self, id: &PodId) -> Option<&[ClusterEvent]> {
        match self.model_place(id)? {
            ModelPlace::InFlight { seen, .. } => Some(seen),
            _ => None,
        }
    }

    /// Every known pod, in id order.
    pub fn ids(&self) -> Vec<&PodId> {
        self.records.iter().map(|r| r.info.id()).collect()
    }

    /// The active pods in pop order: priority descending, then timestamp, then id.
    pub fn active_order(&self) -> Vec<&PodId> {
        let mut active: Vec<&ModelInfo> = self
            .records
            .iter()
            .filter(|r| r.place == ModelPlace::Active)
            .map(|r| &r.info)
            .collect();
        active.sort_by(|a, b| {
            if Self::pops_before(a, b) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        });
        active.into_iter().map(|i| i.id()).collect()
    }

    /// PrioritySort: whether `a` pops before `b` (distinct pods) — higher priority, then the
    /// earlier timestamp, then the smaller id.
    pub fn pops_before(a: &ModelInfo, b: &ModelInfo) -> bool {
        (-i64::from(a.pod.priority()), a.timestamp, a.id())
            < (-i64::from(b.pod.priority()), b.timestamp, b.id())
    }

    /// How many pods are in each place.
    pub fn lengths(&self) -> QueueLengths {
        let mut l = QueueLengths::default();
        for r in &self.records {
            match r.place {
                ModelPlace::Active => l.active += 1,
                ModelPlace::Backoff(_) => l.backoff += 1,
                ModelPlace::ErrorBackoff(_) => l.error_backoff += 1,
                ModelPlace::Unschedulable => {
                    l.unschedulable += 1;
                    if r.info.gated_by.is_some() {
                        l.gated += 1;
                    }
                }
                ModelPlace::InFlight { .. } => l.in_flight += 1,
            }
        }
        l
    }

    /// The number of pops so far.
    pub fn scheduling_cycle(&self) -> u64 {
        self.cycle
    }

    /// Closes the queue (a flag; nothing else changes).
    pub fn close(&mut self) {
        self.closed = true;
        // Every attempt in flight ends, as kube-scheduler's close does.
        self.records
            .retain(|r| !matches!(r.place, ModelPlace::InFlight { .. }));
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    // ---- transitions --------------------------------------------------------------------

    /// A new pod arrives at `now`. Returns whether it became active (not gated).
    pub fn add(&mut self, pod: Pod, now: Time, plugins: &PluginSet) -> Result<bool, QueueError> {
        if let Some(place) = self.place(pod.id()) {
            return Err(QueueError::AlreadyQueued { pod, place });
        }
        Ok(self.enter(ModelInfo::new(pod, now), now, plugins) == ModelPlace::Active)
    }

    /// Pod `new.id()` changed from `old` to `new` at `now`. Returns its place afterwards.
    pub fn update(&mut self, old: Pod, new: Pod, now: Time, plugins: &PluginSet) -> QueuePlace {
        let id = new.id().clone();
        let event = ClusterEvent::UnscheduledPodUpdate {
            old,
            new: new.clone(),
        };
        let shared = self.config.shared_in_flight_events;
        if shared && matches!(self.place(&id), Some(QueuePlace::InFlight)) {
            // kube-scheduler's one list of in-flight events: every pod in flight hears it.
            self.see(&event);
        }
        match self.find(&id) {
            None => {
                self.enter(ModelInfo::new(new, now), now, plugins);
            }
            Some(i) => {
                let record = &mut self.records[i];
                match &mut record.place {
                    ModelPlace::InFlight { seen, .. } => {
                        if !shared {
                            seen.push(event);
                        }
                        // Handed back, it comes back as it is now.
                        record.info.pod = new;
                    }
                    ModelPlace::Active | ModelPlace::Backoff(_) | ModelPlace::ErrorBackoff(_) => {
                        record.info.pod = new;
                    }
                    ModelPlace::Unschedulable => {
                        record.info.pod = new;
                        self.move_unschedulable(&id, &event, now, plugins);
                    }
                }
            }
        }
        self.place(&id).expect("the pod is known")
    }

    /// Pod `id` was deleted. Returns whether it was known.
    pub fn delete(&mut self, id: &PodId) -> bool {
        let Some(i) = self.find(id) else {
            return false;
        };
        if let ModelPlace::InFlight { deleted, .. } = &mut self.records[i].place {
            *deleted = true;
        } else {
            self.records.remove(i);
        }
        true
    }

    /// With [`pop_from_backoff`](QueueConfig::pop_from_backoff) and no active pod, the pod
    /// backing off for a rejection (never an error) whose backoff ends first, ties by
    /// [`pops_before`](Self::pops_before) — kube-scheduler 1.36's `SchedulerPopFromBackoffQ`.
    pub fn backoff_head(&self) -> Option<&PodId> {
        if !self.config.pop_from_backoff || !self.active_order().is_empty() {
            return None;
        }
        let mut best: Option<(Time, &ModelInfo)> = None;
        for r in &self.records {
            let ModelPlace::Backoff(expiry) = r.place else {
                continue;
            };
            let better = match best {
                None => true,
                Some((t, b)) => expiry < t || (expiry == t && Self::pops_before(&r.info, b)),
            };
            if better {
                best = Some((expiry, &r.info));
            }
        }
        best.map(|(_, info)| info.id())
    }

    /// Takes the first active pod in [`active_order`](Self::active_order) in flight — or,
    /// with none, the [`backoff_head`](Self::backoff_head).
    pub fn pop(&mut self) -> Option<ModelPopped> {
        let id = match self.active_order().first() {
            Some(id) => (*id).clone(),
            None => self.backoff_head()?.clone(),
        };
        self.pop_pod(&id)
    }

    /// Takes pod `id` in flight as [`pop`](Self::pop) would take the head: for a driver
    /// following another tie order among pods the real queue says tie at the head
    /// (`QueueState::heads`). `None` if `id` is not queued.
    pub fn pop_pod(&mut self, id: &PodId) -> Option<ModelPopped> {
        let i = self.find(id)?;
        if matches!(self.records[i].place, ModelPlace::InFlight { .. }) {
            return None;
        }
        self.cycle += 1;
        let record = &mut self.records[i];
        record.info.attempts = record.info.attempts.saturating_add(1);
        record.info.unschedulable_plugins.clear();
        record.info.pending_plugins.clear();
        record.place = ModelPlace::InFlight {
            deleted: false,
            seen: Vec::new(),
        };
        Some(ModelPopped {
            info: record.info.clone(),
            cycle: self.cycle,
        })
    }

    /// Pod `id`'s attempt is over without handing it back (it was bound): it leaves. Returns
    /// whether it was in flight.
    pub fn done(&mut self, id: &PodId) -> bool {
        match self.find(id) {
            Some(i) if matches!(self.records[i].place, ModelPlace::InFlight { .. }) => {
                self.records.remove(i);
                true
            }
            _ => false,
        }
    }
}
