//! Model-checker paths replayed against the real concurrent core (threads, ManualClock): the
//! upstream counterexamples happen on the real code exactly as in the model, Hardened examples
//! too, and random walks through every preset keep the core's states equal to the model's
//! after every step — so the model and the code cannot drift apart silently.

use gangsched::{GangCycle, Mode};
use std::collections::BTreeSet;

use gangway_check::{
    discover, random_path, Action, ClusterConfig, Flaw, GangProtocol, Path, Preset,
};
use gangway_tests::replay::Replay;

fn model(preset: Preset, mode: Mode) -> GangProtocol {
    GangProtocol::new(preset.config(mode))
}

/// Replays `path` on a fresh core; panics with the first difference.
fn replay(mode: Mode, path: &Path) {
    let mut core = Replay::new(mode, &path[0].0);
    for window in path.windows(2) {
        let action = window[0].1.as_ref().expect("an action between two states");
        if let Err(e) = core.step(action, &window[1].0) {
            panic!("the core departs from the model: {e}\npath: {path:#?}");
        }
    }
}

fn replay_discovery(preset: Preset, mode: Mode, property: &'static str) -> Path {
    let path = discover(&model(preset, mode), property, 2)
        .unwrap_or_else(|| panic!("{preset:?} {mode:?}: no path for {property}"));
    replay(mode, &path);
    path
}

#[test]
fn regression_partial_gang_counterexample_happens_on_the_core() {
    let path = replay_discovery(Preset::Tiny, Mode::Upstream, "I3 gang atomicity");
    let last = &path.last().expect("a state").0;
    assert!(last.partial.is_some(), "the model's last state breaks I3");
}

/// The partial gang a Permit plugin after the gang's makes (no deadline in the cluster, so the
/// counterexample must come from the plugin), on the real scheduler with the model's plugin.
#[test]
fn a_later_permit_plugins_partial_gang_happens_on_the_core() {
    let mut upstream = model(Preset::Tiny, Mode::Upstream);
    upstream.config.permit_rejections = 1;
    upstream.config.timeouts = 0;
    let path = discover(&upstream, "I3 gang atomicity", 2).expect("a partial gang");
    replay(Mode::Upstream, &path);
    let rejected = path.iter().filter_map(|(_, a)| a.as_ref());
    assert!(rejected
        .clone()
        .any(|a| matches!(a, Action::PermitRejected(_))));
    assert!(path.last().expect("a state").0.partial.is_some());
}

#[test]
fn regression_held_resources_counterexample_happens_on_the_core() {
    let path = replay_discovery(
        Preset::Small,
        Mode::Upstream,
        "I6 no reservation held for a lost gang",
    );
    assert!(!path.last().expect("a state").0.held.is_empty());
}

#[test]
fn hardened_examples_happen_on_the_core() {
    for property in ["a gang is bound", "a permit deadline rejects a pod"] {
        replay_discovery(Preset::Medium, Mode::Hardened, property);
    }
}

#[test]
fn random_walks_keep_the_core_equal_to_the_model() {
    let mut seen = BTreeSet::new();
    for preset in [Preset::Tiny, Preset::Small, Preset::Medium] {
        for mode in [Mode::Upstream, Mode::Hardened] {
            let model = model(preset, mode);
            for seed in 0..40 {
                let path = random_path(&model, seed, 200);
                replay(mode, &path);
                seen.extend(path.iter().filter_map(|(_, a)| a.as_ref().map(kind)));
            }
        }
    }
    // A full node is rare when deletes come early: walk the medium cluster without them too.
    for mode in [Mode::Upstream, Mode::Hardened] {
        let mut model = model(Preset::Medium, mode);
        model.config.deletes = 0;
        for seed in 0..40 {
            let path = random_path(&model, seed, 200);
            replay(mode, &path);
            seen.extend(path.iter().filter_map(|(_, a)| a.as_ref().map(kind)));
        }
    }
    // With a Permit plugin beside the gang's that may reject (the real scheduler runs the
    // model's own, switched on for those steps).
    for mode in [Mode::Upstream, Mode::Hardened] {
        let mut model = model(Preset::Small, mode);
        model.config.permit_rejections = 2;
        for seed in 0..40 {
            let path = random_path(&model, seed, 200);
            replay(mode, &path);
            seen.extend(path.iter().filter_map(|(_, a)| a.as_ref().map(kind)));
        }
    }
    // Every kind of critical section was replayed at least once.
    let all = [
        "Arrive",
        "Schedule",
        "HandBack",
        "Permit",
        "PermitRejected",
        "Deadline",
        "FlushBackoff",
        "FlushLeftover",
        "Bind",
        "BindFails",
        "Release",
        "Delete",
        "UpdateGroup",
    ];
    for k in all {
        assert!(seen.contains(k), "no random walk replayed a {k}: {seen:?}");
    }
}

/// The witness: a path of a deliberately broken model (a release that keeps the node
/// reservation) cannot be replayed on the real core — the caches part at that step.
#[test]
fn a_path_of_a_broken_model_departs_from_the_core() {
    let broken = GangProtocol {
        flaw: Some(Flaw::ReleaseKeepsNodeReservation),
        ..GangProtocol::new(Preset::Small.config(Mode::Hardened))
    };
    let path = discover(&broken, "I5 accounting", 2).expect("the broken model breaks I5");
    let mut core = Replay::new(Mode::Hardened, &path[0].0);
    let departed = path.windows(2).find_map(|w| {
        let action = w[0].1.as_ref().expect("an action");
        core.step(action, &w[1].0).err()
    });
    let e = departed.expect("the replay must notice the broken release");
    assert!(e.contains("caches differ"), "{e}");
}

fn kind(action: &Action) -> &'static str {
    match action {
        Action::Arrive(_) => "Arrive",
        Action::Schedule(_) => "Schedule",
        Action::HandBack(_) => "HandBack",
        Action::Permit(_) => "Permit",
        Action::PermitRejected(_) => "PermitRejected",
        Action::Record(_) => "Record",
        Action::Deadline => "Deadline",
        Action::FlushBackoff => "FlushBackoff",
        Action::FlushLeftover => "FlushLeftover",
        Action::Bind(_) => "Bind",
        Action::BindFails(_) => "BindFails",
        Action::Release(_) => "Release",
        Action::Delete(_) => "Delete",
        Action::UpdateGroup { .. } => "UpdateGroup",
        Action::ScheduleGroup(_) => "ScheduleGroup",
        Action::Commit(_) => "Commit",
        Action::PluginAllows { .. } => "PluginAllows",
    }
}

/// The pod-group cycle's walks: the model's gather-and-simulate and commit steps replayed on a
/// real scheduler configured with `GangCycle::PodGroup`, equal after every step.
#[test]
fn pod_group_cycle_walks_keep_the_core_equal_to_the_model() {
    let mut seen = BTreeSet::new();
    for preset in [Preset::Small, Preset::Medium, Preset::Standard] {
        for mode in [Mode::Upstream, Mode::Hardened] {
            let config = ClusterConfig {
                gang_cycle: GangCycle::PodGroup,
                ..preset.config(mode)
            };
            let model = GangProtocol::new(config);
            for seed in 0..40 {
                let path = random_path(&model, seed, 200);
                let mut core = Replay::with_cycle(mode, GangCycle::PodGroup, &path[0].0);
                for window in path.windows(2) {
                    let action = window[0].1.as_ref().expect("an action between two states");
                    if let Err(e) = core.step(action, &window[1].0) {
                        panic!("the core departs from the model: {e}\npath: {path:#?}");
                    }
                }
                seen.extend(path.iter().filter_map(|(_, a)| a.as_ref().map(kind)));
            }
        }
    }
    for k in [
        "ScheduleGroup",
        "Commit",
        "Bind",
        "BindFails",
        "Delete",
        "FlushBackoff",
    ] {
        assert!(
            seen.contains(k),
            "no pod-group walk replayed a {k}: {seen:?}"
        );
    }
}
