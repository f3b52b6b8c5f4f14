//! The scheduler driver's operations as values ([`SchedulerOp`]: the informer's cluster
//! events, the timers, the scheduling thread's steps, a binding worker's cycle, an embedder's
//! decision) and the one function that applies them to the real driver ([`apply`]): its
//! steps (`checking::steps`), on any `Parts` — a real scheduler's own
//! (`checking::scheduler_parts`), those with a flaw planted (`checking::Planted`), or a model
//! checker's pure states. The model checker's actions (`gangway-check`), its replay on a real
//! scheduler (`gangway-tests`), the `scheduler_events` fuzz harness and the driver
//! differential translate into these.

use gangsched::checking::steps::{self, Binding, BindingOutcome, GroupVerdict, Placed, Simulation};
use gangsched::checking::symmetry::{Relabel, Renamed};
use gangsched::checking::{Flaw, GangParts, JobQueue, Parts};
use gangsched::scheduler::{
    AddGroupError, AddNodeError, AddPodError, BindError, CycleOutcome, DeleteGroupError,
    DeletePodError, Node, RemoveNodeError, UpdateGroupError, UpdateNodeError, UpdatePodError,
};
use gangsched::sync::Arc;
use gangsched::{GroupKey, PluginName, Pod, PodGroup, PodId, Time};

/// One operation of the scheduler driver, its arguments as values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerOp {
    /// A node joined (`add_node`).
    AddNode(Node),
    /// A node changed (`update_node`).
    UpdateNode(Node),
    /// A node left (`delete_node`).
    DeleteNode(String),
    /// A PodGroup object was created (`add_group`).
    AddGroup(PodGroup),
    /// A PodGroup object changed (`update_group`).
    UpdateGroup(PodGroup),
    /// A PodGroup object was deleted (`delete_group`).
    DeleteGroup(GroupKey),
    /// A pod was created (`add_pod`).
    AddPod(Pod),
    /// A pod's object changed (`update_pod`): a binding observed, say.
    UpdatePod {
        /// The object before.
        old: Pod,
        /// The object after.
        new: Pod,
    },
    /// A pod was deleted (`delete_pod`).
    DeletePod(Pod),
    /// The timer: the permit deadlines due.
    ExpireDeadlines,
    /// The timer: ended backoffs move to the active queue.
    FlushBackoff,
    /// The timer: pods parked too long are retried.
    FlushLeftover,
    /// The scheduling thread pops `pod` (the head of the queue, or one tied with it), places
    /// it, assumes and reserves it — into the cycle slot. With `Flaw::RecordsAfterPermit`
    /// planted in the parts, its assignment is left unrecorded.
    Schedule(PodId),
    /// The scheduling thread hands the pod in its slot that found no room back to the queue.
    HandBack,
    /// Permit for the reserved pod in the slot. With `Flaw::RecordsAfterPermit` planted the
    /// slot then holds the pod whose assignment is still to record.
    Permit,
    /// The assignment of the pod in the slot is recorded, after its Permit (the planted
    /// `Flaw::RecordsAfterPermit` only).
    Record,
    /// The pod-group cycle pops `pod`, gathers its gang's queueable siblings and places them
    /// all on one snapshot — into the slot.
    ScheduleGroup(PodId),
    /// The pod-group cycle commits the gang in the slot, or hands it back whole.
    Commit,
    /// A binding worker takes `pod`'s decision and runs its binding cycle (the parts' binder
    /// answers): the decisions in any order, as a model checker's workers take them.
    BindingCycle(PodId),
    /// A binding worker takes the oldest decision, as the scheduler's workers do
    /// (`run_binding_cycle`), and runs its binding cycle.
    NextBindingCycle,
    /// A binding worker takes the oldest decision and begins its binding cycle: it claims the
    /// pod's assignment, and a pod that binds is done with the queue. The cycle's end
    /// ([`EndBinding`](SchedulerOp::EndBinding)) may come later, after other operations.
    BeginNextBinding,
    /// A binding cycle begun ends, `bound` the binder's answer if the cycle binds.
    EndBinding {
        /// The cycle, as it began (boxed: it carries the pod's queue record).
        binding: Box<Binding>,
        /// The binder's answer (`None`: not asked — the pod was rejected or deleted).
        bound: Option<Result<(), BindError>>,
    },
    /// The embedder's Permit plugin `plugin` allows `pod`, which it holds.
    Allow {
        /// The pod.
        pod: PodId,
        /// The plugin.
        plugin: PluginName,
    },
}

/// What the scheduling thread holds between the steps of its cycle: one pod (the barrier's
/// cycle, [`Placed`]), a gang placed on its snapshot to commit next, or — with the planted
/// `Flaw::RecordsAfterPermit` — a pod past Permit whose assignment is recorded next.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InCycle {
    /// One pod between its steps.
    Pod(Placed),
    /// A pod group's simulation, its commit next.
    Group(Simulation),
    /// Permit ran before the assignment was recorded, which happens next.
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

/// What an operation did: the result of the steps it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerOutcome {
    /// `add_node`'s result.
    NodeAdded(Result<(), AddNodeError>),
    /// `update_node`'s result.
    NodeUpdated(Result<bool, UpdateNodeError>),
    /// `delete_node`'s result.
    NodeDeleted(Result<Vec<PodId>, RemoveNodeError>),
    /// `add_group`'s result.
    GroupAdded(Result<(), AddGroupError>),
    /// `update_group`'s result.
    GroupUpdated(Result<(), UpdateGroupError>),
    /// `delete_group`'s result.
    GroupDeleted(Result<bool, DeleteGroupError>),
    /// `add_pod`'s result.
    PodAdded(Result<(), AddPodError>),
    /// `update_pod`'s result.
    PodUpdated(Result<(), UpdatePodError>),
    /// `delete_pod`'s result.
    PodDeleted(Result<bool, DeletePodError>),
    /// The pods and the gangs whose permit deadline passed.
    DeadlinesExpired(Vec<PodId>, Vec<GroupKey>),
    /// How many pods a flush moved.
    Flushed(usize),
    /// The scheduling cycle's first step: its pod is in the slot, reserved (`Some(true)`) or
    /// without room (`Some(false)`) — or, `None`, the cycle ended (assume or reserve failed).
    Placed(Option<bool>),
    /// The pod without room went back to the queue.
    HandedBack(CycleOutcome),
    /// Permit's outcome.
    Permitted(CycleOutcome),
    /// The assignment was recorded late.
    Recorded,
    /// A pod-group cycle placed its gang on its snapshot: `true` if feasible there.
    Simulated(bool),
    /// A pod-group cycle ended before placing anything (its outcome) or committed.
    Committed(CycleOutcome),
    /// A binding cycle began: `None` if its pod was no longer in binding.
    BindingBegun(Option<Binding>),
    /// A binding cycle ran, or ended.
    Bound(BindingOutcome),
    /// An embedder's plugin allowed a pod it held: `true` if that decided it.
    Allowed(bool),
    /// The operation does not apply now: nothing to pop of that pod, nothing of that kind in
    /// the slot, no decision waiting for that pod. Nothing changed.
    NotNow,
}

impl SchedulerOutcome {
    /// The outcome's name, for a message that an operation returned another's.
    fn name(&self) -> &'static str {
        match self {
            SchedulerOutcome::NodeAdded(_) => "node added",
            SchedulerOutcome::NodeUpdated(_) => "node updated",
            SchedulerOutcome::NodeDeleted(_) => "node deleted",
            SchedulerOutcome::GroupAdded(_) => "group added",
            SchedulerOutcome::GroupUpdated(_) => "group updated",
            SchedulerOutcome::GroupDeleted(_) => "group deleted",
            SchedulerOutcome::PodAdded(_) => "pod added",
            SchedulerOutcome::PodUpdated(_) => "pod updated",
            SchedulerOutcome::PodDeleted(_) => "pod deleted",
            SchedulerOutcome::DeadlinesExpired(..) => "deadlines expired",
            SchedulerOutcome::Flushed(_) => "flushed",
            SchedulerOutcome::Placed(_) => "placed",
            SchedulerOutcome::HandedBack(_) => "handed back",
            SchedulerOutcome::Permitted(_) => "permitted",
            SchedulerOutcome::Recorded => "recorded",
            SchedulerOutcome::Simulated(_) => "simulated",
            SchedulerOutcome::Committed(_) => "committed",
            SchedulerOutcome::BindingBegun(_) => "binding begun",
            SchedulerOutcome::Bound(_) => "bound",
            SchedulerOutcome::Allowed(_) => "allowed",
            SchedulerOutcome::NotNow => "not now",
        }
    }
}

outcome_of! {
    SchedulerOutcome;
    node_added: NodeAdded(Result<(), AddNodeError>);
    node_updated: NodeUpdated(Result<bool, UpdateNodeError>);
    node_deleted: NodeDeleted(Result<Vec<PodId>, RemoveNodeError>);
    group_added: GroupAdded(Result<(), AddGroupError>);
    group_updated: GroupUpdated(Result<(), UpdateGroupError>);
    group_deleted: GroupDeleted(Result<bool, DeleteGroupError>);
    pod_added: PodAdded(Result<(), AddPodError>);
    pod_updated: PodUpdated(Result<(), UpdatePodError>);
    pod_deleted: PodDeleted(Result<bool, DeletePodError>);
    flushed: Flushed(usize);
    bound: Bound(BindingOutcome);
}

/// Applies `op` to the driver's parts `p` at `now`; the scheduling thread keeps its pod (or
/// gang) in `slot` between its steps.
pub fn apply<P: Parts>(
    p: &mut P,
    slot: &mut Option<InCycle>,
    op: &SchedulerOp,
    now: Time,
) -> SchedulerOutcome {
    use SchedulerOutcome as Out;
    match op {
        SchedulerOp::AddNode(node) => Out::NodeAdded(steps::node_added(p, node.clone(), now)),
        SchedulerOp::UpdateNode(node) => {
            Out::NodeUpdated(steps::node_updated(p, node.clone(), now))
        }
        SchedulerOp::DeleteNode(name) => Out::NodeDeleted(steps::node_deleted(p, name, now)),
        SchedulerOp::AddGroup(group) => Out::GroupAdded(steps::group_added(p, group.clone(), now)),
        SchedulerOp::UpdateGroup(group) => {
            Out::GroupUpdated(steps::group_updated(p, group.clone(), now))
        }
        SchedulerOp::DeleteGroup(key) => Out::GroupDeleted(steps::group_deleted(p, key)),
        SchedulerOp::AddPod(pod) => Out::PodAdded(steps::pod_added(p, pod.clone(), now)),
        SchedulerOp::UpdatePod { old, new } => {
            Out::PodUpdated(steps::pod_updated(p, old.clone(), new.clone(), now))
        }
        SchedulerOp::DeletePod(pod) => Out::PodDeleted(steps::pod_deleted(p, pod, now)),
        SchedulerOp::ExpireDeadlines => {
            let (pods, gangs) = steps::expire_deadlines(p, now);
            Out::DeadlinesExpired(pods, gangs)
        }
        SchedulerOp::FlushBackoff => Out::Flushed(steps::flush_backoff(p, now)),
        SchedulerOp::FlushLeftover => Out::Flushed(steps::flush_leftover(p, now)),
        SchedulerOp::Schedule(id) => {
            let Some(popped) = p.queue(|q, _| q.pop_tied(id)) else {
                return Out::NotNow;
            };
            let placed = if p.planted(Flaw::RecordsAfterPermit) {
                steps::place_and_reserve_unrecorded(p, popped, now)
            } else {
                steps::place_and_reserve(p, popped, now)
            };
            match placed {
                Ok(placed) => {
                    let reserved = !matches!(placed, Placed::Unfit { .. });
                    *slot = Some(InCycle::Pod(placed));
                    Out::Placed(Some(reserved))
                }
                Err(_) => Out::Placed(None),
            }
        }
        SchedulerOp::HandBack => {
            let Some(InCycle::Pod(Placed::Unfit { pod, status })) = slot.take() else {
                return Out::NotNow;
            };
            Out::HandedBack(steps::hand_back_unfit(p, pod, status, now))
        }
        SchedulerOp::Permit => {
            let Some(InCycle::Pod(Placed::Reserved { pod, node })) = slot.take() else {
                return Out::NotNow;
            };
            let outcome = steps::permit(p, pod.clone(), node.clone(), now);
            if p.planted(Flaw::RecordsAfterPermit) {
                *slot = Some(InCycle::Permitted { pod, node });
            }
            Out::Permitted(outcome)
        }
        SchedulerOp::Record => {
            let Some(InCycle::Permitted { pod, node }) = slot.take() else {
                return Out::NotNow;
            };
            steps::record(p, &pod, node, now);
            Out::Recorded
        }
        SchedulerOp::ScheduleGroup(id) => {
            let group = p.read_queue(|q| q.info(id).and_then(|i| i.pod().group_key().cloned()));
            let Some(group) = group else {
                return Out::NotNow;
            };
            let Some(popped) = p.queue(|q, _| q.pop_tied(id)) else {
                return Out::NotNow;
            };
            match steps::gather(p, popped, group, now) {
                Err(outcome) => Out::Committed(outcome),
                Ok(gathered) => {
                    let simulation = steps::simulate(p, gathered);
                    let feasible = simulation.verdict == GroupVerdict::Feasible;
                    *slot = Some(InCycle::Group(simulation));
                    Out::Simulated(feasible)
                }
            }
        }
        SchedulerOp::Commit => {
            let Some(InCycle::Group(simulation)) = slot.take() else {
                return Out::NotNow;
            };
            Out::Committed(steps::commit(p, simulation, now))
        }
        SchedulerOp::BindingCycle(id) => {
            // Taking a job claims its pod (`DriverState::take_job`, as `next_job` for the
            // scheduler's workers): a job whose pod cannot be claimed — not in binding, a
            // planted flaw's doing — is taken and ignored, as the workers drop it.
            let (had, job) = p.driver(|d| {
                let had = d.jobs().jobs().any(|j| j.decision.pod.id() == id);
                (had, d.take_job(id))
            });
            match (had, job) {
                (_, Some(job)) => Out::Bound(steps::binding_cycle(p, job, now)),
                (true, None) => Out::Bound(BindingOutcome::Ignored),
                (false, None) => Out::NotNow,
            }
        }
        SchedulerOp::NextBindingCycle => match p.driver(|d| d.next_job()) {
            Some(job) => Out::Bound(steps::binding_cycle(p, job, now)),
            None => Out::NotNow,
        },
        SchedulerOp::BeginNextBinding => match p.driver(|d| d.next_job()) {
            Some(job) => Out::BindingBegun(steps::begin_binding(p, job, now)),
            None => Out::NotNow,
        },
        SchedulerOp::EndBinding { binding, bound } => Out::Bound(steps::end_binding(
            p,
            (**binding).clone(),
            bound.clone(),
            now,
        )),
        SchedulerOp::Allow { pod, plugin } => {
            Out::Allowed(p.gang().allow_waiting(pod, plugin.as_str()))
        }
    }
}
