//! The differential: the same trace through kube-scheduler's own scheduling queue (the Go
//! harness `upstream/cmd/queuetrace`, k8s.io/kubernetes v1.36) and through gangway's
//! (`queue.rs`), observation by observation; the first step where they differ is reported
//! with both observations (upstream/README.md).

pub mod choices;
pub mod corpus;
pub mod driver;
pub mod driver_generate;
pub mod driver_trace;
pub mod gang;
pub mod gang_generate;
pub mod gang_trace;
pub mod generate;
pub mod permit_script;
pub mod profile;
pub mod queue;
pub mod trace;

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use gangsched::queue::QueueConfig;
use serde::Serialize;

pub use trace::{Observation, Op};

/// Where a trace's two runs first part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference<O = Op, B = Observation> {
    /// The step (from 1).
    pub step: usize,
    /// The operation there.
    pub op: O,
    /// kube-scheduler's observation (`None`: it stopped before this step).
    pub upstream: Option<B>,
    /// gangway's observation.
    pub gangway: Option<B>,
}

impl<O: Serialize, B: Serialize> fmt::Display for Difference<O, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |o: &Option<B>| {
            o.as_ref().map_or("(nothing)".to_owned(), |o| {
                serde_json::to_string(o).expect("an observation serializes")
            })
        };
        writeln!(
            f,
            "first difference at step {}: {}",
            self.step,
            serde_json::to_string(&self.op).expect("an op serializes")
        )?;
        writeln!(f, "  kube-scheduler {}", show(&self.upstream))?;
        write!(f, "  gangway        {}", show(&self.gangway))
    }
}

/// How a trace's differential went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome<O = Op, B = Observation> {
    /// Steps run.
    pub steps: usize,
    /// Steps whose observations are equal.
    pub equal: usize,
    /// The first difference, if any.
    pub first: Option<Difference<O, B>>,
    /// The step from which the real code itself gave different observations run to run (the
    /// order its goroutines took): the steps before it are compared, the rest are not.
    pub varies_from: Option<usize>,
    /// Pops where several pods tied in the queue's order and gangway took the one the real
    /// code popped instead of its own first (queue traces: `queue::run_following`).
    pub tie_pops: usize,
}

/// Compares two runs of `ops` step by step.
pub fn compare<O: Clone, B: Clone + PartialEq>(
    ops: &[O],
    upstream: &[B],
    gangway: &[B],
) -> Outcome<O, B> {
    let steps = ops.len();
    let equal = (0..steps)
        .filter(|&i| upstream.get(i).is_some() && upstream.get(i) == gangway.get(i))
        .count();
    let first = (0..steps)
        .find(|&i| upstream.get(i).is_none() || upstream.get(i) != gangway.get(i))
        .map(|i| Difference {
            step: i + 1,
            op: ops[i].clone(),
            upstream: upstream.get(i).cloned(),
            gangway: gangway.get(i).cloned(),
        });
    Outcome {
        steps,
        equal,
        first,
        varies_from: None,
        tie_pops: 0,
    }
}

/// Runs `ops` through the Go harness at `harness`.
pub fn run_upstream(harness: &Path, ops: &[Op]) -> Result<Vec<Observation>, String> {
    trace::parse_observations(&run_harness(harness, &trace::to_json_lines(ops))?)
}

/// Runs the Go harness at `harness` on `input` (JSON lines); its standard output.
pub fn run_harness(harness: &Path, input: &str) -> Result<String, String> {
    let mut child = Command::new(harness)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", harness.display()))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .map_err(|e| format!("cannot write the trace to {}: {e}", harness.display()))?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("{} failed: {e}", harness.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} exited with {}: {}",
            harness.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs `ops` through both — gangway's queue configured as `config`, following the real code's
/// choice among pods tied at a pop (`queue::run_following`) — and compares them.
pub fn differential(harness: &Path, ops: &[Op], config: QueueConfig) -> Result<Outcome, String> {
    let upstream = run_upstream(harness, ops)?;
    let (gangway, tie_pops) = queue::run_following(ops, config, &upstream);
    Ok(Outcome {
        tie_pops,
        ..compare(ops, &upstream, &gangway)
    })
}

/// Runs one `queue_moves` fuzz corpus input through both queues: made a trace
/// ([`corpus::trace_of`]) and run through the Go harness at `harness`; where the real heap
/// popped another tied pod than the lockstep did, made a trace again following the real
/// code's pops ([`corpus::trace_following`]), so that the picks and the ops left out are
/// decided on the queue it has — until the pops agree (at most [`CORPUS_ROUNDS`] runs).
/// Returns the trace and the comparison of its last run.
pub fn corpus_differential(
    harness: &Path,
    input: &gangway_model::queue::lockstep::Input,
) -> Result<(corpus::Translation, Outcome), String> {
    let mut translation = corpus::trace_of(input)?;
    for round in 1..=CORPUS_ROUNDS {
        let upstream = run_upstream(harness, &translation.ops)?;
        let real_pops: Vec<Option<String>> = translation
            .ops
            .iter()
            .zip(&upstream)
            .filter(|(op, _)| matches!(op, Op::Pop))
            .map(|(_, o)| o.popped.clone())
            .collect();
        let next = (real_pops != translation.pops && round < CORPUS_ROUNDS)
            .then(|| corpus::trace_following(input, &real_pops))
            .transpose()?
            .filter(|next| next.ops != translation.ops || next.pops != translation.pops);
        match next {
            Some(next) => translation = next,
            None => {
                let (gangway, tie_pops) =
                    queue::run_following(&translation.ops, input.setup.config(), &upstream);
                let outcome = Outcome {
                    tie_pops,
                    ..compare(&translation.ops, &upstream, &gangway)
                };
                return Ok((translation, outcome));
            }
        }
    }
    unreachable!("the last round compares")
}

/// How many times at most [`corpus_differential`] runs one input through the Go harness.
pub const CORPUS_ROUNDS: usize = 8;

/// Runs a gang trace through the Go harness at `harness` (`upstream/cmd/gangtrace`) and
/// through gangway's gang plugin in `Mode::Upstream`, and compares them.
pub fn gang_differential(
    harness: &Path,
    ops: &[gang_trace::GangOp],
) -> Result<Outcome<gang_trace::GangOp, gang_trace::GangObservation>, String> {
    let output = run_harness(harness, &gang_trace::to_json_lines(ops))?;
    let upstream = gang_trace::parse_observations(&output)?;
    Ok(compare(ops, &upstream, &gang::run(ops)))
}

/// Runs a driver trace through the Go harness at `harness` (`upstream/cmd/drivertrace`) and
/// through gangway's scheduler in `Mode::Upstream`, and compares them.
pub fn driver_differential(
    harness: &Path,
    ops: &[driver_trace::DriverOp],
) -> Result<Outcome<driver_trace::DriverOp, driver_trace::DriverObservation>, String> {
    let input = driver_trace::to_json_lines(ops);
    let run = || driver_trace::parse_observations(&run_harness(harness, &input)?);
    let gangway = driver::run(ops);
    let mut runs = vec![run()?];
    let outcome = compare(ops, &runs[0], &gangway);
    if outcome.first.is_none() {
        return Ok(outcome);
    }
    // Where two of the real code's goroutines act at one instant (a delete handler and a
    // binding cycle, two timers), the order they take is its own: a trace may have several
    // outcomes there. gangway's run is equal if it is one of them.
    for _ in 0..DRIVER_REPEATS {
        let again = run()?;
        let outcome = compare(ops, &again, &gangway);
        if outcome.first.is_none() {
            return Ok(outcome);
        }
        runs.push(again);
    }
    // The run gangway follows furthest; if the real code already varied before gangway left
    // it, the steps from there are not compared.
    let best = runs
        .iter()
        .max_by_key(|r| {
            compare(ops, r, &gangway)
                .first
                .map_or(usize::MAX, |d| d.step)
        })
        .expect("one run at least");
    let outcome = compare(ops, best, &gangway);
    let left = outcome.first.as_ref().map_or(ops.len(), |d| d.step - 1);
    let varies = (0..left).find(|&i| runs.iter().any(|r| r.get(i) != best.get(i)));
    match varies {
        Some(i) => {
            let mut settled = compare(&ops[..i], &best[..i], &gangway[..i]);
            settled.varies_from = Some(i + 1);
            Ok(settled)
        }
        None => Ok(outcome),
    }
}

/// How many more times the driver's Go harness runs a trace that differs, to find the real
/// code's outcome gangway's is, or tell a difference from its own nondeterminism. 48: on
/// `upstream/traces/varies/driver_error_backoff_near_a_flush.jsonl` the real code takes
/// gangway's outcome in about one run of four, and every run agrees before that step, so
/// sixteen repeats all missed it once in about a thousand generated traces (0.75^17 ≈ 0.7%);
/// 49 runs miss it with a chance of about 7 in 10 million. Only a differing trace pays.
pub const DRIVER_REPEATS: usize = 48;

#[cfg(test)]
mod tests {
    use super::*;

    fn ops() -> Vec<Op> {
        trace::parse(
            "# a comment\n{\"op\":\"add\",\"pod\":\"a\"}\n\n{\"op\":\"pop\"}\n{\"op\":\"done\",\"pod\":\"a\"}\n",
        )
        .unwrap()
    }

    #[test]
    fn equal_runs_have_no_difference_and_a_changed_place_is_the_first() {
        let ops = ops();
        let ours = queue::run(&ops, QueueConfig::DEFAULT);
        assert_eq!(ours[1].popped.as_deref(), Some("a"));
        assert_eq!(ours[1].places["a"], "in_flight");
        assert_eq!(ours[2].places["a"], "absent");
        let clean = compare(&ops, &ours, &ours);
        assert_eq!((clean.steps, clean.equal, clean.first), (3, 3, None));
        let mut theirs = ours.clone();
        theirs[1].places.insert("a".into(), "active".into());
        let diff = compare(&ops, &theirs, &ours);
        assert_eq!(diff.equal, 2);
        let first = diff.first.unwrap();
        assert_eq!(first.step, 2);
        assert!(first
            .to_string()
            .starts_with("first difference at step 2: {\"op\":\"pop\"}"));
        let short = compare(&ops, &theirs[..1], &ours);
        assert_eq!(
            short.first.unwrap().step,
            2,
            "a run that stopped early differs"
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let err = trace::parse("{\"op\":\"pop\"}\n{\"op\":\"fly\"}\n").unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
    }
}
