//! The bug corpus's proptest finds (`gangway_tests::bug_corpus`, docs/bug-corpus.md): real
//! scheduling-queue bugs planted in gangway's own queue (`checking::QueueFlaw`) and found by
//! the proptest that runs the real queue in lockstep with the reference model
//! (`prop_queue.rs`'s, the same strategy), or in the waiting map's own code
//! (`checking::WaitingFlaw`) and found by `prop_waiting.rs`'s lockstep of the sharded map. A randomized checker, so each bug is sought from ten
//! fixed seeds, each within the default bound of 256 cases, and the test asserts that at least
//! one finds it and prints how many do and how fast (`--nocapture`).

#![cfg(not(any(loom, shuttle)))]

use std::time::Instant;

use gangsched::checking::{QueueFlaw, WaitingFlaw};
use gangway_model::queue::lockstep::{Lockstep, Setup};
use gangway_model::waiting_lockstep::{Lockstep as WaitingLockstep, ShardedMap};
use gangway_tests::{queue_ops, waiting_ops};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

/// Cases per seed: proptest's default, what CI runs `prop_queue` with.
const CASES: u32 = 256;
/// Seeds tried per bug.
const SEEDS: u8 = 10;

/// A proptest runner over [`CASES`] cases from `seed`, saving nothing.
fn runner(seed: u8) -> TestRunner {
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    )
}

/// What one seed's search found: the shrunk failure, if any.
fn failure<T: std::fmt::Debug>(outcome: Result<(), TestError<T>>) -> Option<String> {
    match outcome {
        Err(TestError::Fail(why, _)) => Some(why.to_string()),
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
        Ok(()) => None,
    }
}

/// The queue lockstep with `flaw` planted, from `seed`.
fn queue_search(flaw: QueueFlaw, seed: u8) -> Option<String> {
    let strategy = (any::<u8>(), queue_ops::ops(80));
    failure(runner(seed).run(&strategy, |(setup, ops)| {
        let mut lockstep = Lockstep::new(Setup(setup).config()).planted(flaw);
        for (i, op) in ops.iter().enumerate() {
            lockstep
                .step(op)
                .map_err(|e| TestCaseError::fail(format!("op {i} {op:?}: {e}")))?;
        }
        Ok(())
    }))
}

/// The waiting map's lockstep (`prop_waiting`'s sharded map) with `flaw` planted, from
/// `seed`.
fn waiting_search(flaw: WaitingFlaw, seed: u8) -> Option<String> {
    let strategy = prop::collection::vec(waiting_ops::any_op(), 1..60);
    failure(runner(seed).run(&strategy, |ops| {
        let mut lockstep = WaitingLockstep::new(ShardedMap::with_flaw(flaw));
        for (i, op) in ops.iter().enumerate() {
            lockstep
                .step(op)
                .map_err(|e| TestCaseError::fail(format!("op {i} {op:?}: {e}")))?;
        }
        Ok(())
    }))
}

/// Seeks a bug from [`SEEDS`] seeds with `search`; at least one must find it, its failure
/// naming `telling`. Prints how many seeds found it and how fast.
fn found(bug: &str, telling: &str, search: impl Fn(u8) -> Option<String>) {
    let mut times = Vec::new();
    for seed in 0..SEEDS {
        let started = Instant::now();
        if let Some(failure) = search(seed) {
            assert!(failure.contains(telling), "{bug}, seed {seed}: {failure}");
            times.push(started.elapsed().as_secs_f64());
        }
    }
    assert!(
        !times.is_empty(),
        "{bug}: no seed of {SEEDS} found it in {CASES} cases"
    );
    times.sort_by(f64::total_cmp);
    println!(
        "corpus {bug}: found by proptest from {}/{SEEDS} seeds within {CASES} cases; median \
         {:.2} s to the shrunk failure",
        times.len(),
        times[times.len() / 2]
    );
}

#[test]
fn kubernetes_118226_an_update_queues_a_pod_in_flight() {
    found("kubernetes#118226", ": update: queue", |seed| {
        queue_search(QueueFlaw::UpdateQueuesPodInFlight, seed)
    });
}

#[test]
fn kubernetes_pr_120334_stale_rejectors_park_a_failed_pod() {
    found("kubernetes PR #120334", ": pop: queue", |seed| {
        queue_search(QueueFlaw::KeepsStaleRejectors, seed)
    });
}

#[test]
fn kubernetes_pr_73309_an_event_during_the_attempt_is_lost() {
    found("kubernetes PR #73309", "I7: ", |seed| {
        queue_search(QueueFlaw::ForgetsEventsInFlight, seed)
    });
}

#[test]
fn kubernetes_138316_a_deleted_pod_s_attempt_never_ends() {
    found("kubernetes#138316", " HandBack {", |seed| {
        queue_search(QueueFlaw::DeletedPodStaysInFlight, seed)
    });
}

#[test]
fn kubernetes_pr_135719_a_rejection_claims_a_decided_pod() {
    found(
        "kubernetes PR #135719",
        "H4: answered Decided(true)",
        |seed| waiting_search(WaitingFlaw::RejectClaimsADecidedPod, seed),
    );
}
