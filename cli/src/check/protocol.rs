//! The gang and queue protocol as a stateright model: each action is one critical section the
//! concurrent core runs (see `steps.rs`), applied to the real pure states.

use std::collections::BTreeSet;

use gangway::gang::GroupKey;
use gangway::{Mode, PodId, Time};
use stateright::{Model, Property};

use super::cluster::{Cluster, ClusterConfig, Stage};
use super::home::at_home;
use super::properties::{accounting, conservation, held_for_lost_member, lost_event, stuck_gang};

/// One critical section of the concurrent core, by the thread that runs it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Informer: the pod is created and queued (or gated).
    Arrive(PodId),
    /// Scheduler thread: pop the head of the active queue (this pod), place it, assume it on
    /// the node, reserve it in its group — or find no room.
    Schedule(PodId),
    /// Scheduler thread: the pod no node had room for goes back to the queue.
    HandBack(PodId),
    /// Scheduler thread: Permit for the pod it just reserved (waits, or passes with its
    /// waiting siblings, or is rejected).
    Permit(PodId),
    /// Timer thread: the earliest permit deadline passes.
    Deadline,
    /// Timer thread: ended backoffs move to the active queue.
    FlushBackoff,
    /// Timer thread: pods parked too long in the unschedulable pool are retried.
    FlushLeftover,
    /// Binding worker: the allowed pod binds.
    Bind(PodId),
    /// Binding worker: binding the allowed pod fails; it is unreserved, forgotten, requeued.
    BindFails(PodId),
    /// Binding worker: the rejected pod (Hardened: with its rejected siblings) is unreserved,
    /// forgotten and requeued.
    Release(PodId),
    /// Cluster: the pod is deleted.
    Delete(PodId),
    /// Informer: the PodGroup's min count changes to `min`.
    UpdateGroup {
        /// The PodGroup.
        group: GroupKey,
        /// Its new min count.
        min: u32,
    },
}

/// The model: a cluster configuration; its states are [`Cluster`]s.
#[derive(Clone, Debug)]
pub struct GangProtocol {
    /// What is checked.
    pub config: ClusterConfig,
    /// A deliberate bug, for witnesses: the checker must find what it breaks.
    pub flaw: Option<Flaw>,
    /// Explore every order of interchangeable pods: of the pods tied at the head of the queue,
    /// any member of the first one's gang may pop (the core pops the smallest name, whose
    /// gang is the first tied gang; upstream's heap breaks ties arbitrarily), and a gang's
    /// members arrive in any order. The transitions then do not depend on members' names,
    /// which symmetry reduction needs ([`Search::Symmetric`](super::Search)); every path of the
    /// exact model is still a path of this one.
    pub symmetric: bool,
}

impl GangProtocol {
    /// The exact model of `config` (the core's own tie order), with no planted bug.
    pub fn new(config: ClusterConfig) -> GangProtocol {
        GangProtocol {
            config,
            flaw: None,
            symmetric: false,
        }
    }
}

/// Deliberate bugs that witness tests plant in the model: the checker must find each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flaw {
    /// A failed binding cycle unreserves the pod in its group but keeps its node reservation
    /// (the cache is never told): I5 must catch it.
    ReleaseKeepsNodeReservation,
    /// A failed bind ends the pod's attempt without requeuing it: I4 must catch it.
    BindFailureLosesPod,
    /// A rejected pod's binding cycle releases its room without announcing it, so a pod that
    /// found no room (parked, or in flight meanwhile) never hears of it: I7 must catch it.
    ReleaseAnnouncesNothing,
    /// A pod's arrival does not announce the pod-add event, so gated siblings are never
    /// re-checked (kubernetes#139162's class of bug): I8 must catch it.
    ArrivalSkipsMoveEvent,
}

impl Model for GangProtocol {
    type State = Cluster;
    type Action = Action;

    fn init_states(&self) -> Vec<Cluster> {
        vec![Cluster::initial(&self.config)]
    }

    fn actions(&self, s: &Cluster, actions: &mut Vec<Action>) {
        if s.broken() {
            return;
        }
        if self.config.arrivals {
            if let Some(id) = s.next_arrival() {
                if self.symmetric {
                    let gang = s.pod(&id).group();
                    let absent = s
                        .pods
                        .values()
                        .filter(|p| p.group() == gang && s.stage(p.id()) == Stage::Absent);
                    actions.extend(absent.map(|p| Action::Arrive(p.id().clone())));
                } else {
                    actions.push(Action::Arrive(id));
                }
            }
        }
        // The scheduling cycle is serial: one pod from pop to Permit (or hand-back) at a time.
        if !s.cycle_busy() {
            let mut heads = s.queue.heads();
            if let Some(first) = heads.next() {
                actions.push(Action::Schedule(first.clone()));
                if self.symmetric {
                    // The core pops the smallest name, and a pod's name starts with its gang's:
                    // any member of that gang tied with it may pop instead.
                    let gang = s.pod(first).group();
                    let tied = heads.filter(|id| s.pod(id).group() == gang);
                    actions.extend(tied.map(|id| Action::Schedule(id.clone())));
                }
            }
        }
        for (id, stage) in &s.stages {
            match stage {
                Stage::Unfit => actions.push(Action::HandBack(id.clone())),
                Stage::Reserved => actions.push(Action::Permit(id.clone())),
                Stage::Decided { allowed: true } => {
                    actions.push(Action::Bind(id.clone()));
                    if s.budget.bind_failures > 0 {
                        actions.push(Action::BindFails(id.clone()));
                    }
                }
                Stage::Decided { allowed: false } => actions.push(Action::Release(id.clone())),
                _ => {}
            }
            if s.budget.deletes > 0
                && matches!(stage, Stage::Pending | Stage::Waiting | Stage::Bound)
            {
                actions.push(Action::Delete(id.clone()));
            }
        }
        if s.queue.next_backoff_expiry().is_some() {
            actions.push(Action::FlushBackoff);
        }
        if s.budget.timeouts > 0 && self.next_deadline(s).is_some() {
            actions.push(Action::Deadline);
        }
        if s.budget.flushes > 0 && s.queue.next_leftover_flush().is_some() {
            actions.push(Action::FlushLeftover);
        }
        if s.budget.group_updates > 0 {
            for g in s.groups.iter() {
                let Some(min) = g.min_count() else { continue };
                // Down to 1, or up to the members there (the core refuses more).
                let down = (min > 1).then(|| min - 1);
                let up = (min < g.all_pods_count() as u32).then_some(min + 1);
                for min in down.into_iter().chain(up) {
                    let group = g.key().clone();
                    actions.push(Action::UpdateGroup { group, min });
                }
            }
        }
    }

    fn next_state(&self, s: &Cluster, action: Action) -> Option<Cluster> {
        at_home(s, action, |s, action| self.step(s, action))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("I3 gang atomicity", |_, s: &Cluster| s.partial.is_none()),
            Property::always("I4 conservation", |_, s: &Cluster| conservation(s).is_ok()),
            Property::always("I5 accounting", |_, s: &Cluster| accounting(s).is_ok()),
            Property::always(
                "I6 no reservation held for a lost gang",
                |_, s: &Cluster| held_for_lost_member(s).is_none(),
            ),
            Property::always("I7 no lost event", |_, s: &Cluster| lost_event(s).is_none()),
            Property::always("I8 no stuck gang", |m: &GangProtocol, s: &Cluster| {
                m.stuck(s).is_none()
            }),
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
    /// I8 on `s`: when no action is enabled and no permit deadline is pending (a pending one
    /// would pass, budget or not, and release its gang), a gang that is neither bound, nor
    /// lost a member, nor settled back in the queue is stuck. A state that already broke I3 or
    /// I6 ends its path (see [`Cluster::broken`]) and is not also called stuck.
    pub fn stuck(&self, s: &Cluster) -> Option<String> {
        if s.broken() || self.next_deadline(s).is_some() {
            return None;
        }
        let mut actions = Vec::new();
        self.actions(s, &mut actions);
        if actions.is_empty() {
            stuck_gang(s)
        } else {
            None
        }
    }

    /// The earliest deadline that can pass: a waiting pod's own (Upstream) or an open gang
    /// attempt's (Hardened).
    pub fn next_deadline(&self, s: &Cluster) -> Option<Time> {
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
}

impl GangProtocol {
    /// The successor of `s` by `action` (on states of this thread's allocations).
    fn step(&self, s: &Cluster, action: Action) -> Option<Cluster> {
        let mut next = s.clone();
        next.partial = None;
        let mode = self.config.mode;
        match action {
            Action::Arrive(id) => {
                next.arrive(&id, self.flaw != Some(Flaw::ArrivalSkipsMoveEvent));
            }
            Action::Schedule(id) => next.schedule(&id)?,
            Action::HandBack(id) => next.hand_back(&id)?,
            Action::Permit(id) => {
                let passed = next.permit(mode, &id);
                next.partial = self.gang_atomicity(s, &id, &passed);
            }
            Action::Deadline => {
                next.now = s.now.max(self.next_deadline(s)?);
                next.budget.timeouts -= 1;
                next.expire(mode);
            }
            Action::FlushBackoff => next.flush_backoff()?,
            Action::FlushLeftover => {
                next.budget.flushes -= 1;
                next.flush_leftover()?;
            }
            Action::Bind(id) => next.bind(&id)?,
            Action::BindFails(id) => {
                next.budget.bind_failures -= 1;
                next.bind_fails(&id, self.flaw)?;
            }
            Action::Release(id) => next.release(mode, &id, self.flaw)?,
            Action::Delete(id) => {
                next.budget.deletes -= 1;
                next.delete(mode, &id);
            }
            Action::UpdateGroup { group, min } => {
                next.budget.group_updates -= 1;
                next.update_group(&group, min)?;
            }
        }
        let still_waiting = |id: &PodId| next.stage(id) == Stage::Waiting;
        let held: BTreeSet<PodId> = next
            .held
            .iter()
            .filter(|id| still_waiting(id))
            .cloned()
            .collect();
        next.held = held;
        Some(next)
    }
}
