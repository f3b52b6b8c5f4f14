//! The ops, the pod universe, the events and the rejectors they name.

use std::sync::OnceLock;
use std::time::Duration;

use gangsched::queue::PluginSet;
use gangsched::PodGroup;
use gangsched::{ClusterEvent, Pod, PodId, QueuedPodInfo};

use crate::queue::{plugins, CLAIMS, FIT, GATE, SILENT};

/// The pod universe: ids and names. Pods whose name starts with `gated` are held by the
/// [`GATE`] plugin while their priority is 0 or less.
pub const POD_NAMES: [&str; 8] = ["p0", "p1", "p2", "p3", "p4", "p5", "gated6", "gated7"];
/// The priorities an op can give a pod (index modulo their number).
pub const PRIORITIES: [i32; 4] = [0, 1, -1, 5];
/// The clock steps an op can take (index modulo their number): ties, the backoff edges,
/// the 10 s cap, the 5-minute unschedulable limit and past it.
pub const STEPS: [Duration; 11] = [
    Duration::ZERO,
    Duration::from_nanos(1),
    Duration::from_millis(500),
    Duration::from_millis(999),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(10),
    Duration::from_secs(30),
    Duration::from_secs(300),
    Duration::from_nanos(300_000_000_001),
    Duration::from_secs(660),
];
/// How many distinct events [`event`] knows.
pub const EVENTS: u8 = 17;

/// One operation on both queues. With the `arbitrary` feature, cargo-fuzz generates these
/// directly (the `queue_moves` target).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Op {
    /// Adds universe pod `pod % 8` with priority `PRIORITIES[priority % 4]`.
    Add {
        /// Universe index.
        pod: u8,
        /// Priority index.
        priority: u8,
    },
    /// Updates universe pod `pod % 8` to priority `PRIORITIES[priority % 4]`.
    Update {
        /// Universe index.
        pod: u8,
        /// Priority index.
        priority: u8,
    },
    /// Deletes universe pod `pod % 8`.
    Delete {
        /// Universe index.
        pod: u8,
    },
    /// Pops the first active pod.
    Pop,
    /// Ends the attempt of the picked pod (it was bound).
    Done {
        /// See the [module documentation](super).
        pick: u8,
    },
    /// Hands the picked pod back as unschedulable, rejected by `rejectors` ([`rejectors`]).
    HandBack {
        /// See the [module documentation](super).
        pick: u8,
        /// A bit set of rejecting plugins; 0: an error.
        rejectors: u8,
    },
    /// Hands the picked pods back as one gang (repeats included), each with its rejectors.
    HandBackGang {
        /// Picks and rejector bit sets.
        members: Vec<(u8, u8)>,
    },
    /// Activates universe pods (indexes modulo 8), repeats included.
    Activate {
        /// Universe indexes.
        pods: Vec<u8>,
    },
    /// Announces [`event`]`(event)`; with `exclude`, the precheck leaves out universe pod
    /// `exclude % 8`.
    MoveAll {
        /// Event index.
        event: u8,
        /// Universe index of a pod the precheck excludes.
        exclude: Option<u8>,
    },
    /// Flushes completed backoffs.
    FlushBackoff,
    /// Flushes the unschedulable leftovers.
    FlushLeftover,
    /// Advances the clock by `STEPS[step % 11]`.
    Advance {
        /// Step index.
        step: u8,
    },
    /// Closes the queue.
    Close,
}

/// The `index`-th event (modulo [`EVENTS`]): freed resources the fit plugin likes, skips,
/// or fails on; nodes added and updated; a pod group; events no plugin registered for; an
/// update that would lift the gate; the three wildcards.
pub fn event(index: u8) -> ClusterEvent {
    tables().events[usize::from(index % EVENTS)].clone()
}

/// Built once: every run shares the same pods, events and plugins (cheap clones; equal
/// pod ids are then one allocation, so comparing them is a pointer comparison).
pub(super) struct Tables {
    /// `pods[i][j]`: universe pod `i` with priority `PRIORITIES[j]`.
    pods: Vec<Vec<Pod>>,
    events: Vec<ClusterEvent>,
    pub(super) plugins: PluginSet,
}

pub(super) fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables {
        pods: POD_NAMES
            .iter()
            .map(|name| {
                let pod = Pod::new(*name, "ns", name);
                // p5 is a pod group's member: a failure backs it off whatever happened
                // (QueueConfig::group_members_back_off).
                let pod = if *name == "p5" {
                    pod.with_group("pg")
                } else {
                    pod
                };
                PRIORITIES
                    .iter()
                    .map(|&p| pod.clone().with_priority(p))
                    .collect()
            })
            .collect(),
        events: (0..EVENTS).map(make_event).collect(),
        plugins: plugins(),
    })
}

fn make_event(index: u8) -> ClusterEvent {
    let pod = |name: &str, priority| Pod::new(name, "ns", name).with_priority(priority);
    match index {
        0 => ClusterEvent::AssignedPodDelete(pod("freed", 0)),
        1 => ClusterEvent::AssignedPodDelete(pod("small", 0)),
        2 => ClusterEvent::AssignedPodDelete(pod("broken", 0)),
        3 => ClusterEvent::NodeAdd("big".into()),
        4 => ClusterEvent::NodeAdd("small".into()),
        5 => ClusterEvent::NodeAdd("broken".into()),
        6 => ClusterEvent::NodeUpdate("big".into()),
        7 => ClusterEvent::NodeUpdate("ready".into()),
        8 => ClusterEvent::NodeUpdate("broken".into()),
        9 => ClusterEvent::PodGroupAdd(PodGroup::gang("ns", "g", 2).expect("valid")),
        10 => ClusterEvent::AssignedPodAdd(pod("bound", 0)),
        11 => ClusterEvent::UnscheduledPodAdd(pod("new", 0)),
        12 => ClusterEvent::UnscheduledPodUpdate {
            old: pod("other", 0),
            new: pod("other", 1),
        },
        13 => ClusterEvent::PodGroupUpdate {
            old: PodGroup::gang("ns", "g", 3).expect("valid"),
            new: PodGroup::gang("ns", "g", 2).expect("valid"),
        },
        14 => ClusterEvent::ForceActivate,
        15 => ClusterEvent::UnschedulableTimeout,
        _ => ClusterEvent::BackoffComplete,
    }
}

/// `info` rejected by the plugins in bit set `bits`: 1 [`FIT`] (unschedulable),
/// 2 [`CLAIMS`] (pending), 4 [`SILENT`], 8 [`GATE`] (unschedulable), 16 [`FIT`] (pending).
/// No bit: the attempt failed with an error.
pub fn rejectors(mut info: QueuedPodInfo, bits: u8) -> QueuedPodInfo {
    if bits & 1 != 0 {
        info = info.rejected_by(FIT);
    }
    if bits & 2 != 0 {
        info = info.pending_on(CLAIMS);
    }
    if bits & 4 != 0 {
        info = info.rejected_by(SILENT);
    }
    if bits & 8 != 0 {
        info = info.rejected_by(GATE);
    }
    if bits & 16 != 0 {
        info = info.pending_on(FIT);
    }
    info
}

/// Universe pod `index % 8` with priority `PRIORITIES[priority % 4]`.
pub fn universe_pod(index: u8, priority: u8) -> Pod {
    let pods = &tables().pods[usize::from(index) % POD_NAMES.len()];
    pods[usize::from(priority) % PRIORITIES.len()].clone()
}

/// Universe pod `index % 8`'s id.
pub fn pod_id(index: u8) -> PodId {
    tables().pods[usize::from(index) % POD_NAMES.len()][0]
        .id()
        .clone()
}
