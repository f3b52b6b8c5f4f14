//! The gang and queue protocol as a stateright model: each action is one critical section the
//! concurrent core runs — the core's own driver step, run on the real pure states
//! (`parts.rs`); `steps.rs` says which actions are enabled.

use gangsched::checking::steps::Placed;
use gangsched::sync::atomic::{AtomicBool, Ordering};
use gangsched::sync::Arc;
use gangsched::GroupKey;
use gangsched::{
    GangCycle, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, PodId, Time,
};
use stateright::{Model, Property};

use super::cluster::{Cluster, ClusterConfig};
use super::drive::InCycle;
use super::home::at_home;
use super::plugins::Plugins;
use super::properties::{
    accounting, conservation, held_for_lost_member, hold_and_wait, lost_event, stuck_gang,
};
use super::steps::Flaw;
use gangsched::checking::{GangFlaw, QueueFlaw};

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
    /// Scheduler thread: the assignment recorded after Permit — only with the planted
    /// [`Flaw::RecordsAfterPermit`].
    Record(PodId),
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
    /// Scheduling thread: Permit for the reserved pod, and the Permit plugin beside the gang's
    /// rejects it.
    PermitRejected(PodId),
    /// Binding worker: the rejected pod (Hardened: with its rejected siblings) is unreserved,
    /// forgotten and requeued — or, deleted meanwhile, released for good. (Upstream releases a
    /// pod rejected by Permit itself in the Permit step.)
    Release(PodId),
    /// Cluster: the pod is deleted.
    Delete(PodId),
    /// Scheduler thread, pod-group cycle: pop the head of the active queue (this pod), take
    /// its gang's queueable siblings into flight with it, and place them all on one snapshot
    /// of the cache — nothing reserved.
    ScheduleGroup(PodId),
    /// Scheduler thread, pod-group cycle: commit the gang placed on the snapshot (this pod's):
    /// assume, reserve and admit the placed members, or hand every member back.
    Commit(PodId),
    /// Informer: the PodGroup's min count changes to `min`.
    UpdateGroup {
        /// The PodGroup.
        group: GroupKey,
        /// Its new min count.
        min: u32,
    },
    /// The embedder: its Permit plugin `plugin`, which holds the pod at Permit, allows it
    /// (through the waiting map, as an embedder's plugin decides later).
    PluginAllows {
        /// The pod.
        pod: PodId,
        /// The plugin.
        plugin: PluginName,
    },
}

impl Action {
    /// The thread that runs it in production: `"informer"`, `"embedder"` (its own thread,
    /// deciding for its plugin through the waiting map), `"scheduler"`, `"timer"` or
    /// `"binder"`.
    pub fn thread(&self) -> &'static str {
        match self {
            Action::Arrive(_) | Action::Delete(_) | Action::UpdateGroup { .. } => "informer",
            Action::PluginAllows { .. } => "embedder",
            Action::Schedule(_)
            | Action::HandBack(_)
            | Action::Permit(_)
            | Action::PermitRejected(_)
            | Action::Record(_)
            | Action::ScheduleGroup(_)
            | Action::Commit(_) => "scheduler",
            Action::Deadline | Action::FlushBackoff | Action::FlushLeftover => "timer",
            Action::Bind(_) | Action::BindFails(_) | Action::Release(_) => "binder",
        }
    }
}

/// The model: a cluster configuration; its states are [`Cluster`]s.
#[derive(Clone, Debug)]
pub struct GangProtocol {
    /// What is checked.
    pub config: ClusterConfig,
    /// A deliberate bug, for witnesses: the checker must find what it breaks.
    pub flaw: Option<Flaw>,
    /// A deliberate bug in the gang plugin's operations, for witnesses (the bug corpus's).
    pub gang_flaw: Option<GangFlaw>,
    /// A deliberate bug in the scheduling queue's own code, for witnesses: the model's queue
    /// is built with it planted (`checking::queue_state_with_flaw`).
    pub queue_flaw: Option<QueueFlaw>,
    /// Explore every order of interchangeable pods: of the pods tied at the head of the queue,
    /// any member of the first one's gang may pop (the core pops the smallest name, whose
    /// gang is the first tied gang; upstream's heap breaks ties arbitrarily), and a gang's
    /// members arrive in any order. The transitions then do not depend on members' names,
    /// which symmetry reduction needs ([`Search::Symmetric`](super::Search)); every path of the
    /// exact model is still a path of this one.
    pub symmetric: bool,
    /// Check I9 with the Permit barrier too: its witness (the pod-group cycle always checks
    /// it).
    pub hold_and_wait: bool,
    /// The placement and the Permit plugins the model runs: gangway's own by default, or an
    /// embedder's ([`Plugins`]).
    pub plugins: Plugins,
    /// Hash-cons each successor's parts ([`Cluster::intern_parts`]): what a breadth-first
    /// frontier needs to fit in memory, and only a cost to a depth-first walk, which keeps no
    /// frontier.
    pub intern: bool,
}

impl GangProtocol {
    /// The exact model of `config` (the core's own tie order), with no planted bug.
    pub fn new(config: ClusterConfig) -> GangProtocol {
        GangProtocol {
            config,
            flaw: None,
            gang_flaw: None,
            queue_flaw: None,
            symmetric: false,
            hold_and_wait: false,
            plugins: Plugins::gangways(),
            intern: true,
        }
    }
}

impl Model for GangProtocol {
    type State = Cluster;
    type Action = Action;

    fn init_states(&self) -> Vec<Cluster> {
        vec![Cluster::initial_planted(
            &self.config,
            &self.plugins,
            self.queue_flaw,
        )]
    }

    fn actions(&self, s: &Cluster, actions: &mut Vec<Action>) {
        self.enabled(s, actions);
    }

    fn next_state(&self, s: &Cluster, action: Action) -> Option<Cluster> {
        at_home(s, action, |s, action| self.step(s, action))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        protocol_properties(self)
    }
}

impl AsRef<GangProtocol> for GangProtocol {
    fn as_ref(&self) -> &GangProtocol {
        self
    }
}

/// I3–I8 and progress without timeouts (`always`) and the vacuity guards (`sometimes`), for
/// [`GangProtocol`] or a model that wraps it (the explorer's
/// [`NamedActions`](super::NamedActions)); with the pod-group cycle (or
/// [`GangProtocol::hold_and_wait`] asked of the barrier, its witness) also I9; with an
/// embedder's placement, P1 (its contract).
pub(super) fn protocol_properties<M>(model: &GangProtocol) -> Vec<Property<M>>
where
    M: Model<State = Cluster> + AsRef<GangProtocol>,
{
    let mut properties = core_properties();
    if model.config.gang_cycle == GangCycle::PodGroup {
        // Nothing waits at Permit in the Hardened pod-group cycle: its failure path is a gang
        // handed back whole, the guard in the deadline's place.
        properties.retain(|p| p.name != "a permit deadline rejects a pod");
        properties.push(Property::sometimes(
            "a gang goes back whole",
            |m: &M, s: &Cluster| s.budget.retries < m.as_ref().config.retries,
        ));
    }
    if !model.plugins.are_gangways() {
        properties.push(Property::always(PLACEMENT, |_, s: &Cluster| {
            s.plugin_fault.is_none()
        }));
    }
    if model.checks_hold_and_wait() {
        properties.push(Property::always(I9, |_, s: &Cluster| {
            hold_and_wait(s).is_none()
        }));
    }
    properties.push(Property::always(PROGRESS, |m: &M, s: &Cluster| {
        m.as_ref().waits_for_a_timeout(s).is_none()
    }));
    properties
}

/// I9's property name.
pub const I9: &str = "I9 no hold-and-wait";

/// The name of the property that an embedder's placement keeps its contract ([`Plugins`]).
pub const PLACEMENT: &str = "P1 the placement keeps its contract";

/// The name of the property that a gang with room binds without a timeout: neither a permit
/// deadline nor the leftover flush (`timeliness.rs`).
pub const PROGRESS: &str = "progress without timeouts";

/// I3–I8 and the vacuity guards.
fn core_properties<M>() -> Vec<Property<M>>
where
    M: Model<State = Cluster> + AsRef<GangProtocol>,
{
    vec![
        Property::always("I3 gang atomicity", |_, s: &Cluster| s.partial.is_none()),
        Property::always("I4 conservation", |_, s: &Cluster| conservation(s).is_ok()),
        Property::always("I5 accounting", |m: &M, s: &Cluster| {
            accounting(s, m.as_ref().config.mode).is_ok()
        }),
        Property::always(
            "I6 no reservation held for a lost gang",
            |_, s: &Cluster| held_for_lost_member(s).is_none(),
        ),
        Property::always("I7 no lost event", |m: &M, s: &Cluster| {
            let model = m.as_ref();
            let by_group = model.config.gang_cycle == GangCycle::PodGroup;
            lost_event(s, by_group, &model.plugins, |p| model.placements(p)).is_none()
        }),
        Property::always("I8 no stuck gang", |m: &M, s: &Cluster| {
            m.as_ref().stuck(s).is_none()
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

impl GangProtocol {
    /// Whether I9 is checked: with the pod-group cycle, or asked of the barrier
    /// ([`hold_and_wait`](Self::hold_and_wait)).
    pub fn checks_hold_and_wait(&self) -> bool {
        self.config.gang_cycle == GangCycle::PodGroup || self.hold_and_wait
    }

    /// I8 on `s`: when no action is enabled and no permit deadline is pending (a pending one
    /// would pass, budget or not, and release its gang), a gang that is neither bound, nor
    /// lost a member, nor settled back in the queue is stuck. A state that already broke I3 or
    /// I6 ends its path (see [`Cluster::broken`]) and is not also called stuck.
    pub fn stuck(&self, s: &Cluster) -> Option<String> {
        if s.broken() || self.next_deadline(s).is_some() || self.permit_past_budget(s) {
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

    /// Whether `plugin` is one the placement names when it turns a pod away: not the gang's,
    /// the embedder's Permit plugins' or the model's quota.
    pub fn placements(&self, plugin: &PluginName) -> bool {
        self.plugins.is_placements(plugin) && *plugin != QUOTA[0]
    }

    /// Whether the scheduling thread holds a reserved pod whose Permit an embedder's plugin
    /// would deny with no denial left: the budget ends the path there (see [`Plugins`]).
    pub fn permit_past_budget(&self, s: &Cluster) -> bool {
        s.budget.denials == 0 && self.permit_denied(s).is_some()
    }

    /// The reserved pod in the scheduling thread's hands, if an embedder's plugin would deny
    /// it at Permit.
    pub(super) fn permit_denied<'s>(&self, s: &'s Cluster) -> Option<&'s PodId> {
        if self.plugins.permit_names().is_empty() {
            return None;
        }
        match &*s.cycle {
            Some(InCycle::Pod(Placed::Reserved { pod, node })) => {
                self.plugins.denies(pod, node).then(|| pod.id())
            }
            _ => None,
        }
    }

    /// The earliest deadline that can pass: a waiting pod's own (Upstream), a live gang
    /// attempt's or an admitted pod-group gang's binding deadline (Hardened).
    pub fn next_deadline(&self, s: &Cluster) -> Option<Time> {
        [
            s.waiting.next_deadline(),
            s.groups.next_deadline(),
            s.driver.next_binding_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

/// The Permit plugin beside the gang's that `--permit-rejections` lets reject (an embedder's
/// quota): it rejects while its switch is on, and allows otherwise. The model turns it on for
/// an [`Action::PermitRejected`] step; a replay of a model path on a real scheduler does the
/// same with its own.
pub struct Quota {
    rejecting: Arc<AtomicBool>,
}

impl Quota {
    /// A quota that rejects while `rejecting` is set.
    pub fn new(rejecting: Arc<AtomicBool>) -> Quota {
        Quota { rejecting }
    }

    /// As the one plugin beside the gang's.
    pub fn plugins(self) -> PermitPlugins {
        PermitPlugins::new([Arc::new(self) as Arc<dyn PermitPlugin>])
            .expect("one plugin, not named as the gang's")
    }
}

impl PermitPlugin for Quota {
    fn name(&self) -> PluginName {
        QUOTA[0].clone()
    }

    fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
        if self.rejecting.load(Ordering::SeqCst) {
            PermitVerdict::reject("over quota")
        } else {
            PermitVerdict::Allow
        }
    }
}

/// The quota's name, as the queue knows it: a plugin with no queueing hints.
pub(super) static QUOTA: [PluginName; 1] = [PluginName::new_static("Quota")];

pub(super) fn quota_rejects() -> PermitPlugins {
    Quota::new(Arc::new(AtomicBool::new(true))).plugins()
}
