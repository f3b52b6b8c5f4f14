//! Workloads for `gangway simulate`: nodes, pod groups and pods with arrival times, read from a
//! TOML or JSON file or generated from a seed.
//!
//! A file lists three arrays of tables; every field not marked optional is required and unknown
//! fields are errors:
//!
//! ```toml
//! [[nodes]]
//! name = "node-0"
//! cpu_millis = 32000
//! memory_bytes = 137438953472
//!
//! [[groups]]
//! name = "trainer"        # namespace defaults to "default"
//! min_count = 2           # absent = Basic policy (no gang)
//!
//! [[pods]]
//! name = "trainer-0"
//! group = "trainer"       # optional; a group in the pod's namespace
//! priority = 100          # default 0
//! cpu_millis = 2000
//! memory_bytes = 4294967296
//! arrival_ms = 1500       # default 0
//! ```
//!
//! Errors name the file, the line (and column for syntax errors) and the field, as a path like
//! `pods[3].cpu_millis`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::locate::{
    field_path, json_path_at, json_value_offset, line_col, line_start, toml_field_line,
    toml_path_at,
};

/// A simulated cluster and the pods that arrive at it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The nodes pods are bound to (at least one).
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    /// Pod groups: gangs (`min_count` set) and Basic groups.
    #[serde(default)]
    pub groups: Vec<GroupSpec>,
    /// The pods, in any order; each arrives at its `arrival_ms`.
    #[serde(default)]
    pub pods: Vec<PodSpec>,
}

/// A node and its allocatable resources.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique node name.
    pub name: String,
    /// Allocatable CPU in millicores (non-zero).
    pub cpu_millis: u64,
    /// Allocatable memory in bytes (non-zero).
    pub memory_bytes: u64,
}

/// A pod group: a gang when `min_count` is set, otherwise Basic policy.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Namespace (default `"default"`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Group name, unique within its namespace.
    pub name: String,
    /// `Some(n)`: a gang that binds only once `n` (≥ 1) members are placed; `None`: Basic policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u32>,
}

/// A pod to schedule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PodSpec {
    /// Pod name, unique within its namespace.
    pub name: String,
    /// Namespace (default `"default"`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// The group this pod belongs to, in its own namespace; `None` for a plain pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Scheduling priority (default 0; higher schedules first).
    #[serde(default)]
    pub priority: i32,
    /// Requested CPU in millicores.
    pub cpu_millis: u64,
    /// Requested memory in bytes.
    pub memory_bytes: u64,
    /// When the pod is created, in milliseconds from the start of the run (default 0).
    #[serde(default)]
    pub arrival_ms: u64,
    /// When the pod is deleted, in milliseconds from the start of the run (default: never;
    /// not before `arrival_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_ms: Option<u64>,
    /// How long the pod runs once bound, in milliseconds: then it completes and is deleted,
    /// freeing its node (default: it runs to the end of the run). A job's members each run
    /// this long from their own bind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_ms: Option<u64>,
}

/// How far past a workload's latest time a run's clock may go: a generated delete comes up to
/// 2 minutes after its pod's arrival (`--delete-rate`), and the run goes on for 30 minutes
/// after its last event (retries, timeouts).
pub const RUN_AFTER_LAST_TIME: Duration = Duration::from_secs(2 * 60 + 30 * 60);

/// The latest `arrival_ms` or `delete_ms` a workload may have: [`RUN_AFTER_LAST_TIME`] later,
/// the run's clock must still be before `Time::MAX`, where its arithmetic saturates, a
/// deadline never passes and the clock would stand still (about 584 years).
pub const LATEST_MS: u64 = (u64::MAX - 1 - RUN_AFTER_LAST_TIME.as_nanos() as u64) / 1_000_000;

/// A parse error at `line`/`column`, naming the field at `path` (or the one the message names).
fn parse_error(
    line: Option<usize>,
    column: Option<usize>,
    path: String,
    message: String,
) -> WorkloadError {
    let field = field_path(path, &message);
    WorkloadError::Parse {
        file: None,
        line,
        column,
        field,
        message,
    }
}

pub(super) fn default_namespace() -> String {
    "default".to_owned()
}

/// Why a workload could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The workload file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file name ends in neither `.toml` nor `.json`.
    #[error("{}: unknown workload format (expected a .toml or .json file)", path.display())]
    Format {
        /// The workload file.
        path: PathBuf,
    },
    /// A syntax error, a value of the wrong type, or a missing or unknown field.
    #[error("{}", describe(.file, *.line, *.column, .field.as_deref(), .message))]
    Parse {
        /// The workload file, if read from one.
        file: Option<PathBuf>,
        /// 1-based line of the error, if the parser reported a position.
        line: Option<usize>,
        /// 1-based column of the error, if the parser reported a position.
        column: Option<usize>,
        /// The field, as a path like `pods[3].cpu_millis`, if it could be determined.
        field: Option<String>,
        /// The parser's message.
        message: String,
    },
    /// A time so late that the run's clock would reach its end: past [`LATEST_MS`].
    #[error("{}", describe(.file, *.line, None, Some(.field), &too_late(*.millis)))]
    TooLate {
        /// The workload file, if read from one.
        file: Option<PathBuf>,
        /// 1-based line of the field, if it could be found.
        line: Option<usize>,
        /// The field, as a path like `pods[3].arrival_ms`.
        field: String,
        /// Its value.
        millis: u64,
    },
    /// The workload parsed but is inconsistent (duplicate names, unknown group, zero capacity…).
    #[error("{}", describe(.file, *.line, None, Some(.field), .message))]
    Invalid {
        /// The workload file, if read from one.
        file: Option<PathBuf>,
        /// 1-based line where the offending item starts, if it could be found.
        line: Option<usize>,
        /// The field, as a path like `pods[12].group`.
        field: String,
        /// What is wrong.
        message: String,
    },
}

fn too_late(millis: u64) -> String {
    format!(
        "{millis} ms is too late: the simulated clock would run past its end \
         (at most {LATEST_MS} ms)"
    )
}

fn describe(
    file: &Option<PathBuf>,
    line: Option<usize>,
    column: Option<usize>,
    field: Option<&str>,
    message: &str,
) -> String {
    let mut s = String::new();
    if let Some(file) = file {
        let _ = write!(s, "{}: ", file.display());
    }
    match (line, column) {
        (Some(l), Some(c)) => {
            let _ = write!(s, "line {l}, column {c}: ");
        }
        (Some(l), None) => {
            let _ = write!(s, "line {l}: ");
        }
        _ => {}
    }
    if let Some(field) = field {
        let _ = write!(s, "{field}: ");
    }
    s.push_str(message);
    s
}

impl WorkloadError {
    /// The 1-based line the error points at, if known.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Parse { line, .. } | Self::Invalid { line, .. } | Self::TooLate { line, .. } => {
                *line
            }
            _ => None,
        }
    }

    /// The offending field as a path like `pods[3].cpu_millis`, if known.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Parse { field, .. } => field.as_deref(),
            Self::Invalid { field, .. } | Self::TooLate { field, .. } => Some(field),
            _ => None,
        }
    }

    fn with_file(mut self, path: &Path) -> Self {
        if let Self::Parse { file, .. } | Self::Invalid { file, .. } | Self::TooLate { file, .. } =
            &mut self
        {
            *file = Some(path.to_owned());
        }
        self
    }
}

impl Workload {
    /// Reads a workload file, TOML or JSON by extension (`.toml`, `.json`), and validates it.
    pub fn from_path(path: &Path) -> Result<Workload, WorkloadError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let parse: fn(&str) -> Result<Workload, WorkloadError> = match ext.as_deref() {
            Some("toml") => Self::parse_toml,
            Some("json") => Self::parse_json,
            _ => {
                return Err(WorkloadError::Format {
                    path: path.to_owned(),
                })
            }
        };
        let src = std::fs::read_to_string(path).map_err(|source| WorkloadError::Read {
            path: path.to_owned(),
            source,
        })?;
        parse(&src).map_err(|e| e.with_file(path))
    }

    /// Parses and validates a TOML workload.
    pub fn parse_toml(src: &str) -> Result<Workload, WorkloadError> {
        let workload: Workload = toml::from_str(src).map_err(|e| {
            let message = e.message().trim().to_owned();
            let (line, column, path) = match e.span() {
                Some(span) => {
                    let (line, column) = line_col(src, span.start);
                    (Some(line), Some(column), toml_path_at(src, span.start))
                }
                None => (None, None, String::new()),
            };
            parse_error(line, column, path, message)
        })?;
        workload.validate_located(src, Format::Toml)?;
        Ok(workload)
    }

    /// Parses and validates a JSON workload.
    pub fn parse_json(src: &str) -> Result<Workload, WorkloadError> {
        let workload: Workload = serde_json::from_str(src).map_err(|e| {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
            let (line, column, path) = if e.line() == 0 {
                (None, None, String::new())
            } else {
                let end = line_start(src, e.line()) + e.column();
                (
                    Some(e.line()),
                    (e.column() > 0).then_some(e.column()),
                    json_path_at(src, end),
                )
            };
            parse_error(line, column, path, message)
        })?;
        workload.validate_located(src, Format::Json)?;
        Ok(workload)
    }

    /// Checks the workload's consistency: at least one node; unique node names; non-zero node
    /// capacity; unique group and pod names per namespace; `min_count` ≥ 1; every pod's group
    /// exists in its namespace; no time past [`LATEST_MS`]. The error names the field but no
    /// line.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        self.problem().map_or(Ok(()), |p| Err(p.into_error(None)))
    }

    /// Checks only that no time is past [`LATEST_MS`] ([`WorkloadError::TooLate`] names the
    /// first that is): what a run needs of any workload, validated or not.
    pub fn check_times(&self) -> Result<(), WorkloadError> {
        let late = self
            .pods
            .iter()
            .enumerate()
            .find_map(|(i, p)| late_time(i, p));
        late.map_or(Ok(()), |p| Err(p.into_error(None)))
    }

    fn validate_located(&self, src: &str, format: Format) -> Result<(), WorkloadError> {
        match self.problem() {
            None => Ok(()),
            Some(p) => {
                let line = match (format, p.item) {
                    (Format::Toml, Some((list, index))) => {
                        toml_field_line(src, list, index, self.len_of(list), &p.field)
                    }
                    (Format::Toml, None) => None,
                    (Format::Json, _) => json_value_offset(src, &p.field)
                        .or_else(|| {
                            let (list, index) = p.item?;
                            json_value_offset(src, &format!("{list}[{index}]"))
                        })
                        .map(|o| line_col(src, o).0),
                };
                Err(p.into_error(line))
            }
        }
    }

    fn len_of(&self, list: &str) -> usize {
        match list {
            "nodes" => self.nodes.len(),
            "groups" => self.groups.len(),
            _ => self.pods.len(),
        }
    }

    fn problem(&self) -> Option<Problem> {
        if self.nodes.is_empty() {
            return Some(Problem::new(None, "nodes", "the workload has no nodes"));
        }
        let mut names = HashSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let at = Some(("nodes", i));
            if n.name.is_empty() {
                return Some(Problem::new(at, "name", "empty name"));
            }
            if !names.insert(n.name.as_str()) {
                return Some(Problem::new(
                    at,
                    "name",
                    format!("duplicate node {:?}", n.name),
                ));
            }
            if n.cpu_millis == 0 {
                return Some(Problem::new(at, "cpu_millis", "node has no cpu"));
            }
            if n.memory_bytes == 0 {
                return Some(Problem::new(at, "memory_bytes", "node has no memory"));
            }
        }
        let mut groups = HashSet::new();
        for (i, g) in self.groups.iter().enumerate() {
            let at = Some(("groups", i));
            if g.name.is_empty() {
                return Some(Problem::new(at, "name", "empty name"));
            }
            if !groups.insert((g.namespace.as_str(), g.name.as_str())) {
                let msg = format!(
                    "duplicate group {:?} in namespace {:?}",
                    g.name, g.namespace
                );
                return Some(Problem::new(at, "name", msg));
            }
            if g.min_count == Some(0) {
                return Some(Problem::new(
                    at,
                    "min_count",
                    "min_count must be at least 1",
                ));
            }
        }
        let mut pods = HashSet::new();
        for (i, p) in self.pods.iter().enumerate() {
            let at = Some(("pods", i));
            if p.name.is_empty() {
                return Some(Problem::new(at, "name", "empty name"));
            }
            if !pods.insert((p.namespace.as_str(), p.name.as_str())) {
                let msg = format!("duplicate pod {:?} in namespace {:?}", p.name, p.namespace);
                return Some(Problem::new(at, "name", msg));
            }
            if let Some(late) = late_time(i, p) {
                return Some(late);
            }
            if p.delete_ms.is_some_and(|d| d < p.arrival_ms) {
                return Some(Problem::new(at, "delete_ms", "deleted before it arrives"));
            }
            if let Some(group) = &p.group {
                if !groups.contains(&(p.namespace.as_str(), group.as_str())) {
                    let msg = format!("unknown group {group:?} in namespace {:?}", p.namespace);
                    return Some(Problem::new(at, "group", msg));
                }
            }
        }
        None
    }

    /// Number of pods.
    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    /// Number of gangs (groups with `min_count` set).
    pub fn gang_count(&self) -> usize {
        self.groups.iter().filter(|g| g.min_count.is_some()).count()
    }
}

/// The first of pod `index`'s times past [`LATEST_MS`], if any.
fn late_time(index: usize, pod: &PodSpec) -> Option<Problem> {
    let times = [
        ("arrival_ms", Some(pod.arrival_ms)),
        ("delete_ms", pod.delete_ms),
        ("run_ms", pod.run_ms),
    ];
    let (field, millis) = times
        .into_iter()
        .find_map(|(field, ms)| ms.filter(|&ms| ms > LATEST_MS).map(|ms| (field, ms)))?;
    let mut problem = Problem::new(Some(("pods", index)), field, too_late(millis));
    problem.late = Some(millis);
    Some(problem)
}

#[derive(Clone, Copy)]
enum Format {
    Toml,
    Json,
}

/// A semantic error before it is located in the source.
struct Problem {
    item: Option<(&'static str, usize)>,
    field: String,
    message: String,
    /// The time, when the problem is that it is too late.
    late: Option<u64>,
}

impl Problem {
    fn new(item: Option<(&'static str, usize)>, field: &str, message: impl Into<String>) -> Self {
        let field = match item {
            Some((list, i)) => format!("{list}[{i}].{field}"),
            None => field.to_owned(),
        };
        Self {
            item,
            field,
            message: message.into(),
            late: None,
        }
    }

    fn into_error(self, line: Option<usize>) -> WorkloadError {
        match self.late {
            Some(millis) => WorkloadError::TooLate {
                file: None,
                line,
                field: self.field,
                millis,
            },
            None => WorkloadError::Invalid {
                file: None,
                line,
                field: self.field,
                message: self.message,
            },
        }
    }
}
