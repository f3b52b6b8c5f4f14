#![cfg(not(loom))]
//! Every `TestGangSchedulingFlow` case (`gangway_tests::gang_flow`, run against gangway by
//! `tests/conformance_gang.rs`) also runs through kube-scheduler's own gang plugin: exported as
//! a gang trace and run by `upstream/cmd/gangtrace` (the real GangScheduling, framework and
//! waiting pods of k8s.io/kubernetes v1.36.3) and by gangway's gang plugin in `Mode::Upstream`,
//! observation against observation — the real code is the judge, not the table.
//!
//! `GANGWAY_GANGTRACE=/path/to/gangtrace` turns the differential on (`.ci/run` builds the
//! harness); without it that test says so and passes. The exporter's own test needs no Go: each
//! exported trace, run through gangway's gang runner, agrees with the case's expectations.

use std::path::PathBuf;

use gangway_cli::differential::{self, gang};
use gangway_tests::gang_flow::{export, FlowCase, WantPermit, FLOW};

/// What the trace of `case` shows through gangway's runner, against the table.
fn agrees_with_the_table(case: &FlowCase) {
    let ops = export(case);
    let observed = gang::run(&ops);
    let pre = observed
        .iter()
        .find(|o| o.op == "pre_enqueue")
        .and_then(|o| o.pre_enqueue.clone())
        .expect("the trace runs PreEnqueue");
    let want = case.pre_enqueue.status();
    assert_eq!(
        pre.code,
        want.code().to_string(),
        "{}: PreEnqueue",
        case.name
    );
    assert_eq!(pre.message, want.message(), "{}: PreEnqueue", case.name);
    let Some(want) = case.permit else {
        assert!(observed.iter().all(|o| o.permit.is_none()), "{}", case.name);
        return;
    };
    let last = observed.last().expect("steps");
    let code = &last
        .permit
        .as_ref()
        .expect("the pod under test's Permit")
        .code;
    let wanted = match want {
        WantPermit::Allow => "Success".to_owned(),
        WantPermit::Wait => "Wait".to_owned(),
        WantPermit::Reject(code) => code.to_string(),
    };
    assert_eq!(*code, wanted, "{}: Permit", case.name);
    assert_eq!(last.activated, case.activated, "{}: activated", case.name);
    for name in case.waiting {
        let still_waiting = last.waiting.contains_key(*name);
        assert_eq!(
            still_waiting,
            !case.allowed.contains(name),
            "{}: {name} waiting",
            case.name
        );
    }
    assert_eq!(
        last.waiting.contains_key(case.pod),
        want == WantPermit::Wait,
        "{}",
        case.name
    );
}

#[test]
fn every_flow_case_exports_a_trace_that_agrees_with_the_table() {
    for case in FLOW {
        agrees_with_the_table(case);
    }
}

#[test]
fn every_flow_case_runs_as_in_the_real_gang_plugin() {
    let Some(harness) = std::env::var_os("GANGWAY_GANGTRACE").map(PathBuf::from) else {
        eprintln!("GANGWAY_GANGTRACE is not set: the gang conformance differential is skipped");
        return;
    };
    let mut steps = 0;
    for case in FLOW {
        let ops = export(case);
        let outcome = differential::gang_differential(&harness, &ops)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        if let Some(first) = &outcome.first {
            panic!("{}: {first}", case.name);
        }
        steps += outcome.steps;
    }
    eprintln!(
        "gang conformance differential: {} cases, {steps} of {steps} steps equal",
        FLOW.len()
    );
}
