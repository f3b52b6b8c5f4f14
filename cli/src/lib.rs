//! The `gangway` command's parts: the protocol model checker over the core's real states and
//! driver steps ([`check`]), the workload simulator that runs the real scheduler ([`simulate`]),
//! and the Go anchor's workloads through the real gang plugin and waiting map ([`bench`](mod@bench)).

#![deny(missing_docs)]

pub mod bench;
pub mod check;
pub mod simulate;
