//! Random operation sequences for the scheduling queue's lockstep driver
//! ([`gangway_model::queue::lockstep`]), as proptest strategies: the inputs of `prop_queue`
//! (the queue against its reference model) and of `prop_differential` (the same inputs
//! through kube-scheduler's own queue). Ops name pods by universe index, so shrinking keeps
//! them meaningful.

use gangway_model::queue::lockstep::{Op, EVENTS, PRIORITIES, STEPS};
use proptest::prelude::*;

/// A universe index.
pub fn pod() -> impl Strategy<Value = u8> {
    0u8..8
}

/// Mostly a pod in flight; sometimes a universe pod named directly.
pub fn pick() -> impl Strategy<Value = u8> {
    prop_oneof![4 => 0u8..8, 1 => 128u8..136]
}

/// A rejector bit set: mostly one plugin, sometimes none (an error) or several.
pub fn rejectors() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => prop::sample::select(vec![1u8, 2, 4, 8, 16]),
        1 => Just(0u8),
        2 => 0u8..32,
    ]
}

/// One op: adds, updates and deletes; pops and the attempts' ends (bound, handed back alone or
/// as a gang); activations, cluster events, both flushes, the clock, a close.
pub fn op() -> impl Strategy<Value = Op> {
    let priority = 0..PRIORITIES.len() as u8;
    prop_oneof![
        6 => (pod(), priority.clone()).prop_map(|(pod, priority)| Op::Add { pod, priority }),
        2 => (pod(), priority).prop_map(|(pod, priority)| Op::Update { pod, priority }),
        1 => pod().prop_map(|pod| Op::Delete { pod }),
        6 => Just(Op::Pop),
        1 => pick().prop_map(|pick| Op::Done { pick }),
        5 => (pick(), rejectors()).prop_map(|(pick, rejectors)| Op::HandBack { pick, rejectors }),
        2 => prop::collection::vec((pick(), rejectors()), 1..4)
            .prop_map(|members| Op::HandBackGang { members }),
        1 => prop::collection::vec(pod(), 1..3).prop_map(|pods| Op::Activate { pods }),
        5 => (0..EVENTS, prop::option::weighted(0.2, pod()))
            .prop_map(|(event, exclude)| Op::MoveAll { event, exclude }),
        2 => Just(Op::FlushBackoff),
        1 => Just(Op::FlushLeftover),
        4 => (0..STEPS.len() as u8).prop_map(|step| Op::Advance { step }),
        1 => Just(Op::Close),
    ]
}

/// Between 1 and `max - 1` ops.
pub fn ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..max)
}
