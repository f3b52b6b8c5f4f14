//! The model checker on the small presets, as CI runs it: Hardened verifies every property;
//! Upstream and a deliberately broken model must yield counterexamples (the witnesses).

use gangway::Mode;

use super::{check, check_model, CheckReport, Flaw, GangProtocol, Preset};

const I3: &str = "I3 gang atomicity";
const I5: &str = "I5 accounting";
const I6: &str = "I6 no reservation held for a lost gang";

fn counterexample(report: &CheckReport, property: &str) -> String {
    let verdict = report.verdict(property).expect("a property of the model");
    assert!(
        !verdict.holds,
        "{property} should have a counterexample: {report:#?}"
    );
    let trace = verdict.trace.as_ref().expect("a counterexample path");
    let last = trace.steps.last().expect("at least one step");
    assert!(last.violation.is_some(), "the last step is marked: {trace}");
    trace.to_string()
}

#[test]
fn hardened_verifies_every_property_on_the_ci_presets() {
    for preset in [Preset::Tiny, Preset::Small, Preset::Medium] {
        let report = check(preset, Mode::Hardened, 1);
        assert!(report.all_hold(), "{preset:?}: {report:#?}");
        assert!(
            report.unique_states > 10,
            "{preset:?}: the model explores something"
        );
    }
}

#[test]
fn upstream_binds_a_partial_gang_when_a_deadline_races_the_last_permit() {
    let report = check(Preset::Tiny, Mode::Upstream, 1);
    let trace = counterexample(&report, I3);
    assert!(trace.contains("permit deadline passes"), "{trace}");
    assert!(trace.contains("passed Permit alone"), "{trace}");
    assert!(report.verdict(I5).unwrap().holds);
}

#[test]
fn upstream_keeps_a_sibling_waiting_after_a_waiting_member_is_deleted() {
    let report = check(Preset::Small, Mode::Upstream, 1);
    let trace = counterexample(&report, I6);
    assert!(trace.contains("pod deleted"), "{trace}");
    counterexample(&report, I3);
}

#[test]
fn a_release_that_keeps_the_node_reservation_breaks_accounting() {
    let model = GangProtocol {
        config: Preset::Small.config(Mode::Hardened),
        flaw: Some(Flaw::ReleaseKeepsNodeReservation),
    };
    let report = check_model(model, Preset::Small, 1);
    let trace = counterexample(&report, I5);
    assert!(trace.contains("unreserve, forget, requeue"), "{trace}");
}

#[test]
fn the_vacuity_guards_are_reached() {
    let report = check(Preset::Tiny, Mode::Hardened, 1);
    for p in report.properties.iter().filter(|p| p.kind == "sometimes") {
        assert!(p.holds && p.trace.is_some(), "{}: {report:#?}", p.name);
    }
}
