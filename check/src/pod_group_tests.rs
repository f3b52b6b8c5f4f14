//! The pod-group cycle in the model checker: Hardened keeps I3–I9 and progress without
//! timeouts on the CI presets; the Permit barrier breaks I9 where two gangs fit alone but not
//! together (its witness); Upstream's pod-group cycle leaves a member waiting
//! at Permit when its gang lost a member between the snapshot and the commit, as 1.36's code
//! does.

use gangsched::{GangCycle, Mode};

use super::witness::{counterexample, model, I3, I9, PROGRESS};
use super::{check_model, ClusterConfig, GangProtocol, Preset, Search};

fn pod_group(preset: Preset, mode: Mode) -> ClusterConfig {
    ClusterConfig {
        gang_cycle: GangCycle::PodGroup,
        ..preset.config(mode)
    }
}

/// Two gangs of two arriving one pod at a time, on one node with room for one gang.
fn two_gangs_with_room_for_one(mode: Mode, cycle: GangCycle) -> ClusterConfig {
    ClusterConfig {
        gangs: vec![(2, 2), (2, 2)],
        nodes: vec![2],
        arrivals: true,
        group_updates: 0,
        gang_cycle: cycle,
        ..Preset::Tiny.config(mode)
    }
}

#[test]
fn hardened_pod_group_cycle_verifies_every_property_on_the_ci_presets() {
    for preset in [Preset::Small, Preset::Medium, Preset::Standard] {
        let config = pod_group(preset, Mode::Hardened);
        let report = check_model(GangProtocol::new(config), preset, 2);
        assert!(report.all_hold(), "{preset:?}: {report:#?}");
        for property in [I9, PROGRESS] {
            assert!(report.verdict(property).is_some(), "{property} is checked");
        }
        assert!(report.unique_states > 100, "{preset:?}: the model explores");
    }
}

#[test]
fn the_pod_group_cycle_binds_one_of_two_gangs_without_a_timeout() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let config = two_gangs_with_room_for_one(mode, GangCycle::PodGroup);
        let report = check_model(GangProtocol::new(config), Preset::Tiny, 2);
        for property in [I3, I9, PROGRESS] {
            let verdict = report.verdict(property).expect("checked");
            assert!(verdict.holds, "{mode:?} {property}: {report:#?}");
        }
    }
}

/// I9's witness: the same cluster with the Permit barrier, where a member holds its
/// reservation waiting at Permit for its gang.
#[test]
fn the_barrier_holds_and_waits_until_a_timeout() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let barrier = GangProtocol {
            hold_and_wait: true,
            ..model(
                two_gangs_with_room_for_one(mode, GangCycle::PermitBarrier),
                None,
            )
        };
        let trace = counterexample(&barrier, I9);
        assert!(trace.contains("waits at Permit for its gang"), "{trace}");
        // Progress without timeouts: `timeliness_tests.rs` (it takes a failed bind).
    }
}

/// Upstream commits each placed member through its own Permit against the real state: a
/// member deleted since the snapshot leaves the gang short, and the members already committed
/// wait at Permit holding their room (Hardened re-checks the quorum and hands the gang back).
#[test]
fn upstream_pod_group_cycle_waits_at_permit_after_a_stale_snapshot() {
    let upstream = model(pod_group(Preset::Small, Mode::Upstream), None);
    let trace = counterexample(&upstream, I9);
    assert!(trace.contains("pod deleted"), "{trace}");
    assert!(trace.contains("waiting"), "{trace}");
    let hardened = pod_group(Preset::Small, Mode::Hardened);
    let report = check_model(GangProtocol::new(hardened), Preset::Small, 2);
    assert!(report.verdict(I9).expect("checked").holds);
}

#[test]
fn symmetric_search_agrees_on_the_pod_group_cycle() {
    let config = pod_group(Preset::Medium, Mode::Hardened);
    let report = super::check_with(
        GangProtocol::new(config),
        Preset::Medium,
        2,
        Search::Symmetric,
    );
    assert!(report.all_hold(), "{report:#?}");
}

/// The Hardened commit's witness: admitting what the snapshot found, without the quorum on
/// the real state, admits a gang short of a member deleted since (I3).
#[test]
fn a_commit_that_trusts_the_snapshot_admits_a_partial_gang() {
    let broken = model(
        pod_group(Preset::Small, Mode::Hardened),
        Some(super::Flaw::CommitTrustsTheSnapshot),
    );
    let trace = counterexample(&broken, I3);
    assert!(trace.contains("pod deleted"), "{trace}");
    assert!(trace.contains("commit the gang"), "{trace}");
}

/// The admitted gang's witness: a Hardened gang whose bind failure (or lost member) leaves it
/// short of quorum and that keeps its other members binding holds reservations for an attempt
/// that cannot complete (I9).
#[test]
fn a_short_gang_that_keeps_binding_holds_reservations_for_nothing() {
    let broken = model(
        pod_group(Preset::Small, Mode::Hardened),
        Some(super::Flaw::ShortGangKeepsBinding),
    );
    let trace = counterexample(&broken, I9);
    assert!(trace.contains("short of quorum"), "{trace}");
    assert!(trace.contains("commit the gang"), "{trace}");
}
