//! Symmetry reduction is sound only if renaming interchangeable members commutes with every
//! transition. These tests check that on random walks of the symmetric model, show the exact
//! model (the core's name-ordered ties) does not have it, and compare verdicts with and without
//! the reduction.

use std::collections::BTreeSet;

use gangsched::checking::symmetry::{PodRenaming, Renamed};
use gangsched::Mode;
use stateright::Model;

use super::{check_with, random_path, representative, Cluster, GangProtocol, Preset, Search};

/// The groups as the properties see them, without free text (failure reasons quote pod names,
/// and renaming leaves text alone).
fn groups_without_text(c: &Cluster) -> Vec<String> {
    c.groups
        .iter()
        .map(|g| {
            let attempt = g
                .attempt()
                .map(|a| (a.deadline(), a.waiting().clone(), a.failure().is_some()));
            let pods: BTreeSet<_> = g.pods().map(|p| p.id().clone()).collect();
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?}",
                g.key(),
                g.group(),
                pods,
                g.assumed(),
                g.assigned(),
                attempt
            )
        })
        .collect()
}

fn same_but_text(a: &Cluster, b: &Cluster) -> bool {
    groups_without_text(a) == groups_without_text(b)
        && a.waiting == b.waiting
        && a.cache == b.cache
        && a.queue == b.queue
        && a.stages == b.stages
        && a.pods == b.pods
        && (a.now, a.budget, a.timed_out) == (b.now, b.budget, b.timed_out)
        && a.partial.is_some() == b.partial.is_some()
        && a.held == b.held
}

fn successors(model: &GangProtocol, s: &Cluster) -> Vec<Cluster> {
    let mut actions = Vec::new();
    model.actions(s, &mut actions);
    actions
        .into_iter()
        .filter_map(|a| model.next_state(s, a))
        .collect()
}

/// Every swap of two members of one gang.
fn transpositions(s: &Cluster) -> Vec<PodRenaming> {
    let pods: Vec<_> = s.pods.values().collect();
    let mut swaps = Vec::new();
    for (i, a) in pods.iter().enumerate() {
        for b in &pods[i + 1..] {
            if a.group() == b.group() {
                let pairs = [
                    (a.id().clone(), (*b).clone()),
                    (b.id().clone(), (*a).clone()),
                ];
                swaps.push(PodRenaming::new(pairs).expect("a swap"));
            }
        }
    }
    swaps
}

/// The first state on `walks` random walks of `model` whose successors, renamed by a swap of
/// two members, are not the successors of the renamed state.
fn first_asymmetry(model: &GangProtocol, walks: u64, steps: usize) -> Option<String> {
    for seed in 0..walks {
        for (s, _) in random_path(model, seed, steps) {
            let next = successors(model, &s);
            for g in transpositions(&s) {
                let swapped = successors(model, &s.renamed(&g));
                let renamed: Vec<Cluster> = next.iter().map(|t| t.renamed(&g)).collect();
                let covered = |xs: &[Cluster], ys: &[Cluster]| {
                    xs.iter().all(|x| ys.iter().any(|y| same_but_text(x, y)))
                };
                if !(covered(&renamed, &swapped) && covered(&swapped, &renamed)) {
                    return Some(format!(
                        "seed {seed}: {g:?} does not commute with the steps from {s:#?}"
                    ));
                }
            }
        }
    }
    None
}

fn symmetric(preset: Preset, mode: Mode) -> GangProtocol {
    GangProtocol {
        symmetric: true,
        ..GangProtocol::new(preset.config(mode))
    }
}

#[test]
fn renaming_members_commutes_with_every_step_of_the_symmetric_model() {
    for preset in [Preset::Small, Preset::Medium] {
        for mode in [Mode::Hardened, Mode::Upstream] {
            if let Some(found) = first_asymmetry(&symmetric(preset, mode), 24, 40) {
                panic!("{preset:?} {mode:?}: {found}");
            }
        }
    }
}

/// The witness: with the core's own tie order (the smallest name pops first) and arrivals in
/// name order, renaming does not commute, and the same check says so.
#[test]
fn the_exact_model_is_not_symmetric() {
    let exact = GangProtocol::new(Preset::Small.config(Mode::Hardened));
    assert!(first_asymmetry(&exact, 24, 40).is_some());
}

/// The representative is canonical on every state sampled: renaming two members first lands
/// on the same representative. (Soundness does not depend on it — a state with two
/// representatives is only explored twice — but the reduction does.)
#[test]
fn the_representative_is_idempotent_and_canonical() {
    for preset in [
        Preset::Small,
        Preset::Medium,
        Preset::Standard,
        Preset::Large,
    ] {
        let model = symmetric(preset, Mode::Hardened);
        for seed in 0..16 {
            for (s, _) in random_path(&model, seed, 60) {
                let rep = representative(&s);
                assert_eq!(representative(&rep), rep, "idempotent");
                for g in transpositions(&s) {
                    let other = representative(&s.renamed(&g));
                    assert!(other == rep, "{preset:?} seed {seed}: {g:?} on {s:#?}");
                }
            }
        }
    }
}

#[test]
fn symmetry_reduction_keeps_every_verdict_and_explores_fewer_states() {
    let verdicts = |r: &super::CheckReport| -> Vec<(&str, bool)> {
        r.properties.iter().map(|p| (p.name, p.holds)).collect()
    };
    for (preset, mode) in [
        (Preset::Tiny, Mode::Upstream),
        (Preset::Tiny, Mode::Hardened),
        (Preset::Small, Mode::Upstream),
    ] {
        let exact = check_with(
            GangProtocol::new(preset.config(mode)),
            preset,
            2,
            Search::Bfs,
        );
        let full = check_with(symmetric(preset, mode), preset, 2, Search::Dfs);
        let reduced = check_with(symmetric(preset, mode), preset, 2, Search::Symmetric);
        assert_eq!(verdicts(&exact), verdicts(&reduced), "{preset:?} {mode:?}");
        assert_eq!(verdicts(&full), verdicts(&reduced), "{preset:?} {mode:?}");
        // Small's gang of three has six orders of its members.
        if preset == Preset::Small {
            assert!(
                reduced.unique_states * 2 < full.unique_states,
                "{preset:?} {mode:?}: {} of {}",
                reduced.unique_states,
                full.unique_states
            );
        }
    }
}
