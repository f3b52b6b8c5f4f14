//! `gangway bench`: the Go anchor's permit-barrier workloads (`anchors/go-permit`, W1 to W4)
//! through gangway's real components — the gang plugin, the waiting-pod map, the timer thread,
//! decision delivery and binding workers with a no-op bind — printing one `key=value` line with
//! the Go program's keys, and checking the outcome as it does.

mod barrier;
mod contention;
mod hold;
mod workloads;

pub use barrier::{Barrier, BarrierOutcome, OnDecided};
pub use contention::Iter;
pub use workloads::{run, BenchLine, Workload};
