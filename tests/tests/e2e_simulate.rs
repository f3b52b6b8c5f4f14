//! `gangway simulate` end to end: the real scheduler core on workloads, in virtual time (and
//! once on real threads). Upstream mode shows the partial-gang hazard in a pinned seeded run;
//! Hardened mode keeps I3, I4 and I6 on the same workload for every seed tried, and on a
//! generated workload with bind failures and deletes.
#![cfg(not(loom))]

use std::path::PathBuf;

use gangway_cli::simulate::{self, ModeArg, Options, Report, Workload};
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
