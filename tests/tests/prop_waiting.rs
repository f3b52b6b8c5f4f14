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

use gangsched::{Cause, WaitingState};
use gangway_model::ops::waiting::Subject;
use gangway_model::waiting_lockstep::{
    How, Lockstep, Op, ShardedMap, TicketChoice, CAUSES, PLUGINS, PODS, STEPS, WAIT_STEPS,
};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

fn pod() -> impl Strategy<Value = u8> {
    0..PODS
}

fn plugin() -> impl Strategy<Value = u8> {
    0..PLUGINS.len() as u8
}

/// Waits from 0 to 8 steps (20m): 6 steps is the 15m cap.
fn wait() -> impl Strategy<Value = u8> {
    0..=WAIT_STEPS
}

/// None, a 1ns nudge, just short of a wait step, one and two steps, the cap.
fn step() -> impl Strategy<Value = u8> {
    0..STEPS.len() as u8
}

fn waits() -> impl Strategy<Value = Vec<(u8, u8)>> {
    prop_oneof![
        // Mostly a valid registration: distinct plugins in any order.
        8 => (
            prop::sample::subsequence(vec![0u8, 1, 2], 1..=3).prop_shuffle(),
            prop::collection::vec(wait(), 3),
        )
            .prop_map(|(plugins, waits)| plugins.into_iter().zip(waits).collect()),
        // Sometimes anything, including no plugin and a plugin named twice.
        1 => prop::collection::vec((plugin(), wait()), 0..=4),
    ]
}

fn ticket() -> impl Strategy<Value = TicketChoice> {
    prop_oneof![
        4 => Just(TicketChoice::Any),
        2 => Just(TicketChoice::Latest),
        1 => (0u8..4).prop_map(TicketChoice::Past),
    ]
}

/// Rejections as this test has always made them: `Unschedulable` "no room `msg`" from the
/// plugin, for [`Cause::Preempted`], through `WaitingState::reject`.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (pod(), waits()).prop_map(|(pod, waits)| Op::Add { pod, waits }),
        1 => (pod(), plugin()).prop_map(|(pod, plugin)| Op::AddUntimed { pod, plugin }),
        4 => (pod(), ticket(), plugin())
            .prop_map(|(pod, ticket, plugin)| Op::Allow { pod, ticket, plugin }),
        1 => (pod(), ticket(), plugin(), 0u8..3).prop_map(|(pod, ticket, plugin, msg)| {
            let how = How::for_cause(Cause::Preempted);
            Op::Reject { pod, ticket, plugin, msg, how }
        }),
        2 => step().prop_map(|step| Op::Advance { step }),
        2 => step().prop_map(|step| Op::Expire { step }),
        1 => pod().prop_map(|pod| Op::Query { pod }),
    ]
}

/// Every way of rejecting one pod: a plugin's rejection, a preemption, a rejection for any
/// cause, a delete.
fn how() -> impl Strategy<Value = How> {
    prop_oneof![
        Just(How::Reject),
        Just(How::Preempt),
        (0..CAUSES.len() as u8).prop_map(How::For),
        Just(How::Remove),
    ]
}

/// A gang's worth of pods, repeats included.
fn pods() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(pod(), 0..=5)
}

/// [`op`], and every rejection and the batches (`allow_all`, `reject_all`, their deferred
/// variants).
fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        14 => op(),
        2 => (pod(), ticket(), plugin(), 0u8..3, how())
            .prop_map(|(pod, ticket, plugin, msg, how)| Op::Reject { pod, ticket, plugin, msg, how }),
        2 => (pods(), plugin(), any::<bool>())
            .prop_map(|(pods, plugin, deferred)| Op::AllowAll { pods, plugin, deferred }),
        1 => (pods(), plugin(), 0u8..3, 0..CAUSES.len() as u8, any::<bool>()).prop_map(
            |(pods, plugin, msg, cause, deferred)| Op::RejectAll { pods, plugin, msg, cause, deferred }
        ),
    ]
}

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
