//! A trace through gangway's own scheduling queue (`QueueState`, the scheduler's plugin set),
//! observed as the Go harness observes kube-scheduler's.

use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::queue::{ClusterEvent, QueueConfig, QueuePlace, QueueState};
use gangsched::scheduler::SchedulerPlugins;
use gangsched::{GroupRegistry, PluginName, Pod, PodId, Time};

use super::trace::{Observation, Op};

/// Runs `ops` through a fresh queue; one observation per operation.
pub fn run(ops: &[Op], config: QueueConfig) -> Vec<Observation> {
    let mut runner = Runner::new(config);
    ops.iter().map(|op| runner.step(op)).collect()
}

/// gangway's queue driven one operation at a time, with the clock and each pod's latest
/// object (what the informer's cache holds) beside it.
pub struct Runner {
    queue: QueueState,
    plugins: SchedulerPlugins<GroupRegistry>,
    now: Time,
    names: Vec<String>,
    objects: BTreeMap<String, Pod>,
    steps: usize,
}

impl Runner {
    /// A fresh queue configured as `config`.
    pub fn new(config: QueueConfig) -> Runner {
        Runner {
            queue: QueueState::new(config),
            plugins: SchedulerPlugins::new(GroupRegistry::new()),
            now: Time::ZERO,
            names: Vec::new(),
            objects: BTreeMap::new(),
            steps: 0,
        }
    }

    /// Where `pod` is now.
    pub fn place(&self, pod: &str) -> Option<QueuePlace> {
        self.queue.place(&PodId::from(pod))
    }

    /// Applies `op`; what it saw.
    pub fn step(&mut self, op: &Op) -> Observation {
        let (queue, plugins, now) = (&mut self.queue, &self.plugins, self.now);
        let mut popped = None;
        let mut error = None;
        match op {
            Op::Add { pod, priority } => {
                if !self.names.contains(pod) {
                    self.names.push(pod.clone());
                }
                let object = Pod::new(pod.as_str(), "ns", pod).with_priority(*priority);
                self.objects.insert(pod.clone(), object.clone());
                if let Err(e) = queue.add(object, now, plugins) {
                    error = Some(e.to_string());
                }
            }
            Op::Update { pod, priority } => match self.objects.get(pod).cloned() {
                Some(old) => {
                    let new = old.clone().with_priority(*priority);
                    self.objects.insert(pod.clone(), new.clone());
                    queue.update(old, new, now, plugins);
                }
                None => error = Some(format!("pod {pod} is unknown")),
            },
            Op::Pop => popped = queue.pop().map(|p| p.info.id().to_string()),
            Op::Unschedulable { pod, plugins: by } => {
                let rejector = by.first().map(|p| PluginName::from(p.clone()));
                if let Err(e) = queue.hand_back(&PodId::from(pod.as_str()), rejector, now, plugins)
                {
                    error = Some(e.to_string());
                }
            }
            Op::Error { pod } => {
                if let Err(e) = queue.hand_back(&PodId::from(pod.as_str()), None, now, plugins) {
                    error = Some(e.to_string());
                }
            }
            Op::Done { pod } => {
                queue.done(&PodId::from(pod.as_str()));
            }
            Op::MoveAll { event } => match cluster_event(event) {
                Some(event) => {
                    queue.move_all_to_active_or_backoff(event, None, now, plugins);
                }
                None => error = Some(format!("unknown event {event:?}")),
            },
            Op::Activate { pods } => {
                let ids: Vec<PodId> = pods.iter().map(|p| PodId::from(p.as_str())).collect();
                queue.activate(&ids, now, plugins);
            }
            Op::Delete { pod } => {
                self.objects.remove(pod);
                queue.delete(&PodId::from(pod.as_str()));
            }
            Op::AdvanceMs { ms } => self.now += Duration::from_millis(*ms),
            Op::FlushBackoff => {
                queue.flush_backoff_completed(now, plugins);
            }
            Op::FlushLeftover => {
                queue.flush_unschedulable_leftover(now, plugins);
            }
            Op::Close => queue.close(),
        }
        self.steps += 1;
        let places = self
            .names
            .iter()
            .map(|name| (name.clone(), place_name(self.place(name)).to_owned()))
            .collect::<BTreeMap<_, _>>();
        Observation {
            step: self.steps,
            op: op.name().to_owned(),
            popped,
            places,
            error,
        }
    }
}

/// The trace's name of a queue place.
fn place_name(place: Option<QueuePlace>) -> &'static str {
    match place {
        Some(QueuePlace::Active(_)) => "active",
        Some(QueuePlace::Backoff(_)) => "backoff",
        Some(QueuePlace::ErrorBackoff(_)) => "error_backoff",
        Some(QueuePlace::Unschedulable) => "unschedulable",
        Some(QueuePlace::InFlight) => "in_flight",
        None => "absent",
    }
}

/// The cluster event a trace names.
fn cluster_event(name: &str) -> Option<ClusterEvent> {
    Some(match name {
        "NodeAdd" => ClusterEvent::NodeAdd("node".into()),
        "NodeUpdate" => ClusterEvent::NodeUpdate("node".into()),
        "AssignedPodDelete" => ClusterEvent::AssignedPodDelete(Pod::new("assigned", "ns", "x")),
        "AssignedPodAdd" => ClusterEvent::AssignedPodAdd(Pod::new("assigned", "ns", "x")),
        _ => return None,
    })
}
