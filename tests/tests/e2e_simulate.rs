//! `gangway simulate` end to end: the real scheduler core on workloads, in virtual time (and
//! once on real threads). Upstream mode shows the partial-gang hazard in a pinned seeded run;
//! Hardened mode keeps I3, I4 and I6 on the same workload for every seed tried, and on a
//! generated workload with bind failures and deletes.
#![cfg(not(loom))]

use std::path::PathBuf;

use gangway_cli::simulate::{
    self, ModeArg, Options, Report, SimulateError, Workload, WorkloadError, LATEST_MS,
};
use gangway_tests::simulate_options;

fn options(mode: ModeArg, seed: u64, workload: Option<&str>) -> Options {
    simulate_options(mode, seed, workload)
}

fn simulate(options: &Options) -> Report {
    let workload = simulate::load(options).expect("workload loads");
    simulate::run(options, &workload).expect("simulation runs")
}

/// The witness for I3: upstream Permit counts two members whose timers just fired as still
/// reserved, so the third binds alone (cli/workloads/partial-gang.toml explains the setup).
#[test]
fn upstream_binds_a_partial_gang_in_the_pinned_seeded_run() {
    let report = simulate(&options(ModeArg::Upstream, 1, Some("partial-gang.toml")));
    assert_eq!(report.partial_gangs, 1, "{report:#?}");
    assert!(report.invariants_line().contains("I3 FAILED"));
    assert!(!report.is_clean());
}

#[test]
fn hardened_never_binds_a_partial_gang_on_the_same_workload() {
    for seed in 1..=16 {
        let report = simulate(&options(ModeArg::Hardened, seed, Some("partial-gang.toml")));
        assert!(report.is_clean(), "seed {seed}: {report:#?}");
        assert!(report.timeouts >= 2, "seed {seed}: the attempt timed out");
    }
}

#[test]
fn a_generated_workload_with_bind_failures_and_deletes_keeps_the_invariants() {
    let mut o = options(ModeArg::Hardened, 7, None);
    o.bind_failure_rate = 0.1;
    o.delete_rate = 0.05;
    let report = simulate(&o);
    assert!(report.is_clean(), "{report:#?}");
    assert!(
        report.bind_failures > 0 && report.deletes > 0,
        "{report:#?}"
    );
    assert!(report.pods_bound > report.pods_total / 2, "{report:#?}");
    assert_eq!((report.lost_pods, report.leaked_reservations), (0, 0));
}

#[test]
fn a_seed_reproduces_a_run() {
    let o = options(ModeArg::Upstream, 3, None);
    let (mut a, mut b) = (simulate(&o), simulate(&o));
    for r in [&mut a, &mut b] {
        r.wall_seconds = 0.0;
        r.pods_per_sec = 0.0;
        r.gangs_per_sec = 0.0;
    }
    assert_eq!(a, b);
}

#[test]
fn the_small_workload_binds_whole_on_real_threads() {
    // small.toml's last arrival is at 32 s; run its pods arriving at once instead.
    let mut workload = Workload::from_path(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/workloads/small.toml"),
    )
    .unwrap();
    for pod in &mut workload.pods {
        pod.arrival_ms = 0;
    }
    let mut o = options(ModeArg::Hardened, 1, None);
    o.real_time = true;
    let report = simulate::run(&o, &workload).unwrap();
    assert_eq!(report.pods_bound, report.pods_total, "{report:#?}");
    assert!(report.is_clean(), "{report:#?}");
}

#[test]
fn bad_options_and_workloads_are_refused() {
    let mut o = options(ModeArg::Hardened, 1, None);
    o.bind_failure_rate = 1.5;
    let workload = simulate::load(&o).unwrap();
    let err = simulate::run(&o, &workload).unwrap_err();
    assert!(err.to_string().contains("--bind-failure-rate"), "{err}");
    let bad = Workload::parse_toml(
        "[[nodes]]\nname = \"n\"\ncpu_millis = 1000\nmemory_bytes = 1\n\n[[pods]]\nname = \"p\"\ncpu_millis = 1\nmemory_bytes = 1\narrival_ms = 5\ndelete_ms = 1\n",
    )
    .unwrap_err();
    let message = bad.to_string();
    assert!(message.contains("pods[0].delete_ms"), "{message}");
    assert!(message.contains("line 11"), "{message}");
}

/// A gang of two on a node with room for one, arriving at `arrival_ms`: one member waits at
/// Permit and times out, again and again, until the run's horizon.
fn stuck_gang_at(arrival_ms: u64) -> String {
    let mut src = String::from(
        "[[nodes]]\nname = \"n\"\ncpu_millis = 1000\nmemory_bytes = 1073741824\n\n\
         [[groups]]\nname = \"g\"\nmin_count = 2\n",
    );
    for name in ["p-0", "p-1"] {
        src.push_str(&format!(
            "\n[[pods]]\nname = \"{name}\"\ngroup = \"g\"\ncpu_millis = 600\n\
             memory_bytes = 1\narrival_ms = {arrival_ms}\n"
        ));
    }
    src
}

/// A time whose run would take the clock past `Time::MAX` (where it saturates and stands
/// still, so the run used to spin for good) is refused, naming the field; the latest time
/// allowed still runs to its end.
#[test]
fn a_workload_whose_times_would_saturate_the_clock_is_refused() {
    let too_late = LATEST_MS + 1;
    let err = Workload::parse_toml(&stuck_gang_at(too_late)).unwrap_err();
    assert!(
        matches!(&err, WorkloadError::TooLate { field, millis, .. }
            if field == "pods[0].arrival_ms" && *millis == too_late),
        "{err:?}"
    );
    assert_eq!(err.line(), Some(15), "{err}");
    assert!(err.to_string().contains("too late"), "{err}");

    // A workload built in code is not validated: the run refuses it all the same. The last
    // millisecond `Time` can hold, plus the run's 30 minutes, would saturate.
    let o = options(ModeArg::Hardened, 1, None);
    let mut workload = Workload::parse_toml(&stuck_gang_at(0)).unwrap();
    workload.pods[0].arrival_ms = u64::MAX / 1_000_000;
    let err = simulate::run(&o, &workload).unwrap_err();
    assert!(
        matches!(&err, SimulateError::Workload(WorkloadError::TooLate { field, .. })
            if field == "pods[0].arrival_ms"),
        "{err:?}"
    );
    workload.pods[0].arrival_ms = 0;
    workload.pods[0].delete_ms = Some(u64::MAX);
    let err = simulate::run(&o, &workload).unwrap_err();
    assert!(err.to_string().contains("pods[0].delete_ms"), "{err}");

    // The latest time allowed: a member waits, times out and retries until the horizon, and
    // the run ends.
    let workload = Workload::parse_toml(&stuck_gang_at(LATEST_MS)).unwrap();
    let report = simulate::run(&o, &workload).unwrap();
    assert_eq!(report.pods_bound, 0, "{report:#?}");
    assert!(report.timeouts >= 1, "{report:#?}");
}
