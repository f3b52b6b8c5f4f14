//! A running scheduler at rest — nothing left to do but wait for a timer that rescues (a
//! permit deadline, the leftover flush) — judged as the model checker judges its states, on
//! the scheduler's own states: I5 (the groups' partition, the nodes' accounting, and the two
//! agreeing), I7 ([`parked_with_room`]) and progress without timeouts ([`gangs_with_room`]).
//! `gangway simulate` asks it at each rest of a virtual-time run, the shuttle suite at
//! quiescence.

use gangsched::gang::Groups;
use gangsched::queue::QueueState;
use gangsched::scheduler::{CacheState, Placement, PodPhase};
use gangsched::{GroupKey, PluginName, Pod};

use super::properties::parked_with_room;
use super::timeliness::{gangs_with_room, RoomFor};

/// What [`at_rest`] found.
#[derive(Clone, Debug, Default)]
pub struct AtRest {
    /// I5 and I7 broken, one line each, prefixed with the invariant (`I5: …`).
    pub violations: Vec<String>,
    /// The gangs with room for their quorum that wait for a timer all the same.
    pub waiting_for_a_timer: Vec<RoomFor>,
}

/// Judges a scheduler at rest from copies of its states: its `groups`, `cache` and `queue`,
/// its gangs scheduled by the pod-group cycle if `by_group`, pods placed by `placement`
/// (which names itself `placement_name` when it turns a pod away). The caller knows the
/// scheduler idle: nothing active or in flight, no binding cycle due. Progress is judged only
/// if no pod backs off either (its backoff, not a rescue, moves it next), and only for the
/// gangs no rescue has decided yet (`rescued`: a permit deadline rejected a member) — what
/// follows a timeout is the timeout's doing, as the model checker judges only paths on which
/// no rescue has fired.
pub fn at_rest(
    groups: &Groups,
    cache: &CacheState,
    queue: &QueueState,
    by_group: bool,
    placement: &impl Placement,
    placement_name: &str,
    rescued: impl Fn(&GroupKey) -> bool,
) -> AtRest {
    let mut violations = Vec::new();
    violations.extend(groups.check().err().map(|e| format!("I5: {e}")));
    violations.extend(cache.check().err().map(|e| format!("I5: {e}")));
    // The groups' partition agrees with the cache: a member assumed exactly while the cache
    // has it assumed, assigned exactly while bound there.
    let disagrees = groups.iter().find_map(|g| {
        let assumed = g.assumed().into_iter().map(|id| (id, PodPhase::Assumed));
        let assigned = g.assigned().into_iter().map(|id| (id, PodPhase::Bound));
        assumed.chain(assigned).find_map(|(id, phase)| {
            let cached = cache.phase(id);
            (cached != Some(phase)).then(|| {
                let key = g.key();
                format!("I5: {id} is {phase:?} in gang {key} but {cached:?} in the cache")
            })
        })
    });
    violations.extend(disagrees);
    let place = |pod: &Pod, cache: &CacheState| placement.place(pod, cache).ok();
    let placements = |p: &PluginName| p.as_str() == placement_name;
    let lost = parked_with_room(queue, groups, cache, by_group, placements, place);
    violations.extend(lost.map(|l| format!("I7: {l}")));
    // A pod backing off will be retried without a rescue: not at rest for progress.
    let waiting_for_a_timer = match queue.next_backoff_expiry() {
        Some(_) => Vec::new(),
        None => {
            let judged = groups.iter().filter(|g| !rescued(g.key()));
            gangs_with_room(judged, cache, place).collect()
        }
    };
    AtRest {
        violations,
        waiting_for_a_timer,
    }
}
