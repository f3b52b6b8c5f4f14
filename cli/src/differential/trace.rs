//! The differential's trace and observation: one JSON line per operation in, one per step
//! out — the format `upstream/cmd/queuetrace` reads and prints (upstream/README.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One operation of a trace, as the Go harness reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// The queue's configuration and plugin profile; first in a trace, if at all (without it:
    /// the default profile, and on gangway's side the runner's configuration). An absent
    /// field is kube-scheduler's default on the Go side and the runner's own setting on
    /// gangway's (1.36's, unless `--before-1-33` or `--group-members-wait` changed it);
    /// `pop_from_backoff` (1.36's `SchedulerPopFromBackoffQ`, on by default) brings the 1 s
    /// ordering window with it, on both sides.
    Config {
        /// The plugin profile (`default`, `conformance`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
        /// The first backoff (`podInitialBackoffSeconds`), in ms; not 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        initial_backoff_ms: Option<u64>,
        /// The longest backoff, in ms; not 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_backoff_ms: Option<u64>,
        /// How long a pod may sit in the unschedulable pool before a flush, in ms; not 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_in_unschedulable_ms: Option<u64>,
        /// Pop from the backoff queue with the 1 s ordering window (absent: on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pop_from_backoff: Option<bool>,
        /// The gang gates, `GenericWorkload` and `GangScheduling` (absent: on): a failed pod
        /// naming a group backs off whatever its attempt saw
        /// (`QueueConfig::group_members_back_off` on gangway's side).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gang_gates: Option<bool>,
        /// gangway's side only: `QueueConfig::wildcards_move_gated` (kubernetes#139162, a
        /// wildcard event moves a gated pod), absent: the runner's own setting (off). v1.36.3
        /// has no such rule; the Go harness ignores the field and runs the real code, so a
        /// trace that turns it on shows the difference.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wildcards_move_gated: Option<bool>,
    },
    /// A pod is created (`priority` defaults to 0), at the clock's time.
    Add {
        /// Its name (and uid).
        pod: String,
        /// Its priority.
        #[serde(default)]
        priority: i32,
        /// The pod group it names (`spec.schedulingGroup.podGroupName`), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
    },
    /// A pod's object changes: its new priority.
    Update {
        /// The pod.
        pod: String,
        /// Its new priority.
        #[serde(default)]
        priority: i32,
    },
    /// The scheduling loop pops the head of the queue, if anything can be popped.
    Pop,
    /// The popped pod's attempt failed, rejected by `plugins`.
    Unschedulable {
        /// The pod.
        pod: String,
        /// The rejecting plugins.
        plugins: Vec<String>,
        /// The plugins it is pending on.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pending: Vec<String>,
    },
    /// The popped pod's attempt failed with an error (no plugin rejected it).
    Error {
        /// The pod.
        pod: String,
    },
    /// The popped pod's attempt ended (bound).
    Done {
        /// The pod.
        pod: String,
    },
    /// A cluster event moves the pods it may help (`NodeAdd`, `NodeUpdate`,
    /// `AssignedPodDelete`, `AssignedPodAdd`, `UnscheduledPodAdd`, `UnscheduledPodUpdate`,
    /// `PodGroupAdd`, `PodGroupUpdate`, and the wildcards `UnschedulableTimeout`,
    /// `ForceActivate`, `BackoffComplete`).
    MoveAll {
        /// The event's name.
        event: String,
        /// The node's name, for a node event (default `node`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<String>,
        /// The pod's name, for a pod event (default `assigned`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pod: Option<String>,
        /// An `UnscheduledPodUpdate`'s new priority (the old one is 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        priority: Option<i32>,
        /// A pod the precheck leaves out besides what `precheck` says (the failed pod a
        /// scheduler's deferred move-all excludes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exclude: Option<String>,
        /// Which pods the move considers (none: all).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        precheck: Option<Precheck>,
        /// The precheck's priority bound.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<i32>,
    },
    /// The conformance profile's PreEnqueue gate opens or closes.
    Gate {
        /// Open.
        open: bool,
    },
    /// These pods are activated.
    Activate {
        /// The pods.
        pods: Vec<String>,
    },
    /// A pod is deleted.
    Delete {
        /// The pod.
        pod: String,
    },
    /// The clock moves forward.
    AdvanceMs {
        /// By this many milliseconds.
        ms: u64,
    },
    /// The clock moves forward by nanoseconds.
    AdvanceNs {
        /// By this many nanoseconds.
        ns: u64,
    },
    /// The periodic backoff flush runs.
    FlushBackoff,
    /// The periodic unschedulable-pool flush runs.
    FlushLeftover,
    /// The queue is closed (the scheduler shuts down).
    Close,
}

impl Op {
    /// The operation's name in a trace (`add`, `pop`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Config { .. } => "config",
            Op::Add { .. } => "add",
            Op::Update { .. } => "update",
            Op::Pop => "pop",
            Op::Unschedulable { .. } => "unschedulable",
            Op::Error { .. } => "error",
            Op::Done { .. } => "done",
            Op::MoveAll { .. } => "move_all",
            Op::Gate { .. } => "gate",
            Op::Activate { .. } => "activate",
            Op::Delete { .. } => "delete",
            Op::AdvanceMs { .. } => "advance_ms",
            Op::AdvanceNs { .. } => "advance_ns",
            Op::FlushBackoff => "flush_backoff",
            Op::FlushLeftover => "flush_leftover",
            Op::Close => "close",
        }
    }
}

/// `move_all`'s precheck (upstream's `PreEnqueueCheck`) over a pod's priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precheck {
    /// Every pod.
    All,
    /// Pods whose priority is at least `min`.
    MinPriority,
    /// Pods whose priority is even and at least `min`.
    EvenAtLeast,
    /// Pods whose priority is even and negative.
    EvenNegative,
    /// Must not be called: a call is the step's error (`precheck called for POD`).
    Never,
}

/// What either side saw after one step: the pod a pop returned, and where each pod the trace
/// named is (`active`, `backoff`, `error_backoff`, `unschedulable`, `gated` (in the
/// unschedulable pool, gated by a PreEnqueue plugin), `in_flight`, `absent`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The step, from 1.
    pub step: usize,
    /// The operation's name.
    pub op: String,
    /// The pod the step popped, if it was a pop that returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popped: Option<String>,
    /// Each named pod's place.
    pub places: BTreeMap<String, String>,
    /// The operation's error, if it returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A trace's operations from JSON lines (blank lines and `#` comments skipped); the error
/// names the line.
pub fn parse(text: &str) -> Result<Vec<Op>, String> {
    parse_ops(text)
}

/// Observations from a harness's output: its JSON lines (anything else is not one).
pub fn parse_observations(text: &str) -> Result<Vec<Observation>, String> {
    parse_observation_lines(text)
}

/// A trace as JSON lines, without comments (what the Go harness is given).
pub fn to_json_lines(ops: &[Op]) -> String {
    ops_to_json_lines(ops)
}

/// Operations of either kind of trace from JSON lines (blank lines and `#` comments skipped);
/// the error names the line.
pub fn parse_ops<T: serde::de::DeserializeOwned>(text: &str) -> Result<Vec<T>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|(i, line)| serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Observations of either harness from its output: the lines that are JSON objects.
pub fn parse_observation_lines<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<Vec<T>, String> {
    text.lines()
        .filter(|line| line.starts_with('{'))
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| format!("observation {}: {e}", i + 1))
        })
        .collect()
}

/// Operations of either kind as JSON lines, without comments.
pub fn ops_to_json_lines<T: Serialize>(ops: &[T]) -> String {
    ops.iter()
        .map(|op| serde_json::to_string(op).expect("an op serializes") + "\n")
        .collect()
}
