//! The gang differential's trace and observation: the JSON lines `upstream/cmd/gangtrace`
//! reads and prints (upstream/README.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::permit_script::Script;

/// One operation of a gang trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum GangOp {
    /// A PodGroup object is created: a gang of `min_count`, or Basic without it.
    Group {
        /// Its name.
        group: String,
        /// The gang's minimum count.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_count: Option<u32>,
    },
    /// An unscheduled pod is created, in `group` if given.
    Add {
        /// Its name (and uid).
        pod: String,
        /// Its pod group.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
        /// Its priority.
        #[serde(default)]
        priority: i32,
    },
    /// The PreEnqueue plugins run for the pod.
    PreEnqueue {
        /// The pod.
        pod: String,
    },
    /// A scheduling cycle places the pod on `node`: assume, Reserve, Permit; a waiting pod's
    /// binding cycle then waits on Permit.
    Schedule {
        /// The pod.
        pod: String,
        /// The node (`node` if not given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<String>,
        /// Hold the binding cycle once its wait on Permit ends in a failure: it unreserves and
        /// forgets the pod only at the pod's `release` — the window in which another
        /// scheduling cycle can run between a rejection and its release, as on real threads.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hold: bool,
        /// What the scripted Permit plugins besides the gang's answer in this cycle
        /// ([`SCRIPTED_PLUGINS`](super::permit_script::SCRIPTED_PLUGINS)); unnamed ones allow.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        plugins: BTreeMap<String, Script>,
    },
    /// A held binding cycle goes on: a rejected pod is unreserved and forgotten.
    Release {
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
    /// `plugin` preempts the waiting pod.
    Preempt {
        /// The pod.
        pod: String,
        /// The plugin.
        plugin: String,
        /// Why.
        message: String,
    },
    /// A pod that passed Permit is bound (the informer reports it assigned).
    Bind {
        /// The pod.
        pod: String,
    },
    /// A pod that passed Permit fails its binding cycle: unreserve and forget.
    Forget {
        /// The pod.
        pod: String,
    },
    /// A pod is deleted.
    Delete {
        /// The pod.
        pod: String,
    },
    /// Time moves forward; waits that run out time out.
    AdvanceMs {
        /// By this many milliseconds.
        ms: u64,
    },
}

impl GangOp {
    /// The operation's name in a trace.
    pub fn name(&self) -> &'static str {
        match self {
            GangOp::Group { .. } => "group",
            GangOp::Add { .. } => "add",
            GangOp::PreEnqueue { .. } => "pre_enqueue",
            GangOp::Schedule { .. } => "schedule",
            GangOp::Release { .. } => "release",
            GangOp::Allow { .. } => "allow",
            GangOp::Reject { .. } => "reject",
            GangOp::Preempt { .. } => "preempt",
            GangOp::Bind { .. } => "bind",
            GangOp::Forget { .. } => "forget",
            GangOp::Delete { .. } => "delete",
            GangOp::AdvanceMs { .. } => "advance_ms",
        }
    }
}

/// A status as observed (`plugin` and `message` empty when there are none).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedStatus {
    /// The code's name (`Success`, `Wait`, `Unschedulable`, …).
    pub code: String,
    /// The plugin it is attributed to.
    pub plugin: String,
    /// The reasons joined with ", ".
    pub message: String,
}

impl From<&gangsched::Status> for ObservedStatus {
    fn from(status: &gangsched::Status) -> ObservedStatus {
        ObservedStatus {
            code: status.code().to_string(),
            plugin: status.plugin().map(|p| p.to_string()).unwrap_or_default(),
            message: status.message(),
        }
    }
}

/// A pod group's partition of its known pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Every known pod.
    pub all: usize,
    /// Assumed or assigned.
    pub scheduled: usize,
    /// Reserved, not bound.
    pub assumed: usize,
    /// Bound.
    pub assigned: usize,
    /// Neither.
    pub unscheduled: usize,
}

/// What either side saw after one step of a gang trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GangObservation {
    /// The step, from 1.
    pub step: usize,
    /// The operation's name.
    pub op: String,
    /// PreEnqueue's status (a `pre_enqueue` step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_enqueue: Option<ObservedStatus>,
    /// Permit's status (a `schedule` step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permit: Option<ObservedStatus>,
    /// The waits Permit asked for, per plugin, in milliseconds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub permit_waits: BTreeMap<String, u64>,
    /// The binding cycles whose WaitOnPermit returned during the step, per pod.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wait_on_permit: BTreeMap<String, ObservedStatus>,
    /// Whether a `reject` or `preempt` decided the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<bool>,
    /// The waiting pods and their pending plugins, sorted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub waiting: BTreeMap<String, Vec<String>>,
    /// Each pod group with a known pod.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, Counts>,
    /// The pods activated during the step, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub activated: Vec<String>,
    /// The operation's error, if it returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A gang trace's operations from JSON lines (blank lines and `#` comments skipped).
pub fn parse(text: &str) -> Result<Vec<GangOp>, String> {
    super::trace::parse_ops(text)
}

/// Observations from the harness's output: its JSON lines (anything else it prints is not
/// one).
pub fn parse_observations(text: &str) -> Result<Vec<GangObservation>, String> {
    super::trace::parse_observation_lines(text)
}

/// Whether a trace is a gang trace: it parses as one, and not as a queue trace (every gang
/// trace schedules a pod, which a queue trace cannot say).
pub fn is_gang_trace(text: &str) -> bool {
    super::trace::parse(text).is_err() && parse(text).is_ok()
}

/// A trace as JSON lines, without comments.
pub fn to_json_lines(ops: &[GangOp]) -> String {
    super::trace::ops_to_json_lines(ops)
}
