//! `gangway simulate` at rest (issue #43): where the virtual-time driver has nothing left to
//! do but wait for a permit deadline or the leftover flush, it checks I5 and I7 and reports
//! the gangs with room for their quorum that wait for that timer all the same (progress
//! without timeouts). The witness for that report is the Permit barrier's own delay: on the
//! contention workload, gangs that each need most of the cluster hold members at Permit and
//! wait for their deadlines, in both modes; the pod-group cycle, which holds nothing while a
//! gang waits, needs no timer on the same workload. (The I5 and I7 checks' witness is
//! `cli/src/simulate/rest_tests.rs`: room freed without an announcement.)
#![cfg(not(loom))]

use gangsched::GangCycle;
use gangway_cli::simulate::{self, ModeArg, Options, Report};
use gangway_tests::simulate_options;

fn contention(mode: ModeArg, gang_cycle: GangCycle) -> Report {
    let options = Options {
        contention: true,
        gang_cycle,
        nodes: Some(8),
        gangs: Some(12),
        ..simulate_options(mode, 1, None)
    };
    let workload = simulate::load(&options).expect("workload loads");
    simulate::run(&options, &workload).expect("simulation runs")
}

#[test]
fn the_barriers_gangs_holding_each_other_off_wait_for_a_timer() {
    for mode in [ModeArg::Hardened, ModeArg::Upstream] {
        let report = contention(mode, GangCycle::PermitBarrier);
        assert!(report.waited_for_a_timer > 0, "{mode:?}: {report:#?}");
        let first = report.timer_waits.first().expect("described");
        assert!(first.contains("has room for"), "{first}");
        assert!(first.contains("waits for a permit deadline"), "{first}");
        // A delay, not an invariant: the run is as clean as before.
        assert!(report.violations.is_empty(), "{mode:?}: {report:#?}");
    }
}

#[test]
fn the_pod_group_cycle_needs_no_timer_on_the_same_workload() {
    for mode in [ModeArg::Hardened, ModeArg::Upstream] {
        let report = contention(mode, GangCycle::PodGroup);
        assert_eq!(report.waited_for_a_timer, 0, "{mode:?}: {report:#?}");
        assert!(report.timer_waits.is_empty(), "{mode:?}: {report:#?}");
        assert!(report.is_clean(), "{mode:?}: {report:#?}");
        assert!(report.gangs_bound > 0, "{mode:?}: {report:#?}");
    }
}
