//! The driver differential's trace and observation: the JSON lines `upstream/cmd/drivertrace`
//! reads and prints (upstream/README.md). A trace drives a whole scheduler — kube-scheduler's
//! `ScheduleOne` and its binding goroutines on one side, gangway's `Scheduler` in
//! `Mode::Upstream` on the other — through nodes, pods, scheduling cycles, bind failures,
//! deletes, Permit plugins and time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::permit_script::Script;

/// One operation of a driver trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum DriverOp {
    /// A node is created with `cpu_milli` allocatable CPU (and room to spare for the rest).
    Node {
        /// Its name.
        node: String,
        /// Its allocatable CPU in millicores.
        cpu_milli: u64,
    },
    /// The node is deleted.
    DeleteNode {
        /// Its name.
        node: String,
    },
    /// A PodGroup is created: a gang of at least `min_count` members, or a Basic group when
    /// it names none.
    Group {
        /// Its name.
        group: String,
        /// The gang's minimum.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_count: Option<u32>,
    },
    /// An unscheduled pod is created, requesting `cpu_milli` (none when 0), in the pod group
    /// `group` if one is named (its `spec.schedulingGroup.podGroupName`).
    Add {
        /// Its name (and uid).
        pod: String,
        /// Its pod group.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
        /// Its CPU request in millicores.
        #[serde(default, skip_serializing_if = "is_zero")]
        cpu_milli: u64,
        /// Its priority.
        #[serde(default, skip_serializing_if = "is_zero_i32")]
        priority: i32,
    },
    /// One scheduling cycle, if a pod can be popped (`error` otherwise); the binding cycles it
    /// starts run as far as they can.
    ScheduleOne {
        /// What the scripted Permit plugins answer in this cycle; unnamed ones allow.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        plugins: BTreeMap<String, Script>,
    },
    /// The next bind of the pod fails.
    FailBind {
        /// The pod.
        pod: String,
    },
    /// The pod is deleted.
    Delete {
        /// The pod.
        pod: String,
    },
    /// `plugin` allows the waiting pod.
    Allow {
        /// The pod.
        pod: String,
        /// The plugin.
        plugin: String,
    },
    /// `plugin` rejects the waiting pod.
    Reject {
        /// The pod.
        pod: String,
        /// The plugin.
        plugin: String,
        /// Why.
        message: String,
    },
    /// The pod's binding cycles stop before the bind (past Permit, its node assumed: the Go
    /// harness's HoldBind at PreBind) until `release_bind` — those of attempts whose scheduling
    /// cycle starts while it is held (HoldBind answers PreBindPreFlight there).
    HoldBind {
        /// The pod.
        pod: String,
    },
    /// The held pod's binding cycle, if one is stopped, goes on to its bind; its next ones
    /// do not stop.
    ReleaseBind {
        /// The pod.
        pod: String,
    },
    /// Time moves forward: the queue's periodic flushes and the Permit timers fire as due.
    AdvanceMs {
        /// By this many milliseconds.
        ms: u64,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

impl DriverOp {
    /// The operation's name in a trace.
    pub fn name(&self) -> &'static str {
        match self {
            DriverOp::Node { .. } => "node",
            DriverOp::DeleteNode { .. } => "delete_node",
            DriverOp::Group { .. } => "group",
            DriverOp::Add { .. } => "add",
            DriverOp::ScheduleOne { .. } => "schedule_one",
            DriverOp::FailBind { .. } => "fail_bind",
            DriverOp::Delete { .. } => "delete",
            DriverOp::Allow { .. } => "allow",
            DriverOp::Reject { .. } => "reject",
            DriverOp::HoldBind { .. } => "hold_bind",
            DriverOp::ReleaseBind { .. } => "release_bind",
            DriverOp::AdvanceMs { .. } => "advance_ms",
        }
    }
}

/// A pod's `PodScheduled` condition as the API server holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    /// `True` or `False`.
    pub status: String,
    /// `Unschedulable`, `SchedulerError`, or empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The scheduler's message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// What either side saw after one step of a driver trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverObservation {
    /// The step, from 1.
    pub step: usize,
    /// The operation's name.
    pub op: String,
    /// The pod a `schedule_one` popped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popped: Option<String>,
    /// Where each pod the trace added is: a queue place (`active`, `backoff`,
    /// `error_backoff`, `unschedulable`, `gated`, `in_flight`), else `bound`, else `binding`
    /// (assumed on its node, its binding cycle under way), else `absent`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub places: BTreeMap<String, String>,
    /// The waiting pods and their pending plugins, sorted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub waiting: BTreeMap<String, Vec<String>>,
    /// The node of each bound pod.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, String>,
    /// The `PodScheduled` conditions that changed during the step.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub conditions: BTreeMap<String, Condition>,
    /// The `PodGroupScheduled` conditions that changed during the step.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub group_conditions: BTreeMap<String, Condition>,
    /// Whether a `reject` decided the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<bool>,
    /// The operation's error, if it returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A driver trace's operations from JSON lines (blank lines and `#` comments skipped).
pub fn parse(text: &str) -> Result<Vec<DriverOp>, String> {
    super::trace::parse_ops(text)
}

/// Observations from the harness's output: its JSON lines (anything else it prints is not
/// one).
pub fn parse_observations(text: &str) -> Result<Vec<DriverObservation>, String> {
    super::trace::parse_observation_lines(text)
}

/// Whether a trace is a driver trace: it parses as one and names a `schedule_one`, which
/// neither a queue nor a gang trace can say.
pub fn is_driver_trace(text: &str) -> bool {
    parse(text).is_ok_and(|ops| {
        ops.iter()
            .any(|op| matches!(op, DriverOp::ScheduleOne { .. }))
    })
}

/// A trace as JSON lines, without comments.
pub fn to_json_lines(ops: &[DriverOp]) -> String {
    super::trace::ops_to_json_lines(ops)
}
