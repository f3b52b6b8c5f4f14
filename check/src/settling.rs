//! I8 as docs/guarantees.md states it: from every reachable state, a state where every gang is
//! settled (bound, lost a member, or back in the queue and not gated while complete) is
//! reachable. The walk checks `always` and `sometimes` properties on states; this needs the
//! state graph, so it builds it — for presets small enough to hold every state in memory — and
//! walks it backwards from the settled states.

use std::collections::{HashMap, VecDeque};

use stateright::Model;

use super::cluster::Cluster;
use super::properties::stuck_gang;
use super::protocol::GangProtocol;

/// What [`check_settling`] found.
#[derive(Debug)]
pub struct Settling {
    /// Reachable states.
    pub states: usize,
    /// Transitions between them.
    pub edges: usize,
    /// A reachable state from which no settled state can be reached, if there is one, with
    /// how many such states there are.
    pub unsettled: Option<(Cluster, usize)>,
}

/// Whether `s` counts as settled: every gang settled ([`stuck_gang`] finds none); or the
/// deadline budget ran out while a deadline is pending (the real timer would fire it and the
/// model stops there, as its stuck-state check does); or `s` already broke I3 or I6 (a
/// counterexample, whose path ends).
fn settled(model: &GangProtocol, s: &Cluster) -> bool {
    let deadline_beyond_budget = s.budget.timeouts == 0 && model.next_deadline(s).is_some();
    s.broken() || deadline_beyond_budget || stuck_gang(s).is_none()
}

/// Explores every reachable state of `model` (refusing more than `limit`) and checks that a
/// settled state is reachable from each.
// A state's only interior mutability is its parts' memo of their own hash and checks (see
// `Shared`), set once from the immutable part: a key's hash and equality never change.
#[allow(clippy::mutable_key_type)]
pub fn check_settling(model: &GangProtocol, limit: usize) -> Result<Settling, String> {
    let mut index: HashMap<Cluster, usize> = HashMap::new();
    let mut states: Vec<Cluster> = Vec::new();
    let mut predecessors: Vec<Vec<usize>> = Vec::new();
    let mut queue = VecDeque::new();
    for init in model.init_states() {
        if !index.contains_key(&init) {
            index.insert(init.clone(), states.len());
            queue.push_back(states.len());
            states.push(init);
            predecessors.push(Vec::new());
        }
    }
    let mut edges = 0;
    let mut actions = Vec::new();
    while let Some(at) = queue.pop_front() {
        actions.clear();
        model.actions(&states[at], &mut actions);
        for action in actions.drain(..) {
            let Some(next) = model.next_state(&states[at], action) else {
                continue;
            };
            let to = match index.get(&next) {
                Some(&to) => to,
                None => {
                    if states.len() >= limit {
                        return Err(format!("more than {limit} states"));
                    }
                    let to = states.len();
                    index.insert(next.clone(), to);
                    states.push(next);
                    predecessors.push(Vec::new());
                    queue.push_back(to);
                    to
                }
            };
            predecessors[to].push(at);
            edges += 1;
        }
    }
    // Backwards from the settled states: whatever is reached can settle.
    let mut can_settle = vec![false; states.len()];
    let mut work: Vec<usize> = (0..states.len())
        .filter(|&i| settled(model, &states[i]))
        .collect();
    for &i in &work {
        can_settle[i] = true;
    }
    while let Some(i) = work.pop() {
        for &p in &predecessors[i] {
            if !can_settle[p] {
                can_settle[p] = true;
                work.push(p);
            }
        }
    }
    let stranded: Vec<usize> = (0..states.len()).filter(|&i| !can_settle[i]).collect();
    Ok(Settling {
        states: states.len(),
        edges,
        unsettled: stranded
            .first()
            .map(|&i| (states[i].clone(), stranded.len())),
    })
}
