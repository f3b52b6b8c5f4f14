//! `gangway bench`: the Go anchor's permit-barrier workloads (`anchors/go-permit`, W1 and W4
//! so far) through gangway's real components — the gang plugin, the waiting-pod map, decision
//! delivery and binding workers with a no-op bind — printing one `key=value` line with the Go
//! program's keys, and checking the outcome as it does.

mod barrier;
mod workloads;

pub use barrier::{Barrier, BarrierOutcome};
pub use workloads::{run, BenchLine, Workload};
