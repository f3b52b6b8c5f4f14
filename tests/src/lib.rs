//! Shared harness for gangway's loom, property and end-to-end tests.
//!
//! 1. [`DecisionPoint`] — one waiting pod as the loom models see it, so the same model runs on
//!    the real [`WaitingPods`](gangway::WaitingPods) and on deliberately broken latches.
//! 2. [`RealPod`] — the real implementation behind that trait.
//! 3. [`broken`] — broken latches, kept to prove the models can fail (witnesses).

#![deny(missing_docs)]

pub mod broken;
mod decision_point;

pub use decision_point::{DecisionPoint, RealPod, GANG, OTHER};
