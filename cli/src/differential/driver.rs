//! A driver trace through gangway's whole [`Scheduler`] in [`Mode::Upstream`], observed as
//! `upstream/cmd/drivertrace` observes kube-scheduler's `ScheduleOne`. The runner plays only
//! the parts outside a scheduler: the API server and informer (the pods' objects, a bound
//! pod reported assigned, a condition as the failure handler writes it), the binder's
//! answers, and the clock with the queue's periodic flushes on kube-scheduler's cadence
//! (`wait.Until` every second and every 30 s from the queue's start). Every scheduling
//! decision — placement, Permit, failure routing, the move-alls — is the scheduler's own.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gangsched::checking::steps::Binding;
use gangsched::checking::{self, Flaw, Parts, Planted};
use gangsched::queue::QueuePlace;
use gangsched::scheduler::PodPhase;
use gangsched::scheduler::{
    outcome_channel, BindError, CycleOutcome, Node, PodGroupScheduled, PodOutcome,
};
use gangsched::sync::{Arc, Mutex};
use gangsched::waiting::Receiver;
use gangsched::{
    GangCycle, Mode, Pod, PodGroup, PodId, Policy, QueueConfig, Resources, Scheduler,
    SchedulerConfig, Time,
};
use gangway_model::ops::{self, scheduler::SchedulerOp, scheduler::SchedulerOutcome};

use super::driver_trace::{Condition, DriverObservation, DriverOp};
use super::permit_script::{switchable_plugins, Scripts};

const NAMESPACE: &str = "ns";

/// What a node holds besides its CPU (kube-scheduler's side gives it 64 GiB and 110 pods).
const NODE_MEMORY: u64 = 64 << 30;

/// The message of a bind the trace makes fail (the Go harness's API error).
pub const BIND_REJECTED: &str = "binding rejected by the trace";

/// The API server's answer to the bind of a pod deleted meanwhile.
fn not_found(pod: &str) -> BindError {
    BindError::Failed(format!("pods \"{pod}\" not found"))
}

/// Runs `ops` through a fresh scheduler in [`Mode::Upstream`]; one observation per step.
pub fn run(ops: &[DriverOp]) -> Vec<DriverObservation> {
    run_in(Mode::Upstream, ops)
}

/// Runs `ops` through a fresh scheduler in `mode`.
pub fn run_in(mode: Mode, ops: &[DriverOp]) -> Vec<DriverObservation> {
    let mut runner = DriverRunner::in_mode(mode);
    ops.iter().map(|op| runner.step(op)).collect()
}

/// gangway's scheduler driven one operation at a time.
pub struct DriverRunner {
    scheduler: Scheduler,
    outcomes: Receiver<PodOutcome>,
    scripts: Scripts,
    failing_binds: Arc<Mutex<BTreeSet<String>>>,
    /// The pods whose binding cycles stop before the bind (`hold_bind`), the attempts whose
    /// binding cycle started while their pod was held (kube-scheduler asks HoldBind at
    /// PreBindPreFlight, at the binding cycle's start before WaitOnPermit, and runs its PreBind
    /// only if it said Success there: a hold placed later does not stop that attempt, but a
    /// hold released and placed again while the attempt waits at Permit does, since PreBind
    /// waits on the hold in force when it runs), and the cycles stopped there, each waiting
    /// for its `release_bind`.
    held: BTreeSet<String>,
    armed: BTreeSet<String>,
    stopped: BTreeMap<String, Binding>,
    now: Time,
    /// The next instants the backoff flush and the leftover flush run.
    next_backoff_flush: Time,
    next_leftover_flush: Time,
    /// The API server's pods (their latest object) and every name the trace added.
    pods: BTreeMap<String, Pod>,
    names: BTreeSet<String>,
    /// Each pod's `PodScheduled` condition as last written.
    conditions: BTreeMap<String, Condition>,
    /// The API server's PodGroups and the `PodGroupScheduled` condition last written on each.
    groups: BTreeMap<String, PodGroup>,
    group_conditions: BTreeMap<String, PodGroupScheduled>,
    steps: usize,
    /// A bug planted in the scheduler's steps (`checking::Planted`), for the bug corpus: the
    /// differential must see the real code differ.
    flaw: Option<Flaw>,
}

impl Default for DriverRunner {
    fn default() -> Self {
        DriverRunner::new()
    }
}

impl DriverRunner {
    /// A fresh scheduler in `Mode::Upstream` with the scripted Permit plugins, at time zero.
    pub fn new() -> DriverRunner {
        DriverRunner::in_mode(Mode::Upstream)
    }

    /// The same in `mode`. A pod that names a pod group goes through the pod-group cycle, as
    /// kube-scheduler 1.36's `ScheduleOne` schedules it with `GenericWorkload` on.
    pub fn in_mode(mode: Mode) -> DriverRunner {
        // kube-scheduler's queue with the gang gates: a failed member backs off.
        let queue = QueueConfig::DEFAULT.with_group_members_back_off(true);
        let config = SchedulerConfig::default()
            .with_mode(mode)
            .with_queue(queue)
            .with_gang_cycle(GangCycle::PodGroup);
        let scripts = Scripts::default();
        let failing_binds: Arc<Mutex<BTreeSet<String>>> = Arc::default();
        let failing = failing_binds.clone();
        let binder = move |pod: &Pod, _: &str| {
            if failing.lock().remove(pod.name()) {
                Err(BindError::Failed(BIND_REJECTED.to_owned()))
            } else {
                Ok(())
            }
        };
        let (sink, outcomes) = outcome_channel();
        let scheduler = Scheduler::builder(config)
            .binder(binder)
            .permit_plugins(switchable_plugins(&scripts))
            .outcomes(sink)
            .build();
        DriverRunner {
            next_backoff_flush: Time::ZERO + config.backoff_flush_interval,
            next_leftover_flush: Time::ZERO + config.leftover_flush_interval,
            scheduler,
            outcomes,
            scripts,
            failing_binds,
            held: BTreeSet::new(),
            armed: BTreeSet::new(),
            stopped: BTreeMap::new(),
            now: Time::ZERO,
            pods: BTreeMap::new(),
            names: BTreeSet::new(),
            conditions: BTreeMap::new(),
            groups: BTreeMap::new(),
            group_conditions: BTreeMap::new(),
            steps: 0,
            flaw: None,
        }
    }

    /// This runner with `flaw` planted in its scheduler's steps: its scheduling cycles, cluster
    /// events, timers and binding cycles run them through `checking::Planted`.
    pub fn planted(mut self, flaw: Flaw) -> DriverRunner {
        self.flaw = Some(flaw);
        self
    }

    /// Applies `op`; what it saw.
    pub fn step(&mut self, op: &DriverOp) -> DriverObservation {
        self.steps += 1;
        let mut obs = DriverObservation {
            step: self.steps,
            op: op.name().to_owned(),
            ..DriverObservation::default()
        };
        let before = self.conditions.clone();
        let groups_before = self.group_conditions.clone();
        if let Err(e) = self.apply(op, &mut obs) {
            obs.error = Some(e);
        }
        self.settle(&mut obs, &before);
        for (name, condition) in &self.group_conditions {
            if groups_before.get(name) != Some(condition) {
                let condition = Condition {
                    status: condition.status_str().to_owned(),
                    reason: condition.reason.to_owned(),
                    message: condition.message.clone(),
                };
                obs.group_conditions.insert(name.clone(), condition);
            }
        }
        obs
    }

    /// The runner's time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Whether a `schedule_one` would pop a pod now.
    pub fn can_pop(&self) -> bool {
        self.scheduler.queue().snapshot().heads().next().is_some()
    }

    /// The pods the trace added and that are not deleted, and whether each is bound.
    pub fn live_pods(&self) -> impl Iterator<Item = (&str, bool)> {
        self.pods
            .iter()
            .map(|(name, pod)| (name.as_str(), pod.node().is_some()))
    }

    /// The pods whose binding cycles the trace holds (`hold_bind`, not yet released).
    pub fn held_pods(&self) -> Vec<String> {
        self.held.iter().cloned().collect()
    }

    /// The pods waiting at Permit now.
    pub fn waiting_pods(&self) -> Vec<String> {
        let waiting = self.scheduler.waiting().snapshot();
        waiting.iter().map(|w| w.id().as_str().to_owned()).collect()
    }

    fn apply(&mut self, op: &DriverOp, obs: &mut DriverObservation) -> Result<(), String> {
        let now = self.now;
        match op {
            DriverOp::Node { node, cpu_milli } => {
                let node = Node::new(node, Resources::new(*cpu_milli, NODE_MEMORY));
                self.run(SchedulerOp::AddNode(node))
                    .node_added()
                    .map_err(|e| e.to_string())?;
            }
            DriverOp::DeleteNode { node } => {
                self.run(SchedulerOp::DeleteNode(node.clone()))
                    .node_deleted()
                    .map_err(|e| e.to_string())?;
            }
            DriverOp::Group { group, min_count } => {
                let policy = match min_count {
                    Some(min_count) => Policy::Gang {
                        min_count: *min_count,
                    },
                    None => Policy::Basic,
                };
                let object = PodGroup::new(NAMESPACE, group, policy).map_err(|e| e.to_string())?;
                self.run(SchedulerOp::AddGroup(object.clone()))
                    .group_added()
                    .map_err(|e| e.to_string())?;
                self.groups.insert(group.clone(), object);
            }
            DriverOp::Add {
                pod,
                group,
                cpu_milli,
                priority,
            } => {
                if self.names.contains(pod) {
                    return Err(format!("pod {pod} exists"));
                }
                let mut object = Pod::new(pod.as_str(), NAMESPACE, pod)
                    .with_priority(*priority)
                    .with_requests(Resources::new(*cpu_milli, 0));
                if let Some(group) = group {
                    object = object.with_group(group);
                }
                self.names.insert(pod.clone());
                self.pods.insert(pod.clone(), object.clone());
                self.run(SchedulerOp::AddPod(object))
                    .pod_added()
                    .map_err(|e| e.to_string())?;
            }
            DriverOp::ScheduleOne { plugins } => {
                self.scripts.set(plugins)?;
                let s = &self.scheduler;
                let head = s.queue().snapshot().heads().next().cloned();
                let cycle = match self.flaw {
                    Some(flaw) => checking::schedule_one_with_flaw(s, flaw, now),
                    None => s.schedule_one(now),
                };
                self.scripts.clear();
                let outcome = cycle.ok_or("nothing to pop")?;
                // A pod-group cycle pops the queue's head and then its siblings.
                obs.popped = cycle_pod(&outcome)
                    .or(head.as_ref())
                    .map(|id| id.as_str().to_owned());
                // Each pod the cycle tried (a pod-group cycle's every member) starts an attempt.
                for pod in attempted(&outcome) {
                    let pod = pod.as_str().to_owned();
                    if self.held.contains(&pod) {
                        self.armed.insert(pod);
                    } else {
                        self.armed.remove(&pod);
                    }
                }
                for waiting in waiting_pods(&outcome) {
                    // kube-scheduler writes a waiting pod's `status.nominatedNodeName` as its
                    // binding cycle starts; the informer reports the update.
                    self.status_written(waiting.as_str());
                }
                if let (CycleOutcome::PodGroup { group, .. }, Some(condition)) =
                    (&outcome, outcome.pod_group_scheduled())
                {
                    self.group_status_written(group.name(), condition);
                }
            }
            DriverOp::FailBind { pod } => {
                self.failing_binds.lock().insert(pod.clone());
            }
            DriverOp::Delete { pod } => {
                let object = self
                    .pods
                    .remove(pod)
                    .ok_or_else(|| format!("pod {pod} is unknown"))?;
                self.run(SchedulerOp::DeletePod(object))
                    .pod_deleted()
                    .map_err(|e| e.to_string())?;
            }
            DriverOp::Allow { pod, plugin } => {
                let s = &self.scheduler;
                s.waiting().allow(&PodId::from(pod.as_str()), plugin);
            }
            DriverOp::Reject {
                pod,
                plugin,
                message,
            } => {
                let id = PodId::from(pod.as_str());
                let s = &self.scheduler;
                obs.decided = Some(s.waiting().reject(&id, plugin.clone(), message));
            }
            DriverOp::HoldBind { pod } => {
                if !self.names.contains(pod) {
                    return Err(format!("pod {pod} is unknown"));
                }
                if !self.held.insert(pod.clone()) {
                    return Err(format!("pod {pod} is held already"));
                }
            }
            DriverOp::ReleaseBind { pod } => {
                if !self.held.remove(pod) {
                    return Err(format!("pod {pod} is not held"));
                }
                // The attempt keeps its PreFlight answer: only its next pop resets it.
                if let Some(binding) = self.stopped.remove(pod) {
                    self.bind(binding);
                }
            }
            DriverOp::AdvanceMs { ms } => self.advance(Duration::from_millis(*ms)),
        }
        Ok(())
    }

    /// A binding cycle goes on to its end: the binder (the API server: a pod deleted
    /// meanwhile is not found) is asked if the pod was allowed, and its outcomes are taken.
    fn bind(&mut self, binding: Binding) {
        let bound = binding.binds().then(|| {
            if self.pods.contains_key(binding.pod().name()) {
                checking::scheduler_parts(&self.scheduler).bind(binding.pod(), binding.node())
            } else {
                Err(not_found(binding.pod().name()))
            }
        });
        let ended = self
            .run(SchedulerOp::EndBinding {
                binding: Box::new(binding),
                bound,
            })
            .bound();
        for outcome in checking::binding_outcomes(ended) {
            self.take_outcome(outcome);
        }
    }

    /// Runs `op` through the driver's operation vocabulary on the scheduler's own parts: the
    /// steps its public methods and its threads are made of.
    fn run(&self, op: SchedulerOp) -> SchedulerOutcome {
        let parts = checking::scheduler_parts(&self.scheduler);
        // Cluster events, timers and binding cycles leave nothing in the scheduling slot.
        let mut slot = None;
        match self.flaw {
            Some(flaw) => {
                let mut planted = Planted { parts, flaw };
                ops::scheduler::apply(&mut planted, &mut slot, &op, self.now)
            }
            None => {
                let mut parts = parts;
                ops::scheduler::apply(&mut parts, &mut slot, &op, self.now)
            }
        }
    }

    /// Time moves by `by`: at each instant something is due — a Permit deadline, the backoff
    /// flush's second, the leftover flush's 30 s — it happens, and the binding cycles its
    /// decisions start run.
    fn advance(&mut self, by: Duration) {
        let target = self.now + by;
        loop {
            let mut parts = checking::scheduler_parts(&self.scheduler);
            let deadline = checking::steps::next_permit_deadline(&mut parts);
            drop(parts);
            let next = [
                deadline,
                Some(self.next_backoff_flush),
                Some(self.next_leftover_flush),
            ]
            .into_iter()
            .flatten()
            .min()
            .expect("the flushes are always due");
            if next > target {
                break;
            }
            self.now = next;
            if deadline == Some(next) {
                self.run(SchedulerOp::ExpireDeadlines);
            }
            if self.next_backoff_flush == next {
                self.run(SchedulerOp::FlushBackoff);
                self.next_backoff_flush = next + self.scheduler.config().backoff_flush_interval;
            }
            if self.next_leftover_flush == next {
                self.run(SchedulerOp::FlushLeftover);
                self.next_leftover_flush = next + self.scheduler.config().leftover_flush_interval;
            }
            self.run_binding_cycles();
        }
        self.now = target;
    }

    /// The binding cycles that can run, run — as kube-scheduler's goroutines do before its
    /// step settles — and the informer's report of each pod they bound. A held pod's cycle
    /// stops before its bind, until its release.
    fn run_binding_cycles(&mut self) {
        self.take_outcomes();
        loop {
            let binding = match self.run(SchedulerOp::BeginNextBinding) {
                SchedulerOutcome::BindingBegun(Some(binding)) => binding,
                SchedulerOutcome::BindingBegun(None) => continue,
                _ => break,
            };
            let name = binding.pod().name().to_owned();
            if binding.binds() && self.held.contains(&name) && self.armed.contains(&name) {
                self.stopped.insert(name, binding);
            } else {
                self.bind(binding);
            }
        }
        self.take_outcomes();
    }

    /// The outcomes the scheduler delivered so far (see [`take_outcome`](Self::take_outcome)).
    fn take_outcomes(&mut self) {
        for outcome in self.outcomes.drain() {
            self.take_outcome(outcome);
        }
    }

    /// A pod's outcome: a bound pod's object gets its node and the informer reports the
    /// update; every outcome writes its pod's condition.
    fn take_outcome(&mut self, outcome: PodOutcome) {
        {
            let name = outcome.pod().name().to_owned();
            if let PodOutcome::Bound { pod, node } = &outcome {
                let old = self.pods.get(&name).cloned().unwrap_or_else(|| pod.clone());
                let bound = old.clone().with_node(node);
                self.pods.insert(name.clone(), bound.clone());
                let _ = self.run(SchedulerOp::UpdatePod { old, new: bound });
            }
            if let Some(condition) = outcome.pod_scheduled() {
                let condition = Condition {
                    status: condition.status_str().to_owned(),
                    reason: condition.reason.to_owned(),
                    message: condition.message,
                };
                // The failure handler patches the condition only when it changed.
                let changed = self.conditions.get(&name) != Some(&condition);
                self.conditions.insert(name.clone(), condition);
                if changed && !matches!(outcome, PodOutcome::Bound { .. }) {
                    self.status_written(&name);
                }
            }
        }
    }

    /// The scheduler wrote pod `name`'s status (a condition, a nominated node): the informer
    /// reports an update of the unscheduled pod, its spec unchanged.
    fn status_written(&mut self, name: &str) {
        if let Some(pod) = self.pods.get(name).filter(|p| p.node().is_none()) {
            let (old, new) = (pod.clone(), pod.clone());
            let _ = self.run(SchedulerOp::UpdatePod { old, new });
        }
    }

    /// A pod-group cycle's condition for its group: kube-scheduler patches it when it
    /// supersedes the one written (`updatePodGroupCondition`), and the informer reports the
    /// PodGroup's update.
    fn group_status_written(&mut self, name: &str, condition: PodGroupScheduled) {
        if !condition.supersedes(self.group_conditions.get(name)) {
            return;
        }
        self.group_conditions.insert(name.to_owned(), condition);
        if let Some(group) = self.groups.get(name) {
            let _ = self.run(SchedulerOp::UpdateGroup(group.clone()));
        }
    }

    /// Fills in what the step left: the binding cycles run, the places, the waiting pods, the
    /// bound pods' nodes and the conditions that changed.
    fn settle(&mut self, obs: &mut DriverObservation, before: &BTreeMap<String, Condition>) {
        self.run_binding_cycles();
        let queue = self.scheduler.queue().snapshot();
        for name in &self.names {
            let id = PodId::from(name.as_str());
            let place = match queue.place(&id) {
                Some(QueuePlace::Active(_)) => "active",
                Some(QueuePlace::Backoff(_)) => "backoff",
                Some(QueuePlace::ErrorBackoff(_)) => "error_backoff",
                Some(QueuePlace::Unschedulable)
                    if queue.info(&id).is_some_and(|i| i.gated_by().is_some()) =>
                {
                    "gated"
                }
                Some(QueuePlace::Unschedulable) => "unschedulable",
                Some(QueuePlace::InFlight) => "in_flight",
                // The API server's object, as the informer has it (a pod on a deleted node
                // stays bound until it is deleted itself).
                None if self.pods.get(name).is_some_and(|p| p.node().is_some()) => "bound",
                None if self.scheduler.cache().phase(&id) == Some(PodPhase::Assumed) => "binding",
                None => "absent",
            };
            obs.places.insert(name.clone(), place.to_owned());
        }
        for waiting in self.scheduler.waiting().snapshot() {
            let mut plugins: Vec<String> = waiting
                .pending_plugins()
                .iter()
                .map(|p| p.to_string())
                .collect();
            plugins.sort();
            obs.waiting
                .insert(waiting.id().as_str().to_owned(), plugins);
        }
        for (name, pod) in &self.pods {
            if let Some(node) = pod.node() {
                obs.nodes.insert(name.clone(), node.to_owned());
            }
        }
        for (name, condition) in &self.conditions {
            if before.get(name) != Some(condition) && self.pods.contains_key(name) {
                obs.conditions.insert(name.clone(), condition.clone());
            }
        }
    }
}

/// The pod a single pod's scheduling cycle popped.
fn cycle_pod(outcome: &CycleOutcome) -> Option<&PodId> {
    match outcome {
        CycleOutcome::Allowed { pod, .. }
        | CycleOutcome::Waiting { pod, .. }
        | CycleOutcome::Rejected { pod, .. }
        | CycleOutcome::Released { pod, .. }
        | CycleOutcome::Dropped { pod }
        | CycleOutcome::Unschedulable { pod, .. } => Some(pod),
        _ => None,
    }
}

/// The pods a scheduling cycle tried: the one it popped, or each member of a pod group.
fn attempted(outcome: &CycleOutcome) -> Vec<&PodId> {
    match outcome {
        CycleOutcome::PodGroup { members, .. } => members.iter().flat_map(attempted).collect(),
        single => cycle_pod(single).into_iter().collect(),
    }
}

/// The pods a scheduling cycle left waiting at Permit (a pod-group cycle's members too).
fn waiting_pods(outcome: &CycleOutcome) -> Vec<&PodId> {
    match outcome {
        CycleOutcome::Waiting { pod, .. } => vec![pod],
        CycleOutcome::PodGroup { members, .. } => members.iter().flat_map(waiting_pods).collect(),
        _ => Vec::new(),
    }
}

/// Each driver trace in `dir` (`driver_*.jsonl`) with the real code's observations recorded
/// beside it (`.jsonl.upstream`), by name.
pub fn recorded(dir: &std::path::Path) -> Vec<(String, Vec<DriverOp>, Vec<DriverObservation>)> {
    use super::driver_trace::{parse, parse_observations};
    let mut traces = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the traces' directory") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("driver_") && name.ends_with(".jsonl")) {
            continue;
        }
        let ops = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let upstream = std::fs::read_to_string(path.with_extension("jsonl.upstream"))
            .unwrap_or_else(|e| panic!("{name}: its recorded observations: {e}"));
        traces.push((name, ops, parse_observations(&upstream).unwrap()));
    }
    traces.sort_by(|a, b| a.0.cmp(&b.0));
    traces
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::*;

    const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../upstream/traces");

    fn recorded() -> Vec<(String, Vec<DriverOp>, Vec<DriverObservation>)> {
        super::recorded(std::path::Path::new(TRACES))
    }

    #[test]
    fn upstream_mode_drives_every_recorded_trace_as_kube_scheduler_does() {
        let traces = recorded();
        assert!(traces.len() >= 7, "{}", traces.len());
        for (name, ops, upstream) in traces {
            let outcome = compare(&ops, &upstream, &run(&ops));
            assert!(
                outcome.first.is_none(),
                "{name}: {}",
                outcome.first.unwrap()
            );
        }
    }

    #[test]
    fn the_pod_group_cycle_is_driven_as_kube_scheduler_drives_it() {
        let traces: Vec<_> = recorded()
            .into_iter()
            .filter(|(name, ..)| name.starts_with("driver_pod_group_"))
            .collect();
        assert!(traces.len() >= 10, "{}", traces.len());
        for (name, ops, upstream) in traces {
            let ours = run(&ops);
            let outcome = compare(&ops, &upstream, &ours);
            assert!(outcome.first.is_none(), "{name}: {:?}", outcome.first);
            // The real code's cycle happened: a PodGroup condition was written.
            assert!(
                upstream.iter().any(|o| !o.group_conditions.is_empty()),
                "{name}"
            );
        }
    }

    /// The pod-group differential's witness: Hardened stops a gang's cycle as soon as its
    /// quorum is out of reach and says so, where 1.36 tries every member and reports each
    /// one's own FitError.
    #[test]
    fn hardened_mode_differs_where_its_pod_group_cycle_stops_early() {
        let (name, ops, upstream) = recorded()
            .into_iter()
            .find(|(name, ..)| name == "driver_pod_group_contention.jsonl")
            .expect("the trace");
        let outcome = compare(&ops, &upstream, &run_in(Mode::Hardened, &ops));
        let first = outcome.first.expect("a difference");
        let (real, ours) = (first.upstream.unwrap(), first.gangway.unwrap());
        assert_eq!(first.step, 11, "{name}");
        assert_eq!(
            real.group_conditions["h"].message,
            "pod group is unschedulable"
        );
        assert_eq!(
            ours.group_conditions["h"].message,
            "pod group ns/h can place at most 1 of its minCount 2 pods in this cycle"
        );
    }

    /// The witness that the driver differential can fail: Hardened releases a pod rejected at
    /// Permit in its binding cycle and announces the room it held, which kube-scheduler's
    /// scheduling cycle does not.
    #[test]
    fn hardened_mode_differs_where_upstream_releases_in_the_scheduling_cycle() {
        let (name, ops, upstream) = recorded()
            .into_iter()
            .find(|(name, ..)| name == "driver_permit_reject.jsonl")
            .expect("the trace");
        let outcome = compare(&ops, &upstream, &run_in(Mode::Hardened, &ops));
        let first = outcome.first.expect("a difference");
        // p3 rejected at Permit: kube-scheduler leaves the parked p2 where it is, Hardened's
        // binding cycle announces p3's room and moves it.
        let (real, ours) = (first.upstream.unwrap(), first.gangway.unwrap());
        assert_eq!(first.step, 8, "{name}");
        assert_eq!(real.places["p2"], "unschedulable");
        assert_eq!(ours.places["p2"], "backoff");
    }
}
