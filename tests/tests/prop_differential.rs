#![cfg(not(loom))]
//! proptest-generated traces through kube-scheduler's own code (`upstream/`, k8s.io/kubernetes
//! v1.36.3), observation against observation with gangway in `Mode::Upstream`; a difference
//! is shrunk to the smallest input that shows it ([`gangway_tests::generated_differential`]).
//!
//! - **Queue**: the very inputs `prop_queue` checks against the reference model
//!   ([`gangway_tests::queue_ops`]: adds, updates, deletes, pops, hand backs alone and as
//!   gangs, events, activations, flushes, time, close), under any queue setup kube-scheduler
//!   1.36 has the rules of (`lockstep::Setup::upstream_has`), made traces as the `queue_moves`
//!   fuzz corpus is (`differential::corpus_differential`) and run by `upstream/cmd/queuetrace`.
//! - **Gang**: arbitrary gang arrivals (two gangs and solo pods), PreEnqueue, scheduling cycles
//!   with scripted Permit plugins, allows, rejections, preemptions, binds, forgets, deletes and
//!   time, through the real GangScheduling plugin and waiting pods (`upstream/cmd/gangtrace`).
//! - **Driver**: pods arriving, `ScheduleOne` with scripted Permit answers, bind failures,
//!   bindings held at PreBind, deletes, the node leaving and coming back, time, through the
//!   real Scheduler (`upstream/cmd/drivertrace`).
//!
//! The gang and driver traces come from the same generators as `gangway differential
//! --generate-gang` and `--generate-driver`, their choices read from proptest's bytes
//! (`differential::choices::ByteChoices`) instead of a seed, so each op is still built
//! against gangway's runner and valid, and shrinking the bytes shrinks the trace.
//!
//! Each test needs its harness: `GANGWAY_QUEUETRACE`, `GANGWAY_GANGTRACE`,
//! `GANGWAY_DRIVERTRACE` name the binaries (`.ci/run` builds them; see upstream/README.md);
//! without one its test says so and passes. `PROPTEST_CASES` sets the cases (default 64).

use gangway_cli::differential::choices::ByteChoices;
use gangway_cli::differential::{
    self, driver_generate, driver_trace, gang_generate, gang_trace, trace, Outcome,
};
use gangway_model::queue::lockstep::{Input, Setup, MAX_OPS};
use gangway_tests::generated_differential::{self, Checked};
use gangway_tests::queue_ops;
use proptest::prelude::*;
use serde::Serialize;

/// Operations of a generated gang trace at most.
const GANG_STEPS: usize = 120;
/// Operations of a generated driver trace at most.
const DRIVER_STEPS: usize = 80;

/// `Ok` with the compared steps (all, or those before the real code varied run to run) if
/// `outcome` has no difference; else the difference and the trace (`lines`).
fn checked<O: Serialize, B: Serialize>(outcome: Outcome<O, B>, lines: String) -> Checked {
    match outcome.first {
        None => Ok((outcome.steps, outcome.equal)),
        Some(difference) => Err(format!("{difference}\nthe trace:\n{lines}")),
    }
}

#[test]
fn kube_schedulers_queue_agrees_on_generated_inputs() {
    generated_differential::run(
        "GANGWAY_QUEUETRACE",
        "proptest-regressions/prop_differential_queue.txt",
        // Any setup kube-scheduler 1.36 has a rule for: its defaults, the rules before 1.33,
        // the gang gates' backoff rule, short timing.
        (any::<u8>(), queue_ops::ops(MAX_OPS)).prop_map(|(setup, ops)| Input {
            setup: Setup(setup & !Setup::GANGWAY_ONLY & 0x7f),
            ops,
        }),
        |harness, input| {
            let (translation, outcome) = differential::corpus_differential(harness, &input)?;
            checked(outcome, trace::to_json_lines(&translation.ops))
        },
    );
}

#[test]
fn kube_schedulers_gang_plugin_agrees_on_generated_traces() {
    generated_differential::run(
        "GANGWAY_GANGTRACE",
        "proptest-regressions/prop_differential_gang.txt",
        prop::collection::vec(any::<u8>(), 0..8 * GANG_STEPS),
        |harness, bytes| {
            let ops = gang_generate::trace_from(&mut ByteChoices::new(&bytes), GANG_STEPS);
            let outcome = differential::gang_differential(harness, &ops)?;
            checked(outcome, gang_trace::to_json_lines(&ops))
        },
    );
}

#[test]
fn kube_schedulers_driver_agrees_on_generated_traces() {
    generated_differential::run(
        "GANGWAY_DRIVERTRACE",
        "proptest-regressions/prop_differential_driver.txt",
        prop::collection::vec(any::<u8>(), 0..8 * DRIVER_STEPS),
        |harness, bytes| {
            let ops = driver_generate::trace_from(&mut ByteChoices::new(&bytes), DRIVER_STEPS);
            let outcome = differential::driver_differential(harness, &ops)?;
            checked(outcome, driver_trace::to_json_lines(&ops))
        },
    );
}
