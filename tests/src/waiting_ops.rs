//! Random operation sequences for the waiting map's lockstep driver
//! (`gangway_model::waiting_lockstep`), for proptest: `prop_waiting`'s and the bug corpus's.
//! The universe is small on purpose (pods `p0`..`p5`, plugins `A`, `B`, `C`, waits in steps of
//! 2m30s up to 20m, time advancing in coarse steps plus 1ns nudges) so that re-adds, deadline
//! ties, the 15-minute cap and "exactly at the deadline" happen often.

use gangsched::Cause;
use gangway_model::waiting_lockstep::{
    How, Op, TicketChoice, CAUSES, PLUGINS, PODS, STEPS, WAIT_STEPS,
};
use proptest::prelude::*;

/// A pod of the universe.
pub fn pod() -> impl Strategy<Value = u8> {
    0..PODS
}

/// A plugin of the universe.
pub fn plugin() -> impl Strategy<Value = u8> {
    0..PLUGINS.len() as u8
}

/// Waits from 0 to 8 steps (20m): 6 steps is the 15m cap.
pub fn wait() -> impl Strategy<Value = u8> {
    0..=WAIT_STEPS
}

/// None, a 1ns nudge, just short of a wait step, one and two steps, the cap.
pub fn step() -> impl Strategy<Value = u8> {
    0..STEPS.len() as u8
}

/// A registration: (plugin, wait) pairs.
pub fn waits() -> impl Strategy<Value = Vec<(u8, u8)>> {
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

/// Which registration of a pod an operation names.
pub fn ticket() -> impl Strategy<Value = TicketChoice> {
    prop_oneof![
        4 => Just(TicketChoice::Any),
        2 => Just(TicketChoice::Latest),
        1 => (0u8..4).prop_map(TicketChoice::Past),
    ]
}

/// Rejections as this test has always made them: `Unschedulable` "no room `msg`" from the
/// plugin, for [`Cause::Preempted`], through `WaitingState::reject`.
pub fn op() -> impl Strategy<Value = Op> {
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
pub fn how() -> impl Strategy<Value = How> {
    prop_oneof![
        Just(How::Reject),
        Just(How::Preempt),
        (0..CAUSES.len() as u8).prop_map(How::For),
        Just(How::Remove),
    ]
}

/// A gang's worth of pods, repeats included.
pub fn pods() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(pod(), 0..=5)
}

/// [`op`], and every rejection and the batches (`allow_all`, `reject_all`, their deferred
/// variants).
pub fn any_op() -> impl Strategy<Value = Op> {
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
