//! The invariants the checker asserts on every state (docs/guarantees.md), each as a function that
//! explains a violation: the same text marks the failing step of a counterexample.

use gangsched::checking::ModelDriver;
use gangsched::checking::{leaked, parked_for_room, short_gangs_binding};
use gangsched::gang::{GroupState, Groups, GANG_SCHEDULING};
use gangsched::queue::{QueuePlace, QueueState};
use gangsched::scheduler::{CacheState, PodPhase};
use gangsched::{Mode, PluginName, Pod, PodId, WaitingState};

use super::cluster::{Cluster, Stage};
use super::plugins::Plugins;

/// I4 conservation: each pod is in exactly one place, and the queue agrees with its stage —
/// queued (active, backoff, unschedulable, gated) exactly while pending, in flight exactly
/// while the scheduler or a binder has it, unknown before it arrives and after it is bound
/// or deleted.
pub fn conservation(s: &Cluster) -> Result<(), String> {
    // Each part's own check runs once per value of the part (see `Shared::checked`).
    s.queue.checked(QueueState::check)?;
    s.driver.checked(ModelDriver::check)?;
    for (id, stage) in &s.stages {
        let place = s.queue.place(id);
        let agrees = match stage {
            Stage::Absent | Stage::Bound | Stage::Deleted => place.is_none(),
            Stage::Pending => place.is_some_and(|p| p != QueuePlace::InFlight),
            Stage::Unfit
            | Stage::Placing
            | Stage::Reserved
            | Stage::Waiting
            | Stage::Decided { .. }
            | Stage::Deleting => place == Some(QueuePlace::InFlight),
        };
        if !agrees {
            let place = place.map_or("nowhere".to_owned(), |p| format!("{p:?}"));
            return Err(format!("{id} is {stage:?} but the queue has it {place}"));
        }
        if *stage == Stage::Absent && s.groups.is_member(id) {
            return Err(format!("{id} has not arrived but its group counts it"));
        }
        // A deleted pod has left its group in the step that deleted it (the bug corpus's
        // kubernetes#138422: a deleted member counted on).
        if matches!(stage, Stage::Deleting | Stage::Deleted) && s.groups.is_member(id) {
            return Err(format!("{id} was deleted but its group counts it"));
        }
    }
    Ok(())
}

/// I5 accounting: the group partition, the cache's node accounting, and the cache agreeing
/// with the stages (assumed exactly while reserved, waiting or decided; bound exactly when
/// bound). A pod deleted in its cycle is assumed until the cycle ends — in `mode` Upstream
/// only until its delete, when it was not waiting at Permit: kube-scheduler's
/// handleAssumedPodDeletion forgets it then.
pub fn accounting(s: &Cluster, mode: Mode) -> Result<(), String> {
    s.groups.checked(Groups::check)?;
    s.cache.checked(CacheState::check)?;
    s.waiting.checked(WaitingState::check)?;
    for (id, stage) in &s.stages {
        let phase = s.cache.phase(id);
        let expected = match stage {
            Stage::Reserved | Stage::Waiting | Stage::Decided { .. } | Stage::Deleting => {
                Some(PodPhase::Assumed)
            }
            Stage::Bound => Some(PodPhase::Bound),
            Stage::Absent | Stage::Pending | Stage::Unfit | Stage::Placing | Stage::Deleted => None,
        };
        let freed_at_delete =
            mode == Mode::Upstream && *stage == Stage::Deleting && phase.is_none();
        if phase != expected && !freed_at_delete {
            return Err(format!("{id} is {stage:?} but the cache has it {phase:?}"));
        }
    }
    Ok(())
}

/// I6 as a safety property: no reservation without a binding cycle to end it (the scheduler's
/// own check, over the same states: a scheduling cycle records a pod's assignment in the step
/// that assumes it); and once a waiting member is deleted its gang attempt is lost, so no
/// sibling that was waiting with it may go on waiting and holding its reservation (Hardened
/// rejects them at once; Upstream lets each wait for its own timer). A pod deleted while it
/// waits is itself decided at once, in both modes (upstream's `RejectWaitingPod` since
/// kubernetes PR #84578): it waits no longer, holding its room. (Upstream, a member deleted
/// before its Permit may still wait there, as upstream's does — but without its room, which
/// its delete freed: `handleAssumedPodDeletion`.)
pub fn held_for_lost_member(s: &Cluster) -> Option<String> {
    if let Some(leaked) = leaked(&s.cache, &s.driver).first() {
        return Some(format!(
            "{leaked} is assumed on a node with no binding cycle to end its reservation"
        ));
    }
    let deleted_waiting = s.stages.iter().find(|(id, stage)| {
        **stage == Stage::Deleting && s.waiting.get(id).is_some() && s.cache.phase(id).is_some()
    });
    if let Some((id, _)) = deleted_waiting {
        return Some(format!(
            "{id} was deleted but still waits at Permit, holding its reservation"
        ));
    }
    s.held.iter().next().map(|held| {
        format!("{held} still holds its reservation though a waiting sibling was deleted")
    })
}

/// I7 no lost event: no pod sits in the unschedulable pool for want of room that a node has.
/// Every release of room is announced, and room released while the pod was in flight is
/// replayed when it comes back, so a pod the placement turned away never parks while it fits
/// (its room is the placement's answer).
/// With the pod-group cycle (`by_group`) a member is placed beside its gang's, so a gang
/// parks for room that fits one member but not its quorum: the room a member of a gang short
/// of its quorum waits for is the quorum's, all its queued members placed one after another
/// (a member beyond a quorum reached waits for its own).
pub fn lost_event(
    s: &Cluster,
    by_group: bool,
    plugins: &Plugins,
    placements: impl Fn(&PluginName) -> bool,
) -> Option<String> {
    let place = |pod: &Pod, cache: &CacheState| plugins.place(pod, cache).0.ok();
    parked_with_room(&s.queue, &s.groups, &s.cache, by_group, placements, place)
}

/// [`lost_event`] on the core's own states — the model's, or a running scheduler's at rest
/// (`gangway simulate`, the shuttle suite): the first pod `queue` parks for want of room
/// (turned away by a plugin `placements` names) that `place` finds on `cache` — for a member
/// of a gang short of its quorum with the pod-group cycle (`by_group`), room for the quorum.
pub fn parked_with_room(
    queue: &QueueState,
    groups: &Groups,
    cache: &CacheState,
    by_group: bool,
    placements: impl Fn(&PluginName) -> bool,
    place: impl Fn(&Pod, &CacheState) -> Option<String>,
) -> Option<String> {
    // A gang short of its quorum is placed whole by the pod-group cycle: room for the quorum.
    // A member beyond a quorum already reached needs room for itself alone (found by the
    // scheduler_events fuzz target once it judged its rests: a gang of three, minimum two, two
    // bound, the third parked with no room was taken for a lost wake-up).
    let short = |state: &GroupState| {
        state
            .min_count()
            .is_some_and(|min| min as usize > state.scheduled_pods_count())
    };
    // The pod-group cycle of any member takes its parked siblings along (`gather`): while a
    // member is active, backing off or in flight, a parked sibling waits for no event (found
    // by the scheduler_events fuzz target: a member whose Permit waited sent its group back,
    // itself to the backoff, its siblings parked for the room it took on the snapshot).
    let sibling_moves = |state: &GroupState| {
        state.pods().any(|pod| {
            matches!(
                queue.place(pod.id()),
                Some(
                    QueuePlace::Active(_)
                        | QueuePlace::Backoff(_)
                        | QueuePlace::ErrorBackoff(_)
                        | QueuePlace::InFlight
                )
            )
        })
    };
    let fits = |pod: &Pod| match groups.state_of(pod) {
        Some(state) if by_group && sibling_moves(state) => false,
        Some(state) if by_group && short(state) => {
            quorum_fits(queue, cache, state, &placements, &place)
        }
        _ => place(pod, cache).is_some(),
    };
    let mut parked = parked_for_room(queue, &placements, fits);
    parked
        .next()
        .map(|id| format!("{id} is parked as unschedulable though a node has room for it"))
}

/// Whether the room the gang of `state` still needs for its quorum is free, as the pod-group
/// cycle would find it: its members in the queue (not in flight) placed one after another on
/// a copy of the cache in the cycle's own order — the member popped first, then the others
/// in pod id order, sorted by priority, then first attempt (`gather`). Which member is popped
/// first is not known at rest, so the room counts only if the cycle finds it from each of
/// them: where greedy placing from one order fails and from another fits (members of
/// different sizes), a retry is not sure to succeed, and parking is no lost wake-up (found
/// by the scheduler_events fuzz target once it judged its rests: in name order two small
/// members fit where the cycle, a larger member of higher priority first, never would).
///
/// A member another plugin turned away (an embedder's Permit plugin, say) waits for that
/// plugin's events, not for room: it does not count towards the quorum's room (found by the
/// fuzz target too: a gang whose members a Permit plugin rejected parked one member the
/// placement turned away, and the quorum "fit" only with the rejected ones).
fn quorum_fits(
    queue: &QueueState,
    cache: &CacheState,
    state: &GroupState,
    placements: impl Fn(&PluginName) -> bool,
    place: impl Fn(&Pod, &CacheState) -> Option<String>,
) -> bool {
    let min = state.min_count().unwrap_or(0) as usize;
    let need = min.saturating_sub(state.scheduled_pods_count());
    let for_room = |plugin: &PluginName| placements(plugin) || *plugin == GANG_SCHEDULING;
    let queued: Vec<&Pod> = state
        .pods()
        .filter(|pod| {
            let queued = queue
                .place(pod.id())
                .is_some_and(|p| p != QueuePlace::InFlight);
            let waits_for_room = queue
                .info(pod.id())
                .is_none_or(|info| info.unschedulable_plugins().iter().all(for_room));
            queued && waits_for_room
        })
        .collect();
    let rank = |pod: &Pod| {
        let first = queue.info(pod.id()).and_then(|info| info.initial_attempt());
        (std::cmp::Reverse(pod.priority()), first)
    };
    let fits_from = |popped: &Pod| {
        let mut order: Vec<&Pod> = std::iter::once(popped)
            .chain(queued.iter().copied().filter(|pod| pod.id() != popped.id()))
            .collect();
        order.sort_by_key(|pod| rank(pod));
        let mut cache = cache.clone();
        let mut placed = 0;
        for pod in order {
            if placed >= need {
                break;
            }
            if let Some(node) = place(pod, &cache) {
                if cache.assume(pod, &node).is_ok() {
                    placed += 1;
                }
            }
        }
        placed >= need
    };
    need == 0 || (!queued.is_empty() && queued.iter().all(|pod| fits_from(pod)))
}

/// I8 no stuck gang, for a state where nothing can happen any more (no action enabled, no
/// timer left): every gang is bound, or lost a member, or has every member bound or back in
/// the queue — and none of its members is gated while the gang is complete.
pub fn stuck_gang(s: &Cluster) -> Option<String> {
    s.groups.iter().find_map(|g| {
        let min = g.min_count()? as usize;
        if g.assigned().len() >= min {
            return None;
        }
        let members: Vec<&PodId> = s
            .pods
            .values()
            .filter(|p| p.group() == Some(g.key().name()))
            .map(|p| p.id())
            .collect();
        if members
            .iter()
            .any(|id| matches!(s.stage(id), Stage::Deleted | Stage::Deleting))
        {
            return None;
        }
        let key = g.key();
        let settled = |id: &&PodId| matches!(s.stage(id), Stage::Pending | Stage::Bound);
        if let Some(id) = members.iter().find(|id| !settled(id)) {
            let stage = s.stage(id);
            return Some(format!(
                "gang {key} is stuck: {id} stays {stage:?} with nothing left to move it"
            ));
        }
        let complete = g.all_pods_count() >= min;
        let gated = members
            .iter()
            .find(|id| s.queue.info(id).is_some_and(|i| i.gated_by().is_some()));
        match gated {
            Some(id) if complete => Some(format!(
                "gang {key} is stuck: all its members are there but {id} is still gated"
            )),
            _ => None,
        }
    })
}

/// I9 no hold-and-wait: no pod holds a node reservation while it waits at Permit for its
/// gang — between any two steps. The pod-group cycle admits a gang in the step that reserves
/// it; the Permit barrier's waiting members break it (its witness).
pub fn hold_and_wait(s: &Cluster) -> Option<String> {
    let waiting = s.waiting.iter().find_map(|w| {
        let id = w.pod().id();
        let for_gang = w.pending().iter().any(|p| p.plugin == GANG_SCHEDULING);
        (for_gang && s.driver.assignment(id).is_some())
            .then(|| format!("{id} holds its reservation while it waits at Permit for its gang"))
    });
    // The core's own check of a gang the pod-group cycle admitted, while it binds.
    waiting.or_else(|| {
        let short = short_gangs_binding(&s.driver, |key| s.groups.get(key));
        (!short.is_empty()).then(|| {
            format!("{short:?} admitted, short of quorum, still binding members that wait")
        })
    })
}
