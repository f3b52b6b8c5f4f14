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
}

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

fn default_namespace() -> String {
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
            Self::Parse { line, .. } | Self::Invalid { line, .. } => *line,
            _ => None,
        }
    }

    /// The offending field as a path like `pods[3].cpu_millis`, if known.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Parse { field, .. } => field.as_deref(),
            Self::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }

    fn with_file(mut self, path: &Path) -> Self {
        if let Self::Parse { file, .. } | Self::Invalid { file, .. } = &mut self {
            *file = Some(path.to_owned());
        }
        self
    }
}

/// Sizes of the generated default workload (see [`Workload::generate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenerateSpec {
    /// Number of nodes (64 CPU, 256 GiB each).
    pub nodes: usize,
    /// Number of gangs.
    pub gangs: usize,
    /// Smallest gang size (at least 1).
    pub min_gang: u32,
    /// Largest gang size (raised to `min_gang` if smaller).
    pub max_gang: u32,
    /// Number of pods outside any gang.
    pub basic_pods: usize,
    /// PRNG seed: the same spec always yields the same workload.
    pub seed: u64,
}

impl Default for GenerateSpec {
    /// The issue's default: 500 nodes, 1,000 gangs of 2–64 pods, 2,000 Basic pods, seed 1.
    fn default() -> Self {
        Self {
            nodes: 500,
            gangs: 1000,
            min_gang: 2,
            max_gang: 64,
            basic_pods: 2000,
            seed: 1,
        }
    }
}

/// splitmix64: tiny, fast and good enough for workload generation.
#[derive(Clone, Debug)]
pub(super) struct SplitMix64(pub(super) u64);

impl SplitMix64 {
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (`lo <= hi`); the modulo bias is negligible for these ranges.
    pub(super) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `p` (0 to 1).
    pub(super) fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next_u64().is_multiple_of(n)
    }
}

const GIB: u64 = 1 << 30;
/// Arrivals of gangs and Basic pods are spread over this window.
const ARRIVAL_WINDOW_MS: u64 = 60_000;
/// Members of a gang arrive within this long of the gang's first member.
const GANG_SPREAD_MS: u64 = 2_000;
/// How late the occasional straggler member arrives.
const STRAGGLER_DELAY_MS: u64 = 30_000;
/// Number of Basic-policy groups some of the non-gang pods join.
const BASIC_GROUPS: usize = 8;

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
    /// exists in its namespace. The error names the field but no line.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        self.problem().map_or(Ok(()), |p| Err(p.into_error(None)))
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

    /// Generates a workload, the same for the same spec: nodes `node-0000`… of 64 CPU and
    /// 256 GiB; gangs `gang-0000`… whose `min_count` is their size (uniform in
    /// `min_gang..=max_gang`), members `gang-0000-07`… requesting 0.25–1 CPU and 1–4 GiB at the
    /// gang's priority (0, 100 or 1000). Gangs and `basic_pods` pods `pod-0000`… (a quarter of
    /// them in Basic groups `basic-0`…`basic-7`, the rest in none) arrive over the first 60 s;
    /// a gang's members within 2 s of each other, except that one gang in ten has a member
    /// 30 s late. Pods are listed in arrival order.
    pub fn generate(spec: &GenerateSpec) -> Workload {
        let mut rng = SplitMix64(spec.seed);
        let min_gang = spec.min_gang.max(1);
        let max_gang = spec.max_gang.max(min_gang);
        let nodes = (0..spec.nodes)
            .map(|i| NodeSpec {
                name: format!("node-{i:04}"),
                cpu_millis: 64_000,
                memory_bytes: 256 * GIB,
            })
            .collect();
        let mut groups = Vec::new();
        let mut pods = Vec::new();
        for g in 0..spec.gangs {
            let size = rng.range(u64::from(min_gang), u64::from(max_gang)) as u32;
            let name = format!("gang-{g:04}");
            let priority = [0, 100, 1000][rng.range(0, 2) as usize];
            let cpu_millis = rng.range(1, 4) * 250;
            let memory_bytes = rng.range(1, 4) * GIB;
            let start = rng.range(0, ARRIVAL_WINDOW_MS);
            let straggler = rng.one_in(10).then(|| rng.range(0, u64::from(size) - 1));
            for m in 0..size {
                let mut arrival_ms = start + rng.range(0, GANG_SPREAD_MS);
                if straggler == Some(u64::from(m)) {
                    arrival_ms += STRAGGLER_DELAY_MS;
                }
                pods.push(PodSpec {
                    name: format!("{name}-{m:02}"),
                    namespace: default_namespace(),
                    group: Some(name.clone()),
                    priority,
                    cpu_millis,
                    memory_bytes,
                    arrival_ms,
                    delete_ms: None,
                });
            }
            groups.push(GroupSpec {
                namespace: default_namespace(),
                name,
                min_count: Some(size),
            });
        }
        let basic_groups = BASIC_GROUPS.min(spec.basic_pods);
        for b in 0..basic_groups {
            groups.push(GroupSpec {
                namespace: default_namespace(),
                name: format!("basic-{b}"),
                min_count: None,
            });
        }
        for p in 0..spec.basic_pods {
            let group = (p % 4 == 0).then(|| format!("basic-{}", (p / 4) % basic_groups.max(1)));
            pods.push(PodSpec {
                name: format!("pod-{p:04}"),
                namespace: default_namespace(),
                group,
                priority: [0, 100, 1000][rng.range(0, 2) as usize],
                cpu_millis: rng.range(1, 8) * 250,
                memory_bytes: rng.range(1, 8) * GIB / 2,
                arrival_ms: rng.range(0, ARRIVAL_WINDOW_MS),
                delete_ms: None,
            });
        }
        pods.sort_by_key(|p| p.arrival_ms);
        Workload {
            nodes,
            groups,
            pods,
        }
    }
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
        }
    }

    fn into_error(self, line: Option<usize>) -> WorkloadError {
        WorkloadError::Invalid {
            file: None,
            line,
            field: self.field,
            message: self.message,
        }
    }
}
