//! The runner: a real [`Scheduler`] driven one op at a time in virtual time, and the checks
//! after every step. It plays only what is outside a scheduler — the API server and informer
//! (the pods' objects, a binding reported back), the binder's answers, a Permit plugin's
//! answers and decisions, and the clock — as `cli/src/differential/driver.rs` does; every
//! scheduling decision is the scheduler's own.
//!
//! The checks use the real code's own checks and plain accounting only:
//!
//! - [`Scheduler::check`]: I4 (the queue's places, the driver's jobs), I5 (node reservations),
//!   I6 (no pod assumed without a binding cycle), and — Hardened pod-group cycle — I9;
//! - `Groups::check` (I5: each group's unscheduled ∪ assumed ∪ assigned partition) and
//!   `WaitingState::check` (the waiting map's own indexes);
//! - accounting of every pod the input added, from the outcomes the scheduler delivers (its
//!   outcome channel): a live pod is somewhere — queued, waiting, in binding or bound (I4); a
//!   pod with a `Bound` outcome stays bound in the cache, and only such a pod is bound there;
//!   a pod is bound at most once (the binder sees it once); an outcome that is not final
//!   (`Unschedulable`, `Rejected`, `BindFailed`) leaves its pod back in the queue, as
//!   `PodOutcome` promises; only a deleted pod is `Dropped`, and a deleted pod is out of the
//!   queue and the waiting map, and out of the cache once its binding cycle is over (I6);
//! - I3 (Hardened), counted as `gangway check` states it: the members of a gang that pass
//!   Permit in one step — those given an allowed decision in it — number 0 or at least its min
//!   count less the members already admitted (bound, or allowed and not yet bound);
//! - at the end: virtual time runs on (bounded), every pod still waiting at Permit has a
//!   deadline within the 15-minute cap (nothing waits forever); then the scheduler is shut
//!   down, its binding cycles run, and nothing may be left waiting, in binding or assumed —
//!   in the cache or in any group (no leaked reservation).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use gangsched::checking::{self, Flaw, JobQueue};
use gangsched::queue::QueuePlace;
use gangsched::scheduler::{
    outcome_channel, BindError, CycleOutcome, Node, OutcomeSender, PodGroupScheduled, PodOutcome,
    PodPhase, SchedulerStats,
};
use gangsched::sync::{Arc, Mutex};
use gangsched::waiting::{Receiver, MAX_PERMIT_WAIT};
use gangsched::{
    Code, GroupKey, Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, PodGroup,
    PodId, Policy, Resources, Scheduler, SchedulerConfig, Status, Time,
};
use gangsched::{Taint, TaintEffect, Toleration};
use gangway_model::ops::scheduler::{SchedulerOp, SchedulerOutcome};

use super::input::{BindAnswer, Input, Op, Setup, Verdict, NODES, PLUGIN_WAITS_MS, PODS, STEPS_MS};
use super::planted::Planted;

mod checks;
mod split;
use checks::refused;

/// The namespace of every pod and group.
const NS: &str = "fz";
/// The scripted Permit plugin's name.
pub const FUZZ_PLUGIN: &str = "FuzzPermit";
/// The payload of every panic the input injects (the binder's, the plugin's); the fuzz
/// target's panic hook lets these unwind to the scheduler's `catch_unwind` instead of
/// aborting (see [`quiet_injected_panics`](super::quiet_injected_panics)).
pub const INJECTED_PANIC: &str = "gangway-fuzz: injected panic";
/// A node's memory (pods request none).
const NODE_MEMORY: u64 = 1 << 30;
/// The taint key an `UpdateNode` may set; members of `g2` tolerate it.
const DEDICATED: &str = "fz/dedicated";
/// At most this many timer instants in one `Advance`, binding cycles in one `BindAll`, and
/// rounds of one `Settle`, so that an execution stays short.
const MAX_TICKS: usize = 64;
const MAX_BINDS: usize = 64;
const MAX_SETTLE: usize = 32;
/// The run-on at the end: at most this many timer instants, within this much virtual time.
const QUIET_ROUNDS: usize = 48;
const QUIET_HORIZON: Duration = Duration::from_secs(60 * 60);
const NANO: Duration = Duration::from_nanos(1);

/// A failed check: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The op (index and op), or the end phase, in which the check failed.
    pub at: String,
    /// What the check found.
    pub what: String,
    /// The input's setup and ops, for the report.
    pub input: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}\ninput: {}", self.at, self.what, self.input)
    }
}

/// Runs `input` on a fresh scheduler, with `flaw` planted if given: the scheduler's counters
/// before its shutdown at the end, or the first failed check.
pub fn run(input: &Input, flaw: Option<Flaw>) -> Result<SchedulerStats, Failure> {
    run_with(input, flaw, None, false)
}

/// [`run`] with the judgement at rest asked of Upstream's pod-group cycle too, which the
/// target leaves unjudged (its members park for room a sibling took on the snapshot, as
/// kube-scheduler 1.36's do): for the tests that hold I7's judge to the waits it once took
/// for lost wake-ups there.
pub fn run_judging_every_cycle(input: &Input) -> Result<SchedulerStats, Failure> {
    run_with(input, None, None, true)
}

/// [`run`], and what happened, step by step: each op, what its scheduling cycles did and
/// every outcome delivered — to read a finding (`cargo test` in `fuzz/`, or a test of yours).
pub fn trace(input: &Input, flaw: Option<Flaw>) -> (Result<SchedulerStats, Failure>, Vec<String>) {
    let mut lines = Vec::new();
    let result = run_with(input, flaw, Some(&mut lines), false);
    (result, lines)
}

fn run_with(
    input: &Input,
    flaw: Option<Flaw>,
    trace: Option<&mut Vec<String>>,
    judge_every_cycle: bool,
) -> Result<SchedulerStats, Failure> {
    let mut h = Harness::new(input.setup, flaw);
    h.judge_every_cycle = judge_every_cycle;
    let mut trace = trace;
    let fail = |at: String, what: String| Failure {
        at,
        what,
        input: format!("{input:?}"),
    };
    let mut ops = input.ops.iter().enumerate().peekable();
    while let Some((i, op)) = ops.next() {
        h.trace = trace.as_mut().map(|_| Vec::new());
        // A split cycle takes the next op inside it if that is a cluster event (`split.rs`).
        let inside = ops.next_if(|(_, next)| op.splits() && next.is_cluster_event());
        let result = match inside {
            Some((_, event)) => h.split(op, event),
            None => h.apply(op),
        };
        let result = result.and_then(|()| h.verify());
        let ran = |now| match inside {
            Some((j, event)) => format!("{op:?} around op {j} {event:?} at {now}"),
            None => format!("{op:?} at {now}"),
        };
        if let (Some(lines), Some(steps)) = (trace.as_deref_mut(), h.trace.take()) {
            lines.push(format!("{i:2} {}", ran(h.now)));
            lines.extend(steps.into_iter().map(|step| format!("     {step}")));
        }
        result.map_err(|what| fail(format!("op {i} {}", ran(h.now)), what))?;
    }
    h.trace = trace.as_mut().map(|_| Vec::new());
    let result = h.finish();
    if let (Some(lines), Some(steps)) = (trace, h.trace.take()) {
        lines.push(format!("the end, at {}", h.now));
        lines.extend(steps.into_iter().map(|step| format!("     {step}")));
    }
    result.map_err(|what| fail(format!("the end, at {}", h.now), what))
}

/// What the binder and the scripted plugin answer next, and what the binder has bound.
struct Script {
    bind: BindAnswer,
    plugin: Verdict,
    bound: BTreeSet<PodId>,
    double_bind: Option<String>,
}

/// The scripted Permit plugin: answers what the current `Schedule` op says.
struct FuzzPermit(Arc<Mutex<Script>>);

impl PermitPlugin for FuzzPermit {
    fn name(&self) -> PluginName {
        PluginName::new_static(FUZZ_PLUGIN)
    }

    fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
        let verdict = self.0.lock().plugin;
        match verdict {
            Verdict::Allow => PermitVerdict::Allow,
            Verdict::Wait { timeout } => {
                let ms = PLUGIN_WAITS_MS[usize::from(timeout) % PLUGIN_WAITS_MS.len()];
                PermitVerdict::wait(Duration::from_millis(ms))
            }
            Verdict::Reject => {
                PermitVerdict::Reject(Status::unschedulable("rejected by the fuzz input"))
            }
            Verdict::Error => {
                PermitVerdict::Reject(Status::with_reason(Code::Error, "fuzz input error"))
            }
            Verdict::Panic => std::panic::panic_any(INJECTED_PANIC),
        }
    }
}

/// What the harness knows of a pod the input added.
struct Tracked {
    /// Its latest object, as the API server has it.
    object: Pod,
    /// The input deleted it.
    deleted: bool,
    /// The node of its `Bound` outcome.
    bound: Option<String>,
    /// The informer reported its binding.
    observed: bool,
}

/// What the I3 count needs of the state before a step.
#[derive(Default)]
struct View {
    /// The pods with an allowed decision waiting for their binding cycle.
    allowed: BTreeSet<PodId>,
    /// Per group, the members admitted: bound, or allowed and not yet bound.
    admitted: BTreeMap<GroupKey, usize>,
}

struct Harness {
    s: Scheduler,
    mode: Mode,
    flaw: Option<Flaw>,
    outcomes: Receiver<PodOutcome>,
    /// The outcomes of the steps the harness runs itself — binding cycles on planted parts,
    /// split cycles — which the scheduler's sink is not reached from.
    step_outcomes: Vec<PodOutcome>,
    script: Arc<Mutex<Script>>,
    now: Time,
    /// Each pod slot's current pod and how many it has had.
    slots: [(Option<PodId>, u32); PODS as usize],
    pods: BTreeMap<PodId, Tracked>,
    view: View,
    /// The scheduler was shut down (at the end): its queue takes no pod back.
    shut_down: bool,
    /// What the current op did, when a trace is asked for.
    trace: Option<Vec<String>>,
    /// Each PodGroup's `PodGroupScheduled` condition as an embedder mirrors it (written when
    /// a cycle's condition supersedes it), and the first cycle whose condition broke its shape.
    conditions: BTreeMap<GroupKey, PodGroupScheduled>,
    condition_failure: Option<String>,
    /// The pods a split cycle holds between its steps (in flight, deleted or not).
    in_cycle: BTreeSet<PodId>,
    /// A PodGroup was updated or deleted: a gang's minimum may have fallen, which the end's
    /// judgement at rest does not take on (see `Harness::at_rest`).
    groups_changed: bool,
    /// The judgement at rest asks Upstream's pod-group cycle too ([`run_judging_every_cycle`]).
    judge_every_cycle: bool,
}

impl Harness {
    fn new(setup: Setup, flaw: Option<Flaw>) -> Harness {
        let config = SchedulerConfig::default()
            .with_mode(setup.mode)
            .with_gang_cycle(setup.cycle);
        let script = Arc::new(Mutex::new(Script {
            bind: BindAnswer::Ok,
            plugin: Verdict::Allow,
            bound: BTreeSet::new(),
            double_bind: None,
        }));
        let binder = {
            let script = script.clone();
            move |pod: &Pod, node: &str| -> Result<(), BindError> {
                let answer = script.lock().bind;
                match answer {
                    BindAnswer::Ok => {
                        let mut script = script.lock();
                        if !script.bound.insert(pod.id().clone()) {
                            let again = format!("{} bound twice (again to {node})", pod.id());
                            script.double_bind.get_or_insert(again);
                        }
                        Ok(())
                    }
                    BindAnswer::Fail => Err(BindError::Failed("refused by the fuzz input".into())),
                    BindAnswer::Panic => std::panic::panic_any(INJECTED_PANIC),
                }
            }
        };
        let (sink, outcomes): (OutcomeSender, _) = outcome_channel();
        let mut builder = Scheduler::builder(config).binder(binder).outcomes(sink);
        if setup.permit_plugin {
            let plugin: Arc<dyn PermitPlugin> = Arc::new(FuzzPermit(script.clone()));
            let plugins = PermitPlugins::new([plugin]).expect("one plugin, named once");
            builder = builder.permit_plugins(plugins);
        }
        let s = builder.build();
        if setup.node_index {
            s.cache().with_mut(gangsched::checking::build_node_index);
        }
        if setup.queue_index {
            gangsched::checking::build_scheduling_queue_indexes(s.queue());
        }
        Harness {
            s,
            mode: setup.mode,
            flaw,
            outcomes,
            step_outcomes: Vec::new(),
            script,
            now: Time::ZERO,
            slots: Default::default(),
            pods: BTreeMap::new(),
            view: View::default(),
            shut_down: false,
            trace: None,
            conditions: BTreeMap::new(),
            condition_failure: None,
            in_cycle: BTreeSet::new(),
            groups_changed: false,
            judge_every_cycle: false,
        }
    }

    fn node(slot: u8, cpus: u8) -> Node {
        let name = format!("n{}", slot % NODES);
        Node::new(&name, Resources::new(u64::from(cpus) * 1_000, NODE_MEMORY))
    }

    fn group(slot: u8, min: u8) -> Option<PodGroup> {
        let name = format!("g{slot}");
        match min {
            0 => PodGroup::new(NS, &name, Policy::Basic),
            min => PodGroup::gang(NS, &name, u32::from(min)),
        }
        .ok()
    }

    /// The live pod in `slot`, if any.
    fn live(&self, slot: u8) -> Option<PodId> {
        let (id, _) = &self.slots[usize::from(slot)];
        id.clone()
            .filter(|id| self.pods.get(id).is_some_and(|t| !t.deleted))
    }

    fn apply(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::AddNode { node, cpus } => {
                let node = Harness::node(node, cpus);
                let added = self.run(SchedulerOp::AddNode(node.clone())).node_added();
                refused(added, |e| e.into_node() == node)?;
            }
            Op::DeleteNode { node } => {
                let name = format!("n{node}");
                let deleted = self.run(SchedulerOp::DeleteNode(name)).node_deleted();
                refused(deleted, |_| true)?;
            }
            Op::UpdateNode {
                node,
                cpus,
                tainted,
            } => {
                let mut node = Harness::node(node, cpus);
                if tainted {
                    node = node.with_taint(Taint::new(DEDICATED, "", TaintEffect::NoSchedule));
                }
                let updated = self
                    .run(SchedulerOp::UpdateNode(node.clone()))
                    .node_updated();
                refused(updated, |e| e.into_node() == node)?;
            }
            Op::AddGroup { group, min } => {
                if let Some(group) = Harness::group(group, min) {
                    let added = self.run(SchedulerOp::AddGroup(group.clone())).group_added();
                    refused(added, |e| e.into_group() == group)?;
                }
            }
            Op::UpdateGroup { group, min } => {
                if let Some(group) = Harness::group(group, min) {
                    self.groups_changed = true;
                    let op = SchedulerOp::UpdateGroup(group.clone());
                    let updated = self.run(op).group_updated();
                    refused(updated, |e| e.into_group() == group)?;
                }
            }
            Op::DeleteGroup { group } => {
                self.groups_changed = true;
                let key = GroupKey::new(NS, &format!("g{group}"));
                let deleted = self.run(SchedulerOp::DeleteGroup(key)).group_deleted();
                refused(deleted, |_| true)?;
            }
            Op::AddPod {
                pod,
                group,
                half_cpus,
                priority,
            } => self.add_pod(pod, group, half_cpus, priority)?,
            Op::UpdatePod { pod, priority } => {
                if let Some(id) = self.live(pod) {
                    let old = self.pods[&id].object.clone();
                    let new = old.clone().with_priority(i32::from(priority));
                    let op = SchedulerOp::UpdatePod {
                        old,
                        new: new.clone(),
                    };
                    let updated = self.run(op).pod_updated();
                    let took = updated.is_ok();
                    refused(updated, |e| e.into_pod() == new)?;
                    if took {
                        self.pods.get_mut(&id).expect("tracked").object = new;
                    }
                }
            }
            Op::DeletePod { pod } => {
                if let Some(id) = self.live(pod) {
                    let object = self.pods[&id].object.clone();
                    let deleted = self.run(SchedulerOp::DeletePod(object)).pod_deleted();
                    match deleted {
                        Ok(true) => self.pods.get_mut(&id).expect("tracked").deleted = true,
                        Ok(false) => return Err(format!("I4: deleting live pod {id}: unknown")),
                        Err(e) => return Err(format!("deleting live pod {id}: {e}")),
                    }
                }
            }
            Op::Schedule { plugin, .. } => {
                self.script.lock().plugin = plugin;
                self.schedule_one();
                self.script.lock().plugin = Verdict::Allow;
            }
            Op::Bind { answer, .. } => {
                self.script.lock().bind = answer;
                self.bind_one();
                self.script.lock().bind = BindAnswer::Ok;
            }
            Op::BindAll => self.bind_all()?,
            Op::Settle => self.settle()?,
            Op::Advance { step } => {
                let by = STEPS_MS[usize::from(step) % STEPS_MS.len()];
                self.advance(Duration::from_millis(by))?;
            }
            Op::Decide { pod, allow } => {
                if let Some(id) = self.live(pod) {
                    if allow {
                        self.s.waiting().allow(&id, FUZZ_PLUGIN);
                    } else {
                        let plugin = PluginName::new_static(FUZZ_PLUGIN);
                        self.s
                            .waiting()
                            .reject(&id, plugin, "rejected by the fuzz input");
                    }
                }
            }
            Op::Observe => self.observe(),
        }
        Ok(())
    }

    fn add_pod(&mut self, slot: u8, group: Option<u8>, half: u8, prio: u8) -> Result<(), String> {
        let now = self.now;
        if let Some(id) = self.live(slot) {
            // The informer sends a pod the scheduler knows: it must be refused.
            let object = self.pods[&id].object.clone();
            let added = self.run(SchedulerOp::AddPod(object.clone())).pod_added();
            return match added {
                Ok(()) => Err(format!("add_pod took {id}, known already, a second time")),
                refusal => refused(refusal, |e| e.into_pod() == object),
            };
        }
        let count = &mut self.slots[usize::from(slot)].1;
        let id = match *count {
            0 => format!("p{slot}"),
            n => format!("p{slot}.{n}"),
        };
        *count += 1;
        let mut pod = Pod::new(id.as_str(), NS, &id)
            .with_priority(i32::from(prio))
            .with_requests(Resources::new(u64::from(half) * 500, 0))
            .with_creation_time(now);
        if let Some(group) = group {
            pod = pod.with_group(&format!("g{group}"));
            if group == 2 {
                pod = pod.with_toleration(Toleration::exists(DEDICATED));
            }
        }
        let added = self.run(SchedulerOp::AddPod(pod.clone())).pod_added();
        let took = added.is_ok();
        refused(added, |e| e.into_pod() == pod)?;
        if took {
            let id = pod.id().clone();
            self.slots[usize::from(slot)].0 = Some(id.clone());
            let tracked = Tracked {
                object: pod,
                deleted: false,
                bound: None,
                observed: false,
            };
            self.pods.insert(id, tracked);
        }
        Ok(())
    }

    /// One scheduling cycle; `false` if no pod was active.
    fn schedule_one(&mut self) -> bool {
        let outcome = self.s.schedule_one(self.now);
        if let (Some(trace), Some(outcome)) = (&mut self.trace, &outcome) {
            trace.push(format!("cycle: {outcome:?}"));
        }
        if let Some(outcome) = &outcome {
            if let Err(failure) = self.mirror_pod_group_condition(outcome) {
                self.condition_failure.get_or_insert(failure);
            }
        }
        outcome.is_some()
    }

    /// One binding cycle, the binder answering what the script says; `false` if no decision
    /// waited for one.
    fn bind_one(&mut self) -> bool {
        if self.flaw.is_none() {
            return self.s.run_binding_cycle(self.now);
        }
        match self.run(SchedulerOp::NextBindingCycle) {
            SchedulerOutcome::Bound(outcome) => {
                self.step_outcomes
                    .extend(checking::binding_outcomes(outcome));
                true
            }
            _ => false,
        }
    }

    /// Runs `op` through the driver's operation vocabulary on the scheduler's own parts —
    /// the steps its public methods are made of — or, with a flaw planted, on those parts
    /// with the flaw planted.
    fn run(&self, op: SchedulerOp) -> SchedulerOutcome {
        // Cluster events, timers and binding cycles leave nothing in the scheduling slot
        // (`run_in`, in split.rs, keeps a split cycle's).
        self.run_in(&mut None, op)
    }

    fn bind_all(&mut self) -> Result<(), String> {
        for _ in 0..MAX_BINDS {
            if !self.bind_one() {
                break;
            }
            self.verify()?;
        }
        Ok(())
    }

    /// Scheduling and binding cycles until nothing moves (bounded), checked after each.
    fn settle(&mut self) -> Result<(), String> {
        for _ in 0..MAX_SETTLE {
            let mut moved = false;
            for _ in 0..MAX_BINDS {
                if !self.bind_one() {
                    break;
                }
                moved = true;
                self.verify()?;
            }
            if self.schedule_one() {
                moved = true;
                self.verify()?;
            }
            if !moved {
                break;
            }
        }
        Ok(())
    }

    /// The timers: permit deadlines, the backoff flush, the leftover flush (`Scheduler::tick`).
    fn tick(&mut self) {
        for timer in [
            SchedulerOp::ExpireDeadlines,
            SchedulerOp::FlushBackoff,
            SchedulerOp::FlushLeftover,
        ] {
            self.run(timer);
        }
    }

    /// Time moves on by `by`: the timers fire at each instant something is due (bounded),
    /// checked after each, and once more at the end.
    fn advance(&mut self, by: Duration) -> Result<(), String> {
        let target = self.now + by;
        for _ in 0..MAX_TICKS {
            let Some(due) = self.s.next_deadline() else {
                break;
            };
            // A deadline at `now` was applied by the last tick: never stand still.
            let at = due.max(self.now + NANO);
            if at > target {
                break;
            }
            self.now = at;
            self.tick();
            if let Some(trace) = &mut self.trace {
                trace.push(format!("timers at {at}"));
            }
            self.verify()?;
        }
        self.now = target.max(self.now);
        self.tick();
        Ok(())
    }

    /// The informer reports the bindings: each bound pod's object names its node.
    fn observe(&mut self) {
        let reports: Vec<(PodId, Pod, Pod)> = self
            .pods
            .iter()
            .filter(|(_, t)| !t.deleted && !t.observed)
            .filter_map(|(id, t)| {
                let node = t.bound.as_deref()?;
                Some((
                    id.clone(),
                    t.object.clone(),
                    t.object.clone().with_node(node),
                ))
            })
            .collect();
        for (id, old, new) in reports {
            let op = SchedulerOp::UpdatePod {
                old,
                new: new.clone(),
            };
            let updated = self.run(op).pod_updated();
            if updated.is_ok() {
                let tracked = self.pods.get_mut(&id).expect("tracked");
                tracked.object = new;
                tracked.observed = true;
            }
        }
    }
}
