//! A reference model of the scheduling queue: the sequential specification that
//! [`gangway::queue::QueueState`] is checked against.
//!
//! It is deliberately naive: a `Vec` of pod records (kept in id order), each with an explicit
//! [`ModelPlace`]; linear scans; the active queue is sorted when it is read; the cluster events seen by a pod
//! in flight are kept *in that pod's record*, not in a shared log with sequence numbers. Each
//! method reads as the rule it states. Property tests and the fuzzer run it in lockstep with the
//! real queue and compare every result ([`QueueModel::agrees_with`]).
//!
//! The rules (kube-scheduler 1.36 with queueing hints, DESIGN §1):
//!
//! - **Places.** A known pod is in exactly one place: active, backing off (after an
//!   unschedulable attempt), error-backing off (after an attempt that failed with no rejecting
//!   plugin), unschedulable (gated pods included), or in flight (popped, attempt not over).
//! - **Order.** PrioritySort: the active pod with the highest priority pops first, then the
//!   earliest timestamp, then the smallest pod id.
//! - **Backoff.** After `attempts` attempts the backoff is zero before the first, then the
//!   initial backoff doubled once per earlier attempt, capped at the maximum. The expiry is the
//!   pod's timestamp (its last failure) plus that backoff, truncated to the ordering window when
//!   there is one. A pod backs off while its expiry is after `now` (with a window: while the
//!   expiry is not before the truncated `now`).
//! - **Entering the active queue** (upstream `moveToActiveQ`): PreEnqueue runs first; a pod it
//!   rejects is gated by that plugin — it waits in the unschedulable pool and the plugin joins
//!   its unschedulable plugins (so the gate's hints apply). Otherwise it is active, and its
//!   first activation time is recorded. Leaving any place ungates a pod.
//! - **Add.** A new pod enters the active queue with its timestamp at `now`; adding a known pod
//!   (in flight included) is an error naming where it is.
//! - **Update.** In flight: the update is only seen by that pod's attempt. Active: the pod
//!   object changes and the pod is re-sorted (no PreEnqueue). Backing off: the object changes,
//!   the expiry does not. Unschedulable (gated or not): the object changes, then the update is
//!   an event for that one pod, as in *move all* below (a gated pod moves only if its gate
//!   registered for pod updates). Unknown: added as a new pod.
//! - **Delete.** A queued pod leaves. A pod in flight stays in flight until its attempt is over,
//!   and is not queued again when handed back.
//! - **Pop.** The first active pod goes in flight: one more attempt, last attempt's rejecting
//!   plugins forgotten, the scheduling cycle counted.
//! - **Events during an attempt (I7).** An event of interest that happens while pods are in
//!   flight is seen by every one of them; an update or activation of an in-flight pod is seen by
//!   that pod only. Events are kept only for pods in flight.
//! - **Worth requeuing** (upstream `isPodWorthRequeuing`): a pod with no rejecting plugin, or
//!   any wildcard event: after backoff. Otherwise ask the hints of the rejecting plugins
//!   registered for the event's kind (a failing hint counts as `Queue`): a pending plugin saying
//!   `Queue` means immediately; an unschedulable plugin saying `Queue` means after backoff;
//!   otherwise skip.
//! - **Requeue** (upstream `requeuePodViaQueueingHint`): skip → unschedulable pool; after
//!   backoff and still backing off → backoff (error backoff if the pod has no rejecting plugin);
//!   otherwise enter the active queue.
//! - **Hand back** (`add_unschedulable_if_not_present`): a pod that is queued is an error. A
//!   pod deleted in flight vanishes. Otherwise its timestamp becomes `now` and it is requeued by
//!   the strongest verdict of the events its attempt saw — after backoff if it has no rejecting
//!   plugin or was not in flight (nothing is known, as upstream); skip if it saw nothing worth
//!   it. Its attempt is over.
//! - **Gang hand back** (hardened): if any member is queued, an error and nothing changes.
//!   Otherwise every member's timestamp becomes `now`; the strongest verdict of any member
//!   (computed as for one pod) and the latest expiry of any member apply to all: members that
//!   back off share that one expiry. Deleted members vanish. A pod listed twice is one member
//!   (its first listing).
//! - **Activate.** A pod unschedulable or backing off enters the active queue (PreEnqueue
//!   still applies); for a pod in flight the activation (a wildcard event) is seen by its attempt;
//!   others are ignored. Counts the pods that became active.
//! - **Move all** (upstream `MoveAllToActiveOrBackoffQueue`): an event no plugin registered
//!   for (and not a wildcard) does nothing at all. Otherwise every unschedulable pod that passes
//!   the precheck is considered: a gated pod only if the event is a wildcard or its gate
//!   registered for the event's kind; it moves if the event is worth requeuing it. Then the pods
//!   in flight see the event. Counts the pods that left the pool.
//! - **Flush backoff.** Every pod whose backoff (error backoff included) has ended at `now`
//!   enters the active queue. Counts the pods that left backoff.
//! - **Flush leftover.** A pod is *parked since* its timestamp, or its last flush if that is
//!   later. Every unschedulable pod parked for more than the maximum unschedulable time at `now`
//!   is moved as by the wildcard `UnschedulableTimeout`; those that stay (still gated) are
//!   flushed at `now` (their timestamp, hence their order and backoff, is kept; upstream
//!   #139331). If any pod was stale, the pods in flight see the event. Counts the pods that left
//!   the pool.
//! - **Close** only sets a flag.
//!
//! [`plugins`] is the small fixed plugin set the tests and the fuzzer give both the real queue
//! and the model; the model calls its `pre_enqueue`, `registered`, `is_event_of_interest` and
//! `hint` (the specification is about the queue's rules, not the plugins').

use std::collections::BTreeSet;
use std::time::Duration;

use gangway::queue::{
    PluginSet, QueueError, QueueLengths, QueuePlace, QueuePlugins, QueueState, Requeue, SortKey,
};
use gangway::{
    ClusterEvent, Code, PluginName, Pod, PodId, QueueConfig, QueuedPodInfo, QueueingHint, Status,
    Time,
};

/// The PreEnqueue plugin of [`plugins`]: it gates pods whose name starts with `gated` while
/// their priority is 0 or less. Its hint on `UnscheduledPodUpdate` says `Queue` when the update
/// raises the priority above 0.
pub const GATE: &str = "Gate";
/// A NodeResourcesFit-like plugin of [`plugins`], usually an unschedulable rejector. Hints:
/// `AssignedPodDelete(pod)` → `QueueSkip` for a pod named `small`, an error for one named
/// `broken`, otherwise `Queue`; `NodeAdd(name)` and `NodeUpdate(name)` → `Queue` for `big`, an
/// error for `broken` (`NodeAdd` only), otherwise `QueueSkip`.
pub const FIT: &str = "NodeResourcesFit";
/// A DynamicResources-like plugin of [`plugins`], usually a *pending* rejector (`pending_on`).
/// Hints: `NodeUpdate(name)` → `Queue` for `ready`, an error for `broken`, otherwise `QueueSkip`;
/// `PodGroupAdd` → `Queue`.
pub const CLAIMS: &str = "DynamicResources";
/// A plugin of [`plugins`] that registered no hint: only wildcard events requeue the pods it
/// rejected.
pub const SILENT: &str = "Silent";

/// The fixed plugin set shared by the real queue and the model in tests: see [`GATE`], [`FIT`],
/// [`CLAIMS`] and [`SILENT`]. Events of kinds `UnscheduledPodAdd`, `AssignedPodAdd` and
/// `PodGroupUpdate` interest no plugin.
pub fn plugins() -> PluginSet {
    use gangway::queue::EventKind;
    PluginSet::new()
        .with_pre_enqueue(GATE, |p: &Pod| {
            if p.name().starts_with("gated") && p.priority() <= 0 {
                Status::with_reason(Code::UnschedulableAndUnresolvable, "gated")
            } else {
                Status::success()
            }
        })
        .with_hint(GATE, EventKind::UnscheduledPodUpdate, |_, e| match e {
            ClusterEvent::UnscheduledPodUpdate { new, .. } if new.priority() > 0 => {
                Ok(QueueingHint::Queue)
            }
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(FIT, EventKind::AssignedPodDelete, |_, e| match e {
            ClusterEvent::AssignedPodDelete(p) if p.name() == "small" => {
                Ok(QueueingHint::QueueSkip)
            }
            ClusterEvent::AssignedPodDelete(p) if p.name() == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::Queue),
        })
        .with_hint(FIT, EventKind::NodeAdd, |_, e| match e {
            ClusterEvent::NodeAdd(n) if n == "big" => Ok(QueueingHint::Queue),
            ClusterEvent::NodeAdd(n) if n == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(FIT, EventKind::NodeUpdate, |_, e| match e {
            ClusterEvent::NodeUpdate(n) if n == "big" => Ok(QueueingHint::Queue),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(CLAIMS, EventKind::NodeUpdate, |_, e| match e {
            ClusterEvent::NodeUpdate(n) if n == "ready" => Ok(QueueingHint::Queue),
            ClusterEvent::NodeUpdate(n) if n == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(CLAIMS, EventKind::PodGroupAdd, |_, _| {
            Ok(QueueingHint::Queue)
        })
}

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
    /// A pod arriving at `now`, never tried.
    pub fn new(pod: Pod, now: Time) -> ModelInfo {
        ModelInfo {
            pod,
            timestamp: now,
            initial_attempt: None,
            attempts: 0,
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
            unschedulable_plugins: info.unschedulable_plugins().clone(),
            pending_plugins: info.pending_plugins().clone(),
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
            && self.unschedulable_plugins == *info.unschedulable_plugins()
            && self.pending_plugins == *info.pending_plugins()
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
struct Record {
    info: ModelInfo,
    place: ModelPlace,
}

impl Record {
    /// The place as the real queue names it (the active queue's sort key included).
    fn queue_place(&self) -> QueuePlace {
        match self.place {
            ModelPlace::Active => QueuePlace::Active(self.info.sort_key()),
            ModelPlace::Backoff(t) => QueuePlace::Backoff(t),
            ModelPlace::ErrorBackoff(t) => QueuePlace::ErrorBackoff(t),
            ModelPlace::Unschedulable => QueuePlace::Unschedulable,
            ModelPlace::InFlight { .. } => QueuePlace::InFlight,
        }
    }
}

/// The reference model of the scheduling queue. See the [module documentation](self) for the
/// rules it specifies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueModel {
    config: QueueConfig,
    /// Every known pod, in id order.
    records: Vec<Record>,
    /// Pops so far.
    cycle: u64,
    closed: bool,
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
        if attempts == 0 {
            return Duration::ZERO;
        }
        let max = self.config.max_backoff;
        1u32.checked_shl(attempts - 1)
            .and_then(|factor| self.config.initial_backoff.checked_mul(factor))
            .map_or(max, |d| d.min(max))
    }

    /// `info`'s backoff expiry: its timestamp plus [`backoff`](Self::backoff), truncated to
    /// the ordering window if there is one.
    pub fn expiry(&self, info: &ModelInfo) -> Time {
        self.truncate(info.timestamp + self.backoff(info.attempts))
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

    fn find(&self, id: &PodId) -> Option<usize> {
        self.records.iter().position(|r| r.info.id() == id)
    }

    fn record(&self, id: &PodId) -> Option<&Record> {
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
        match self.find(&id) {
            None => {
                self.enter(ModelInfo::new(new, now), now, plugins);
            }
            Some(i) => {
                let record = &mut self.records[i];
                match &mut record.place {
                    ModelPlace::InFlight { seen, .. } => seen.push(event),
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

    /// Takes the first active pod in [`active_order`](Self::active_order) in flight.
    pub fn pop(&mut self) -> Option<ModelPopped> {
        let id = self.active_order().first().map(|id| (*id).clone())?;
        let i = self.find(&id).expect("listed");
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

    /// Pod `info.id()` comes back from a failed attempt at `now`. Returns its new place
    /// (`None`: it was deleted in flight), or an error if it is queued.
    pub fn add_unschedulable_if_not_present(
        &mut self,
        info: ModelInfo,
        now: Time,
        plugins: &PluginSet,
    ) -> Result<Option<QueuePlace>, QueueError> {
        if let Some(place) = self.queued_place(info.id()) {
            return Err(QueueError::AlreadyQueued {
                pod: info.pod,
                place,
            });
        }
        let mut info = info;
        info.timestamp = now;
        let verdict = self.verdict_after_attempt(&info, plugins);
        Ok(self.hand_back(info, verdict, None, now, plugins))
    }

    /// A gang's members come back together at `now`, with one verdict and one backoff.
    /// Returns each member's new place, or an error (changing nothing) if one is queued. A pod
    /// listed more than once is handed back once, as first listed, and each listing reports
    /// its place (the real queue double-counts it today: see `tests/tests/prop_queue.rs`).
    pub fn add_gang_unschedulable(
        &mut self,
        members: Vec<ModelInfo>,
        now: Time,
        plugins: &PluginSet,
    ) -> Result<Vec<Option<QueuePlace>>, QueueError> {
        for m in &members {
            if let Some(place) = self.queued_place(m.id()) {
                return Err(QueueError::AlreadyQueued {
                    pod: m.pod.clone(),
                    place,
                });
            }
        }
        // A pod listed twice is one member: its first listing counts.
        let listed: Vec<PodId> = members.iter().map(|m| m.id().clone()).collect();
        let mut distinct: Vec<ModelInfo> = Vec::new();
        for mut m in members {
            if distinct.iter().all(|d| d.id() != m.id()) {
                m.timestamp = now;
                distinct.push(m);
            }
        }
        let verdict = distinct
            .iter()
            .map(|m| self.verdict_after_attempt(m, plugins))
            .max();
        let expiry = distinct.iter().map(|m| self.expiry(m)).max();
        let mut placed: Vec<(PodId, Option<QueuePlace>)> = Vec::new();
        for m in distinct {
            let verdict = verdict.expect("there is a member");
            let id = m.id().clone();
            let place = self.hand_back(m, verdict, expiry, now, plugins);
            placed.push((id, place));
        }
        Ok(listed
            .iter()
            .map(|id| placed.iter().find(|(p, _)| p == id).expect("handed back").1)
            .collect())
    }

    /// Activates pods `ids` at `now`. Returns how many became active.
    pub fn activate(&mut self, ids: &[PodId], now: Time, plugins: &PluginSet) -> usize {
        let mut activated = 0;
        for id in ids {
            let Some(i) = self.find(id) else { continue };
            match &mut self.records[i].place {
                ModelPlace::Active => {}
                ModelPlace::InFlight { seen, .. } => seen.push(ClusterEvent::ForceActivate),
                ModelPlace::Unschedulable
                | ModelPlace::Backoff(_)
                | ModelPlace::ErrorBackoff(_) => {
                    let info = self.take(id);
                    if self.enter(info, now, plugins) == ModelPlace::Active {
                        activated += 1;
                    }
                }
            }
        }
        activated
    }

    /// `event` happened at `now`: unschedulable pods that pass `precheck` and that it may help
    /// move. Returns how many left the unschedulable pool.
    pub fn move_all_to_active_or_backoff(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&ModelInfo) -> bool>,
        now: Time,
        plugins: &PluginSet,
    ) -> usize {
        if !event.is_wildcard() && !plugins.is_event_of_interest(event.kind()) {
            return 0;
        }
        let candidates: Vec<PodId> = self
            .records
            .iter()
            .filter(|r| r.place == ModelPlace::Unschedulable)
            .filter(|r| precheck.is_none_or(|keep| keep(&r.info)))
            .map(|r| r.info.id().clone())
            .collect();
        let moved = candidates
            .iter()
            .filter(|id| self.move_unschedulable(id, &event, now, plugins))
            .count();
        self.see(&event);
        moved
    }

    /// Pods whose backoff has ended at `now` enter the active queue. Returns how many left
    /// backoff.
    pub fn flush_backoff_completed(&mut self, now: Time, plugins: &PluginSet) -> usize {
        let due: Vec<PodId> = self
            .records
            .iter()
            .filter(|r| match r.place {
                ModelPlace::Backoff(expiry) | ModelPlace::ErrorBackoff(expiry) => {
                    !self.backing_off(expiry, now)
                }
                _ => false,
            })
            .map(|r| r.info.id().clone())
            .collect();
        for id in &due {
            let info = self.take(id);
            self.enter(info, now, plugins);
        }
        due.len()
    }

    /// Pods unschedulable for longer than the maximum are retried. Returns how many left the
    /// pool.
    pub fn flush_unschedulable_leftover(&mut self, now: Time, plugins: &PluginSet) -> usize {
        let max = self.config.max_in_unschedulable;
        let stale: Vec<PodId> = self
            .records
            .iter()
            .filter(|r| r.place == ModelPlace::Unschedulable && now - r.info.parked_since() > max)
            .map(|r| r.info.id().clone())
            .collect();
        if stale.is_empty() {
            return 0;
        }
        let event = ClusterEvent::UnschedulableTimeout;
        let mut moved = 0;
        for id in &stale {
            if self.move_unschedulable(id, &event, now, plugins) {
                moved += 1;
            }
            let i = self.find(id).expect("moving keeps the pod");
            if self.records[i].place == ModelPlace::Unschedulable {
                self.records[i].info.flushed_at = Some(now);
            }
        }
        self.see(&event);
        moved
    }

    /// Whether `event` may make `info` schedulable.
    pub fn worth_requeuing(
        &self,
        info: &ModelInfo,
        event: &ClusterEvent,
        plugins: &PluginSet,
    ) -> Requeue {
        if !info.has_rejectors() || event.is_wildcard() {
            return Requeue::AfterBackoff;
        }
        let says_queue = |plugin: &PluginName| {
            plugins.registered(plugin, event.kind())
                && plugins.hint(plugin, &info.pod, event) != Ok(QueueingHint::QueueSkip)
        };
        if info.pending_plugins.iter().any(says_queue) {
            Requeue::Immediately
        } else if info.unschedulable_plugins.iter().any(says_queue) {
            Requeue::AfterBackoff
        } else {
            Requeue::Skip
        }
    }

    // ---- helpers ------------------------------------------------------------------------

    /// Every pod in flight sees `event`.
    fn see(&mut self, event: &ClusterEvent) {
        for r in &mut self.records {
            if let ModelPlace::InFlight { seen, .. } = &mut r.place {
                seen.push(event.clone());
            }
        }
    }

    /// Where pod `id` is if it is queued (known and not in flight).
    fn queued_place(&self, id: &PodId) -> Option<QueuePlace> {
        self.place(id).filter(|p| *p != QueuePlace::InFlight)
    }

    /// The strongest verdict of the events `info`'s attempt saw.
    fn verdict_after_attempt(&self, info: &ModelInfo, plugins: &PluginSet) -> Requeue {
        if !info.has_rejectors() {
            return Requeue::AfterBackoff;
        }
        let Some(seen) = self.seen(info.id()) else {
            return Requeue::AfterBackoff;
        };
        seen.iter()
            .map(|e| self.worth_requeuing(info, e, plugins))
            .max()
            .unwrap_or(Requeue::Skip)
    }

    /// Ends `info`'s attempt and requeues it (unless it was deleted in flight).
    fn hand_back(
        &mut self,
        info: ModelInfo,
        verdict: Requeue,
        expiry: Option<Time>,
        now: Time,
        plugins: &PluginSet,
    ) -> Option<QueuePlace> {
        let id = info.id().clone();
        if let Some(i) = self.find(&id) {
            let ModelPlace::InFlight { deleted, .. } = self.records.remove(i).place else {
                unreachable!("checked not queued");
            };
            if deleted {
                return None;
            }
        }
        self.requeue(info, verdict, expiry, now, plugins);
        self.place(&id)
    }

    /// Moves unschedulable pod `id` if `event` concerns its gate (when gated) and may help it.
    /// Returns whether it left the pool.
    fn move_unschedulable(
        &mut self,
        id: &PodId,
        event: &ClusterEvent,
        now: Time,
        plugins: &PluginSet,
    ) -> bool {
        let info = &self.records[self.find(id).expect("candidate")].info;
        if let Some(gate) = &info.gated_by {
            if !event.is_wildcard() && !plugins.registered(gate, event.kind()) {
                return false;
            }
        }
        let verdict = self.worth_requeuing(info, event, plugins);
        if verdict == Requeue::Skip {
            return false;
        }
        let info = self.take(id);
        self.requeue(info, verdict, None, now, plugins) != ModelPlace::Unschedulable
    }

    /// Puts `info` where `verdict` says; `expiry` overrides its own backoff expiry.
    fn requeue(
        &mut self,
        info: ModelInfo,
        verdict: Requeue,
        expiry: Option<Time>,
        now: Time,
        plugins: &PluginSet,
    ) -> ModelPlace {
        let expiry = expiry.unwrap_or_else(|| self.expiry(&info));
        match verdict {
            Requeue::Skip => self.put(info, ModelPlace::Unschedulable),
            Requeue::AfterBackoff if self.backing_off(expiry, now) => {
                let place = if info.has_rejectors() {
                    ModelPlace::Backoff(expiry)
                } else {
                    ModelPlace::ErrorBackoff(expiry)
                };
                self.put(info, place)
            }
            Requeue::AfterBackoff | Requeue::Immediately => self.enter(info, now, plugins),
        }
    }

    /// PreEnqueue, then the active queue or the gated part of the unschedulable pool.
    fn enter(&mut self, mut info: ModelInfo, now: Time, plugins: &PluginSet) -> ModelPlace {
        match plugins.pre_enqueue(&info.pod) {
            Err(gate) => {
                info.unschedulable_plugins.insert(gate.plugin.clone());
                info.gated_by = Some(gate.plugin);
                self.put(info, ModelPlace::Unschedulable)
            }
            Ok(()) => {
                info.initial_attempt.get_or_insert(now);
                self.put(info, ModelPlace::Active)
            }
        }
    }

    /// Takes a queued pod out of its place; it is no longer gated.
    fn take(&mut self, id: &PodId) -> ModelInfo {
        let i = self.find(id).expect("known");
        let mut info = self.records.remove(i).info;
        info.gated_by = None;
        info
    }

    /// Files `info` at `place`, keeping the records in id order.
    fn put(&mut self, info: ModelInfo, place: ModelPlace) -> ModelPlace {
        debug_assert!(self.find(info.id()).is_none(), "one record per pod");
        let at = self.records.partition_point(|r| r.info.id() < info.id());
        self.records.insert(
            at,
            Record {
                info,
                place: place.clone(),
            },
        );
        place
    }

    // ---- comparison ---------------------------------------------------------------------

    /// Whether the real queue `state` is in the same state: the same pods, each in the same
    /// place with the same record; the same lengths, active order, cycle count and closed flag.
    /// Describes the first difference.
    pub fn agrees_with(&self, state: &QueueState) -> Result<(), String> {
        // Both list their pods in id order: walk them side by side.
        let mut records = self.records.iter();
        for (id, place) in state.places() {
            let Some(record) = records.next() else {
                return Err(format!("queue knows {id} ({place:?}), model does not"));
            };
            let model_id = record.info.id();
            if model_id != id {
                return Err(format!(
                    "known pods differ at {id} (queue) / {model_id} (model)"
                ));
            }
            let model_place = record.queue_place();
            if model_place != place {
                return Err(format!("{id}: queue {place:?}, model {model_place:?}"));
            }
            let info = state.info(id).expect("placed");
            if !record.info.matches(info) {
                return Err(format!("{id}: queue {info:?}, model {:?}", record.info));
            }
        }
        if let Some(extra) = records.next() {
            return Err(format!("model knows {}, queue does not", extra.info.id()));
        }
        let (lengths, model_lengths) = (state.lengths(), self.lengths());
        if lengths != model_lengths {
            return Err(format!(
                "lengths: queue {lengths:?}, model {model_lengths:?}"
            ));
        }
        // The queue's active order must be the model's: the same pods (their number was just
        // compared; each is active in the model), each strictly before the next by the model's
        // rule. (Checked pairwise, without sorting: this runs after every fuzzer op.)
        let mut previous: Option<&ModelInfo> = None;
        let mut in_order = true;
        for id in state.active_order() {
            let Some(r) = self.record(id).filter(|r| r.place == ModelPlace::Active) else {
                in_order = false;
                break;
            };
            if previous.is_some_and(|p| Self::pops_before(&r.info, p)) {
                in_order = false;
                break;
            }
            previous = Some(&r.info);
        }
        if !in_order {
            return Err(format!(
                "active order: queue {:?}, model {:?}",
                state.active_order().collect::<Vec<_>>(),
                self.active_order()
            ));
        }
        if state.scheduling_cycle() != self.cycle || state.is_closed() != self.closed {
            return Err(format!(
                "cycle/closed: queue {}/{}, model {}/{}",
                state.scheduling_cycle(),
                state.is_closed(),
                self.cycle,
                self.closed
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, priority: i32) -> Pod {
        Pod::new(name, "ns", name).with_priority(priority)
    }

    #[test]
    fn backoff_doubles_and_caps_like_the_real_config() {
        let m = QueueModel::new(QueueConfig::default());
        let c = QueueConfig::default();
        for attempts in [0, 1, 2, 3, 4, 5, 31, 32, 33, 1000, u32::MAX] {
            assert_eq!(
                m.backoff(attempts),
                c.backoff_duration(attempts),
                "{attempts}"
            );
        }
    }

    #[test]
    fn an_event_seen_in_flight_sends_the_pod_to_backoff() {
        let p = plugins();
        let mut m = QueueModel::new(QueueConfig::default());
        m.add(pod("a", 0), Time::ZERO, &p).unwrap();
        let popped = m.pop().unwrap();
        m.move_all_to_active_or_backoff(
            ClusterEvent::AssignedPodDelete(pod("x", 0)),
            None,
            Time::ZERO,
            &p,
        );
        let mut info = popped.info;
        info.unschedulable_plugins.insert(FIT.into());
        let place = m.add_unschedulable_if_not_present(info, Time::ZERO, &p);
        assert_eq!(place, Ok(Some(QueuePlace::Backoff(Time::from_secs(1)))));
        assert_eq!(m.lengths().in_flight, 0);
    }

    #[test]
    fn gated_pods_wait_until_the_update_lifts_the_gate() {
        let p = plugins();
        let mut m = QueueModel::new(QueueConfig::default());
        assert_eq!(m.add(pod("gated-a", 0), Time::ZERO, &p), Ok(false));
        assert_eq!(m.lengths().gated, 1);
        let place = m.update(pod("gated-a", 0), pod("gated-a", 3), Time::ZERO, &p);
        assert!(matches!(place, QueuePlace::Active(_)));
        assert_eq!(m.lengths().gated, 0);
    }
}

pub mod lockstep {
    //! The real queue and the model driven side by side by a list of [`Op`]s, with every check
    //! made after every op. The property test (`tests/tests/prop_queue.rs`) and the fuzz target
    //! (`fuzz/fuzz_targets/queue_moves.rs`) both generate `Op`s and call [`Lockstep::step`] (or
    //! [`run`]), so they check exactly the same things:
    //!
    //! - every result of the real [`QueueState`] equals the model's;
    //! - [`QueueState::check`] passes (I4: each pod in exactly one place, indexes agree);
    //! - [`QueueModel::agrees_with`] the queue: same pods, places, records, lengths, active
    //!   pop order, cycle count;
    //! - I7, from the driver's own log of the events each attempt saw (not the model's): a pod
    //!   handed back with no rejecting plugin, or whose attempt saw a wildcard or an event one of
    //!   its rejecting plugins' hints says `Queue` (or fails) for, does not park in the
    //!   unschedulable pool unless PreEnqueue gates it; for a gang, if that holds for any
    //!   member, no member parks.
    //!
    //! Ops name pods by small indexes so that shrinking keeps them meaningful: the universe is
    //! [`POD_NAMES`]; a *pick* below 128 names the pick-th pod in flight (modulo their number,
    //! in id order), or, when none is, the universe pod `pick % 8`; a pick of 128 or more names
    //! universe pod `pick % 8` directly.

    use std::collections::BTreeMap;
    use std::sync::OnceLock;
    use std::time::Duration;

    use gangway::gang::PodGroup;
    use gangway::queue::{PluginSet, QueuePlace, QueuePlugins, QueueState};
    use gangway::{ClusterEvent, Pod, PodId, QueueConfig, QueuedPodInfo, QueueingHint, Time};

    use super::{plugins, ModelInfo, QueueModel, CLAIMS, FIT, GATE, SILENT};

    /// The pod universe: ids and names. Pods whose name starts with `gated` are held by the
    /// [`GATE`] plugin while their priority is 0 or less.
    pub const POD_NAMES: [&str; 8] = ["p0", "p1", "p2", "p3", "p4", "p5", "gated6", "gated7"];
    /// The priorities an op can give a pod (index modulo their number).
    pub const PRIORITIES: [i32; 4] = [0, 1, -1, 5];
    /// The clock steps an op can take (index modulo their number): ties, the backoff edges,
    /// the 10 s cap, the 5-minute unschedulable limit and past it.
    pub const STEPS: [Duration; 11] = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_millis(500),
        Duration::from_millis(999),
        Duration::from_secs(1),
        Duration::from_secs(2),
        Duration::from_secs(10),
        Duration::from_secs(30),
        Duration::from_secs(300),
        Duration::from_nanos(300_000_000_001),
        Duration::from_secs(660),
    ];
    /// How many distinct events [`event`] knows.
    pub const EVENTS: u8 = 17;

    /// One operation on both queues.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Op {
        /// Adds universe pod `pod % 8` with priority `PRIORITIES[priority % 4]`.
        Add {
            /// Universe index.
            pod: u8,
            /// Priority index.
            priority: u8,
        },
        /// Updates universe pod `pod % 8` to priority `PRIORITIES[priority % 4]`.
        Update {
            /// Universe index.
            pod: u8,
            /// Priority index.
            priority: u8,
        },
        /// Deletes universe pod `pod % 8`.
        Delete {
            /// Universe index.
            pod: u8,
        },
        /// Pops the first active pod.
        Pop,
        /// Ends the attempt of the picked pod (it was bound).
        Done {
            /// See the [module documentation](self).
            pick: u8,
        },
        /// Hands the picked pod back as unschedulable, rejected by `rejectors` ([`rejectors`]).
        HandBack {
            /// See the [module documentation](self).
            pick: u8,
            /// A bit set of rejecting plugins; 0: an error.
            rejectors: u8,
        },
        /// Hands the picked pods back as one gang (repeats included), each with its rejectors.
        HandBackGang {
            /// Picks and rejector bit sets.
            members: Vec<(u8, u8)>,
        },
        /// Activates universe pods (indexes modulo 8), repeats included.
        Activate {
            /// Universe indexes.
            pods: Vec<u8>,
        },
        /// Announces [`event`]`(event)`; with `exclude`, the precheck leaves out universe pod
        /// `exclude % 8`.
        MoveAll {
            /// Event index.
            event: u8,
            /// Universe index of a pod the precheck excludes.
            exclude: Option<u8>,
        },
        /// Flushes completed backoffs.
        FlushBackoff,
        /// Flushes the unschedulable leftovers.
        FlushLeftover,
        /// Advances the clock by `STEPS[step % 11]`.
        Advance {
            /// Step index.
            step: u8,
        },
        /// Closes the queue.
        Close,
    }

    /// The `index`-th event (modulo [`EVENTS`]): freed resources the fit plugin likes, skips,
    /// or fails on; nodes added and updated; a pod group; events no plugin registered for; an
    /// update that would lift the gate; the three wildcards.
    pub fn event(index: u8) -> ClusterEvent {
        tables().events[usize::from(index % EVENTS)].clone()
    }

    /// Built once: every run shares the same pods, events and plugins (cheap clones; equal
    /// pod ids are then one allocation, so comparing them is a pointer comparison).
    struct Tables {
        /// `pods[i][j]`: universe pod `i` with priority `PRIORITIES[j]`.
        pods: Vec<Vec<Pod>>,
        events: Vec<ClusterEvent>,
        plugins: PluginSet,
    }

    fn tables() -> &'static Tables {
        static TABLES: OnceLock<Tables> = OnceLock::new();
        TABLES.get_or_init(|| Tables {
            pods: POD_NAMES
                .iter()
                .map(|name| {
                    let pod = Pod::new(*name, "ns", name);
                    PRIORITIES
                        .iter()
                        .map(|&p| pod.clone().with_priority(p))
                        .collect()
                })
                .collect(),
            events: (0..EVENTS).map(make_event).collect(),
            plugins: plugins(),
        })
    }

    fn make_event(index: u8) -> ClusterEvent {
        let pod = |name: &str, priority| Pod::new(name, "ns", name).with_priority(priority);
        match index {
            0 => ClusterEvent::AssignedPodDelete(pod("freed", 0)),
            1 => ClusterEvent::AssignedPodDelete(pod("small", 0)),
            2 => ClusterEvent::AssignedPodDelete(pod("broken", 0)),
            3 => ClusterEvent::NodeAdd("big".into()),
            4 => ClusterEvent::NodeAdd("small".into()),
            5 => ClusterEvent::NodeAdd("broken".into()),
            6 => ClusterEvent::NodeUpdate("big".into()),
            7 => ClusterEvent::NodeUpdate("ready".into()),
            8 => ClusterEvent::NodeUpdate("broken".into()),
            9 => ClusterEvent::PodGroupAdd(PodGroup::gang("ns", "g", 2).expect("valid")),
            10 => ClusterEvent::AssignedPodAdd(pod("bound", 0)),
            11 => ClusterEvent::UnscheduledPodAdd(pod("new", 0)),
            12 => ClusterEvent::UnscheduledPodUpdate {
                old: pod("other", 0),
                new: pod("other", 1),
            },
            13 => ClusterEvent::PodGroupUpdate {
                old: PodGroup::gang("ns", "g", 3).expect("valid"),
                new: PodGroup::gang("ns", "g", 2).expect("valid"),
            },
            14 => ClusterEvent::ForceActivate,
            15 => ClusterEvent::UnschedulableTimeout,
            _ => ClusterEvent::BackoffComplete,
        }
    }

    /// `info` rejected by the plugins in bit set `bits`: 1 [`FIT`] (unschedulable),
    /// 2 [`CLAIMS`] (pending), 4 [`SILENT`], 8 [`GATE`] (unschedulable), 16 [`FIT`] (pending).
    /// No bit: the attempt failed with an error.
    pub fn rejectors(mut info: QueuedPodInfo, bits: u8) -> QueuedPodInfo {
        if bits & 1 != 0 {
            info = info.rejected_by(FIT);
        }
        if bits & 2 != 0 {
            info = info.pending_on(CLAIMS);
        }
        if bits & 4 != 0 {
            info = info.rejected_by(SILENT);
        }
        if bits & 8 != 0 {
            info = info.rejected_by(GATE);
        }
        if bits & 16 != 0 {
            info = info.pending_on(FIT);
        }
        info
    }

    /// Universe pod `index % 8` with priority `PRIORITIES[priority % 4]`.
    pub fn universe_pod(index: u8, priority: u8) -> Pod {
        let pods = &tables().pods[usize::from(index) % POD_NAMES.len()];
        pods[usize::from(priority) % PRIORITIES.len()].clone()
    }

    /// Universe pod `index % 8`'s id.
    pub fn pod_id(index: u8) -> PodId {
        tables().pods[usize::from(index) % POD_NAMES.len()][0]
            .id()
            .clone()
    }

    /// Runs `ops` from an empty queue with `config`; the first failed check, described.
    pub fn run<'a>(
        config: QueueConfig,
        ops: impl IntoIterator<Item = &'a Op>,
    ) -> Result<(), String> {
        let mut lockstep = Lockstep::new(config);
        for (i, op) in ops.into_iter().enumerate() {
            lockstep
                .step(op)
                .map_err(|e| format!("op {i} {op:?} at {}: {e}", lockstep.now))?;
        }
        Ok(())
    }

    /// The real queue and the model side by side.
    #[derive(Debug)]
    pub struct Lockstep {
        /// The real queue.
        pub state: QueueState,
        /// The model.
        pub model: QueueModel,
        /// The plugins both use ([`plugins`]).
        pub plugins: PluginSet,
        /// The clock.
        pub now: Time,
        /// The record each pod in flight was popped with.
        popped: BTreeMap<PodId, QueuedPodInfo>,
        /// The driver's own log, per pod in flight, of the events its attempt saw (for I7).
        seen: BTreeMap<PodId, Vec<ClusterEvent>>,
        /// A deliberately broken run, for witness tests: `MoveAll` events reach neither queue
        /// (only the driver's log), as if both lost them. Equality then holds, so only the I7
        /// check can notice.
        pub lose_events: bool,
    }

    impl Lockstep {
        /// Both queues empty, at time zero.
        pub fn new(config: QueueConfig) -> Lockstep {
            Lockstep {
                state: QueueState::new(config),
                model: QueueModel::new(config),
                plugins: tables().plugins.clone(),
                now: Time::ZERO,
                popped: BTreeMap::new(),
                seen: BTreeMap::new(),
                lose_events: false,
            }
        }

        /// The pod a pick names (see the [module documentation](self)).
        pub fn pick(&self, pick: u8) -> PodId {
            if pick < 128 && !self.popped.is_empty() {
                let k = usize::from(pick) % self.popped.len();
                return self.popped.keys().nth(k).expect("in range").clone();
            }
            pod_id(pick)
        }

        /// The pod object the queue holds for `id`, or the universe pod at priority 0.
        fn current_pod(&self, id: &PodId) -> Pod {
            match self.state.info(id) {
                Some(info) => info.pod().clone(),
                None => {
                    let index = POD_NAMES.iter().position(|n| *n == id.as_str());
                    universe_pod(
                        u8::try_from(index.expect("a universe pod")).expect("< 8"),
                        0,
                    )
                }
            }
        }

        /// The record a pod is handed back with: as popped if in flight, else a fresh one.
        fn hand_back_info(&self, id: &PodId, bits: u8) -> QueuedPodInfo {
            let info = match self.popped.get(id) {
                Some(info) => info.clone(),
                None => QueuedPodInfo::new(self.current_pod(id), self.now),
            };
            rejectors(info, bits)
        }

        /// Whether I7 forbids parking `info` after its attempt: it has no rejector, or its
        /// attempt saw a wildcard or an event a rejector's hint says `Queue` (or fails) for.
        fn must_not_park(&self, info: &QueuedPodInfo) -> bool {
            if !info.has_rejectors() {
                return true;
            }
            let seen = self.seen.get(info.id()).map_or(&[][..], Vec::as_slice);
            seen.iter().any(|event| {
                event.is_wildcard()
                    || info
                        .unschedulable_plugins()
                        .iter()
                        .chain(info.pending_plugins())
                        .any(|p| {
                            self.plugins.registered(p, event.kind())
                                && self.plugins.hint(p, info.pod(), event)
                                    != Ok(QueueingHint::QueueSkip)
                        })
            })
        }

        /// I7 for pod `id` after it was handed back.
        fn parked_ok(&self, id: &PodId, must_not_park: bool) -> Result<(), String> {
            let parked = self.state.place(id) == Some(QueuePlace::Unschedulable)
                && self.state.info(id).is_some_and(|i| i.gated_by().is_none());
            if must_not_park && parked {
                return Err(format!(
                    "I7: {id} parked in the unschedulable pool after its attempt saw {:?}",
                    self.seen.get(id)
                ));
            }
            Ok(())
        }

        fn attempt_over(&mut self, id: &PodId) {
            self.popped.remove(id);
            self.seen.remove(id);
        }

        /// Applies `op` to both queues and checks everything (see the
        /// [module documentation](self)).
        pub fn step(&mut self, op: &Op) -> Result<(), String> {
            let now = self.now;
            let p = &self.plugins;
            match op {
                Op::Add { pod, priority: pr } => {
                    let pod = universe_pod(*pod, *pr);
                    let real = self.state.add(pod.clone(), now, p);
                    let model = self.model.add(pod, now, p);
                    same("add", real, model)?;
                }
                Op::Update { pod, priority: pr } => {
                    let new = universe_pod(*pod, *pr);
                    let old = self.current_pod(new.id());
                    if self.seen.contains_key(new.id()) {
                        let event = ClusterEvent::UnscheduledPodUpdate {
                            old: old.clone(),
                            new: new.clone(),
                        };
                        self.seen.get_mut(new.id()).expect("in flight").push(event);
                    }
                    let real = self.state.update(old.clone(), new.clone(), now, p);
                    let model = self.model.update(old, new, now, p);
                    same("update", real, model)?;
                }
                Op::Delete { pod } => {
                    let id = pod_id(*pod);
                    same("delete", self.state.delete(&id), self.model.delete(&id))?;
                }
                Op::Pop => {
                    let real = self.state.pop();
                    let model = self.model.pop();
                    match (&real, &model) {
                        (None, None) => {}
                        (Some(r), Some(m)) if m.info.matches(&r.info) && r.cycle == m.cycle => {
                            self.popped.insert(r.info.id().clone(), r.info.clone());
                            self.seen.insert(r.info.id().clone(), Vec::new());
                        }
                        _ => return Err(format!("pop: queue {real:?}, model {model:?}")),
                    }
                }
                Op::Done { pick } => {
                    let id = self.pick(*pick);
                    same("done", self.state.done(&id), self.model.done(&id))?;
                    self.attempt_over(&id);
                }
                Op::HandBack { pick, rejectors } => {
                    let id = self.pick(*pick);
                    let info = self.hand_back_info(&id, *rejectors);
                    let must_not_park = self.popped.contains_key(&id) && self.must_not_park(&info);
                    let model =
                        self.model
                            .add_unschedulable_if_not_present(ModelInfo::of(&info), now, p);
                    let real = self.state.add_unschedulable_if_not_present(info, now, p);
                    same("hand back", real, model)?;
                    self.parked_ok(&id, must_not_park)?;
                    self.attempt_over(&id);
                }
                Op::HandBackGang { members } => {
                    let mut ids: Vec<PodId> = Vec::new();
                    let mut infos = Vec::new();
                    for &(pick, bits) in members {
                        let id = self.pick(pick);
                        infos.push(self.hand_back_info(&id, bits));
                        if !ids.contains(&id) {
                            ids.push(id);
                        }
                    }
                    // Only each pod's first listing counts as its member record.
                    let must_not_park = ids.iter().any(|id| {
                        let first = infos.iter().find(|i| i.id() == id).expect("listed");
                        self.popped.contains_key(id) && self.must_not_park(first)
                    });
                    let model = self.model.add_gang_unschedulable(
                        infos.iter().map(ModelInfo::of).collect(),
                        now,
                        p,
                    );
                    let real = self.state.add_gang_unschedulable(infos, now, p);
                    let handed_back = real.is_ok();
                    same("gang hand back", real, model)?;
                    if handed_back {
                        for id in &ids {
                            self.parked_ok(id, must_not_park)?;
                            self.attempt_over(id);
                        }
                    }
                }
                Op::Activate { pods } => {
                    let ids: Vec<PodId> = pods.iter().map(|&i| pod_id(i)).collect();
                    for id in &ids {
                        if let Some(seen) = self.seen.get_mut(id) {
                            seen.push(ClusterEvent::ForceActivate);
                        }
                    }
                    let real = self.state.activate(&ids, now, p);
                    let model = self.model.activate(&ids, now, p);
                    same("activate", real, model)?;
                }
                Op::MoveAll { event: e, exclude } => {
                    let event = event(*e);
                    if p.is_event_of_interest(event.kind()) {
                        for seen in self.seen.values_mut() {
                            seen.push(event.clone());
                        }
                    }
                    if self.lose_events {
                        return Ok(());
                    }
                    let excluded = exclude.map(pod_id);
                    let keep_real = |info: &QueuedPodInfo| Some(info.id()) != excluded.as_ref();
                    let keep_model = |info: &ModelInfo| Some(info.id()) != excluded.as_ref();
                    let real_check: Option<&dyn Fn(&QueuedPodInfo) -> bool> =
                        excluded.as_ref().map(|_| &keep_real as _);
                    let model_check: Option<&dyn Fn(&ModelInfo) -> bool> =
                        excluded.as_ref().map(|_| &keep_model as _);
                    let real =
                        self.state
                            .move_all_to_active_or_backoff(event.clone(), real_check, now, p);
                    let model =
                        self.model
                            .move_all_to_active_or_backoff(event, model_check, now, p);
                    same("move all", real, model)?;
                }
                Op::FlushBackoff => {
                    let real = self.state.flush_backoff_completed(now, p);
                    let model = self.model.flush_backoff_completed(now, p);
                    same("flush backoff", real, model)?;
                }
                Op::FlushLeftover => {
                    // A flush that finds a stale pod is an event for the pods in flight.
                    let max = self.state.config().max_in_unschedulable;
                    let stale = self.state.places().any(|(id, place)| {
                        place == QueuePlace::Unschedulable
                            && self
                                .state
                                .info(id)
                                .is_some_and(|i| now - i.parked_since() > max)
                    });
                    if stale {
                        for seen in self.seen.values_mut() {
                            seen.push(ClusterEvent::UnschedulableTimeout);
                        }
                    }
                    let real = self.state.flush_unschedulable_leftover(now, p);
                    let model = self.model.flush_unschedulable_leftover(now, p);
                    same("flush leftover", real, model)?;
                }
                Op::Advance { step } => {
                    self.now += STEPS[usize::from(*step) % STEPS.len()];
                }
                Op::Close => {
                    self.state.close();
                    self.model.close();
                }
            }
            self.state.check().map_err(|e| format!("check (I4): {e}"))?;
            self.model.agrees_with(&self.state)
        }
    }

    fn same<T: PartialEq + std::fmt::Debug>(what: &str, real: T, model: T) -> Result<(), String> {
        if real == model {
            Ok(())
        } else {
            Err(format!("{what}: queue {real:?}, model {model:?}"))
        }
    }
}
