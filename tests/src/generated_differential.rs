//! The differential against kube-scheduler's own code over proptest-generated inputs: each
//! input run through a Go harness of `upstream/` and through gangway; a difference fails the
//! case and proptest shrinks it, so the report is the smallest input found with its trace and
//! first difference. Used by `tests/prop_differential.rs`.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};

/// Cases when `PROPTEST_CASES` does not say: each runs a Go harness once or a few times.
pub const DEFAULT_CASES: u32 = 64;

/// How long proptest shrinks a failing input at most, in milliseconds.
pub const MAX_SHRINK_MS: u32 = 120_000;

/// How one input went: `Ok` with its steps and equal steps (all of them compared, or those
/// before the real code itself varied run to run), `Err` with a report — the first difference
/// and the trace, or why the harness did not run.
pub type Checked = Result<(usize, usize), String>;

/// Runs `PROPTEST_CASES` (default [`DEFAULT_CASES`]) inputs of `strategy` through `check`
/// with the harness whose path the environment variable `harness_var` holds, failures saved
/// in (and replayed first from) `regressions`, relative to `tests/`. Without the variable it
/// says so and passes. Panics with the shrunk report on a difference; returns the inputs, steps
/// and equal steps of the passing runs (shrinking's included).
pub fn run<S: Strategy>(
    harness_var: &str,
    regressions: &'static str,
    strategy: S,
    check: impl Fn(&Path, S::Value) -> Checked,
) -> (usize, usize, usize) {
    let Some(harness) = std::env::var_os(harness_var).map(PathBuf::from) else {
        eprintln!("{harness_var} is not set: the differential against kube-scheduler is off");
        return (0, 0, 0);
    };
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        // A differing trace runs its harness many times (a driver trace up to 49): shrinking
        // stops after two minutes with the smallest input found by then.
        max_shrink_time: MAX_SHRINK_MS,
        ..Config::default()
    });
    let (inputs, steps, equal) = (Cell::new(0), Cell::new(0), Cell::new(0));
    let result = runner.run(&strategy, |input| {
        let (run, same) = check(&harness, input).map_err(TestCaseError::fail)?;
        inputs.set(inputs.get() + 1);
        steps.set(steps.get() + run);
        equal.set(equal.get() + same);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let totals = (inputs.get(), steps.get(), equal.get());
    eprintln!(
        "{} generated inputs through {}: {} of {} steps equal",
        totals.0,
        harness.display(),
        totals.2,
        totals.1
    );
    totals
}
