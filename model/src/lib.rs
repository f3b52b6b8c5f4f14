//! Reference models for gangway.

#![deny(missing_docs)]

pub mod check;
pub mod gang;
pub mod queue;
pub mod simulate;
pub mod waiting;
