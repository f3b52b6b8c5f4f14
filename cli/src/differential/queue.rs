//! A trace through gangway's own scheduling queue (`QueueState`, upstream's defaults, the
//! scheduler's plugin set), observed as the Go harness observes kube-scheduler's.

use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::queue::{ClusterEvent, QueueConfig, QueuePlace, QueueState};
use gangsched::scheduler::SchedulerPlugins;
use gangsched::{GroupRegistry, PluginName, Pod, PodId, Time};

use super::trace::{Observation, Op};

/// Runs `ops` through a fresh queue; one observation per operation.
pub fn run(ops: &[Op], config: QueueConfig) -> Vec<Observation> {
    let plugins = SchedulerPlugins::new(GroupRegistry::new());
    let mut queue = QueueState::new(config);
    let mut now = Time::ZERO;
    let mut names: Vec<String> = Vec::new();
    // Each pod's latest object, as the informer's cache has it.
    let mut objects: BTreeMap<String, Pod> = BTreeMap::new();
    let mut observations = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let mut popped = None;
        let mut error = None;
        match op {
            Op::Add { pod, priority } => {
                if !names.contains(pod) {
                    names.push(pod.clone());
                }
                let object = Pod::new(pod.as_str(), "ns", pod).with_priority(*priority);
                objects.insert(pod.clone(), object.clone());
                if let Err(e) = queue.add(object, now, &plugins) {
                    error = Some(e.to_string());
                }
            }
            Op::Update { pod, priority } => match objects.get(pod).cloned() {
                Some(old) => {
                    let new = old.clone().with_priority(*priority);
                    objects.insert(pod.clone(), new.clone());
                    queue.update(old, new, now, &plugins);
                }
                None => error = Some(format!("pod {pod} is unknown")),
            },
            Op::Pop => popped = queue.pop().map(|p| p.info.id().to_string()),
            Op::Unschedulable { pod, plugins: by } => {
                let rejector = by.first().map(|p| PluginName::from(p.clone()));
                if let Err(e) = queue.hand_back(&PodId::from(pod.as_str()), rejector, now, &plugins)
                {
                    error = Some(e.to_string());
                }
            }
            Op::Error { pod } => {
                if let Err(e) = queue.hand_back(&PodId::from(pod.as_str()), None, now, &plugins) {
                    error = Some(e.to_string());
                }
            }
            Op::Done { pod } => {
                queue.done(&PodId::from(pod.as_str()));
            }
            Op::MoveAll { event } => match cluster_event(event) {
                Some(event) => {
                    queue.move_all_to_active_or_backoff(event, None, now, &plugins);
                }
                None => error = Some(format!("unknown event {event:?}")),
            },
            Op::Activate { pods } => {
                let ids: Vec<PodId> = pods.iter().map(|p| PodId::from(p.as_str())).collect();
                queue.activate(&ids, now, &plugins);
            }
            Op::Delete { pod } => {
                queue.delete(&PodId::from(pod.as_str()));
            }
            Op::AdvanceMs { ms } => now += Duration::from_millis(*ms),
            Op::FlushBackoff => {
                queue.flush_backoff_completed(now, &plugins);
            }
            Op::FlushLeftover => {
                queue.flush_unschedulable_leftover(now, &plugins);
            }
            Op::Close => queue.close(),
        }
        let places = names
            .iter()
            .map(|name| {
                let place = queue.place(&PodId::from(name.as_str()));
                (name.clone(), place_name(place).to_owned())
            })
            .collect::<BTreeMap<_, _>>();
        observations.push(Observation {
            step: i + 1,
            op: op.name().to_owned(),
            popped,
            places,
            error,
        });
    }
    observations
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
