//! `gangway simulate`: run the real scheduler core on a workload (an embedded default or a
//! TOML/JSON file) and summarise what happened — bindings, timeouts, partial gangs, lost pods,
//! leaked reservations and permit-wait latency.
//!
//! [`Options`] are the command-line flags, [`Workload`] the input, [`run`] the driver (virtual
//! time by default), [`Report`] the output and [`Progress`] the stderr progress bar.

mod driver;
pub(crate) mod generate;
mod ledger;
mod locate;
mod options;
mod progress;
mod report;
mod rest;
mod workload;

#[cfg(test)]
mod contention_tests;
#[cfg(test)]
mod report_tests;
#[cfg(test)]
mod rest_tests;
#[cfg(test)]
mod workload_tests;

pub use generate::{ContentionSpec, GenerateSpec};
pub use options::{LogLevel, ModeArg, Options};
pub use progress::Progress;
pub use report::{percentile, Report};
pub use workload::{
    GroupSpec, NodeSpec, PodSpec, Workload, WorkloadError, LATEST_MS, RUN_AFTER_LAST_TIME,
};

pub use driver::{load, run, SimulateError};
