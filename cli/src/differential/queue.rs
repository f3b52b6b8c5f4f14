//! A trace through gangway's own scheduling queue (`QueueState`, the plugin profile the trace
//! chose: the scheduler's plugin set by default), observed as the Go harness observes
//! kube-scheduler's.

use gangsched::sync::atomic::{AtomicBool, Ordering};
use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::queue::{ClusterEvent, QueueConfig, QueuePlace, QueuePlugins, QueueState};
use gangsched::scheduler::SchedulerPlugins;
use gangsched::sync::Arc;
use gangsched::{
    GangScheduling, Mode, PluginName, Pod, PodGroup, PodId, Policy, Time, WaitingPods,
};
use gangway_model::ops::queue::{
    self as queue_ops, apply, PriorityRule, PureQueue, QueueOp, QueueOutcome,
};

use super::profile::{conformance_plugins, Profile};
use super::trace::{Observation, Op, Precheck};

/// Runs `ops` through a fresh queue; one observation per operation.
pub fn run(ops: &[Op], config: QueueConfig) -> Vec<Observation> {
    let mut runner = Runner::new(config);
    ops.iter().map(|op| runner.step(op)).collect()
}

/// Runs `ops` through a fresh queue as [`run`] does, but where a pop finds several pods tied
/// in the queue's order ([`QueueState::heads`]: equal priority and timestamp, or equal
/// backoff expiry) and `upstream`'s observation of that step popped one of them, takes that
/// one ([`QueueState::pop_tied`], the seam the model checker explores tie orders through).
/// kube-scheduler's heap leaves the order among equals to its layout, gangway's queue orders
/// them by pod id: either is a pop the queue's contract allows, so following the real code
/// there compares what comes after. Returns the observations and how many pops followed it to
/// another pod than gangway's own order would have taken.
pub fn run_following(
    ops: &[Op],
    config: QueueConfig,
    upstream: &[Observation],
) -> (Vec<Observation>, usize) {
    let mut runner = Runner::new(config);
    let observations = ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let popped = upstream.get(i).and_then(|o| o.popped.as_deref());
            runner.step_preferring(op, popped)
        })
        .collect();
    (observations, runner.tie_pops)
}

/// gangway's queue driven one operation at a time, with the clock and each pod's latest
/// object (what the informer's cache holds) beside it.
pub struct Runner {
    queue: QueueState,
    plugins: Box<dyn QueuePlugins>,
    /// The default profile's gang plugin, whose registry the scheduler's PreEnqueue reads: a
    /// pod naming a group joins it, the group created with the Basic policy (not a gang — the
    /// Go harness's queue runs no gang plugin; only the queue's own rule for group members is
    /// traced).
    gang: GangScheduling,
    /// The conformance profile's gate switch.
    open: Arc<AtomicBool>,
    now: Time,
    names: Vec<String>,
    objects: BTreeMap<String, Pod>,
    steps: usize,
    /// Pops that took a tied pod other than gangway's own first ([`run_following`]).
    tie_pops: usize,
}

/// The configuration a `config` op sets on top of `base`.
pub fn configured(base: QueueConfig, op: &Op) -> QueueConfig {
    let Op::Config {
        initial_backoff_ms,
        max_backoff_ms,
        max_in_unschedulable_ms,
        pop_from_backoff,
        gang_gates,
        wildcards_move_gated,
        ..
    } = op
    else {
        return base;
    };
    let mut config = base;
    if let Some(ms) = initial_backoff_ms {
        config.initial_backoff = Duration::from_millis(*ms);
    }
    if let Some(ms) = max_backoff_ms {
        config.max_backoff = Duration::from_millis(*ms);
    }
    if let Some(ms) = max_in_unschedulable_ms {
        config.max_in_unschedulable = Duration::from_millis(*ms);
    }
    // SchedulerPopFromBackoffQ brings the 1 s ordering window; off, v1.36.3 truncates nothing
    // but still keeps a backoff ending now (QueueConfig::POP_FROM_BACKOFF_OFF). A field the
    // trace leaves out is the runner's own setting (1.36's, unless a flag like --before-1-33
    // says otherwise).
    let (pop, window) = match pop_from_backoff {
        Some(true) => (true, QueueConfig::DEFAULT.ordering_window),
        Some(false) => (false, QueueConfig::POP_FROM_BACKOFF_OFF.ordering_window),
        None => (base.pop_from_backoff, base.ordering_window),
    };
    config
        .with_group_members_back_off(gang_gates.unwrap_or(base.group_members_back_off))
        .with_wildcards_move_gated(wildcards_move_gated.unwrap_or(base.wildcards_move_gated))
        .with_pop_from_backoff(pop)
        .with_ordering_window(window)
}

impl Runner {
    /// `pod` joins its group in the gang plugin's registry, the group created with the Basic
    /// policy if it is new.
    fn join_basic_group(gang: &GangScheduling, pod: &Pod) -> Result<(), String> {
        let (Some(key), Some(name)) = (pod.group_key(), pod.group()) else {
            return Ok(());
        };
        if gang.registry().state(key).is_none() {
            let group =
                PodGroup::new(pod.namespace(), name, Policy::Basic).map_err(|e| e.to_string())?;
            gang.on_group_added(group).map_err(|e| e.to_string())?;
        }
        gang.on_pod_added(pod.clone(), false)
            .map_err(|e| e.to_string())
    }

    /// A fresh queue configured as `config`, with the default profile.
    pub fn new(config: QueueConfig) -> Runner {
        let gang = GangScheduling::new(Mode::Upstream, WaitingPods::new());
        Runner {
            queue: QueueState::new(config),
            plugins: Box::new(SchedulerPlugins::new(gang.registry().clone())),
            gang,
            open: Arc::new(AtomicBool::new(false)),
            now: Time::ZERO,
            names: Vec::new(),
            objects: BTreeMap::new(),
            steps: 0,
            tie_pops: 0,
        }
    }

    /// Where `pod` is now.
    pub fn place(&self, pod: &str) -> Option<QueuePlace> {
        self.queue.place(&PodId::from(pod))
    }

    /// A `config` op: a fresh queue, configured and with the profile it names.
    fn configure(&mut self, op: &Op) -> Result<(), String> {
        let Op::Config { profile, .. } = op else {
            unreachable!("a config op")
        };
        if self.steps > 0 {
            return Err("config must come first".into());
        }
        let config = configured(*self.queue.config(), op);
        self.queue = QueueState::new(config);
        self.plugins = match Profile::named(profile.as_deref())? {
            Profile::Default => Box::new(SchedulerPlugins::new(self.gang.registry().clone())),
            Profile::Conformance => Box::new(conformance_plugins(self.open.clone())),
            Profile::Lockstep => Box::new(gangway_model::queue::plugins()),
        };
        Ok(())
    }

    /// Applies `op`; what it saw.
    pub fn step(&mut self, op: &Op) -> Observation {
        self.step_preferring(op, None)
    }

    /// Applies `op` as [`step`](Self::step) does, but a pop takes `prefer` if it is one of the
    /// pods tied at the head ([`run_following`]).
    pub fn step_preferring(&mut self, op: &Op, prefer: Option<&str>) -> Observation {
        let mut popped = None;
        let mut error = None;
        if let Op::Config { .. } = op {
            error = self.configure(op).err();
        }
        if let Some(queue_op) = self.translate(op, prefer, &mut error) {
            let mut target = PureQueue {
                state: &mut self.queue,
                plugins: &*self.plugins,
            };
            let outcome = apply(&mut target, &mut self.now, &queue_op);
            match outcome {
                QueueOutcome::Popped(taken) => popped = taken.map(|p| p.info.id().to_string()),
                QueueOutcome::Added(Err(e)) | QueueOutcome::HandedBack(Err(e)) => {
                    error = Some(e.to_string())
                }
                QueueOutcome::HandedBackOwn(Err(e)) => error = Some(e.to_string()),
                QueueOutcome::Moved {
                    asked: Some(pod), ..
                } => error = Some(format!("precheck called for {pod}")),
                _ => {}
            }
        }
        self.steps += 1;
        let places = self
            .names
            .iter()
            .map(|name| (name.clone(), self.place_name(name).to_owned()))
            .collect::<BTreeMap<_, _>>();
        Observation {
            step: self.steps,
            op: op.name().to_owned(),
            popped,
            places,
            error,
        }
    }

    /// `op` in the operation vocabulary (`None`: it does not touch the queue), with what it
    /// does beside the queue: a pod's latest object kept (the informer's cache), a pod naming
    /// a group joined to it in the gang plugin's registry, the gate switched. `error` gets what
    /// went wrong before the queue is asked.
    fn translate(
        &mut self,
        op: &Op,
        prefer: Option<&str>,
        error: &mut Option<String>,
    ) -> Option<QueueOp> {
        let queue = &self.queue;
        Some(match op {
            Op::Config { .. } => return None,
            Op::Gate { open } => {
                self.open.store(*open, Ordering::SeqCst);
                return None;
            }
            Op::Add {
                pod,
                priority,
                group,
            } => {
                if !self.names.contains(pod) {
                    self.names.push(pod.clone());
                }
                let object = Pod::new(pod.as_str(), "ns", pod).with_priority(*priority);
                let object = match group {
                    Some(group) => {
                        let object = object.with_group(group);
                        if let Err(e) = Self::join_basic_group(&self.gang, &object) {
                            *error = Some(e);
                        }
                        object
                    }
                    None => object,
                };
                self.objects.insert(pod.clone(), object.clone());
                QueueOp::Add(object)
            }
            Op::Update { pod, priority } => {
                // A pod the queue does not know is added by the update, in both queues.
                let old = self
                    .objects
                    .get(pod)
                    .cloned()
                    .unwrap_or_else(|| Pod::new(pod.as_str(), "ns", pod));
                if !self.names.contains(pod) {
                    self.names.push(pod.clone());
                }
                let new = old.clone().with_priority(*priority);
                self.objects.insert(pod.clone(), new.clone());
                QueueOp::Update { old, new }
            }
            Op::Pop => {
                let own = queue.heads().next().cloned();
                let tied = prefer
                    .map(PodId::from)
                    .filter(|p| own.as_ref() != Some(p) && queue.heads().any(|h| h == p));
                if tied.is_some() {
                    self.tie_pops += 1;
                }
                QueueOp::Pop { prefer: tied }
            }
            Op::Unschedulable {
                pod,
                plugins: by,
                pending,
            } => {
                let id = PodId::from(pod.as_str());
                match queue.info(&id).cloned() {
                    // The queue's own record (its latest object), rejected and pending as
                    // the attempt said.
                    Some(info) if queue.place(&id) == Some(QueuePlace::InFlight) => {
                        let info = by.iter().fold(info, |i, p| i.rejected_by(p.clone()));
                        let info = pending.iter().fold(info, |i, p| i.pending_on(p.clone()));
                        QueueOp::HandBack(info)
                    }
                    _ => QueueOp::HandBackOwn {
                        pod: id,
                        rejector: by.first().map(|p| PluginName::from(p.clone())),
                    },
                }
            }
            Op::Error { pod } => QueueOp::HandBackOwn {
                pod: PodId::from(pod.as_str()),
                rejector: None,
            },
            Op::Done { pod } => QueueOp::Done(PodId::from(pod.as_str())),
            Op::MoveAll {
                event,
                node,
                pod,
                priority,
                precheck,
                min,
                exclude,
            } => match cluster_event(event, node.as_deref(), pod.as_deref(), *priority) {
                Some(event) => QueueOp::MoveAll {
                    event,
                    precheck: precheck_of(*precheck, min.unwrap_or(0), exclude.as_deref()),
                },
                None => {
                    *error = Some(format!("unknown event {event:?}"));
                    return None;
                }
            },
            Op::Activate { pods } => {
                QueueOp::Activate(pods.iter().map(|p| PodId::from(p.as_str())).collect())
            }
            Op::Delete { pod } => {
                // The informer's delete reaches the gang plugin too: the pod leaves its
                // group, so a pod of that name added later joins afresh.
                if let Some(object) = self.objects.remove(pod) {
                    self.gang.on_pod_deleted(&object);
                }
                QueueOp::Delete(PodId::from(pod.as_str()))
            }
            Op::AdvanceMs { ms } => QueueOp::Advance(Duration::from_millis(*ms)),
            Op::AdvanceNs { ns } => QueueOp::Advance(Duration::from_nanos(*ns)),
            Op::FlushBackoff => QueueOp::FlushBackoff,
            Op::FlushLeftover => QueueOp::FlushLeftover,
            Op::Close => QueueOp::Close,
        })
    }

    /// The trace's name of `pod`'s place.
    fn place_name(&self, pod: &str) -> &'static str {
        let id = PodId::from(pod);
        match self.queue.place(&id) {
            Some(QueuePlace::Active(_)) => "active",
            Some(QueuePlace::Backoff(_)) => "backoff",
            Some(QueuePlace::ErrorBackoff(_)) => "error_backoff",
            Some(QueuePlace::Unschedulable)
                if self.queue.info(&id).is_some_and(|i| i.gated_by().is_some()) =>
            {
                "gated"
            }
            Some(QueuePlace::Unschedulable) => "unschedulable",
            Some(QueuePlace::InFlight) => "in_flight",
            None => "absent",
        }
    }
}

/// The trace's precheck (`precheck`, `min`, `exclude`) in the operation vocabulary.
fn precheck_of(precheck: Option<Precheck>, min: i32, exclude: Option<&str>) -> queue_ops::Precheck {
    let rule = match precheck {
        None | Some(Precheck::All) => None,
        Some(Precheck::MinPriority) => Some(PriorityRule::AtLeast(min)),
        Some(Precheck::EvenAtLeast) => Some(PriorityRule::EvenAtLeast(min)),
        Some(Precheck::EvenNegative) => Some(PriorityRule::EvenNegative),
        Some(Precheck::Never) => Some(PriorityRule::Never),
    };
    queue_ops::Precheck {
        rule,
        exclude: exclude.map(PodId::from),
    }
}

/// The cluster event a trace names, on the node `node` (default `node`) or the pod `pod`
/// (default `assigned`; an `UnscheduledPodUpdate` raises its priority from 0 to `priority`),
/// as `upstream/cmd/queuetrace`'s `eventObjects` builds it.
fn cluster_event(
    name: &str,
    node: Option<&str>,
    pod: Option<&str>,
    priority: Option<i32>,
) -> Option<ClusterEvent> {
    let node = node.unwrap_or("node");
    let pod = Pod::new(pod.unwrap_or("assigned"), "ns", pod.unwrap_or("assigned"));
    let group = |min: Option<u32>| {
        let group = match min {
            None => PodGroup::new("ns", "pg", Policy::Basic),
            Some(min) => PodGroup::gang("ns", "pg", min),
        };
        group.expect("valid")
    };
    Some(match name {
        "NodeAdd" => ClusterEvent::NodeAdd(node.into()),
        "NodeUpdate" => ClusterEvent::NodeUpdate(node.into()),
        "AssignedPodDelete" => ClusterEvent::AssignedPodDelete(pod),
        "AssignedPodAdd" => ClusterEvent::AssignedPodAdd(pod),
        "UnscheduledPodAdd" => ClusterEvent::UnscheduledPodAdd(pod),
        "UnscheduledPodUpdate" => ClusterEvent::UnscheduledPodUpdate {
            new: pod.clone().with_priority(priority.unwrap_or(0)),
            old: pod,
        },
        "PodGroupAdd" => ClusterEvent::PodGroupAdd(group(None)),
        "PodGroupUpdate" => ClusterEvent::PodGroupUpdate {
            old: group(Some(3)),
            new: group(Some(2)),
        },
        "UnschedulableTimeout" => ClusterEvent::UnschedulableTimeout,
        "ForceActivate" => ClusterEvent::ForceActivate,
        "BackoffComplete" => ClusterEvent::BackoffComplete,
        _ => return None,
    })
}
