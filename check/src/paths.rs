//! Paths through the model, for replaying them on the real core (`gangway-tests`' `replay`):
//! the checker's path to a property's discovery, or a seeded random walk.

use stateright::Model;

use super::cluster::Cluster;
use super::protocol::{Action, GangProtocol};
use super::state_space::{fingerprint, Order, Walk};

/// A path as the model took it: each state with the action taken from it (`None` on the last).
pub type Path = Vec<(Cluster, Option<Action>)>;

/// The shortest path the checker finds to `property`'s discovery in `model` — a counterexample
/// for an `always` property, an example for a `sometimes` — or `None` if there is none. The
/// search stops at the first discovery.
pub fn discover(model: &GangProtocol, property: &'static str, threads: usize) -> Option<Path> {
    let walk = Walk::new(model, fingerprint, Some(property));
    walk.run(Order::Breadth, threads);
    walk.discovery(property)
}

/// A random walk of at most `steps` actions from the initial state, choosing among the enabled
/// actions with a small deterministic generator seeded by `seed`; it ends early in a state
/// with no action enabled.
pub fn random_path(model: &GangProtocol, seed: u64, steps: usize) -> Path {
    let init = model.init_states().into_iter().next();
    random_path_from(model, init.expect("one initial state"), seed, steps)
}

/// [`random_path`] from `state` instead of the initial state.
pub fn random_path_from(model: &GangProtocol, mut state: Cluster, seed: u64, steps: usize) -> Path {
    let mut rng = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut path = Vec::new();
    for _ in 0..steps {
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        // xorshift64*: enough to spread the choices, and the same on every machine.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        let pick = rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33;
        let Some(action) = actions.get(pick as usize % actions.len().max(1)).cloned() else {
            break;
        };
        let Some(next) = model.next_state(&state, action.clone()) else {
            break;
        };
        path.push((std::mem::replace(&mut state, next), Some(action)));
    }
    path.push((state, None));
    path
}
