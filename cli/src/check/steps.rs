//! The critical sections of the concurrent core, as transitions of a [`Cluster`]: each one is
//! what a scheduler, timer, binder or informer thread does under the core's locks, applied to
//! the real pure states in the order the threaded code applies them.

use std::collections::BTreeSet;

use gangway::gang::{
    fail_attempt, hardened_permit, upstream_permit, AttemptVerdict, AttemptWaiting, GroupKey,
    PodGroup, UpstreamVerdict, GANG_SCHEDULING,
};
use gangway::queue::{ClusterEvent, QueuedPodInfo};
use gangway::scheduler::{Placement, ResourceFit};
use gangway::waiting::{timeout_message, AllowOutcome};
use gangway::{Code, Mode, Pod, PodId, Status, WaitingState};

use super::cluster::{Cluster, Stage, TIMEOUT};
use super::protocol::Flaw;
use super::queue_plugins::ClusterPlugins;

impl Cluster {
    /// Informer: the pod is created — group registry, then queue (PreEnqueue may gate it),
    /// then the pod-add event moves gated siblings (`announce: false` is the planted bug
    /// [`Flaw::ArrivalSkipsMoveEvent`]).
    pub(super) fn arrive(&mut self, id: &PodId, announce: bool) {
        let pod = self.pod(id).clone();
        self.groups
            .add_pod(pod.clone(), false)
            .expect("each pod arrives once");
        let plugins = ClusterPlugins {
            groups: &self.groups,
        };
        self.queue
            .add(pod.clone(), self.now, &plugins)
            .expect("each pod arrives once");
        if announce {
            let event = ClusterEvent::UnscheduledPodAdd(pod);
            self.queue
                .move_all_to_active_or_backoff(event, None, self.now, &plugins);
        }
        self.stages.insert(id.clone(), Stage::Pending);
    }

    /// Scheduler: pop `id`, one of the pods at the head of the active queue, and place it; if
    /// a node has room, assume it there and reserve it in its group.
    pub(super) fn schedule(&mut self, id: &PodId) -> Option<()> {
        let pod = self.queue.pop_tied(id)?.info.pod().clone();
        let stage = match ResourceFit.place(&pod, &self.cache) {
            Ok(node) => {
                self.cache.assume(&pod, &node).ok()?;
                self.groups.state_of_mut(&pod)?.assume(id).then_some(())?;
                Stage::Reserved
            }
            Err(_) => Stage::Unfit,
        };
        self.stages.insert(id.clone(), stage);
        Some(())
    }

    /// Scheduler: a pod no node had room for goes back to the queue, rejected by
    /// NodeResourcesFit; events recorded while it was in flight are replayed (I7).
    pub(super) fn hand_back(&mut self, id: &PodId) -> Option<()> {
        let info = self.in_flight(id)?.rejected_by(ResourceFit::PLUGIN);
        self.requeue(info)
    }

    /// Scheduler: Permit for the pod it just reserved, through the core's own decision
    /// functions (`gang::upstream_permit`, `gang::hardened_permit`); siblings the verdict names
    /// are activated in the queue. Returns the pods that passed in this step.
    pub(super) fn permit(&mut self, mode: Mode, id: &PodId) -> BTreeSet<PodId> {
        let pod = self.pod(id).clone();
        let mut passed = BTreeSet::new();
        let (stage, activate) = match mode {
            Mode::Upstream => match upstream_permit(&self.groups, &pod) {
                UpstreamVerdict::Allow(siblings) => {
                    // Carried out after the group lock, one sibling at a time, as upstream.
                    for sibling in siblings {
                        let outcome = self.waiting.allow(&sibling, None, GANG_SCHEDULING.as_str());
                        if matches!(outcome, AllowOutcome::Allowed(_)) {
                            self.stages
                                .insert(sibling.clone(), Stage::Decided { allowed: true });
                            passed.insert(sibling);
                        }
                    }
                    passed.insert(id.clone());
                    (Stage::Decided { allowed: true }, Vec::new())
                }
                UpstreamVerdict::Wait(activate) => {
                    let waits = [(GANG_SCHEDULING, TIMEOUT)];
                    match self.waiting.add(pod, waits, self.now, ()) {
                        Ok(_) => (Stage::Waiting, activate),
                        Err(_) => (Stage::Decided { allowed: false }, Vec::new()),
                    }
                }
                UpstreamVerdict::Reject(_) => (Stage::Decided { allowed: false }, Vec::new()),
            },
            Mode::Hardened => {
                let mut waiting = ModelWaiting {
                    waiting: &mut self.waiting,
                    stages: &mut self.stages,
                    passed: &mut passed,
                };
                match hardened_permit(&mut self.groups, &mut waiting, &pod, self.now, TIMEOUT) {
                    AttemptVerdict::Allow(_) => {
                        passed.insert(id.clone());
                        (Stage::Decided { allowed: true }, Vec::new())
                    }
                    AttemptVerdict::Wait { activate, .. } => (Stage::Waiting, activate),
                    AttemptVerdict::Reject(_) => (Stage::Decided { allowed: false }, Vec::new()),
                }
            }
        };
        self.stages.insert(id.clone(), stage);
        if !activate.is_empty() {
            let ids: Vec<PodId> = activate.iter().map(|p| p.id().clone()).collect();
            let plugins = ClusterPlugins {
                groups: &self.groups,
            };
            self.queue.activate(&ids, self.now, &plugins);
        }
        passed
    }

    /// Timer: the permit deadlines due at `self.now` pass — each waiting pod's own (Upstream)
    /// or each open gang attempt's (Hardened, which rejects every waiting member).
    pub(super) fn expire(&mut self, mode: Mode) {
        match mode {
            Mode::Upstream => {
                for d in self.waiting.expire(self.now) {
                    self.stages
                        .insert(d.pod.id().clone(), Stage::Decided { allowed: false });
                    self.timed_out = true;
                }
            }
            Mode::Hardened => {
                // The same reason as the plugin's: it is part of the group's state.
                let reason = timeout_message(TIMEOUT, &GANG_SCHEDULING);
                let now = self.now;
                let due: Vec<GroupKey> = self
                    .groups
                    .iter()
                    .filter(|g| {
                        g.attempt()
                            .is_some_and(|a| a.failure().is_none() && a.deadline() <= now)
                    })
                    .map(|g| g.key().clone())
                    .collect();
                for key in due {
                    let mut passed = BTreeSet::new();
                    let mut waiting = ModelWaiting {
                        waiting: &mut self.waiting,
                        stages: &mut self.stages,
                        passed: &mut passed,
                    };
                    if let Some(state) = self.groups.get_mut(&key) {
                        let members = fail_attempt(state, &mut waiting, &reason);
                        self.timed_out |= !members.is_empty();
                    }
                }
            }
        }
    }

    /// Binder: the allowed pod binds (cache, group, queue), and the informer's assigned-pod
    /// event follows.
    pub(super) fn bind(&mut self, id: &PodId) -> Option<()> {
        self.cache.finish_binding(id).ok()?;
        let pod = self.pod(id).clone();
        self.groups.bind_observed(&pod);
        self.queue.done(id);
        self.stages.insert(id.clone(), Stage::Bound);
        self.announce(ClusterEvent::AssignedPodAdd(pod), &[]);
        Some(())
    }

    /// Binder: binding the allowed pod fails — unreserve, forget, announce the freed room,
    /// then back to the queue in the error backoff (no rejecting plugin).
    pub(super) fn bind_fails(&mut self, id: &PodId, flaw: Option<Flaw>) -> Option<()> {
        let info = self.in_flight(id)?;
        let pod = info.pod().clone();
        self.release_reservation(id, flaw);
        self.announce(ClusterEvent::AssignedPodDelete(pod), &[]);
        if flaw == Some(Flaw::BindFailureLosesPod) {
            self.queue.done(id);
            self.stages.insert(id.clone(), Stage::Pending);
            return Some(());
        }
        self.requeue(info)
    }

    /// Binder: a pod rejected at Permit is released and requeued, rejected by the gang plugin.
    /// Hardened (H2): the first binding cycle of a failed attempt releases every rejected
    /// sibling with it and hands the gang back in one `add_gang_unschedulable`; the freed room
    /// is announced once, excluding the gang. Upstream: this pod alone.
    pub(super) fn release(&mut self, mode: Mode, id: &PodId, flaw: Option<Flaw>) -> Option<()> {
        let pod = self.pod(id).clone();
        let mut members = vec![id.clone()];
        if mode == Mode::Hardened {
            members.extend(
                self.siblings(&pod)
                    .filter(|o| *o != id && self.stage(o) == Stage::Decided { allowed: false })
                    .cloned(),
            );
        }
        let mut infos = Vec::with_capacity(members.len());
        for m in &members {
            infos.push(self.in_flight(m)?.rejected_by(GANG_SCHEDULING));
            self.release_reservation(m, flaw);
            self.stages.insert(m.clone(), Stage::Pending);
        }
        let plugins = ClusterPlugins {
            groups: &self.groups,
        };
        if mode == Mode::Hardened {
            self.queue
                .add_gang_unschedulable(infos, self.now, &plugins)
                .ok()?;
        } else {
            let info = infos.pop()?;
            self.queue
                .add_unschedulable_if_not_present(info, self.now, &plugins)
                .ok()?;
        }
        if flaw != Some(Flaw::ReleaseAnnouncesNothing) {
            self.announce(ClusterEvent::AssignedPodDelete(pod), &members);
        }
        Some(())
    }

    /// Cluster: the pod (pending, waiting or bound) is deleted. It leaves its group, the cache
    /// and the queue; Hardened fails its gang attempt, rejecting every waiting member (H1);
    /// Upstream rejects only its own waiting entry. A waiting pod's binding cycle then finds
    /// it deleted and announces its freed room; a bound pod's room is announced at once.
    pub(super) fn delete(&mut self, mode: Mode, id: &PodId) {
        let pod = self.pod(id).clone();
        let was_waiting = self.stage(id) == Stage::Waiting;
        let was_bound = self.stage(id) == Stage::Bound;
        // As the plugin does it: leave the group, then fail the attempt it waited in.
        self.groups.delete_pod(&pod);
        if mode == Mode::Hardened && was_waiting {
            let mut passed = BTreeSet::new();
            let mut waiting = ModelWaiting {
                waiting: &mut self.waiting,
                stages: &mut self.stages,
                passed: &mut passed,
            };
            if let Some(state) = self.groups.state_of_mut(&pod) {
                let reason = format!("gang member {} was deleted", pod.full_name());
                fail_attempt(state, &mut waiting, &reason);
            }
        }
        // Each call is a no-op for a pod its part does not hold: skipping it leaves the part
        // shared with the previous state.
        if self.waiting.get(id).is_some() {
            self.waiting.reject(id, None, rejection("deleted"));
        }
        if self.cache.phase(id).is_some() {
            self.cache.remove_pod(id);
        }
        if self.queue.place(id).is_some() || self.queue.in_flight_since(id).is_some() {
            self.queue.delete(id);
            self.queue.done(id);
        }
        self.stages.insert(id.clone(), Stage::Deleted);
        if was_waiting {
            let siblings: Vec<PodId> = self
                .siblings(&pod)
                .filter(|o| self.stage(o) == Stage::Waiting)
                .cloned()
                .collect();
            self.held.extend(siblings);
        }
        if was_waiting || was_bound {
            self.announce(ClusterEvent::AssignedPodDelete(pod), &[]);
        }
    }

    /// Informer: the PodGroup's min count changes (`Scheduler::update_group`): the registry
    /// first, then the event through the queue's move-all. Nothing re-runs Permit: members
    /// waiting under the old count wait for the next member's Permit or their deadline.
    pub(super) fn update_group(&mut self, key: &GroupKey, min: u32) -> Option<()> {
        let group = PodGroup::gang(key.namespace(), key.name(), min).ok()?;
        let old = self.groups.update_group(group.clone()).ok()?;
        self.announce(ClusterEvent::PodGroupUpdate { old, new: group }, &[]);
        Some(())
    }

    /// Timer: backoffs that have ended go to the active queue (time moves to the earliest).
    pub(super) fn flush_backoff(&mut self) -> Option<()> {
        self.now = self.now.max(self.queue.next_backoff_expiry()?);
        let plugins = ClusterPlugins {
            groups: &self.groups,
        };
        self.queue.flush_backoff_completed(self.now, &plugins);
        Some(())
    }

    /// Timer: pods parked in the unschedulable pool past the leftover timeout are retried
    /// (time moves to the earliest such moment).
    pub(super) fn flush_leftover(&mut self) -> Option<()> {
        self.now = self.now.max(self.queue.next_leftover_flush()?);
        let plugins = ClusterPlugins {
            groups: &self.groups,
        };
        self.queue.flush_unschedulable_leftover(self.now, &plugins);
        Some(())
    }

    /// A pod's attempt ends and it goes back to the queue (`add_unschedulable_if_not_present`:
    /// events recorded during the attempt are replayed, I7); its stage is pending again.
    fn requeue(&mut self, info: QueuedPodInfo) -> Option<()> {
        let id = info.id().clone();
        let plugins = ClusterPlugins {
            groups: &self.groups,
        };
        self.queue
            .add_unschedulable_if_not_present(info, self.now, &plugins)
            .ok()?;
        self.stages.insert(id, Stage::Pending);
        Some(())
    }

    /// The queue's record of a pod in flight (what the scheduling cycle popped).
    fn in_flight(&self, id: &PodId) -> Option<QueuedPodInfo> {
        self.queue.info(id).cloned()
    }

    /// Unreserve in the group and forget in the cache (the planted bug
    /// [`Flaw::ReleaseKeepsNodeReservation`] skips the cache).
    fn release_reservation(&mut self, id: &PodId, flaw: Option<Flaw>) {
        let pod = self.pod(id).clone();
        if let Some(state) = self.groups.state_of_mut(&pod) {
            state.forget(id);
        }
        if flaw != Some(Flaw::ReleaseKeepsNodeReservation) {
            self.cache.forget(id);
        }
    }

    /// A cluster event through the queue's move-all, skipping the pods in `except`.
    fn announce(&mut self, event: ClusterEvent, except: &[PodId]) {
        let plugins = ClusterPlugins {
            groups: &self.groups,
        };
        let not_excepted = |info: &QueuedPodInfo| !except.contains(info.id());
        let precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool> =
            (!except.is_empty()).then_some(&not_excepted);
        self.queue
            .move_all_to_active_or_backoff(event, precheck, self.now, &plugins);
    }
}

/// The model's waiting map for the core's Hardened decisions: the real `WaitingState`, with
/// each decision recorded as the pod's stage.
struct ModelWaiting<'a> {
    waiting: &'a mut WaitingState<()>,
    stages: &'a mut std::collections::BTreeMap<PodId, Stage>,
    passed: &'a mut BTreeSet<PodId>,
}

impl AttemptWaiting for ModelWaiting<'_> {
    type Registration = ();

    fn allow_all(&mut self, ids: &[PodId]) -> Result<(), PodId> {
        for d in self.waiting.allow_all(ids, GANG_SCHEDULING.as_str())? {
            self.stages
                .insert(d.pod.id().clone(), Stage::Decided { allowed: true });
            self.passed.insert(d.pod.id().clone());
        }
        Ok(())
    }

    fn reject_all(&mut self, ids: &[PodId], reason: &str) {
        for d in self.waiting.reject_all(ids, &rejection(reason)) {
            self.stages
                .insert(d.pod.id().clone(), Stage::Decided { allowed: false });
        }
    }

    fn add_untimed(&mut self, pod: &Pod) -> Result<(), String> {
        self.waiting
            .add_untimed(pod.clone(), GANG_SCHEDULING, ())
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

fn rejection(reason: &str) -> Status {
    Status::with_reason(Code::Unschedulable, reason).with_plugin(GANG_SCHEDULING)
}
