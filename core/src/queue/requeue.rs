use super::config::BackoffClock;
#[cfg(feature = "checking")]
use super::flaw::QueueFlaw;
use super::leftover_index::LeftoverIndex;
use super::state::QueueState;
use super::{
    ClusterEvent, EventScope, HandBackError, QueueError, QueuePlace, QueuePlugins, QueuedPodInfo,
};
use std::collections::{HashMap, HashSet};

use crate::fast_hash::BuildFastHasher;
use crate::{PluginName, PodId, QueueingHint, Time};

/// Where a requeued pod should go (upstream's queueing strategies), weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Requeue {
    /// Nothing suggests it would fit: stay in (or go to) the unschedulable pool.
    Skip,
    /// Worth retrying once its backoff ends.
    AfterBackoff,
    /// Retry now (a plugin it was pending on says so).
    Immediately,
}

impl QueueState {
    /// A pod handed back after a failed attempt at `now`. Unless it was deleted meanwhile, the
    /// events recorded during its attempt are replayed through its rejectors' hints (I7): an
    /// event that may help sends it to the active queue or backoff; otherwise it is parked in
    /// the unschedulable pool. A pod with no rejector (it failed with an error) always backs
    /// off, in the error backoff. The pod's attempt is then done. Returns where it went
    /// (`None`: it was deleted while in flight). Fails if the pod is already queued.
    pub fn add_unschedulable_if_not_present(
        &mut self,
        info: QueuedPodInfo,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> Result<Option<QueuePlace>, QueueError> {
        let id = info.id().clone();
        if let Some(place) = self.place(&id).filter(|p| *p != QueuePlace::InFlight) {
            self.done(&id);
            return Err(QueueError::AlreadyQueued {
                pod: info.pod().clone(),
                place,
            });
        }
        let mut info = info;
        info.count_failure();
        let place = self.take_back(info, now, plugins, None);
        if place.is_some() || !planted!(self, QueueFlaw::DeletedPodStaysInFlight) {
            self.done(&id);
        }
        Ok(place)
    }

    /// A pod in flight comes back after a failed attempt, with the queue's own record of it:
    /// rejected by `rejector` (`None`: it failed with an error, and backs off in the error
    /// backoff). Otherwise [`add_unschedulable_if_not_present`](Self::add_unschedulable_if_not_present):
    /// the events of its attempt are replayed (I7) and it is in one place again (I4). Fails,
    /// changing nothing, if the pod is not in flight.
    pub fn hand_back(
        &mut self,
        id: &PodId,
        rejector: Option<PluginName>,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> Result<Option<QueuePlace>, HandBackError> {
        let info = self.in_flight_record(id, rejector)?;
        Ok(self
            .add_unschedulable_if_not_present(info, now, plugins)
            .expect("a pod in flight is not queued"))
    }

    /// A failed gang attempt's members in flight come back together with one backoff, with
    /// the queue's own records of them, each rejected by its rejector: otherwise
    /// [`add_gang_unschedulable`](Self::add_gang_unschedulable) (H2, I4, I7). Fails,
    /// changing nothing, if a member is not in flight.
    pub fn hand_back_gang(
        &mut self,
        members: &[(PodId, Option<PluginName>)],
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> Result<Vec<Option<QueuePlace>>, HandBackError> {
        self.hand_back_gang_with(Vec::new(), members, now, plugins)
    }

    /// [`hand_back_gang`](Self::hand_back_gang), with `taken` first: records of members whose
    /// attempt already left the queue ([`take_done`](Self::take_done): a member whose bind
    /// failed) coming back with the members in flight, in the same backoff (H2). The places
    /// returned follow `taken`, then `members`. Fails, changing nothing, if a member is not in
    /// flight or a taken record's pod is queued again.
    pub fn hand_back_gang_with(
        &mut self,
        taken: Vec<QueuedPodInfo>,
        members: &[(PodId, Option<PluginName>)],
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> Result<Vec<Option<QueuePlace>>, HandBackError> {
        let mut infos = taken;
        for (id, rejector) in members {
            infos.push(self.in_flight_record(id, rejector.clone())?);
        }
        self.add_gang_unschedulable(infos, now, plugins).map_err(
            |QueueError::AlreadyQueued { pod, place }| HandBackError::AlreadyQueued { pod, place },
        )
    }

    /// A copy of in-flight pod `id`'s record, rejected by `rejector` if there is one.
    fn in_flight_record(
        &self,
        id: &PodId,
        rejector: Option<PluginName>,
    ) -> Result<QueuedPodInfo, HandBackError> {
        if self.place(id) != Some(QueuePlace::InFlight) {
            return Err(HandBackError::NotInFlight(id.clone()));
        }
        let info = self.info(id).expect("placed").clone();
        Ok(match rejector {
            Some(plugin) => info.rejected_by(plugin),
            None => info,
        })
    }

    /// A gang attempt failed (hardened): its members come back **together with one backoff**.
    /// The strongest requeue reason found for any member applies to all, and members that back
    /// off share the latest expiry among them. A pod listed twice is one member (its first
    /// listing counts); the places returned follow the listing. Fails, changing nothing, if a
    /// member is already queued.
    pub fn add_gang_unschedulable(
        &mut self,
        members: Vec<QueuedPodInfo>,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> Result<Vec<Option<QueuePlace>>, QueueError> {
        for m in &members {
            if let Some(place) = self.place(m.id()).filter(|p| *p != QueuePlace::InFlight) {
                return Err(QueueError::AlreadyQueued {
                    pod: m.pod().clone(),
                    place,
                });
            }
        }
        // A pod listed twice is one member: its first listing counts. Sets, not scans: a
        // gang of 100,000 goes back in linear time.
        let listed: Vec<PodId> = members.iter().map(|m| m.id().clone()).collect();
        let mut seen: HashSet<PodId, BuildFastHasher> =
            HashSet::with_capacity_and_hasher(members.len(), BuildFastHasher::default());
        let mut distinct: Vec<QueuedPodInfo> = Vec::with_capacity(members.len());
        for mut m in members {
            if seen.insert(m.id().clone()) {
                m.count_failure();
                m.set_timestamp(now);
                distinct.push(m);
            }
        }
        // The strongest reason over the members: the search ends once it reaches the
        // strongest any member can give (Immediately needs a pending plugin), and members
        // with no rejector — an error, AfterBackoff at once — are asked first, so a gang
        // whose bind failed does not replay its attempt's events for every member.
        let top = if distinct.iter().any(QueuedPodInfo::has_pending_plugins) {
            Requeue::Immediately
        } else {
            Requeue::AfterBackoff
        };
        let mut strategy: Option<Requeue> = None;
        let cheap_first = distinct
            .iter()
            .filter(|m| !m.has_rejectors())
            .chain(distinct.iter().filter(|m| m.has_rejectors()));
        for m in cheap_first {
            strategy = strategy.max(Some(self.strategy_after_attempt(m, plugins)));
            if strategy == Some(top) {
                break;
            }
        }
        let size = distinct.len();
        let expiry = distinct
            .iter()
            .filter_map(|m| self.clock.expiry_in_group(m, size))
            .max();
        let mut placed: HashMap<PodId, Option<QueuePlace>, BuildFastHasher> =
            HashMap::with_capacity_and_hasher(distinct.len(), BuildFastHasher::default());
        for m in distinct {
            let id = m.id().clone();
            let place = self.take_back(m, now, plugins, strategy.zip(expiry));
            self.done(&id);
            placed.insert(id, place);
        }
        // Every listed id was handed back above (the first listing of each).
        Ok(listed.iter().map(|id| placed[id]).collect())
    }

    /// Activates pods now (kube-scheduler's `Activate`): pods in the unschedulable pool or
    /// backing off go to the active queue (still subject to PreEnqueue, except, with pop from
    /// backoff, a pod leaving backoff: it passed PreEnqueue on its way in); for a pod in flight
    /// the activation is recorded and honoured when it comes back (I7); others are ignored.
    /// Returns how many pods moved.
    pub fn activate(&mut self, ids: &[PodId], now: Time, plugins: &dyn QueuePlugins) -> usize {
        let mut moved = 0;
        for id in ids {
            match self.place(id) {
                Some(QueuePlace::Unschedulable) => {
                    let info = self.remove_entry(id).expect("placed");
                    moved += usize::from(self.move_to_active(info, now, plugins));
                }
                Some(QueuePlace::Backoff(_) | QueuePlace::ErrorBackoff(_)) => {
                    let info = self.remove_entry(id).expect("placed");
                    moved += usize::from(self.move_from_backoff(info, now, plugins));
                }
                Some(QueuePlace::InFlight) => {
                    self.record(ClusterEvent::ForceActivate, Some(id.clone()))
                }
                Some(QueuePlace::Active(_)) | None => {}
            }
        }
        moved
    }

    /// A cluster event that may make unschedulable pods schedulable (upstream's
    /// `MoveAllToActiveOrBackoffQueue`): every pod in the unschedulable pool that passes
    /// `precheck` and whose rejectors' hints say the event may help moves to the active queue
    /// or to backoff; gated pods move only for events their gate registered for (or
    /// wildcards). The event is recorded for the pods in flight (I7). Events no plugin
    /// registered for are ignored. Returns how many pods moved.
    pub fn move_all_to_active_or_backoff(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> usize {
        if !plugins.is_event_of_interest(event.kind()) {
            return 0;
        }
        let wildcards_move_gated = self.config.wildcards_move_gated;
        let decide = |info: &QueuedPodInfo| {
            precheck
                .is_none_or(|keep| keep(info))
                .then(|| verdict(info, &event, plugins, wildcards_move_gated))
                .flatten()
        };
        let scope = if event.is_wildcard() {
            EventScope::Everyone
        } else {
            plugins.event_scope(&event)
        };
        let moved = match scope {
            EventScope::Nobody => 0,
            EventScope::Group(key) if self.group_index_ready() => {
                self.move_group(&key, now, plugins, decide)
            }
            _ => {
                // Gated pods whose gate did not register for the event stay as they are
                // (`verdict`): with the gate index they are not even visited.
                let skip = (!event.is_wildcard() && self.gate_index_ready())
                    .then(|| {
                        let gates = self.gates.as_ref().expect("the gate index is built");
                        gates.mask(|gate| !plugins.registered(gate, event.kind()))
                    })
                    .flatten();
                self.move_where(now, plugins, skip.as_deref(), decide)
            }
        };
        self.record(event, None);
        moved
    }

    /// Moves every pod whose backoff has ended at `now` to the active queue (PreEnqueue still
    /// applies). Returns how many left backoff.
    pub fn flush_backoff_completed(&mut self, now: Time, plugins: &dyn QueuePlugins) -> usize {
        let mut done = 0;
        for error in [false, true] {
            loop {
                let heap = if error {
                    &self.error_backoff
                } else {
                    &self.backoff
                };
                let Some((expiry, slot)) = heap.peek() else {
                    break;
                };
                if self.clock.backs_off_until(expiry, now) {
                    break;
                }
                let id = self.info_at(slot).id().clone();
                let info = self.remove_entry(&id).expect("placed");
                self.move_from_backoff(info, now, plugins);
                done += 1;
            }
        }
        done
    }

    /// Retries every pod that has sat in the unschedulable pool longer than the configured
    /// maximum (a wildcard event: hints are not asked; recorded for the pods in flight if any
    /// pod was stale). A gated pod is not retried (v1.36.3): it stays stale and each later
    /// flush announces the event again. With
    /// [`wildcards_move_gated`](super::QueueConfig::wildcards_move_gated) it is, and one that stays
    /// gated starts a new wait — its flush time, not its queue timestamp, which keeps its order
    /// and backoff (upstream #139331) — so it is not flushed again at every call. Returns how
    /// many pods moved.
    pub fn flush_unschedulable_leftover(&mut self, now: Time, plugins: &dyn QueuePlugins) -> usize {
        let max = self.config.max_in_unschedulable;
        if self.leftover.is_none() && self.ids.len() >= LeftoverIndex::BUILD_FROM {
            self.leftover = Some(Box::new(LeftoverIndex::build(&self.pool, &self.slots)));
        }
        let stale: Vec<u32> = match &self.leftover {
            Some(leftover) => leftover.stale(now, max),
            None => self
                .pool
                .iter()
                .filter(|&slot| now - self.info_at(slot).parked_since() > max)
                .collect(),
        };
        if stale.is_empty() {
            return 0;
        }
        let event = ClusterEvent::UnschedulableTimeout;
        let moved = self.move_slots(&stale, &event, now, plugins);
        // Without kubernetes#139162 a gated pod is not even considered and stays stale, as in
        // v1.36.3; with it, a pod the flush left gated waits another full period.
        if self.config.wildcards_move_gated {
            for &slot in &stale {
                if self.places[slot as usize] == QueuePlace::Unschedulable {
                    let info = self.slots[slot as usize]
                        .as_mut()
                        .expect("pooled slot in use");
                    if let Some(leftover) = &mut self.leftover {
                        leftover.remove(slot, info);
                    }
                    info.set_flushed_at(now);
                    if let Some(leftover) = &mut self.leftover {
                        leftover.insert(slot, info);
                    }
                }
            }
        }
        self.record(event, None);
        moved
    }

    /// Whether `event` may make `info` schedulable (upstream's `isPodWorthRequeuing`).
    pub fn worth_requeuing(
        &self,
        info: &QueuedPodInfo,
        event: &ClusterEvent,
        plugins: &dyn QueuePlugins,
    ) -> Requeue {
        worth_requeuing(info, event, plugins)
    }

    /// Upstream's `moveToActiveQ`: PreEnqueue decides between the active queue and the gated
    /// part of the unschedulable pool. Returns whether the pod became active.
    pub(super) fn move_to_active(
        &mut self,
        info: QueuedPodInfo,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> bool {
        matches!(
            self.requeue(info, Requeue::Immediately, now, plugins, None),
            QueuePlace::Active(_)
        )
    }

    /// A pod leaving backoff for the active queue (upstream's `moveToActiveQ` with
    /// `movesFromBackoffQ`): with pop from backoff, PreEnqueue ran when it entered backoff and
    /// is not run again; otherwise [`move_to_active`](Self::move_to_active). Returns whether
    /// the pod became active.
    pub(super) fn move_from_backoff(
        &mut self,
        mut info: QueuedPodInfo,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> bool {
        if !self.clock.pre_enqueue_at_backoff {
            return self.move_to_active(info, now, plugins);
        }
        info.mark_activated(now);
        let key = plugins.sort_key(&info);
        self.insert(info, QueuePlace::Active(key));
        true
    }

    /// Upstream's `requeuePodViaQueueingHint`; `expiry` overrides the pod's own (a gang's).
    pub(super) fn requeue(
        &mut self,
        mut info: QueuedPodInfo,
        strategy: Requeue,
        now: Time,
        plugins: &dyn QueuePlugins,
        expiry: Option<Time>,
    ) -> QueuePlace {
        let place = place_for(&self.clock, &mut info, strategy, now, plugins, expiry);
        self.insert(info, place);
        place
    }

    /// What the events recorded during `info`'s attempt say (upstream's
    /// `determineSchedulingHintForInFlightPod`).
    fn strategy_after_attempt(&self, info: &QueuedPodInfo, plugins: &dyn QueuePlugins) -> Requeue {
        if !info.has_rejectors() {
            return Requeue::AfterBackoff;
        }
        if self.config.group_members_back_off && info.pod().group().is_some() {
            // 1.36 (GenericWorkload): no event-based requeueing for pod groups yet.
            return Requeue::AfterBackoff;
        }
        let Some(flight) = self.in_flight.get(info.id()) else {
            // Not in flight (handed back after `done`): nothing is known, so back off, as
            // upstream does.
            return Requeue::AfterBackoff;
        };
        if planted!(self, QueueFlaw::ForgetsEventsInFlight) {
            return Requeue::Skip;
        }
        let strongest = if info.has_pending_plugins() {
            Requeue::Immediately
        } else {
            Requeue::AfterBackoff
        };
        self.events
            .iter()
            .filter(|r| r.seq >= flight.since)
            // An event about one pod (its update, its activation) is its own, or — with
            // kube-scheduler's shared list — every pod's, but for an activation: a wildcard
            // naming a pod is for that pod only (`isPodWorthRequeuing`).
            .filter(|r| match &r.target {
                None => true,
                Some(t) => {
                    t == info.id()
                        || (self.config.shared_in_flight_events && !r.event.is_wildcard())
                }
            })
            .map(|r| self.worth_requeuing(info, &r.event, plugins))
            // The strongest verdict the pod can get ends the search: Immediately, or
            // AfterBackoff for a pod no plugin left pending (the events of a long attempt
            // are many; most hand-backs need the first that helps).
            .try_fold(Requeue::Skip, |best, verdict| {
                let best = best.max(verdict);
                if best == strongest {
                    Err(best)
                } else {
                    Ok(best)
                }
            })
            .unwrap_or_else(|strongest| strongest)
    }

    /// Puts a pod coming back from its attempt where it belongs; `None` if it was deleted.
    fn take_back(
        &mut self,
        mut info: QueuedPodInfo,
        now: Time,
        plugins: &dyn QueuePlugins,
        forced: Option<(Requeue, Time)>,
    ) -> Option<QueuePlace> {
        let id = info.id().clone();
        if self.in_flight.get(&id).is_some_and(|f| f.deleted) {
            return None;
        }
        self.forget_in_flight(&id);
        info.set_timestamp(now);
        let (strategy, expiry) = match forced {
            Some((strategy, expiry)) => (strategy, Some(expiry)),
            None => (self.strategy_after_attempt(&info, plugins), None),
        };
        Some(self.requeue(info, strategy, now, plugins, expiry))
    }

    /// Requeues those of `slots` (in the unschedulable pool) that `event` may help.
    pub(super) fn move_slots(
        &mut self,
        slots: &[u32],
        event: &ClusterEvent,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> usize {
        let wildcards_move_gated = self.config.wildcards_move_gated;
        self.move_listed(slots, now, plugins, |info| {
            verdict(info, event, plugins, wildcards_move_gated)
        })
    }

    /// Those of `slots` (in the unschedulable pool) for which `decide` gives a strategy are
    /// moved, in the order listed. Returns how many left the pool.
    pub(super) fn move_listed(
        &mut self,
        slots: &[u32],
        now: Time,
        plugins: &dyn QueuePlugins,
        decide: impl Fn(&QueuedPodInfo) -> Option<Requeue>,
    ) -> usize {
        let mut moved = 0;
        for &slot in slots {
            let clock = self.clock;
            let info = self.slots[slot as usize].as_mut().expect("slot in use");
            let Some(strategy) = decide(info) else {
                continue;
            };
            // Out of the pool (and the group index) under its gate before the move.
            self.unpool(slot);
            let info = self.slots[slot as usize].as_mut().expect("slot in use");
            let (place, was_gated) = relocate(&clock, info, strategy, now, plugins);
            self.places[slot as usize] = place;
            let (id, gated) = (info.id().clone(), info.gated_by().is_some());
            self.gated -= usize::from(was_gated);
            self.index(slot, &id, place, gated);
            moved += usize::from(place != QueuePlace::Unschedulable);
        }
        moved
    }

    /// One pass over the unschedulable pool: every pod for which `decide` gives a strategy is
    /// moved in place (its record stays in its slot; only the indexes change). Returns how
    /// many left the pool.
    pub(super) fn move_where(
        &mut self,
        now: Time,
        plugins: &dyn QueuePlugins,
        skip: Option<&[u64]>,
        decide: impl Fn(&QueuedPodInfo) -> Option<Requeue>,
    ) -> usize {
        let QueueState {
            clock,
            slots,
            places,
            active,
            backoff,
            error_backoff,
            pool,
            groups,
            leftover,
            gates,
            gated,
            ..
        } = self;
        let mut moved = 0;
        backoff.reserve(pool.len(), slots.len());
        let visit = |slot: u32| {
            let info = slots[slot as usize].as_mut().expect("pooled slot in use");
            let Some(strategy) = decide(info) else {
                return true;
            };
            let parked_since = info.parked_since();
            let (place, was_gated) = relocate(clock, info, strategy, now, plugins);
            // Written once, never read back: the new place stays in registers.
            places[slot as usize] = place;
            let now_gated = info.gated_by().is_some();
            *gated = *gated - usize::from(was_gated) + usize::from(now_gated);
            // Refiled if it left the pool or may have changed gate.
            if place != QueuePlace::Unschedulable || was_gated || now_gated {
                if let Some(groups) = groups {
                    groups.remove(slot, info.pod().group_key());
                    groups.insert(slot, info, place);
                }
                if let Some(leftover) = leftover {
                    leftover.remove_filed(slot, parked_since, was_gated);
                    if place == QueuePlace::Unschedulable {
                        leftover.insert(slot, info);
                    }
                }
                if let Some(gates) = gates {
                    gates.remove(slot);
                    if place == QueuePlace::Unschedulable {
                        gates.insert(slot, info);
                    }
                }
            }
            match place {
                QueuePlace::Active(key) => {
                    active.insert((key, info.id().clone()));
                }
                QueuePlace::Backoff(t) => backoff.push(slot, t),
                QueuePlace::ErrorBackoff(t) => error_backoff.push(slot, t),
                QueuePlace::Unschedulable => return true,
                QueuePlace::InFlight => unreachable!("relocate never puts a pod in flight"),
            }
            moved += 1;
            false
        };
        // One call site, so that `visit` is inlined into the walk (two kept it out of line,
        // and the per-pod calls it makes with it: `move_all/100k` took 5.3–5.4 ms, not 4.8–5.0).
        pool.retain_unmasked(skip.unwrap_or_default(), visit);
        moved
    }
}

/// Where a pod goes for `strategy` at `now` (upstream's `requeuePodViaQueueingHint` and
/// `moveToActiveQ`): the unschedulable pool for `Skip`; backoff (or error backoff, for a pod no
/// plugin rejected) while it is backing off after `AfterBackoff`, until `expiry` (default: its
/// own); otherwise the active queue — unless a PreEnqueue plugin gates it, which is recorded on
/// `info`. With pop from backoff (1.36), PreEnqueue gates on the way into backoff too
/// (upstream's `moveToBackoffQ`), and a pod leaving backoff skips it
/// ([`QueueState::move_from_backoff`]).
#[inline]
fn place_for(
    clock: &BackoffClock,
    info: &mut QueuedPodInfo,
    strategy: Requeue,
    now: Time,
    plugins: &dyn QueuePlugins,
    expiry: Option<Time>,
) -> QueuePlace {
    let backing_off = expiry
        .or_else(|| clock.expiry(info))
        .filter(|&expiry| clock.backs_off_until(expiry, now));
    match (strategy, backing_off) {
        (Requeue::Skip, _) => QueuePlace::Unschedulable,
        (Requeue::AfterBackoff, Some(expiry)) => {
            if clock.pre_enqueue_at_backoff {
                if let Err(gate) = plugins.pre_enqueue(info.pod()) {
                    info.gate(gate.plugin);
                    return QueuePlace::Unschedulable;
                }
            }
            if info.has_rejectors() {
                QueuePlace::Backoff(expiry)
            } else {
                QueuePlace::ErrorBackoff(expiry)
            }
        }
        (Requeue::AfterBackoff | Requeue::Immediately, _) => {
            match plugins.pre_enqueue(info.pod()) {
                Err(gate) => {
                    info.gate(gate.plugin);
                    QueuePlace::Unschedulable
                }
                Ok(()) => {
                    info.mark_activated(now);
                    QueuePlace::Active(plugins.sort_key(info))
                }
            }
        }
    }
}

/// Whether `event` moves `info` (in the unschedulable pool) and how; `None` to stay. A gated
/// pod moves only for an event its gate registered for, or a wildcard if `wildcards_move_gated`
/// (kubernetes#139162).
#[inline]
fn verdict(
    info: &QueuedPodInfo,
    event: &ClusterEvent,
    plugins: &dyn QueuePlugins,
    wildcards_move_gated: bool,
) -> Option<Requeue> {
    if let Some(gate) = info.gated_by() {
        let wildcard = wildcards_move_gated && event.is_wildcard();
        if !wildcard && !plugins.registered(gate, event.kind()) {
            return None;
        }
    }
    Some(worth_requeuing(info, event, plugins)).filter(|s| *s != Requeue::Skip)
}

/// Upstream's `isPodWorthRequeuing`.
#[inline]
fn worth_requeuing(
    info: &QueuedPodInfo,
    event: &ClusterEvent,
    plugins: &dyn QueuePlugins,
) -> Requeue {
    if !info.has_rejectors() || event.is_wildcard() {
        return Requeue::AfterBackoff;
    }
    // A hint that fails counts as Queue, as upstream; a plugin with no hint for the event
    // says QueueSkip.
    let says_queue = |plugin: &PluginName| {
        !matches!(
            plugins.hint(plugin, info.pod(), event),
            Ok(QueueingHint::QueueSkip)
        )
    };
    if info.has_pending_plugins() && info.pending_plugins().iter().any(says_queue) {
        return Requeue::Immediately;
    }
    if info.unschedulable_plugins().iter().any(says_queue) {
        return Requeue::AfterBackoff;
    }
    Requeue::Skip
}

/// Where a pod in the unschedulable pool goes for `strategy`, updating only its record; the
/// caller records the place and re-files it. Returns the new place and whether the pod was
/// gated before.
#[inline]
fn relocate(
    clock: &BackoffClock,
    info: &mut QueuedPodInfo,
    strategy: Requeue,
    now: Time,
    plugins: &dyn QueuePlugins,
) -> (QueuePlace, bool) {
    let was_gated = info.gated_by().is_some();
    if was_gated {
        info.set_gated_by(None);
    }
    let place = place_for(clock, info, strategy, now, plugins, None);
    (place, was_gated)
}
