//! Reference models for gangway — naive sequential specifications of the waiting map, the gang
//! plugin, the scheduling queue and one pod-group cycle — and the lockstep drivers that run the real core beside
//! them, step by step, for the property tests and the fuzzer.

#![deny(missing_docs)]

pub mod error_style;
pub mod gang;
pub mod ops;
pub mod pod_group;
pub mod queue;
pub mod waiting;
pub mod waiting_lockstep;
