//! The model's state: the real pure states of the core — groups, waiting map, node
//! reservations and the scheduling queue — plus where each pod is in the scheduler's pipeline.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use gangsched::checking::steps;
use gangsched::checking::{queue_state_with_flaw, ModelDriver, QueueFlaw};
use gangsched::gang::Groups;
use gangsched::queue::{QueueConfig, QueueState};
use gangsched::scheduler::{CacheState, Node};
use gangsched::{GangCycle, Mode, Pod, PodId, Resources, Time, WaitingState};
use gangsched::{GroupKey, PodGroup};

use super::drive::InCycle;
use super::home::Home;
use super::parts::ClusterParts;
use super::plugins::Plugins;
use super::shared::Shared;

/// One pod's resources: every pod asks for one "slot" of a node.
pub(super) const SLOT: Resources = Resources::new(1_000, 1 << 30);

/// The permit timeout of the model (upstream's 5 minutes).
pub(super) const TIMEOUT: Duration = Duration::from_secs(300);

/// Each gang as the command line's `GangSpec` (`{members, min}`).
fn gangs_as_specs<S: serde::Serializer>(gangs: &[(u32, u32)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(gangs.len()))?;
    for &(members, min) in gangs {
        seq.serialize_element(&super::dimensions::GangSpec { members, min })?;
    }
    seq.end()
}

/// What a checked cluster looks like: gangs, nodes, and which faults may happen. Serialized
/// as `gangway check --json` reports the dimensions checked (a gang as `{members, min}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ClusterConfig {
    /// The gang behaviour under check (the report gives it on its own).
    #[serde(skip)]
    pub mode: Mode,
    /// Gangs as (members, min count).
    #[serde(serialize_with = "gangs_as_specs")]
    pub gangs: Vec<(u32, u32)>,
    /// Nodes, each with room for this many pods.
    pub nodes: Vec<u32>,
    /// Pods arrive one by one (gang by gang), interleaved with everything else; otherwise
    /// every pod is there from the start.
    pub arrivals: bool,
    /// How many permit deadlines may pass (a gang that can never fit retries forever, one
    /// deadline per attempt: the budget keeps the state space finite).
    pub timeouts: u8,
    /// How many pods may be deleted.
    pub deletes: u8,
    /// How many binds may fail.
    pub bind_failures: u8,
    /// How many times the unschedulable pool's leftover flush may run.
    pub flushes: u8,
    /// How many times a PodGroup's min count may change (by one, down or up).
    pub group_updates: u8,
    /// How many times a Permit plugin beside the gang's (`Quota`, the embedder's) may reject
    /// the pod whose Permit runs — asked after the gang in Upstream mode, before it in
    /// Hardened ([`GangScheduling::permit_with`](gangsched::GangScheduling::permit_with)).
    pub permit_rejections: u8,
    /// How gangs are scheduled: the Permit barrier or the pod-group cycle.
    #[serde(serialize_with = "gang_cycle_name")]
    pub gang_cycle: GangCycle,
    /// How many pod-group cycles may hand their gang back (each retry passes a backoff, so
    /// time moves: the budget keeps the state space finite). Only the pod-group cycle uses it.
    pub retries: u8,
}

/// The gang cycle as `gangway check --gang-cycle` names it.
fn gang_cycle_name<S: serde::Serializer>(cycle: &GangCycle, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(crate::gang_cycle_name(*cycle))
}

/// One line: gangs, nodes, arrivals and budgets (what `gangway check` prints).
impl fmt::Display for ClusterConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gangs: Vec<String> = self
            .gangs
            .iter()
            .map(|(members, min)| format!("{members}/{min}"))
            .collect();
        let nodes: Vec<String> = self.nodes.iter().map(u32::to_string).collect();
        write!(
            f,
            "gangs (members/min) {}; nodes (room) {}; {}; up to {} deadlines, {} deletes, {} \
             bind failures, {} leftover flushes, {} group updates",
            gangs.join(", "),
            nodes.join(", "),
            if self.arrivals {
                "pods arrive one by one"
            } else {
                "pods there from the start"
            },
            self.timeouts,
            self.deletes,
            self.bind_failures,
            self.flushes,
            self.group_updates
        )?;
        if self.permit_rejections > 0 {
            write!(f, ", {} permit rejections", self.permit_rejections)?;
        }
        if self.gang_cycle == GangCycle::PodGroup {
            write!(f, "; pod-group cycle, up to {} retries", self.retries)?;
        }
        Ok(())
    }
}

/// Faults and timers the model may still use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Budget {
    /// Permit deadlines.
    pub timeouts: u8,
    /// Pod deletes.
    pub deletes: u8,
    /// Bind failures.
    pub bind_failures: u8,
    /// Leftover flushes of the unschedulable pool.
    pub flushes: u8,
    /// PodGroup min-count changes.
    pub group_updates: u8,
    /// Rejections by the Permit plugin beside the gang's.
    pub permit_rejections: u8,
    /// Pod-group cycles that may still hand their gang back.
    pub retries: u8,
    /// Permits at which an embedder's plugin may still turn a pod away
    /// ([`Plugins::denials`](super::Plugins::denials)).
    pub denials: u8,
}

/// Where a pod is in the scheduler's pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Not created yet.
    Absent,
    /// In the scheduling queue: active, backing off, or in the unschedulable pool (gated
    /// included).
    Pending,
    /// Popped; no node had room; not handed back to the queue yet.
    Unfit,
    /// Placed, assumed on a node and reserved in its group; Permit not run yet.
    Reserved,
    /// Popped into a pod-group cycle and placed on its snapshot only: nothing reserved, the
    /// cycle's commit next.
    Placing,
    /// Waiting at Permit.
    Waiting,
    /// Permit decided; its binding cycle has not run yet.
    Decided {
        /// Allowed (bind next) or rejected (release next).
        allowed: bool,
    },
    /// Bound.
    Bound,
    /// Deleted by the cluster while in binding: its binding cycle, still to run, releases it.
    Deleting,
    /// Deleted by the cluster.
    Deleted,
}

/// The model's state: the real `Groups`, `WaitingState`, `CacheState`, `QueueState` and the
/// driver's own state, the pod between the steps of the (serial) scheduling cycle, each pod's
/// stage as the model saw it, the abstract clock, the budgets left, and what the last step
/// broke or showed.
///
/// The core's states, the stages and the pods are [`Shared`] parts: a successor shares every
/// part a step leaves alone with its parent, and each part's hash is computed once per value.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Cluster {
    /// The group registry's pure state.
    pub groups: Shared<Groups>,
    /// The waiting map's pure state.
    pub waiting: Shared<WaitingState<()>>,
    /// Node reservations.
    pub cache: Shared<CacheState>,
    /// The scheduling queue.
    pub queue: Shared<QueueState>,
    /// The driver's state: assignments and the decisions waiting for a binding cycle.
    pub driver: Shared<ModelDriver>,
    /// The pod (or the pod group) the scheduling thread holds between two steps of its cycle.
    pub cycle: Shared<Option<InCycle>>,
    /// Each pod's stage, as the steps' results and decisions said.
    pub stages: Shared<BTreeMap<PodId, Stage>>,
    /// The pods, in arrival order of their names.
    pub pods: Shared<BTreeMap<PodId, Pod>>,
    /// Abstract time: moves only when a timer (deadline, backoff, flush) fires.
    pub now: Time,
    /// Faults and timers left.
    pub budget: Budget,
    /// Set by the step that broke gang atomicity (I3): what passed Permit alone.
    pub partial: Option<String>,
    /// Some permit deadline passed and rejected a pod.
    pub timed_out: bool,
    /// Members still waiting (holding their reservations) that were waiting when a waiting
    /// sibling was deleted: the upstream "resources held while waiting" hazard (I6).
    pub held: BTreeSet<PodId>,
    /// Set by the step in which an embedder's placement broke its contract: how
    /// ([`Plugins`](super::Plugins)).
    pub plugin_fault: Option<String>,
    /// The checker thread whose allocations the state's values live in (not part of the
    /// state: equal everywhere, hashed as nothing).
    pub home: Home,
}

/// Shares every part: a part is copied only when the clone writes to it.
impl Clone for Cluster {
    fn clone(&self) -> Cluster {
        Cluster {
            groups: self.groups.share(),
            waiting: self.waiting.share(),
            cache: self.cache.share(),
            queue: self.queue.share(),
            driver: self.driver.share(),
            cycle: self.cycle.share(),
            stages: self.stages.share(),
            pods: self.pods.share(),
            now: self.now,
            budget: self.budget,
            partial: self.partial.clone(),
            timed_out: self.timed_out,
            held: self.held.clone(),
            plugin_fault: self.plugin_fault.clone(),
            home: self.home,
        }
    }
}

impl Cluster {
    /// Every node and every gang's PodGroup created, every node empty; the pods there already
    /// unless they arrive one by one — all through the driver's own steps, with gangway's own
    /// parts.
    pub fn initial(config: &ClusterConfig) -> Cluster {
        Cluster::initial_with(config, &Plugins::gangways())
    }

    /// [`initial`](Cluster::initial) with `plugins`' parts, and their budget of denials.
    pub fn initial_with(config: &ClusterConfig, plugins: &Plugins) -> Cluster {
        Cluster::initial_planted(config, plugins, None)
    }

    /// [`initial_with`](Cluster::initial_with) on a queue with `queue_flaw` planted in its own
    /// code, if any (a witness's: [`GangProtocol::queue_flaw`](super::GangProtocol::queue_flaw)).
    pub fn initial_planted(
        config: &ClusterConfig,
        plugins: &Plugins,
        queue_flaw: Option<QueueFlaw>,
    ) -> Cluster {
        let queue = match queue_flaw {
            Some(flaw) => queue_state_with_flaw(QueueConfig::default(), flaw),
            None => QueueState::new(QueueConfig::default()),
        };
        let mut pods = BTreeMap::new();
        let mut groups = Vec::new();
        for (g, &(members, min)) in config.gangs.iter().enumerate() {
            let name = gang_name(g);
            groups.push(PodGroup::gang("ns", &name, min).expect("min count ≥ 1"));
            for m in 0..members {
                let pod = Pod::new(format!("{name}-{m}"), "ns", &format!("{name}-{m}"))
                    .with_group(&name)
                    .with_requests(SLOT);
                pods.insert(pod.id().clone(), pod);
            }
        }
        let mut cluster = Cluster {
            groups: Shared::new(Groups::new()),
            waiting: Shared::new(WaitingState::new()),
            cache: Shared::new(CacheState::new()),
            queue: Shared::new(queue),
            driver: Shared::new(ModelDriver::new()),
            cycle: Shared::new(None),
            stages: Shared::new(pods.keys().map(|id| (id.clone(), Stage::Absent)).collect()),
            pods: Shared::new(pods),
            now: Time::ZERO,
            budget: Budget {
                timeouts: config.timeouts,
                deletes: config.deletes,
                bind_failures: config.bind_failures,
                flushes: config.flushes,
                group_updates: config.group_updates,
                permit_rejections: config.permit_rejections,
                retries: config.retries,
                denials: plugins.denial_budget(),
            },
            partial: None,
            timed_out: false,
            held: BTreeSet::new(),
            plugin_fault: None,
            home: Home::here(),
        };
        let mut parts = ClusterParts::new(
            &mut cluster,
            (config.mode, config.gang_cycle),
            None,
            plugins,
        );
        for (n, &slots) in config.nodes.iter().enumerate() {
            let capacity = Resources::new(
                SLOT.cpu_millis * u64::from(slots),
                SLOT.memory_bytes * u64::from(slots),
            );
            let node = Node::new(&format!("node-{n}"), capacity);
            steps::node_added(&mut parts, node, Time::ZERO).expect("a new node");
        }
        for group in groups {
            steps::group_added(&mut parts, group, Time::ZERO).expect("a new group");
        }
        if !config.arrivals {
            while let Some(id) = cluster.next_arrival() {
                let pod = cluster.pod(&id).clone();
                let mut parts = ClusterParts::new(
                    &mut cluster,
                    (config.mode, config.gang_cycle),
                    None,
                    plugins,
                );
                steps::pod_added(&mut parts, pod, Time::ZERO).expect("each pod arrives once");
                cluster.stages.insert(id, Stage::Pending);
            }
        }
        cluster
    }

    /// Replaces each part a step wrote by an equal one this thread holds already, if any
    /// ([`Shared::intern`]).
    pub fn intern_parts(&mut self) {
        self.groups.intern();
        self.waiting.intern();
        self.cache.intern();
        self.queue.intern();
        self.driver.intern();
        self.stages.intern();
    }

    /// Whether a step broke gang atomicity (I3) or left a sibling holding its reservation for
    /// a deleted member (I6), the two upstream races. Such a state is a counterexample already
    /// and the model explores nothing past it, as a run ends at its first error: what
    /// follows a partial gang is not a behaviour to verify, and exploring it multiplies the
    /// Upstream state space (the other invariants are found on paths that break neither).
    pub fn broken(&self) -> bool {
        self.partial.is_some() || !self.held.is_empty() || self.plugin_fault.is_some()
    }

    /// The stage of `id`.
    pub fn stage(&self, id: &PodId) -> Stage {
        self.stages.get(id).copied().unwrap_or(Stage::Deleted)
    }

    /// The pod `id`.
    pub fn pod(&self, id: &PodId) -> &Pod {
        &self.pods[id]
    }

    /// The next pod to arrive, if any: pods arrive in name order.
    pub fn next_arrival(&self) -> Option<PodId> {
        self.stages
            .iter()
            .find(|(_, stage)| **stage == Stage::Absent)
            .map(|(id, _)| id.clone())
    }

    /// Members of `pod`'s gang.
    pub fn siblings<'a>(&'a self, pod: &'a Pod) -> impl Iterator<Item = &'a PodId> + 'a {
        self.pods
            .values()
            .filter(move |p| p.group() == pod.group())
            .map(Pod::id)
    }

    /// Members of the group admitted before a step: assigned, or allowed and still binding.
    pub fn admitted(&self, key: &GroupKey) -> usize {
        admitted(&self.groups, &self.stages, key)
    }
}

/// Members of group `key` admitted by `groups` and `stages`: assigned, or allowed and still
/// binding.
pub(super) fn admitted(groups: &Groups, stages: &BTreeMap<PodId, Stage>, key: &GroupKey) -> usize {
    let Some(state) = groups.get(key) else {
        return 0;
    };
    let allowed = |id: &&PodId| stages.get(*id) == Some(&Stage::Decided { allowed: true });
    let binding = state.assumed().iter().filter(allowed).count();
    state.assigned().len() + binding
}

/// The name of gang `g`: `a`, `b`, …
pub(super) fn gang_name(g: usize) -> String {
    char::from(b'a' + (g % 26) as u8).to_string()
}
