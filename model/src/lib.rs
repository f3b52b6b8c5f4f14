//! Reference models for gangway.

#![deny(missing_docs)]

#[cfg(feature = "tools")]
pub mod bench;
#[cfg(feature = "tools")]
pub mod check;
pub mod gang;
pub mod queue;
#[cfg(feature = "tools")]
pub mod simulate;
pub mod waiting;
