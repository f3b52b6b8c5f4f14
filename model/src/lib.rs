//! Reference models for gangway.

#![deny(missing_docs)]

pub mod gang;
pub mod queue;
pub mod simulate;
pub mod waiting;
