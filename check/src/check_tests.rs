//! The model checker on the small presets, as CI runs it: Hardened verifies every property;
//! Upstream and deliberately broken models must yield counterexamples (the witnesses).

use gangsched::Mode;

use super::witness::{counterexample, model, I3, I4, I5, I6, I7, I8};
use super::{check, check_settling, discover, stuck_gang, ClusterConfig, Flaw, Preset};

#[test]
fn hardened_verifies_every_property_on_the_ci_presets() {
    for preset in [Preset::Tiny, Preset::Small, Preset::Medium] {
        let report = check(preset, Mode::Hardened, 2);
        assert!(report.all_hold(), "{preset:?}: {report:#?}");
        assert!(
            report.unique_states > 10,
            "{preset:?}: the model explores something"
        );
    }
}

#[test]
fn upstream_binds_a_partial_gang_when_a_deadline_races_the_last_permit() {
    let upstream = model(Preset::Tiny.config(Mode::Upstream), None);
    let trace = counterexample(&upstream, I3);
    assert!(trace.contains("permit deadline passes"), "{trace}");
    assert!(trace.contains("passed Permit alone"), "{trace}");
    let report = check(Preset::Tiny, Mode::Upstream, 2);
    assert!(report.verdict(I5).unwrap().holds && !report.verdict(I3).unwrap().holds);
}

/// The cluster `preset` checks, with a Permit plugin beside the gang's that may reject
/// `rejections` times, and no deadline (so no partial gang comes from a timer).
fn with_permit_rejections(preset: Preset, mode: Mode, rejections: u8) -> ClusterConfig {
    ClusterConfig {
        permit_rejections: rejections,
        timeouts: 0,
        ..preset.config(mode)
    }
}

#[test]
fn upstream_binds_a_partial_gang_when_a_later_permit_plugin_rejects_the_last_member() {
    let upstream = model(
        with_permit_rejections(Preset::Tiny, Mode::Upstream, 1),
        None,
    );
    let trace = counterexample(&upstream, I3);
    assert!(trace.contains("the quota plugin rejects"), "{trace}");
    assert!(trace.contains("passed Permit alone"), "{trace}");
}

/// Hardened asks the other plugins before the gang, and a member they reject stops counting
/// towards quorum at once (the model found the partial gang when it still counted until its
/// binding cycle's unreserve).
#[test]
fn hardened_keeps_gangs_whole_when_a_permit_plugin_rejects() {
    // (Small with two rejections is 3 million states: docs/verification.md.)
    for (preset, rejections) in [(Preset::Tiny, 2), (Preset::Small, 1)] {
        let config = ClusterConfig {
            permit_rejections: rejections,
            ..preset.config(Mode::Hardened)
        };
        let report = super::check_with(model(config, None), preset, 2, super::Search::Bfs);
        assert!(report.all_hold(), "{preset:?}: {report:#?}");
    }
}

#[test]
fn upstream_keeps_a_sibling_waiting_after_a_waiting_member_is_deleted() {
    let upstream = model(Preset::Small.config(Mode::Upstream), None);
    let trace = counterexample(&upstream, I6);
    assert!(trace.contains("pod deleted"), "{trace}");
}

#[test]
fn a_release_that_keeps_the_node_reservation_breaks_accounting() {
    let broken = model(
        Preset::Small.config(Mode::Hardened),
        Some(Flaw::ReleaseKeepsNodeReservation),
    );
    let trace = counterexample(&broken, I5);
    assert!(trace.contains("unreserve, forget, requeue"), "{trace}");
}

#[test]
fn a_bind_failure_that_does_not_requeue_loses_the_pod() {
    let broken = model(
        Preset::Small.config(Mode::Hardened),
        Some(Flaw::BindFailureLosesPod),
    );
    let trace = counterexample(&broken, I4);
    assert!(trace.contains("bind fails"), "{trace}");
    assert!(trace.contains("the queue has it nowhere"), "{trace}");
}

#[test]
fn a_release_that_announces_nothing_parks_a_pod_that_fits() {
    let broken = model(
        Preset::Medium.config(Mode::Hardened),
        Some(Flaw::ReleaseAnnouncesNothing),
    );
    let trace = counterexample(&broken, I7);
    assert!(trace.contains("no room: back to the queue"), "{trace}");
    assert!(
        trace.contains("rejected: unreserve, forget, requeue"),
        "{trace}"
    );
    assert!(trace.contains("a node has room for it"), "{trace}");
}

/// Two gangs of two arriving one pod at a time, on one node with room for one gang: the
/// cluster of the arrival flaw's witnesses.
fn two_gangs_arriving_with_room_for_one() -> ClusterConfig {
    ClusterConfig {
        gangs: vec![(2, 2), (2, 2)],
        nodes: vec![2],
        arrivals: true,
        group_updates: 0,
        ..Preset::Tiny.config(Mode::Hardened)
    }
}

#[test]
fn an_arrival_that_skips_the_pod_add_event_leaves_a_complete_gang_gated() {
    // Two gangs, room for one; pods arrive one by one. (A gang whose active member reaches
    // Permit is rescued by Permit's sibling activation; the second gang's never does.)
    let config = two_gangs_arriving_with_room_for_one();
    let broken = model(config.clone(), Some(Flaw::ArrivalSkipsMoveEvent));
    let trace = counterexample(&broken, I8);
    assert!(trace.contains("pod created, queued"), "{trace}");
    assert!(trace.contains("still gated"), "{trace}");
    // Without the planted bug the same cluster has no stuck gang.
    assert!(discover(&model(config, None), I8, 2).is_none());
}

#[test]
fn the_vacuity_guards_are_reached() {
    let report = check(Preset::Tiny, Mode::Hardened, 2);
    for p in report.properties.iter().filter(|p| p.kind == "sometimes") {
        assert!(p.holds && p.trace.is_some(), "{}: {report:#?}", p.name);
    }
}

#[test]
fn depth_first_finds_the_same_states_and_verdicts() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let bfs = check(Preset::Small, mode, 2);
        let dfs = super::check_with(
            model(Preset::Small.config(mode), None),
            Preset::Small,
            2,
            super::Search::Dfs,
        );
        assert_eq!(bfs.unique_states, dfs.unique_states, "{mode:?}");
        let verdicts = |r: &super::CheckReport| -> Vec<(&str, bool)> {
            r.properties.iter().map(|p| (p.name, p.holds)).collect()
        };
        assert_eq!(verdicts(&bfs), verdicts(&dfs), "{mode:?}");
    }
}

/// I8 in full: from every reachable state a settled state is reachable (the checker itself only
/// sees terminal states).
#[test]
fn every_reachable_state_can_settle_on_the_ci_presets() {
    for preset in [Preset::Tiny, Preset::Small] {
        let hardened = model(preset.config(Mode::Hardened), None);
        let found = check_settling(&hardened, 1_000_000).expect("fits");
        assert!(found.unsettled.is_none(), "{preset:?}: {found:#?}");
        assert!(
            found.states > 200 && found.edges > found.states,
            "{preset:?}: {found:?}"
        );
    }
}

/// The witness: with the arrival that skips its pod-add event, states are reachable from which
/// the second gang can never settle.
#[test]
fn a_gang_left_gated_can_never_settle() {
    let config = two_gangs_arriving_with_room_for_one();
    let broken = model(config.clone(), Some(Flaw::ArrivalSkipsMoveEvent));
    let found = check_settling(&broken, 1_000_000).expect("fits");
    let (state, count) = found.unsettled.expect("a state that can never settle");
    assert!(count > 0 && stuck_gang(&state).is_some(), "{state:#?}");
    let sound = check_settling(&model(config, None), 1_000_000).expect("fits");
    assert!(sound.unsettled.is_none(), "{sound:#?}");
}
