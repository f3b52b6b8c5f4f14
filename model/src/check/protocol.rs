//! The gang protocol as a stateright model: each action is one critical section the concurrent
//! core runs, applied to the real pure states (`Groups`, `WaitingState`, `CacheState`).

use std::collections::{BTreeMap, BTreeSet};

use gangway::gang::{
    fail_attempt, hardened_permit, upstream_permit, AttemptVerdict, AttemptWaiting, GroupKey,
    UpstreamVerdict, GANG_SCHEDULING,
};
use gangway::scheduler::{Placement, ResourceFit};
use gangway::waiting::AllowOutcome;
use gangway::{Code, Mode, Pod, PodId, Status, WaitingState};
use stateright::{Model, Property};

use super::cluster::{Cluster, ClusterConfig, Stage, TIMEOUT};

/// One critical section of the concurrent core, by the thread that runs it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Scheduler thread: pop the pod, place it, assume it on the node, reserve it in its group.
    Schedule(PodId),
    /// Scheduler thread: Permit for the pod it just reserved (waits, or passes with its
    /// waiting siblings, or is rejected).
    Permit(PodId),
    /// Timer thread: the earliest permit deadline passes.
    Deadline,
    /// Binding worker: the allowed pod binds.
    Bind(PodId),
    /// Binding worker: binding the allowed pod fails; it is unreserved, forgotten, requeued.
    BindFails(PodId),
    /// Binding worker: the rejected pod is unreserved, forgotten and requeued.
    Release(PodId),
    /// Cluster: the pod is deleted.
    Delete(PodId),
}

/// The model: a cluster configuration; its states are [`Cluster`]s.
#[derive(Clone, Debug)]
pub struct GangProtocol {
    /// What is checked.
    pub config: ClusterConfig,
    /// A deliberate bug, for witnesses: the checker must find what it breaks.
    pub flaw: Option<Flaw>,
}

/// Deliberate bugs that witness tests plant in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flaw {
    /// A failed binding cycle unreserves the pod in its group but keeps its node reservation
    /// (the cache is never told): I5 must catch it.
    ReleaseKeepsNodeReservation,
}

impl Model for GangProtocol {
    type State = Cluster;
    type Action = Action;

    fn init_states(&self) -> Vec<Cluster> {
        vec![Cluster::initial(&self.config)]
    }

    fn actions(&self, s: &Cluster, actions: &mut Vec<Action>) {
        let reserved = s.stages.values().any(|st| *st == Stage::Reserved);
        for (id, stage) in &s.stages {
            match stage {
                // The scheduling cycle is serial: one pod from pop to Permit at a time.
                Stage::Pending if !reserved && ResourceFit.place(s.pod(id), &s.cache).is_ok() => {
                    actions.push(Action::Schedule(id.clone()));
                }
                Stage::Reserved => actions.push(Action::Permit(id.clone())),
                Stage::Decided { allowed: true } => {
                    actions.push(Action::Bind(id.clone()));
                    if s.budget.2 > 0 {
                        actions.push(Action::BindFails(id.clone()));
                    }
                }
                Stage::Decided { allowed: false } => actions.push(Action::Release(id.clone())),
                _ => {}
            }
            if s.budget.1 > 0 && matches!(stage, Stage::Pending | Stage::Waiting) {
                actions.push(Action::Delete(id.clone()));
            }
        }
        if s.budget.0 > 0 && self.next_deadline(s).is_some() {
            actions.push(Action::Deadline);
        }
    }

    fn next_state(&self, s: &Cluster, action: Action) -> Option<Cluster> {
        let mut next = s.clone();
        next.partial = None;
        match action {
            Action::Schedule(id) => {
                let pod = s.pod(&id).clone();
                let node = ResourceFit.place(&pod, &s.cache).ok()?;
                next.cache.assume(&pod, &node).ok()?;
                next.groups.state_of_mut(&pod)?.assume(&id);
                next.stages.insert(id, Stage::Reserved);
            }
            Action::Permit(id) => {
                let passed = self.permit(&mut next, &id);
                next.partial = self.gang_atomicity(s, &id, &passed);
            }
            Action::Deadline => {
                let now = self.next_deadline(s)?;
                next.now = now;
                next.budget.0 -= 1;
                self.expire(&mut next);
            }
            Action::Bind(id) => {
                next.cache.finish_binding(&id).ok()?;
                let pod = s.pod(&id).clone();
                next.groups.bind_observed(&pod);
                next.stages.insert(id, Stage::Bound);
            }
            Action::BindFails(id) => {
                next.budget.2 -= 1;
                self.release(&mut next, &id);
            }
            Action::Release(id) => self.release(&mut next, &id),
            Action::Delete(id) => {
                next.budget.1 -= 1;
                self.delete(&mut next, &id);
            }
        }
        let still_waiting = |id: &PodId| next.stage(id) == Stage::Waiting;
        let held: std::collections::BTreeSet<PodId> = next
            .held
            .iter()
            .filter(|id| still_waiting(id))
            .cloned()
            .collect();
        next.held = held;
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("I3 gang atomicity", |_, s: &Cluster| s.partial.is_none()),
            Property::always("I5 accounting", |_, s: &Cluster| accounting(s).is_ok()),
            Property::always(
                "I6 no reservation held for a lost gang",
                |_, s: &Cluster| held_for_lost_member(s).is_none(),
            ),
            Property::sometimes("a gang is bound", |_, s: &Cluster| {
                s.groups.iter().any(|g| {
                    g.min_count()
                        .is_some_and(|min| g.assigned().len() >= min as usize)
                })
            }),
            Property::sometimes("a permit deadline rejects a pod", |_, s: &Cluster| {
                s.timed_out
            }),
        ]
    }
}

impl GangProtocol {
    /// The earliest deadline that can pass: a waiting pod's own (Upstream) or an open gang
    /// attempt's (Hardened).
    pub fn next_deadline(&self, s: &Cluster) -> Option<gangway::Time> {
        match self.config.mode {
            Mode::Upstream => s.waiting.next_deadline(),
            Mode::Hardened => s
                .groups
                .iter()
                .filter_map(|g| g.attempt())
                .filter(|a| a.failure().is_none())
                .map(|a| a.deadline())
                .min(),
        }
    }

    /// Permit, through the core's own decision functions (`gang::upstream_permit`,
    /// `gang::hardened_permit`); returns the pods that passed in it.
    fn permit(&self, s: &mut Cluster, id: &PodId) -> BTreeSet<PodId> {
        let pod = s.pod(id).clone();
        let mut passed = BTreeSet::new();
        match self.config.mode {
            Mode::Upstream => match upstream_permit(&s.groups, &pod) {
                UpstreamVerdict::Allow(siblings) => {
                    // Carried out after the group lock, one sibling at a time, as upstream.
                    for sibling in siblings {
                        let outcome = s.waiting.allow(&sibling, None, GANG_SCHEDULING.as_str());
                        if matches!(outcome, AllowOutcome::Allowed(_)) {
                            s.stages
                                .insert(sibling.clone(), Stage::Decided { allowed: true });
                            passed.insert(sibling);
                        }
                    }
                    s.stages
                        .insert(id.clone(), Stage::Decided { allowed: true });
                    passed.insert(id.clone());
                }
                UpstreamVerdict::Wait(_) => {
                    let waits = [(GANG_SCHEDULING, TIMEOUT)];
                    let stage = match s.waiting.add(pod, waits, s.now, ()) {
                        Ok(_) => Stage::Waiting,
                        Err(_) => Stage::Decided { allowed: false },
                    };
                    s.stages.insert(id.clone(), stage);
                }
                UpstreamVerdict::Reject(_) => {
                    s.stages
                        .insert(id.clone(), Stage::Decided { allowed: false });
                }
            },
            Mode::Hardened => {
                let mut waiting = ModelWaiting {
                    waiting: &mut s.waiting,
                    stages: &mut s.stages,
                    passed: &mut passed,
                };
                let verdict = hardened_permit(&mut s.groups, &mut waiting, &pod, s.now, TIMEOUT);
                let stage = match verdict {
                    AttemptVerdict::Allow(_) => {
                        passed.insert(id.clone());
                        Stage::Decided { allowed: true }
                    }
                    AttemptVerdict::Wait { .. } => Stage::Waiting,
                    AttemptVerdict::Reject(_) => Stage::Decided { allowed: false },
                };
                s.stages.insert(id.clone(), stage);
            }
        }
        passed
    }

    /// I3 for one Permit step: the members that passed together number 0 or at least
    /// `min_count` minus the members already admitted before the step.
    fn gang_atomicity(
        &self,
        before: &Cluster,
        id: &PodId,
        passed: &BTreeSet<PodId>,
    ) -> Option<String> {
        let pod = before.pod(id);
        let key = GroupKey::of(pod)?;
        let min = before.groups.get(&key)?.min_count()? as usize;
        let need = min.saturating_sub(before.admitted(&key));
        (!passed.is_empty() && passed.len() < need).then(|| {
            format!(
                "{} of gang {key} (min count {min}) passed Permit alone: {passed:?}",
                passed.len()
            )
        })
    }

    /// The timer's critical section at `s.now`.
    fn expire(&self, s: &mut Cluster) {
        match self.config.mode {
            Mode::Upstream => {
                for d in s.waiting.expire(s.now) {
                    s.stages
                        .insert(d.pod.id().clone(), Stage::Decided { allowed: false });
                    s.timed_out = true;
                }
            }
            Mode::Hardened => {
                let due: Vec<GroupKey> = s
                    .groups
                    .iter()
                    .filter(|g| {
                        g.attempt()
                            .is_some_and(|a| a.failure().is_none() && a.deadline() <= s.now)
                    })
                    .map(|g| g.key().clone())
                    .collect();
                for key in due {
                    let mut passed = BTreeSet::new();
                    let mut waiting = ModelWaiting {
                        waiting: &mut s.waiting,
                        stages: &mut s.stages,
                        passed: &mut passed,
                    };
                    if let Some(state) = s.groups.get_mut(&key) {
                        let members = fail_attempt(state, &mut waiting, "timeout");
                        s.timed_out |= !members.is_empty();
                    }
                }
            }
        }
    }

    /// A binding cycle's failure path: unreserve (forget in the group), forget in the cache,
    /// back to the queue.
    fn release(&self, s: &mut Cluster, id: &PodId) {
        let pod = s.pod(id).clone();
        if let Some(state) = s.groups.state_of_mut(&pod) {
            state.forget(id);
        }
        if self.flaw != Some(Flaw::ReleaseKeepsNodeReservation) {
            s.cache.forget(id);
        }
        s.stages.insert(id.clone(), Stage::Pending);
    }

    /// The cluster deletes a pod (pending or waiting): it leaves its group and the cache;
    /// Hardened fails its gang attempt, rejecting every waiting member (H1); Upstream rejects
    /// only its own waiting entry.
    fn delete(&self, s: &mut Cluster, id: &PodId) {
        let pod = s.pod(id).clone();
        let was_waiting = s.stage(id) == Stage::Waiting;
        if self.config.mode == Mode::Hardened && was_waiting {
            let mut passed = BTreeSet::new();
            let mut waiting = ModelWaiting {
                waiting: &mut s.waiting,
                stages: &mut s.stages,
                passed: &mut passed,
            };
            if let Some(state) = s.groups.state_of_mut(&pod) {
                fail_attempt(state, &mut waiting, "a member was deleted");
            }
        }
        s.waiting.reject(id, None, rejection("deleted"));
        s.groups.delete_pod(&pod);
        s.cache.remove_pod(id);
        s.stages.insert(id.clone(), Stage::Deleted);
        if was_waiting {
            let siblings: Vec<PodId> = s
                .siblings(&pod)
                .filter(|o| s.stage(o) == Stage::Waiting)
                .cloned()
                .collect();
            s.held.extend(siblings);
        }
    }
}

/// The model's waiting map for the core's Hardened decisions: the real `WaitingState`, with
/// each decision recorded as the pod's stage.
struct ModelWaiting<'a> {
    waiting: &'a mut WaitingState<()>,
    stages: &'a mut BTreeMap<PodId, Stage>,
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

/// I5: the group partition, the cache's node accounting, and the cache agreeing with the
/// stages (assumed exactly while reserved, waiting or decided; bound exactly when bound).
pub fn accounting(s: &Cluster) -> Result<(), String> {
    for g in s.groups.iter() {
        g.check()?;
    }
    s.cache.check()?;
    s.waiting.check()?;
    for (id, stage) in &s.stages {
        let phase = s.cache.phase(id);
        let expected = match stage {
            Stage::Reserved | Stage::Waiting | Stage::Decided { .. } => {
                Some(gangway::scheduler::PodPhase::Assumed)
            }
            Stage::Bound => Some(gangway::scheduler::PodPhase::Bound),
            Stage::Pending | Stage::Deleted => None,
        };
        if phase != expected {
            return Err(format!("{id} is {stage:?} but the cache has it {phase:?}"));
        }
    }
    Ok(())
}

/// I6 as a safety property: once a waiting member is deleted its gang attempt is lost, so no
/// sibling that was waiting with it may go on waiting and holding its reservation (Hardened
/// rejects them at once; Upstream lets each wait for its own timer).
pub fn held_for_lost_member(s: &Cluster) -> Option<String> {
    s.held.iter().next().map(|held| {
        format!("{held} still holds its reservation though a waiting sibling was deleted")
    })
}
