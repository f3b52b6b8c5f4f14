//! A step from a state the walk is done with (`GangProtocol::next_state_from`, which writes
//! in place the parts only that state holds) leads where the step from a copy leads
//! (`next_state`): the same successor, the same fingerprint, on every state and action of the
//! small presets, with each gang cycle and each mode.

use std::collections::{HashSet, VecDeque};

use gangsched::{GangCycle, Mode};
use stateright::Model;

use super::cluster::{Cluster, ClusterConfig};
use super::home::Home;
use super::protocol::GangProtocol;
use super::shared::Shared;
use super::state_space::fingerprint;
use super::Preset;

/// `s` with every part a value of its own (no other state shares any): a step from it writes
/// each part in place.
fn owned_copy(s: &Cluster) -> Cluster {
    Cluster {
        groups: Shared::new((*s.groups).clone()),
        waiting: Shared::new((*s.waiting).clone()),
        cache: Shared::new((*s.cache).clone()),
        queue: Shared::new((*s.queue).clone()),
        driver: Shared::new((*s.driver).clone()),
        cycle: Shared::new((*s.cycle).clone()),
        stages: Shared::new((*s.stages).clone()),
        pods: Shared::new((*s.pods).clone()),
        home: Home::here(),
        ..s.clone()
    }
}

/// Every state of `config` (breadth first, up to `limit`): each action's successor from an
/// owned copy equals its successor from the state, and fingerprints alike. How many steps it
/// compared.
fn compare_steps(config: ClusterConfig, limit: usize) -> usize {
    let model = GangProtocol {
        intern: false,
        ..GangProtocol::new(config)
    };
    let mut seen = HashSet::new();
    let mut queue: VecDeque<Cluster> = model.init_states().into();
    let mut compared = 0;
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        if seen.len() >= limit || !seen.insert(fingerprint(&state)) {
            continue;
        }
        actions.clear();
        model.actions(&state, &mut actions);
        for action in actions.drain(..) {
            let copied = model.next_state(&state, action.clone());
            // Fingerprinted first, as the walk's states are: each part's hash is cached.
            let owned = owned_copy(&state);
            assert_eq!(fingerprint(&owned), fingerprint(&state));
            let in_place = model.next_state_from(owned, action.clone());
            assert_eq!(copied, in_place, "{action:?} from {state:#?}");
            if let (Some(copied), Some(in_place)) = (&copied, &in_place) {
                assert_eq!(fingerprint(copied), fingerprint(in_place), "{action:?}");
            }
            compared += 1;
            queue.extend(copied);
        }
    }
    compared
}

#[test]
fn a_step_in_place_leads_where_a_step_from_a_copy_leads() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        for gang_cycle in [GangCycle::PermitBarrier, GangCycle::PodGroup] {
            for preset in [Preset::Tiny, Preset::Small] {
                let config = ClusterConfig {
                    gang_cycle,
                    permit_rejections: 1,
                    deletes: 1,
                    ..preset.config(mode)
                };
                let compared = compare_steps(config, 20_000);
                assert!(
                    compared > 100,
                    "{preset:?} {mode:?} {gang_cycle:?}: {compared}"
                );
            }
        }
    }
}
