//! The successor of a state by an action: the core's driver steps for it ([`drive`]), on
//! the state's pure parts, and the model's record of what they did — each pod's stage, what
//! passed Permit (I3), who is held (I6). A step from a copy of the state, or from the state
//! itself once the walk is done with it (the parts only it holds are then written in place).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use gangsched::checking::steps::BindingOutcome;
use gangsched::gang::Groups;
use gangsched::scheduler::{BindError, CycleOutcome};
use gangsched::{GroupKey, Pod, PodId};
use stateright::Model;

use super::cluster::{admitted, Cluster, Stage};
use super::drive::{drive, Cast, Driven, InCycle};
use super::parts::ClusterParts;
use super::protocol::{quota_rejects, Action, GangProtocol, QUOTA};
use super::shared::Shared;

impl GangProtocol {
    /// [`next_state`](Model::next_state) of a state the caller is done with: on this thread's
    /// own state the step writes in place the parts no other state holds, instead of copying
    /// them (a walk's last successor of each state it expands: a depth-first check then runs 13%
    /// fewer instructions, `docs/benchmarks.md`). Not with [`intern`](Self::intern): an
    /// interned part is mostly shared with other states, so it is copied all the same, and
    /// one written in place moves out of the interner's handle (a breadth-first check was no
    /// faster for it and held 2% more memory).
    pub(crate) fn next_state_from(&self, s: Cluster, action: Action) -> Option<Cluster> {
        if s.home.is_here() && !self.intern {
            self.step_from(s, action)
        } else {
            self.next_state(&s, action)
        }
    }

    /// The successor of `s` by `action` (on states of this thread's allocations): the core's
    /// driver steps for it ([`drive`]), on the state's pure parts, and the model's record of
    /// what they did — each pod's stage, what passed Permit (I3), who is held (I6).
    pub(super) fn step(&self, s: &Cluster, action: Action) -> Option<Cluster> {
        self.step_from(s.clone(), action)
    }

    /// The successor of `next` by `action`, stepped on `next` itself: what
    /// [`step`](Self::step) returns for a copy of it. A walk done with a state steps its last
    /// action this way, and the parts only that state held are written in place rather than
    /// copied ([`Shared`]'s `DerefMut`).
    fn step_from(&self, mut next: Cluster, action: Action) -> Option<Cluster> {
        next.partial = None;
        // What the step's record reads of the state before it: I3's judgement (shared with
        // the successor: a part the step writes is then copied, as from a parent), and
        // whether the pod a delete removes was waiting (I6).
        let before = Before::of(&next, &action);
        let deleted_a_waiting_pod =
            matches!(&action, Action::Delete(id) if next.stage(id) == Stage::Waiting);
        // Time moves only when a timer fires, to the moment it is due.
        next.now = match &action {
            Action::Deadline => next.now.max(self.next_deadline(&next)?),
            Action::FlushBackoff => next.now.max(next.queue.next_backoff_expiry()?),
            Action::FlushLeftover => next.now.max(next.queue.next_leftover_flush()?),
            _ => next.now,
        };
        let denied = matches!(action, Action::Permit(_)) && self.permit_denied(&next).is_some();
        let budget = &mut next.budget;
        match &action {
            Action::Deadline => budget.timeouts -= 1,
            Action::FlushLeftover => budget.flushes -= 1,
            Action::BindFails(_) => budget.bind_failures -= 1,
            Action::PermitRejected(_) => budget.permit_rejections -= 1,
            Action::Delete(_) => budget.deletes -= 1,
            Action::UpdateGroup { .. } => budget.group_updates -= 1,
            Action::Permit(_) if denied => budget.denials -= 1,
            _ => {}
        }
        // The scheduling thread's slot is copied only for the actions of its cycle.
        let of_the_cycle = action.thread() == "scheduler";
        let mut cycle = if of_the_cycle {
            (*next.cycle).clone()
        } else {
            None
        };
        let (now, pods) = (next.now, next.pods.share());
        let mut p = ClusterParts::new(
            &mut next,
            (self.config.mode, self.config.gang_cycle),
            self.flaw,
            &self.plugins,
        );
        p.gang_flaw = self.gang_flaw;
        if self.config.permit_rejections > 0 {
            p.unhinted = &QUOTA;
        }
        if let Action::BindFails(_) = action {
            p.bind = Err(BindError::Failed("the model's bind fails".into()));
        }
        if let Action::PermitRejected(_) = action {
            p.others = quota_rejects();
        }
        let driven = drive(&mut p, &mut cycle, &ModelCast(&pods), &action, now)?;
        let passed = std::mem::take(&mut p.passed);
        let fault = p.fault.take();
        next.plugin_fault = fault;
        if of_the_cycle {
            next.cycle = Shared::new(cycle);
        }
        if let Driven::Simulated(false) = driven {
            // A gang handed back retries after a backoff: only within the budget.
            if next.budget.retries == 0 {
                return None;
            }
            next.budget.retries -= 1;
        }
        match (&action, driven) {
            (Action::ScheduleGroup(_), Driven::Simulated(_)) => {
                if let Some(InCycle::Group(simulation)) = &*next.cycle {
                    let members: Vec<PodId> = simulation
                        .members
                        .iter()
                        .map(|(m, _)| m.info.id().clone())
                        .collect();
                    for id in members {
                        next.stages.insert(id, Stage::Placing);
                    }
                }
            }
            (_, Driven::Committed(outcome)) => {
                let mut passed = passed;
                let mut first = None;
                let members = match &outcome {
                    CycleOutcome::PodGroup { members, .. } => members.clone(),
                    other => vec![other.clone()],
                };
                for member in &members {
                    let (id, stage) = member_stage(member);
                    if stage == (Stage::Decided { allowed: true }) {
                        passed.insert(id.clone());
                    }
                    first.get_or_insert(id.clone());
                    next.stages.insert(id, stage);
                }
                // The members a waiting sibling's quorum allowed are decided too.
                for id in &passed {
                    next.stages
                        .insert(id.clone(), Stage::Decided { allowed: true });
                }
                if let Some(id) = first {
                    next.partial = self.gang_atomicity(&before, &id, &passed);
                }
            }
            (Action::PluginAllows { pod, .. }, Driven::PluginAllowed(true)) => {
                next.partial = self.gang_atomicity(&before, pod, &passed);
            }
            (Action::Arrive(id), _) | (Action::HandBack(id), _) => {
                next.stages.insert(id.clone(), Stage::Pending);
            }
            (Action::Schedule(id), Driven::Placed(placed)) => {
                let stage = match placed {
                    Some(true) => Stage::Reserved,
                    Some(false) => Stage::Unfit,
                    None => Stage::Pending,
                };
                next.stages.insert(id.clone(), stage);
            }
            (Action::Permit(id) | Action::PermitRejected(id), Driven::Permitted(outcome)) => {
                let mut passed = passed;
                let stage = match outcome {
                    CycleOutcome::Allowed { .. } => {
                        passed.insert(id.clone());
                        Stage::Decided { allowed: true }
                    }
                    CycleOutcome::Waiting { .. } => Stage::Waiting,
                    // Upstream: released in the cycle, back in the queue (or gone).
                    CycleOutcome::Released { .. } => Stage::Pending,
                    CycleOutcome::Dropped { .. } => Stage::Deleted,
                    _ => Stage::Decided { allowed: false },
                };
                next.stages.insert(id.clone(), stage);
                next.partial = self.gang_atomicity(&before, id, &passed);
            }
            (_, Driven::Binding(outcome)) => match outcome {
                BindingOutcome::Bound { pod, .. } => {
                    next.stages.insert(pod.id().clone(), Stage::Bound);
                }
                BindingOutcome::Deleted { pod } => {
                    next.stages.insert(pod.id().clone(), Stage::Deleted);
                }
                BindingOutcome::Released { pods, .. } => {
                    for pod in pods {
                        next.stages.insert(pod.id().clone(), Stage::Pending);
                    }
                }
                BindingOutcome::BindFailed { pod, released, .. } => {
                    next.stages.insert(pod.id().clone(), Stage::Pending);
                    // Hardened: the siblings its failure released came back with it (H2).
                    for decision in released {
                        next.stages
                            .insert(decision.pod.id().clone(), Stage::Pending);
                    }
                }
                // A decision nobody was waiting for: nothing moved.
                _ => {}
            },
            (Action::Delete(id), Driven::Deleted(in_binding)) => {
                let stage = if in_binding {
                    Stage::Deleting
                } else {
                    Stage::Deleted
                };
                next.stages.insert(id.clone(), stage);
                if deleted_a_waiting_pod {
                    let pod = next.pod(id).clone();
                    let siblings: Vec<PodId> = next
                        .siblings(&pod)
                        .filter(|o| next.stage(o) == Stage::Waiting)
                        .cloned()
                        .collect();
                    next.held.extend(siblings);
                }
            }
            _ => {}
        }
        let still_waiting = |id: &PodId| next.stage(id) == Stage::Waiting;
        let held: BTreeSet<PodId> = next
            .held
            .iter()
            .filter(|id| still_waiting(id))
            .cloned()
            .collect();
        next.held = held;
        if self.intern {
            next.intern_parts();
        }
        Some(next)
    }

    /// I3 for one Permit step: the members that passed together number 0 or at least
    /// `min_count` minus the members already admitted before the step.
    fn gang_atomicity(
        &self,
        before: &Option<Before>,
        id: &PodId,
        passed: &BTreeSet<PodId>,
    ) -> Option<String> {
        let before = before
            .as_ref()
            .expect("a step that may admit pods keeps the state before it");
        let key = GroupKey::of(before.pods.get(id)?)?;
        let min = before.groups.get(&key)?.min_count()? as usize;
        let need = min.saturating_sub(admitted(&before.groups, &before.stages, &key));
        (!passed.is_empty() && passed.len() < need).then(|| {
            format!(
                "{} of gang {key} (min count {min}) passed Permit alone: {passed:?}",
                passed.len()
            )
        })
    }
}

/// What I3's judgement of a step reads of the state before it: its pods, its groups and each
/// pod's stage.
struct Before {
    pods: Shared<BTreeMap<PodId, Pod>>,
    groups: Shared<Groups>,
    stages: Shared<BTreeMap<PodId, Stage>>,
}

impl Before {
    /// `s`'s, if `action` may admit pods (Permit, an embedder's allow, a pod-group commit):
    /// only those steps judge I3.
    fn of(s: &Cluster, action: &Action) -> Option<Before> {
        let admits = matches!(
            action,
            Action::Permit(_)
                | Action::PermitRejected(_)
                | Action::PluginAllows { .. }
                | Action::ScheduleGroup(_)
                | Action::Commit(_)
        );
        admits.then(|| Before {
            pods: s.pods.share(),
            groups: s.groups.share(),
            stages: s.stages.share(),
        })
    }
}

/// A pod-group cycle member's stage after the commit, from its outcome.
fn member_stage(outcome: &CycleOutcome) -> (PodId, Stage) {
    match outcome {
        CycleOutcome::Allowed { pod, .. } => (pod.clone(), Stage::Decided { allowed: true }),
        CycleOutcome::Waiting { pod, .. } => (pod.clone(), Stage::Waiting),
        CycleOutcome::Rejected { pod, .. } => (pod.clone(), Stage::Decided { allowed: false }),
        CycleOutcome::Released { pod, .. } | CycleOutcome::Unschedulable { pod, .. } => {
            (pod.clone(), Stage::Pending)
        }
        CycleOutcome::Dropped { pod } => (pod.clone(), Stage::Deleted),
        other => panic!("a pod-group cycle's member outcome: {other:?}"),
    }
}

/// The model's pods, each bound pod made once per thread and node: the informer's event then
/// shares one object with every state that records it (cheap to compare and to hash), and the
/// checker does not allocate a pod per bind.
struct ModelCast<'a>(&'a BTreeMap<PodId, Pod>);

/// A pod as created, a node, and the pod bound to that node.
type BoundOn = (Pod, Box<str>, Pod);

thread_local! {
    /// This thread's bound pods: for each pod, as created, on each node.
    static BOUND: RefCell<HashMap<PodId, Vec<BoundOn>>> = RefCell::new(HashMap::new());
}

impl Cast for ModelCast<'_> {
    fn pod(&self, id: &PodId) -> Option<&Pod> {
        self.0.get(id)
    }

    fn bound(&self, id: &PodId, node: &str) -> Option<Pod> {
        let pod = self.0.get(id)?;
        BOUND.with(|bound| {
            let mut bound = bound.borrow_mut();
            let made = bound.entry(id.clone()).or_default();
            if let Some((_, _, known)) = made.iter().find(|(p, n, _)| p == pod && &**n == node) {
                return Some(known.clone());
            }
            let new = pod.clone().with_node(node);
            made.push((pod.clone(), node.into(), new.clone()));
            Some(new)
        })
    }
}
