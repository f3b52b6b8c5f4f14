//! Progress without timeouts (`timeliness.rs`): where it holds — the Permit barrier in both
//! modes on the presets, where gangs cannot hold each other off; the pod-group cycle without a
//! failed bind and, Hardened, with one — and its witnesses: delays planted in the core's own
//! steps (an announcement that does not happen, a failed member backing off alone), and the
//! barrier's own hold-and-wait.

use gangsched::{GangCycle, Mode};

use super::witness::{counterexample, model, PROGRESS};
use super::{check_model, ClusterConfig, Flaw, GangProtocol, Preset};

const MODES: [Mode; 2] = [Mode::Hardened, Mode::Upstream];

fn with_cycle(preset: Preset, mode: Mode, gang_cycle: GangCycle) -> ClusterConfig {
    ClusterConfig {
        gang_cycle,
        ..preset.config(mode)
    }
}

/// The Permit barrier on the presets up to medium (standard is `gangway check`'s own run):
/// a gang with room never waits for a deadline or the flush — there is room for more than
/// every gang's min count less one. Hardened's are `check_tests`' (every property holds);
/// Upstream's paths end at its partial gang and its held reservations (I3, I6), and on the
/// others it progresses too.
#[test]
fn the_barrier_progresses_without_timeouts_where_gangs_cannot_hold_each_other_off() {
    for preset in [Preset::Tiny, Preset::Small, Preset::Medium] {
        let config = preset.config(Mode::Upstream);
        let report = check_model(model(config, None), preset, 2);
        let verdict = report.verdict(PROGRESS).expect("always checked");
        assert!(verdict.holds, "{preset:?}: {report}");
    }
}

/// The pod-group cycle where no bind fails, both modes: tiny here; standard and two gangs
/// with room for one are `pod_group_tests`'.
#[test]
fn the_pod_group_cycle_progresses_without_timeouts_where_no_bind_fails() {
    for mode in MODES {
        let config = with_cycle(Preset::Tiny, mode, GangCycle::PodGroup);
        let report = check_model(model(config, None), Preset::Tiny, 2);
        let verdict = report.verdict(PROGRESS).expect("always checked");
        assert!(verdict.holds, "{mode:?}: {report}");
    }
}

/// Hardened's pod-group cycle after a member's bind fails, on the presets with a bind
/// failure (small and medium; standard has none): the failed member comes back with the
/// siblings its failure released, in one backoff (H2), so the gang — which fits — binds
/// without the leftover flush. Found by this property before it held (issue #43): the failed
/// member came back alone, its pod-group cycle found its gang short and parked it, and the
/// siblings were parked the same way.
#[test]
fn hardened_pod_group_cycle_progresses_without_timeouts_after_a_failed_bind() {
    for preset in [Preset::Small, Preset::Medium] {
        let config = with_cycle(preset, Mode::Hardened, GangCycle::PodGroup);
        assert!(config.bind_failures > 0, "{preset:?} has a failed bind");
        let report = check_model(model(config, None), preset, 2);
        let verdict = report.verdict(PROGRESS).expect("always checked");
        assert!(verdict.holds, "{preset:?}: {report}");
    }
}

/// Its witness: the failed member backs off alone ([`Flaw::BindFailureBacksOffAlone`]) and
/// the gang waits for the flush.
#[test]
fn a_failed_member_backing_off_alone_delays_its_gang() {
    let config = with_cycle(Preset::Small, Mode::Hardened, GangCycle::PodGroup);
    let broken = model(config, Some(Flaw::BindFailureBacksOffAlone));
    let trace = counterexample(&broken, PROGRESS);
    assert!(trace.contains("bind fails"), "{trace}");
    assert!(trace.contains("has room for"), "{trace}");
}

/// The witness: the binding cycle of a pod deleted while it waited frees its room without
/// announcing it ([`Flaw::DeleteAnnouncesNothing`]): the other gang, parked for that room,
/// waits for the leftover flush though it fits — in both modes.
#[test]
fn a_delete_that_announces_nothing_delays_the_gang_waiting_for_its_room() {
    for mode in MODES {
        let broken = model(
            Preset::Medium.config(mode),
            Some(Flaw::DeleteAnnouncesNothing),
        );
        let trace = counterexample(&broken, PROGRESS);
        assert!(
            trace.contains("deleted while binding: release"),
            "{mode:?}: {trace}"
        );
        assert!(trace.contains("has room for"), "{mode:?}: {trace}");
    }
}

/// The barrier's own delay, its witness in configurations where gangs can hold each other
/// off: two gangs of two on a node for two (room for every gang's min count less one is not
/// there). The core pops a gang's members before the next gang's, so it takes a failed bind
/// to interleave them: the failed member backs off, the other gang's member takes its room
/// and waits at Permit for a sibling that has none, and only a deadline moves them.
#[test]
fn two_gangs_holding_each_other_off_wait_for_a_deadline() {
    for mode in MODES {
        let config = ClusterConfig {
            gangs: vec![(2, 2), (2, 2)],
            nodes: vec![2],
            group_updates: 0,
            bind_failures: 1,
            ..Preset::Tiny.config(mode)
        };
        let trace = counterexample(&GangProtocol::new(config), PROGRESS);
        assert!(
            trace.contains("hold their reservations"),
            "{mode:?}: {trace}"
        );
    }
}
