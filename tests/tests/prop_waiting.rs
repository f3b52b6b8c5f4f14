#![cfg(not(loom))]
//! Property tests: the real waiting map — the pure [`gangsched::WaitingState`] and the sharded
//! [`gangsched::WaitingPods`] — run in lockstep with the reference model
//! [`gangway_model::waiting::WaitingModel`] over random operation sequences.
//!
//! The driver is [`gangway_model::waiting_lockstep`], shared with the `waiting_map` fuzz target
//! so that both check the same things after every op: equal answers and decisions (pod,
//! status, cause, registration), exactly the due pods expired in order, `check()`, the same
//! waiting pods with the same registrations and pending plugins, decided pods not waiting
//! again, nothing lost; on the sharded map also each shard's check, its views, its handles'
//! latches and the decisions its sink got. The universe is small on purpose (pods `p0`..`p5`,
//! plugins `A`, `B`, `C`, waits in steps of 2m30s up to 20m, time advancing in coarse steps
//! plus 1ns nudges) so that re-adds, deadline ties, the 15-minute cap and "exactly at the
//! deadline" happen often. The case count comes from `PROPTEST_CASES` (default 256).

use gangsched::WaitingState;
use gangway_model::ops::waiting::Subject;
use gangway_model::waiting_lockstep::{Lockstep, Op, ShardedMap};
use gangway_tests::waiting_ops::{any_op, op};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

fn step_on<S: Subject>(lockstep: &mut Lockstep<S>, op: &Op) -> Result<(), TestCaseError> {
    lockstep.step(op).map_err(TestCaseError::fail)
}

/// Draining: everything still waiting expires by the cap, in order, but for the untimed,
/// which their plugin (the driver) rejects; nothing is left ([`Lockstep::drain`]).
fn drain<S: Subject>(lockstep: &mut Lockstep<S>) -> Result<(), TestCaseError> {
    lockstep.drain().map_err(TestCaseError::fail)?;
    let state = lockstep.subject.state();
    prop_assert!(state.is_empty() && lockstep.model.is_empty());
    prop_assert_eq!(lockstep.decisions(), lockstep.registrations());
    Ok(())
}

proptest! {
    // Only where failures are saved: `SourceParallel` cannot place files for an integration
    // test (no lib.rs beside it); the cwd of an integration test is the package root, tests/.
    // The case count stays with `PROPTEST_CASES`.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/prop_waiting.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn state_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        let mut lockstep = Lockstep::new(WaitingState::new());
        for op in &ops {
            step_on(&mut lockstep, op)?;
        }
        drain(&mut lockstep)?;
    }

    /// The sharded map beside the model, and the pure state beside it too: after every op
    /// both pass every check, and the map's shards merged are the pure state exactly (the
    /// same entries, deadlines and ticket counter).
    #[test]
    fn sharded_map_matches_model_and_state(ops in prop::collection::vec(any_op(), 1..60)) {
        let mut sharded = Lockstep::new(ShardedMap::new());
        let mut pure = Lockstep::new(WaitingState::new());
        for op in &ops {
            step_on(&mut sharded, op)?;
            step_on(&mut pure, op)?;
            prop_assert_eq!(&*sharded.subject.state(), &pure.subject);
        }
        drain(&mut sharded)?;
        drain(&mut pure)?;
    }
}
