//! Hardened pod-group cycle: a gang member deleted before it was scheduled asks its parked
//! siblings again.
//!
//! The pod-group cycle places a gang's members one after another on one snapshot, so a member
//! placed there can take the room a sibling then finds missing: the sibling is turned away
//! for room, and the gang goes back. That room was never assumed; if the member that took it is
//! deleted — while the cycle runs or once the gang is parked — nothing is released, so no
//! event announces it, and the siblings wait for the leftover flush though the gang may fit
//! without it now. kube-scheduler 1.36 announces nothing for an unscheduled pod's delete
//! (`deletePodFromSchedulingQueue` moves no pod), and `Mode::Upstream` parks them as it does.
//! Hardened activates the gang's members the unschedulable pool holds, in the critical section
//! that finds the member gone: I7, no lost wake-up (found by the `scheduler_events` fuzz
//! target's judgement at rest, in `.ci/run`).

use crate::queue::{QueuePlace, QueuePlugins, QueueState};
use crate::{GroupKey, PodId, Time};

/// Activates the members of group `key` parked in the unschedulable pool (a gated one stays
/// gated: PreEnqueue is asked again); returns how many moved to the active queue.
pub(super) fn activate_parked_members(
    q: &mut QueueState,
    plugins: &dyn QueuePlugins,
    key: &GroupKey,
    now: Time,
) -> usize {
    let parked: Vec<PodId> = q
        .group_members_not_active(key)
        .into_iter()
        .filter(|id| q.place(id) == Some(QueuePlace::Unschedulable))
        .collect();
    if parked.is_empty() {
        return 0;
    }
    let moved = q.activate(&parked, now, plugins);
    tracing::debug!(group = %key, parked = parked.len(), moved, "a member left unscheduled: its parked siblings asked again");
    moved
}
