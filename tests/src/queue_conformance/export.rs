//! The exporter: a conformance [`Case`] as a differential trace (`gangway_cli::differential`),
//! so kube-scheduler's own queue (`upstream/cmd/queuetrace`) runs it too. It only translates:
//! each operation step becomes an op at its explicit time (the clock advanced to the step's
//! time first), the configuration a `config` op with the conformance profile; expectation
//! steps become [`Expect`]s on the observations (the places and pops both sides report), or
//! are left out (pop order, lengths, counts, attempt numbers: not observed). A case the Go
//! side cannot express is refused with the reason.

use std::time::Duration;

use gangsched::{QueueConfig, Time};
use gangway_cli::differential::trace::Precheck;
use gangway_cli::differential::Op;

use super::vocabulary::{At, Case, Ev, Pre, Step};

/// What the table expects of one observation of the exported trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// After op `op` (its index in [`Exported::ops`]), `pod` is at `place` (the observation's
    /// name: `active`, `backoff`, `error_backoff`, `unschedulable`, `gated`, `in_flight`,
    /// `absent`).
    Place {
        /// The op's index.
        op: usize,
        /// The pod.
        pod: &'static str,
        /// Its place.
        place: &'static str,
    },
    /// Op `op`, a pop, returned `pod` (`None`: nothing).
    Popped {
        /// The op's index.
        op: usize,
        /// The pod popped.
        pod: Option<&'static str>,
    },
}

/// A case as a trace.
#[derive(Clone, Debug)]
pub struct Exported {
    /// The trace, its `config` op first.
    pub ops: Vec<Op>,
    /// The table's expectations on its observations.
    pub expect: Vec<Expect>,
}

/// The observation's name of a place.
pub fn place_name(at: At) -> &'static str {
    match at {
        At::Active => "active",
        At::Backoff(_) => "backoff",
        At::ErrorBackoff(_) => "error_backoff",
        At::Unschedulable => "unschedulable",
        At::Gated => "gated",
        At::InFlight => "in_flight",
        At::Gone => "absent",
    }
}

/// `case` (its setup, then its steps) as a trace with its queue configured as `config`
/// (`case.config`, or the same with other rules); `Err` says why kube-scheduler 1.36 cannot
/// run it.
pub fn export(case: &Case, config: QueueConfig) -> Result<Exported, String> {
    let mut ops = vec![config_op(config)?];
    let mut expect = Vec::new();
    let mut clock = Time::ZERO;
    for (i, step) in case.setup.iter().chain(case.steps).enumerate() {
        if let Some(at) = time_of(step) {
            if at < clock {
                return Err(format!(
                    "step {i} is at {at}, before the clock ({clock}): a trace's time only moves forward"
                ));
            }
            let delta = at.as_nanos() - clock.as_nanos();
            if delta.is_multiple_of(1_000_000) && delta > 0 {
                ops.push(Op::AdvanceMs {
                    ms: delta / 1_000_000,
                });
            } else if delta > 0 {
                ops.push(Op::AdvanceNs { ns: delta });
            }
            clock = at;
        }
        let place = |op: usize, pod, at| Expect::Place {
            op,
            pod,
            place: place_name(at),
        };
        let next = ops.len();
        match *step {
            Step::Add(pod, priority, _, want) => {
                ops.push(Op::Add {
                    pod: pod.into(),
                    priority,
                    group: None,
                });
                expect.push(place(next, pod, want));
            }
            Step::AddAgain(_) => {
                return Err("AddAgain: gangway refuses to add a pod it already knows \
                            (AlreadyQueued, a documented refusal); kube-scheduler re-adds it"
                    .into())
            }
            Step::Pop(pod) | Step::PopAttempt(pod, _) => {
                ops.push(Op::Pop);
                expect.push(Expect::Popped {
                    op: next,
                    pod: Some(pod),
                });
            }
            Step::PopNone => {
                ops.push(Op::Pop);
                expect.push(Expect::Popped {
                    op: next,
                    pod: None,
                });
            }
            Step::Back {
                pod,
                rejected,
                pending,
                want,
                ..
            } => {
                ops.push(if rejected.is_empty() && pending.is_empty() {
                    Op::Error { pod: pod.into() }
                } else {
                    Op::Unschedulable {
                        pod: pod.into(),
                        plugins: names(rejected),
                        pending: names(pending),
                    }
                });
                expect.push(place(next, pod, want));
            }
            Step::Done(pod) => ops.push(Op::Done { pod: pod.into() }),
            Step::Event(ev, pre, _, _) => ops.push(move_all(ev, pre)),
            Step::Activate(pods, _, _) => ops.push(Op::Activate { pods: names(pods) }),
            Step::FlushBackoff(..) => ops.push(Op::FlushBackoff),
            Step::FlushLeftover(..) => ops.push(Op::FlushLeftover),
            Step::Update(pod, priority, _, want) => {
                ops.push(Op::Update {
                    pod: pod.into(),
                    priority,
                });
                expect.push(place(next, pod, want));
            }
            Step::Delete(pod, _) => ops.push(Op::Delete { pod: pod.into() }),
            Step::Gate(open) => ops.push(Op::Gate { open }),
            Step::Is(pod, want) => expect.push(place(next - 1, pod, want)),
            Step::FirstActivated(..) | Step::Order(_) | Step::Lengths(_) => {}
        }
    }
    Ok(Exported { ops, expect })
}

/// The `config` op for `config`, if kube-scheduler 1.36 can be configured so.
fn config_op(config: QueueConfig) -> Result<Op, String> {
    let ms = |what: &str, d: Duration| match u64::try_from(d.as_millis()) {
        Ok(ms) if ms > 0 && Duration::from_millis(ms) == d => Ok(ms),
        _ => Err(format!(
            "{what} {d:?}: the harness sets whole milliseconds above 0"
        )),
    };
    // 1.36 has the 1 s ordering window exactly when SchedulerPopFromBackoffQ is on.
    let pop_from_backoff = match (config.ordering_window, config.pop_from_backoff) {
        (Some(w), true) if w == Duration::from_secs(1) => true,
        (None, false) => false,
        (window, pop) => {
            return Err(format!(
                "ordering window {window:?} with pop from backoff {pop}: in kube-scheduler 1.36 \
                 the 1 s window comes with SchedulerPopFromBackoffQ, and only with it"
            ))
        }
    };
    Ok(Op::Config {
        profile: Some("conformance".into()),
        initial_backoff_ms: Some(ms("initial backoff", config.initial_backoff)?),
        max_backoff_ms: Some(ms("max backoff", config.max_backoff)?),
        max_in_unschedulable_ms: Some(ms("max in unschedulable", config.max_in_unschedulable)?),
        pop_from_backoff: Some(pop_from_backoff),
        gang_gates: Some(config.group_members_back_off),
        wildcards_move_gated: config.wildcards_move_gated.then_some(true),
    })
}

/// When an operation step happens (`None`: an expectation, or no time of its own).
fn time_of(step: &Step) -> Option<Time> {
    match *step {
        Step::Add(_, _, at, _)
        | Step::Back { at, .. }
        | Step::Event(_, _, at, _)
        | Step::Activate(_, at, _)
        | Step::FlushBackoff(at, _)
        | Step::FlushLeftover(at, _)
        | Step::Update(_, _, at, _) => Some(at),
        _ => None,
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// An event with its precheck as a `move_all` op.
fn move_all(ev: Ev, pre: Pre) -> Op {
    let (event, node) = match ev {
        Ev::NodeAdd(node) => ("NodeAdd", Some(node.to_owned())),
        Ev::NodeUpdate => ("NodeUpdate", Some("node1".to_owned())),
        Ev::PodDeleted => ("AssignedPodDelete", None),
        Ev::GroupAdded => ("PodGroupAdd", None),
        Ev::Timeout => ("UnschedulableTimeout", None),
    };
    let (precheck, min) = match pre {
        Pre::All => (None, None),
        Pre::MinPriority(min) => (Some(Precheck::MinPriority), Some(min)),
        Pre::EvenAtLeast(min) => (Some(Precheck::EvenAtLeast), Some(min)),
        Pre::EvenNegative => (Some(Precheck::EvenNegative), None),
        Pre::Never => (Some(Precheck::Never), None),
    };
    Op::MoveAll {
        event: event.into(),
        node,
        pod: None,
        priority: None,
        precheck,
        min,
        exclude: None,
    }
}
