//! An action, carried out: the core's driver steps it stands for, on any [`Parts`] — the
//! model's pure states (the checker) or a real scheduler's locked components (the replay,
//! `gangway-tests`' `e2e_model_replay`) — through the operation vocabulary every runner of the
//! driver shares (gangway-model's `ops::scheduler`). One mapping for both, so the replay runs
//! exactly the steps the checker explored.

use std::collections::BTreeMap;

use gangsched::checking::steps::BindingOutcome;
use gangsched::checking::Parts;
use gangsched::scheduler::CycleOutcome;
use gangsched::PodGroup;
use gangsched::{Pod, PodId, Time};
pub use gangway_model::ops::scheduler::InCycle;
use gangway_model::ops::scheduler::{apply, SchedulerOp, SchedulerOutcome};

use super::protocol::Action;

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

/// Runs `action`'s driver steps on `p` at `now`, through the operation vocabulary
/// ([`SchedulerOp`], gangway-model's): the action translated, applied, its outcome read as the
/// model records it. The scheduling thread keeps its pod in `cycle` between steps; `pods` are
/// the cluster's pods. For a binding cycle the caller has set what the binder answers. `None`:
/// the action is not enabled (the step refused).
pub fn drive<P: Parts>(
    p: &mut P,
    cycle: &mut Option<InCycle>,
    pods: &impl Cast,
    action: &Action,
    now: Time,
) -> Option<Driven> {
    use SchedulerOutcome as Out;
    let mut run = |p: &mut P, op: SchedulerOp| apply(p, cycle, &op, now);
    Some(match action {
        Action::Arrive(id) => match run(p, SchedulerOp::AddPod(pods.pod(id)?.clone())) {
            Out::PodAdded(Ok(())) => Driven::Arrived,
            _ => return None,
        },
        Action::Schedule(id) => match run(p, SchedulerOp::Schedule(id.clone())) {
            Out::Placed(placed) => Driven::Placed(placed),
            _ => return None,
        },
        Action::HandBack(_) => match run(p, SchedulerOp::HandBack) {
            Out::HandedBack(_) => Driven::HandedBack,
            _ => return None,
        },
        Action::Permit(_) | Action::PermitRejected(_) => match run(p, SchedulerOp::Permit) {
            Out::Permitted(outcome) => Driven::Permitted(outcome),
            _ => return None,
        },
        Action::Record(_) => match run(p, SchedulerOp::Record) {
            Out::Recorded => Driven::Recorded,
            _ => return None,
        },
        Action::ScheduleGroup(id) => match run(p, SchedulerOp::ScheduleGroup(id.clone())) {
            Out::Committed(outcome) => Driven::Committed(outcome),
            Out::Simulated(feasible) => Driven::Simulated(feasible),
            _ => return None,
        },
        Action::Commit(_) => match run(p, SchedulerOp::Commit) {
            Out::Committed(outcome) => Driven::Committed(outcome),
            _ => return None,
        },
        Action::Deadline => {
            run(p, SchedulerOp::ExpireDeadlines);
            Driven::Timer
        }
        Action::FlushBackoff => {
            run(p, SchedulerOp::FlushBackoff);
            Driven::Timer
        }
        Action::FlushLeftover => {
            run(p, SchedulerOp::FlushLeftover);
            Driven::Timer
        }
        Action::Bind(id) => {
            let new = p.read_cache(|c| pods.bound(id, c.pod_node(id)?))?;
            let Out::Bound(outcome) = run(p, SchedulerOp::BindingCycle(id.clone())) else {
                return None;
            };
            // The informer then sees the pod bound (upstream's assigned-pod event).
            let old = pods.pod(id)?.clone();
            let Out::PodUpdated(Ok(())) = run(p, SchedulerOp::UpdatePod { old, new }) else {
                return None;
            };
            Driven::Binding(outcome)
        }
        Action::BindFails(id) | Action::Release(id) => {
            match run(p, SchedulerOp::BindingCycle(id.clone())) {
                Out::Bound(outcome) => Driven::Binding(outcome),
                _ => return None,
            }
        }
        Action::Delete(id) => match run(p, SchedulerOp::DeletePod(pods.pod(id)?.clone())) {
            Out::PodDeleted(Ok(_)) => {
                Driven::Deleted(p.read_driver(|d| d.assignment(id).is_some()))
            }
            _ => return None,
        },
        Action::UpdateGroup { group, min } => {
            let group = PodGroup::gang(group.namespace(), group.name(), *min).ok()?;
            match run(p, SchedulerOp::UpdateGroup(group)) {
                Out::GroupUpdated(Ok(())) => Driven::GroupUpdated,
                _ => return None,
            }
        }
        Action::PluginAllows { pod, plugin } => {
            let op = SchedulerOp::Allow {
                pod: pod.clone(),
                plugin: plugin.clone(),
            };
            match run(p, op) {
                Out::Allowed(decided) => Driven::PluginAllowed(decided),
                _ => return None,
            }
        }
    })
}
