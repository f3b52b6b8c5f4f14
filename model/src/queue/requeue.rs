//! Hand-backs, activation, moves, flushes, queueing hints and the helpers that requeue a pod.

use gangsched::queue::{PluginSet, QueueError, QueuePlace, QueuePlugins, Requeue};
use gangsched::{ClusterEvent, PluginName, PodId, QueueingHint, Time};

use super::model::Record;
use super::{ModelInfo, ModelPlace, QueueModel};

impl QueueModel {
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
        info.count_failure();
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
                m.count_failure();
                m.timestamp = now;
                distinct.push(m);
            }
        }
        let verdict = distinct
            .iter()
            .map(|m| self.verdict_after_attempt(m, plugins))
            .max();
        let size = distinct.len();
        let expiry = distinct
            .iter()
            .filter_map(|m| self.expiry_in_gang(m, size))
            .max();
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
                // For this pod only, even on kube-scheduler's shared list of in-flight events:
                // a wildcard naming a pod concerns that pod alone.
                ModelPlace::InFlight { seen, .. } => seen.push(ClusterEvent::ForceActivate),
                ModelPlace::Unschedulable => {
                    let info = self.take(id);
                    if self.enter(info, now, plugins) == ModelPlace::Active {
                        activated += 1;
                    }
                }
                ModelPlace::Backoff(_) | ModelPlace::ErrorBackoff(_) => {
                    let info = self.take(id);
                    if self.leave_backoff(info, now, plugins) == ModelPlace::Active {
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
            self.leave_backoff(info, now, plugins);
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
            if self.config.wildcards_move_gated
                && self.records[i].place == ModelPlace::Unschedulable
            {
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
    pub(super) fn see(&mut self, event: &ClusterEvent) {
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
        // A failure without a rejector, or a pod group member's with the gang gates' rule:
        // back off, whatever the attempt saw.
        let member = self.config.group_members_back_off && info.pod.group().is_some();
        if !info.has_rejectors() || member {
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
    pub(super) fn move_unschedulable(
        &mut self,
        id: &PodId,
        event: &ClusterEvent,
        now: Time,
        plugins: &PluginSet,
    ) -> bool {
        let info = &self.records[self.find(id).expect("candidate")].info;
        if let Some(gate) = &info.gated_by {
            let wildcard = self.config.wildcards_move_gated && event.is_wildcard();
            if !wildcard && !plugins.registered(gate, event.kind()) {
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
        let expiry = expiry
            .or_else(|| self.expiry(&info))
            .filter(|&expiry| self.backing_off(expiry, now));
        match (verdict, expiry) {
            (Requeue::Skip, _) => self.put(info, ModelPlace::Unschedulable),
            // 1.36 (pop from backoff) runs PreEnqueue on the way into backoff.
            (Requeue::AfterBackoff, Some(_))
                if self.config.pop_from_backoff && plugins.pre_enqueue(&info.pod).is_err() =>
            {
                self.enter(info, now, plugins)
            }
            (Requeue::AfterBackoff, Some(expiry)) => {
                let place = if info.has_rejectors() {
                    ModelPlace::Backoff(expiry)
                } else {
                    ModelPlace::ErrorBackoff(expiry)
                };
                self.put(info, place)
            }
            (Requeue::AfterBackoff | Requeue::Immediately, _) => self.enter(info, now, plugins),
        }
    }

    /// PreEnqueue, then the active queue or the gated part of the unschedulable pool.
    pub(super) fn enter(
        &mut self,
        mut info: ModelInfo,
        now: Time,
        plugins: &PluginSet,
    ) -> ModelPlace {
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

    /// A pod whose backoff is over (or that is activated) enters the active queue — through
    /// PreEnqueue, unless the queue pops from backoff: then PreEnqueue ran on its way into
    /// backoff and is not asked again (kube-scheduler 1.36's `movesFromBackoffQ`).
    fn leave_backoff(&mut self, mut info: ModelInfo, now: Time, plugins: &PluginSet) -> ModelPlace {
        if !self.config.pop_from_backoff {
            return self.enter(info, now, plugins);
        }
        info.initial_attempt.get_or_insert(now);
        self.put(info, ModelPlace::Active)
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
}
