#![cfg(not(loom))]
//! Every queue conformance case (`cases()` and `FIDELITY`, `tests/conformance_queue.rs`) also
//! runs through kube-scheduler's own scheduling queue: each is exported as a differential
//! trace (`gangway_tests::queue_conformance::export`) and run by the Go harness
//! `upstream/cmd/queuetrace` (k8s.io/kubernetes v1.36.3) and by gangway's queue, observation
//! against observation — the table's own expectations play no part there, the real code is
//! the judge. Two passes: each case with its own configuration (SchedulerPopFromBackoffQ off
//! for the older rules, on for 1.36's), and each case again with 1.36's rules (the 1 s
//! ordering window, pop from backoff).
//!
//! `GANGWAY_QUEUETRACE=/path/to/queuetrace` turns the differential on (`.ci/run` builds the
//! harness; see upstream/README.md); without it the differential test says so and passes.
//! The exporter's own test needs no Go: every case exports (or is refused for a named reason)
//! and its trace, run through gangway's queue, agrees with the case's expectations where they
//! overlap (places, pops).

use std::path::PathBuf;
use std::time::Duration;

use gangsched::QueueConfig;
use gangway_cli::differential::{self, queue, Outcome};
use gangway_tests::queue_conformance::{cases, export, Case, Expect, FIDELITY};

/// Every case, the table's then the fidelity cases.
fn all_cases() -> impl Iterator<Item = &'static Case> {
    cases().chain(FIDELITY)
}

/// The cases kube-scheduler 1.36 cannot run as configured, by name, with why.
const REFUSED: &[(&str, &str)] = &[
    (
        "a pod the queue knows (queued or in flight) cannot be added again",
        "AddAgain",
    ),
    ("ordering window of 1 s", "ordering window"),
    (
        "add two pod to activeQ and sort them by the timestamp",
        "time only moves forward",
    ),
    (
        "add two pod to unschedulablePods then move them to activeQ",
        "time only moves forward",
    ),
];

/// The cases whose table expectations take 1.32's rule at a backoff's expiry (the table runs
/// `QueueConfig::BEFORE_1_33`: a backoff ending now is over, `boTime.After(now)`). Their
/// traces turn SchedulerPopFromBackoffQ off, which both queues run as v1.36.3 does — a
/// backoff ending now still holds (`!boTime.Before(now)`, `QueueConfig::POP_FROM_BACKOFF_OFF`)
/// — so kube-scheduler and gangway agree on them, and the table's expectations at the expiry
/// are not the trace's. (They were known differences until the corpus differential made
/// gangway run the gate off as v1.36.3 does.)
const OLDER_RULE_AT_THE_EXPIRY: &[&str] = &[
    "Queue queues pod to activeQ if Pod is not backing off (the event at exactly",
    "backoff 1, 2, 4, 8, 10, 10, 10 s",
    "error failures back off apart",
    "preEnqueue plugin registered, preEnqueue rejects the pod, even if it is after",
    "QueueHintFunction is called when Pod is gated by the plugin that is interested in the event (to backoff",
    "Gated metric should be 0 when Ungated -> Gated -> Ungated (BackoffQ)",
];
const NO_139162: &str = "the case turns on QueueConfig::wildcards_move_gated \
    (kubernetes#139162), which is not in v1.36.3: movePodsToActiveOrBackoffQueue skips a gated \
    pod unless its gate registered the event, and a wildcard (UnschedulableTimeout, the leftover \
    flush) matches none";

/// The cases known to differ in the pass with the cases' own configuration (the older rules).
const KNOWN_AS_CONFIGURED: &[(&str, &str)] = &[
    (
        "a wildcard event moves a gated pod whatever its gate registered",
        NO_139162,
    ),
    (
        "a gated pod flushed and still gated waits another 5 min",
        NO_139162,
    ),
];

/// The cases known to differ with 1.36's rules: none (kubernetes#139162 is off there, as in
/// v1.36.3).
const KNOWN_WITH_136: &[(&str, &str)] = &[];

/// The same configuration with 1.36's rules.
fn rules_136(config: QueueConfig) -> QueueConfig {
    config
        .with_ordering_window(Some(Duration::from_secs(1)))
        .with_pop_from_backoff(true)
        .with_wildcards_move_gated(false)
}

#[test]
fn every_case_exports_and_its_trace_agrees_with_the_table_on_gangways_queue() {
    let (mut exported, mut refused, mut unknown) = (0, 0, Vec::new());
    let mut older_rule = 0;
    for case in all_cases() {
        let trace = match export(case, case.config) {
            Ok(trace) => trace,
            Err(reason) => {
                let known = REFUSED
                    .iter()
                    .any(|(name, why)| case.name.starts_with(name) && reason.contains(why));
                if !known {
                    unknown.push(format!("{} / {:?}: {reason}", case.source, case.name));
                }
                refused += 1;
                continue;
            }
        };
        exported += 1;
        // A trace that turns SchedulerPopFromBackoffQ off is run as v1.36.3 runs it: nothing
        // truncated, a backoff ending now still held (QueueConfig::POP_FROM_BACKOFF_OFF), not
        // as the table's older exact rule; the rest of the configuration is the case's.
        let as_run = match case.config.pop_from_backoff {
            false => case
                .config
                .with_ordering_window(QueueConfig::POP_FROM_BACKOFF_OFF.ordering_window),
            true => case.config,
        };
        assert_eq!(
            queue::configured(QueueConfig::DEFAULT, &trace.ops[0]),
            as_run,
            "{:?}: the config op is the case's configuration",
            case.name
        );
        let seen = queue::run(&trace.ops, QueueConfig::DEFAULT);
        if OLDER_RULE_AT_THE_EXPIRY
            .iter()
            .any(|prefix| case.name.starts_with(prefix))
        {
            older_rule += 1;
            continue;
        }
        for want in &trace.expect {
            let ctx = || format!("{} / {:?}: {want:?}", case.source, case.name);
            match *want {
                Expect::Place { op, pod, place } => {
                    // A pod the trace never named is absent.
                    let seen = seen[op].places.get(pod).map_or("absent", String::as_str);
                    assert_eq!(seen, place, "{}", ctx());
                }
                Expect::Popped { op, pod } => {
                    assert_eq!(seen[op].popped.as_deref(), pod, "{}", ctx());
                }
            }
            assert_eq!(seen[want_op(want)].error, None, "{}", ctx());
        }
    }
    assert!(unknown.is_empty(), "refused: {unknown:#?}");
    assert_eq!(refused, REFUSED.len(), "each refusal is a case");
    assert_eq!(
        older_rule,
        OLDER_RULE_AT_THE_EXPIRY.len(),
        "each case of the older rule is one"
    );
    assert!(exported > 60, "{exported} cases exported");
}

fn want_op(want: &Expect) -> usize {
    match *want {
        Expect::Place { op, .. } | Expect::Popped { op, .. } => op,
    }
}

/// One pass of the differential over every case: its figures.
#[derive(Default)]
struct Pass {
    run: usize,
    skipped: Vec<String>,
    steps: usize,
    equal: usize,
    differ: Vec<String>,
    known: usize,
}

fn pass(
    harness: &std::path::Path,
    config: impl Fn(&Case) -> QueueConfig,
    known: &[(&str, &str)],
) -> Pass {
    let mut figures = Pass::default();
    for case in all_cases() {
        let label = format!("{} / {:?}", case.source, case.name);
        let trace = match export(case, config(case)) {
            Ok(trace) => trace,
            Err(reason) => {
                figures.skipped.push(format!("{label}: {reason}"));
                continue;
            }
        };
        let Outcome {
            steps,
            equal,
            first,
            ..
        } = differential::differential(harness, &trace.ops, QueueConfig::DEFAULT)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        figures.run += 1;
        figures.steps += steps;
        figures.equal += equal;
        let why = known.iter().find(|(name, _)| case.name.starts_with(name));
        match (first, why) {
            (Some(first), Some((_, why))) => {
                eprintln!("  known difference {label}: {why}\n{first}");
                figures.known += 1;
            }
            (Some(first), None) => figures.differ.push(format!("{label}\n{first}")),
            (None, Some(_)) => figures
                .differ
                .push(format!("{label}: known to differ, but equal now")),
            (None, None) => {}
        }
    }
    figures
}

#[test]
fn every_case_through_kube_schedulers_queue() {
    let Some(harness) = std::env::var_os("GANGWAY_QUEUETRACE").map(PathBuf::from) else {
        eprintln!(
            "skipped: set GANGWAY_QUEUETRACE to the Go harness (upstream/README.md: \
             go build -ldflags=-checklinkname=0 -o ../target/queuetrace ./cmd/queuetrace)"
        );
        return;
    };
    let mut failed = Vec::new();
    let passes = [
        ("as configured", false, KNOWN_AS_CONFIGURED),
        ("with 1.36's rules", true, KNOWN_WITH_136),
    ];
    for (what, rules, known) in passes {
        let config = |case: &Case| {
            if rules {
                rules_136(case.config)
            } else {
                case.config
            }
        };
        let p = pass(&harness, config, known);
        eprintln!(
            "{what}: {} cases run, {} skipped; {} of {} steps equal; {} known differences, \
             {} unexpected",
            p.run,
            p.skipped.len(),
            p.equal,
            p.steps,
            p.known,
            p.differ.len()
        );
        for skip in &p.skipped {
            eprintln!("  skipped {skip}");
        }
        for diff in &p.differ {
            eprintln!("  differs {diff}");
        }
        failed.extend(p.differ.into_iter().map(|d| format!("({what}) {d}")));
    }
    assert!(
        failed.is_empty(),
        "{} cases differ unexpectedly",
        failed.len()
    );
}
