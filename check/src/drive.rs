//! An action, carried out: the core's driver steps it stands for, on any [`Parts`] — the
//! model's pure states (the checker) or a real scheduler's locked components (the replay,
//! `gangway-tests`' `e2e_model_replay`). One mapping for both, so the replay runs exactly the
//! steps the checker explored.

use std::collections::BTreeMap;

use gangsched::checking::steps::{self, BindingOutcome, GroupVerdict, Placed, Simulation};
use gangsched::checking::symmetry::{Relabel, Renamed};
use gangsched::checking::{Flaw, GangParts, Parts};
use gangsched::scheduler::CycleOutcome;
use gangsched::sync::Arc;
use gangsched::PodGroup;
use gangsched::{Pod, PodId, Time};

use super::protocol::Action;

/// What the scheduling thread holds between the steps of its cycle: one pod (the barrier's
/// cycle, [`Placed`]), a gang placed on its snapshot to commit next, or — with the planted
/// [`Flaw::RecordsAfterPermit`] — a pod past Permit whose assignment is recorded next. The
/// model keeps it in its states, so that other threads' steps happen in between.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InCycle {
    /// One pod between its steps.
    Pod(Placed),
    /// A pod group's simulation, its commit next.
    Group(Simulation),
    /// Permit ran before the assignment was recorded, which happens next (the planted
    /// [`Flaw::RecordsAfterPermit`]).
    Permitted {
        /// The pod.
        pod: Pod,
        /// Its node.
        node: Arc<str>,
    },
}

impl InCycle {
    /// The pod it holds (a group's: its first member).
    pub fn pod(&self) -> Option<&Pod> {
        match self {
            InCycle::Pod(placed) => Some(placed.pod()),
            InCycle::Group(simulation) => simulation.members.first().map(|(m, _)| m.info.pod()),
            InCycle::Permitted { pod, .. } => Some(pod),
        }
    }
}

/// The pod or the group's simulation renamed.
impl Renamed for InCycle {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> InCycle {
        match self {
            InCycle::Pod(placed) => InCycle::Pod(placed.renamed(r)),
            InCycle::Group(sim) => InCycle::Group(sim.renamed(r)),
            InCycle::Permitted { pod, node } => InCycle::Permitted {
                pod: r.pod(pod),
                node: r.node(node),
            },
        }
    }
}

/// What an action's steps did, for the model's record of each pod's stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Driven {
    /// The pod arrived (queued or gated).
    Arrived,
    /// The scheduling cycle's first step: its pod is in the cycle slot, reserved or without
    /// room (`true` if reserved) — or, `None`, the cycle ended (assume or reserve failed).
    Placed(Option<bool>),
    /// The pod without room went back to the queue.
    HandedBack,
    /// Permit's outcome.
    Permitted(CycleOutcome),
    /// The assignment was recorded late (a planted flaw).
    Recorded,
    /// A timer fired (deadlines, backoff flush, leftover flush).
    Timer,
    /// An embedder's Permit plugin allowed a pod it held: `true` if that decided it.
    PluginAllowed(bool),
    /// A binding cycle ran.
    Binding(BindingOutcome),
    /// The pod was deleted; `true` if it was in binding (its binding cycle releases it).
    Deleted(bool),
    /// The PodGroup changed.
    GroupUpdated,
    /// A pod-group cycle gathered its members and placed them on its snapshot: `true` if the
    /// gang is feasible there.
    Simulated(bool),
    /// A pod-group cycle's commit: the group's outcome, each member's inside.
    Committed(CycleOutcome),
}

/// The cluster's pods, as the informer reports them.
pub trait Cast {
    /// Pod `id` as created.
    fn pod(&self, id: &PodId) -> Option<&Pod>;

    /// Pod `id` as the informer sees it once bound to `node`.
    fn bound(&self, id: &PodId, node: &str) -> Option<Pod> {
        Some(self.pod(id)?.clone().with_node(node))
    }
}

/// The pods by id, each bound pod a new object.
impl Cast for BTreeMap<PodId, Pod> {
    fn pod(&self, id: &PodId) -> Option<&Pod> {
        self.get(id)
    }
}

/// Runs `action`'s driver steps on `p` at `now`. The scheduling thread keeps its pod in
/// `cycle` between steps; `pods` are the cluster's pods. For a binding cycle the caller has
/// set what the binder answers. `None`: the action is not enabled (the step refused).
pub fn drive<P: Parts>(
    p: &mut P,
    cycle: &mut Option<InCycle>,
    pods: &impl Cast,
    action: &Action,
    now: Time,
) -> Option<Driven> {
    Some(match action {
        Action::Arrive(id) => {
            steps::pod_added(p, pods.pod(id)?.clone(), now).ok()?;
            Driven::Arrived
        }
        Action::Schedule(id) => {
            let popped = p.queue(|q, _| q.pop_tied(id))?;
            let placed = if p.planted(Flaw::RecordsAfterPermit) {
                steps::place_and_reserve_unrecorded(p, popped, now)
            } else {
                steps::place_and_reserve(p, popped, now)
            };
            match placed {
                Ok(placed) => {
                    let reserved = !matches!(placed, Placed::Unfit { .. });
                    *cycle = Some(InCycle::Pod(placed));
                    Driven::Placed(Some(reserved))
                }
                Err(_) => Driven::Placed(None),
            }
        }
        Action::HandBack(_) => {
            let Some(InCycle::Pod(Placed::Unfit { pod, status })) = cycle.take() else {
                return None;
            };
            steps::hand_back_unfit(p, pod, status, now);
            Driven::HandedBack
        }
        Action::Permit(_) | Action::PermitRejected(_) => {
            let Some(InCycle::Pod(Placed::Reserved { pod, node })) = cycle.take() else {
                return None;
            };
            let outcome = steps::permit(p, pod.clone(), node.clone(), now);
            if p.planted(Flaw::RecordsAfterPermit) {
                *cycle = Some(InCycle::Permitted { pod, node });
            }
            Driven::Permitted(outcome)
        }
        Action::Record(_) => {
            let Some(InCycle::Permitted { pod, node }) = cycle.take() else {
                return None;
            };
            steps::record(p, &pod, node, now);
            Driven::Recorded
        }
        Action::ScheduleGroup(id) => {
            let popped = p.queue(|q, _| q.pop_tied(id))?;
            let group = popped.info.pod().group_key()?.clone();
            match steps::gather(p, popped, group, now) {
                Err(outcome) => Driven::Committed(outcome),
                Ok(gathered) => {
                    let simulation = steps::simulate(p, gathered);
                    let feasible = simulation.verdict == GroupVerdict::Feasible;
                    *cycle = Some(InCycle::Group(simulation));
                    Driven::Simulated(feasible)
                }
            }
        }
        Action::Commit(_) => {
            let Some(InCycle::Group(simulation)) = cycle.take() else {
                return None;
            };
            Driven::Committed(steps::commit(p, simulation, now))
        }
        Action::Deadline => {
            steps::expire_deadlines(p, now);
            Driven::Timer
        }
        Action::FlushBackoff => {
            steps::flush_backoff(p, now);
            Driven::Timer
        }
        Action::FlushLeftover => {
            steps::flush_leftover(p, now);
            Driven::Timer
        }
        Action::Bind(id) => {
            let new = p.read_cache(|c| pods.bound(id, c.pod_node(id)?))?;
            let outcome = binding_cycle(p, id, now)?;
            // The informer then sees the pod bound (upstream's assigned-pod event).
            steps::pod_updated(p, pods.pod(id)?.clone(), new, now).ok()?;
            Driven::Binding(outcome)
        }
        Action::BindFails(id) | Action::Release(id) => Driven::Binding(binding_cycle(p, id, now)?),
        Action::Delete(id) => {
            let pod = pods.pod(id)?;
            steps::pod_deleted(p, pod, now).ok()?;
            Driven::Deleted(p.read_driver(|d| d.assignment(id).is_some()))
        }
        Action::PluginAllows { pod, plugin } => {
            Driven::PluginAllowed(p.gang().allow_waiting(pod, plugin.as_str()))
        }
        Action::UpdateGroup { group, min } => {
            let group = PodGroup::gang(group.namespace(), group.name(), *min).ok()?;
            steps::group_updated(p, group, now).ok()?;
            Driven::GroupUpdated
        }
    })
}

/// A binding worker takes pod `id`'s decision and runs its binding cycle. `None` if `id` has
/// no decision waiting.
fn binding_cycle<P: Parts>(p: &mut P, id: &PodId, now: Time) -> Option<BindingOutcome> {
    let job = p.driver(|d| d.take_job(id))?;
    Some(steps::binding_cycle(p, job, now))
}
