//! Shared harness for gangway's loom, property and end-to-end tests.
//!
//! 1. [`DecisionPoint`] — one waiting pod as the loom models see it, so the same model runs on
//!    the real [`WaitingPods`](gangsched::WaitingPods) and on deliberately broken latches.
//! 2. [`RealPod`] — the real implementation behind that trait.
//! 3. [`broken`] — broken latches, kept to prove the models can fail (witnesses).
//! 4. [`queue_conformance`] — upstream's scheduling-queue test scenarios as data, and their
//!    driver.
//! 5. [`replay`] — a model-checker path replayed against the real concurrent core.
//! 6. [`gang_batch`] — a gang's batch decision on the sharded waiting map, real and broken,
//!    for the `loom_shards` models.
//! 7. [`simulate_options`] — `gangway simulate`'s options for the end-to-end tests.
//! 8. [`waiting_gang`] — a Hardened gang with two members waiting at Permit, for the gang
//!    hand-back regression tests.
//! 9. [`gang_flow`] — upstream's `TestGangSchedulingFlow` as data, and as gang traces.
//! 10. [`queue_ops`] — random op sequences for the queue's lockstep driver (proptest).
//! 11. [`generated_differential`] — proptest over the differential against kube-scheduler.
//! 12. [`waiting_ops`] — random op sequences for the waiting map's lockstep driver (proptest).
//! 13. [`bug_corpus`] — real bugs planted in gangway's code, and the checkers that find them.

#![deny(missing_docs)]

pub mod broken;
#[cfg(not(any(loom, shuttle)))]
pub mod bug_corpus;
mod decision_point;
pub mod gang_batch;
#[cfg(not(any(loom, shuttle)))]
pub mod gang_flow;
#[cfg(not(any(loom, shuttle)))]
pub mod generated_differential;
#[cfg(not(any(loom, shuttle)))]
pub mod queue_conformance;
#[cfg(not(any(loom, shuttle)))]
pub mod queue_ops;
#[cfg(not(any(loom, shuttle)))]
pub mod replay;
#[cfg(not(any(loom, shuttle)))]
mod simulate_options;
#[cfg(not(any(loom, shuttle)))]
pub mod waiting_gang;
#[cfg(not(any(loom, shuttle)))]
pub mod waiting_ops;

pub use decision_point::{DecisionPoint, RealPod, GANG, OTHER};
#[cfg(not(any(loom, shuttle)))]
pub use simulate_options::simulate_options;
