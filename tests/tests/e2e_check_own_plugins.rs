//! gangway-check on an embedder's own parts, end to end through its public API ([`Check`]):
//! the placements of `check/examples/own_placement` (two plausible mistakes found, the
//! corrected one verified), and Permit plugins of an embedder's in both modes.

#[path = "../../check/examples/own_placement/placements.rs"]
mod placements;

use std::time::Duration;

use gangsched::scheduler::Placement;
use gangsched::sync::Arc;
use gangsched::{Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod};
use gangway_check::{Check, CheckError, CheckReport, Preset, Search, PLACEMENT};

use placements::{FirstFit, RememberedRoom};

fn check_placement(name: &str, placement: impl Placement + 'static) -> CheckReport {
    Check::new(Preset::Medium, Mode::Hardened)
        .placement(name, placement)
        .run()
        .expect("the medium preset")
}

fn counterexample(report: &CheckReport, property: &str) -> String {
    let verdict = report
        .verdict(property)
        .unwrap_or_else(|| panic!("{property} is not checked:\n{report}"));
    assert!(!verdict.holds, "{property} holds:\n{report}");
    verdict
        .trace
        .as_ref()
        .map(|t| t.to_string())
        .expect("a counterexample has a timeline")
}

/// The lost event: a placement retried only on new nodes leaves a pod parked after a
/// reservation is released, though it fits.
#[test]
fn a_placement_whose_hints_forget_released_room_loses_the_event() {
    let report = check_placement("FirstFit (new nodes only)", FirstFit::only_new_nodes());
    let trace = counterexample(&report, "I7 no lost event");
    assert!(
        trace.contains("is parked as unschedulable though a node has room for it"),
        "{trace}"
    );
    assert!(
        report.verdict(PLACEMENT).is_some_and(|v| v.holds),
        "{report}"
    );
}

/// A placement that keeps its own copy of the nodes' room answers one pod on one cache two
/// ways: not a function of its inputs (P1).
#[test]
fn a_placement_that_remembers_room_is_caught_answering_twice() {
    let report = check_placement("RememberedRoom", RememberedRoom::new());
    let trace = counterexample(&report, PLACEMENT);
    assert!(trace.contains("P1: "), "{trace}");
    assert!(
        trace.contains("not a function of the pod and the cache")
            || trace.contains("which has no room for it"),
        "{trace}"
    );
    assert!(report.to_string().contains("mend P1 first"), "{report}");
}

/// The corrected placement keeps every property, P1 included.
#[test]
fn the_corrected_placement_verifies() {
    let report = check_placement("FirstFit (corrected)", FirstFit::corrected());
    assert!(report.all_hold(), "{report}");
    assert!(report.verdict(PLACEMENT).is_some(), "{report}");
    let plugins = report.plugins.as_ref().expect("an embedder's placement");
    assert_eq!(plugins.placement, "FirstFit (corrected)");
}

/// A Permit plugin of the embedder's that refuses gang `b`'s pods (a quota, say).
struct RefuseGang(&'static str);

impl PermitPlugin for RefuseGang {
    fn name(&self) -> PluginName {
        "Quota".into()
    }

    fn permit(&self, pod: &Pod, _: &str) -> PermitVerdict {
        if pod.group() == Some(self.0) {
            PermitVerdict::reject("over quota")
        } else {
            PermitVerdict::Allow
        }
    }
}

/// A Permit plugin that holds every pod until the embedder approves it.
struct Approval;

impl PermitPlugin for Approval {
    fn name(&self) -> PluginName {
        "Approval".into()
    }

    fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
        PermitVerdict::wait(Duration::from_secs(60))
    }
}

fn plugins(plugin: impl PermitPlugin + 'static) -> PermitPlugins {
    PermitPlugins::new([Arc::new(plugin) as Arc<dyn PermitPlugin>]).expect("one named plugin")
}

/// Upstream asks the embedder's plugins after the gang's: the quota refuses the member that
/// closed gang b's quorum after the gang let its sibling through (I3). Hardened asks them
/// first, and keeps gangs whole.
#[test]
fn an_embedders_quota_splits_a_gang_upstream_and_not_hardened() {
    let check = |mode| {
        Check::new(Preset::Medium, mode)
            .permit_plugins(plugins(RefuseGang("b")))
            .run()
            .expect("the medium preset")
    };
    let upstream = check(Mode::Upstream);
    let trace = counterexample(&upstream, "I3 gang atomicity");
    assert!(trace.contains("passed Permit alone"), "{trace}");
    let hardened = check(Mode::Hardened);
    assert!(hardened.all_hold(), "{hardened}");
    let plugins = hardened.plugins.as_ref().expect("the embedder's plugin");
    assert_eq!(plugins.permit, ["Quota"]);
}

/// A plugin that holds pods for an approval: Upstream, the embedder's approvals let gang
/// members through one at a time (I3); Hardened refuses another plugin's wait on a gang
/// member, so no gang ever binds — the vacuity guard says so.
#[test]
fn an_embedders_approval_is_explored_in_every_order() {
    let check = |mode| {
        Check::new(Preset::Tiny, mode)
            .permit_plugins(plugins(Approval))
            .run()
            .expect("the tiny preset")
    };
    let upstream = check(Mode::Upstream);
    let trace = counterexample(&upstream, "I3 gang atomicity");
    assert!(trace.contains("its Permit plugin allows"), "{trace}");
    let hardened = check(Mode::Hardened);
    let bound = hardened.verdict("a gang is bound").expect("the guard");
    assert!(!bound.holds, "{hardened}");
}

/// Symmetry reduction takes a gang's members as interchangeable, which an embedder's plugin
/// need not: refused.
#[test]
fn symmetric_search_is_refused_with_an_embedders_parts() {
    let refused = Check::new(Preset::Tiny, Mode::Hardened)
        .placement("FirstFit", FirstFit::corrected())
        .search(Search::Symmetric)
        .run();
    assert_eq!(refused.err(), Some(CheckError::SymmetryWithPlugins));
}
