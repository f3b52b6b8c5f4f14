//! `gangway simulate`'s options for the end-to-end tests: a workload file of
//! `cli/workloads/` (or the generated workload at a test size), in virtual time, JSON report.

use std::path::PathBuf;

use gangway_cli::simulate::{ModeArg, Options};

/// The options of a virtual-time run in `mode` with `seed`, on `workload` (a file name in
/// `cli/workloads/`) or, without one, on a generated workload of 40 nodes, 60 gangs of 2–12
/// and 100 other pods, through the Permit barrier. No faults, no log.
pub fn simulate_options(mode: ModeArg, seed: u64, workload: Option<&str>) -> Options {
    Options {
        workload: workload.map(|name| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../cli/workloads")
                .join(name)
        }),
        mode,
        gang_cycle: gangsched::GangCycle::PermitBarrier,
        contention: false,
        run_secs: None,
        seed,
        bind_failure_rate: 0.0,
        delete_rate: 0.0,
        json: true,
        real_time: false,
        nodes: Some(40),
        gangs: Some(60),
        min_gang: 2,
        max_gang: 12,
        basic_pods: 100,
        log: None,
    }
}
