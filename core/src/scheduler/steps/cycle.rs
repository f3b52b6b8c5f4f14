//! The scheduling cycle, serial, in the steps other threads can see between: a popped pod is
//! placed, assumed and reserved, and its assignment recorded ([`place_and_reserve`]); then
//! either it goes back for want of room ([`hand_back_unfit`]) or Permit decides it
//! ([`permit`]). The scheduler runs the steps back to back; a model checker lets every other
//! thread's critical sections happen in between.

use crate::gang::parts::GangParts;
use crate::gang::{ops, GANG_SCHEDULING};
use crate::queue::Popped;
use crate::sync::Arc;
use crate::telemetry::{self, ScheduleResult};
use crate::{Code, Mode, Permit, PluginName, Pod, PodId, Status, Time};

use super::super::parts::count;
use super::super::parts::Parts;
use super::super::tally::Counted;
use super::super::{CycleOutcome, ResourceFit};
use super::activate::activate_siblings;
use super::permit_release::release_at_permit;

/// A popped pod between the steps of its scheduling cycle (its queue record stays in the
/// queue, in flight).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Placed {
    /// Assumed on `node` and reserved in its group, its assignment recorded: Permit next.
    Reserved {
        /// The pod.
        pod: Pod,
        /// The node.
        node: Arc<str>,
    },
    /// No node has room: back to the queue next.
    Unfit {
        /// The pod.
        pod: Pod,
        /// Why, from the placement.
        status: Status,
    },
}

#[cfg(feature = "checking")]
impl Placed {
    /// The pod.
    pub fn pod(&self) -> &Pod {
        match self {
            Placed::Reserved { pod, .. } | Placed::Unfit { pod, .. } => pod,
        }
    }
}

/// The first step of a scheduling cycle for the pod `popped`: place it (user code), assume it
/// on the node in the cache (I5), reserve it in its group, and record what its binding cycle
/// will need — before Permit, so a decision that comes the instant Permit registers it finds
/// it. `Err`: the cycle is over (assume or reserve failed), the pod already back in the queue.
pub fn place_and_reserve<P: Parts>(
    p: &mut P,
    popped: Popped,
    now: Time,
) -> Result<Placed, CycleOutcome> {
    count(p, Counted::Cycle);
    let pod = popped.info.pod().clone();
    let node: Arc<str> = match p.place(&pod) {
        Ok(node) => node.into(),
        Err(status) => return Ok(Placed::Unfit { pod, status }),
    };
    // From the assume to the record the pod is in the cache but not yet the driver's: one
    // step that the scheduler's check never sees half done.
    p.unobserved(|p| {
        assume_reserve(p, &pod, &node, now)?;
        record(p, &pod, node.clone(), now);
        Ok(Placed::Reserved { pod, node })
    })
}

/// [`place_and_reserve`] with the assignment left unrecorded: the planted
/// [`Flaw::RecordsAfterPermit`](super::super::flaw::Flaw::RecordsAfterPermit) (kubernetes#88179's class), whose checker runs [`permit`] and
/// then [`record`] as a step of its own, too late for a decision that came meanwhile.
#[cfg(feature = "checking")]
pub fn place_and_reserve_unrecorded<P: Parts>(
    p: &mut P,
    popped: Popped,
    now: Time,
) -> Result<Placed, CycleOutcome> {
    count(p, Counted::Cycle);
    let pod = popped.info.pod().clone();
    let node: Arc<str> = match p.place(&pod) {
        Ok(node) => node.into(),
        Err(status) => return Ok(Placed::Unfit { pod, status }),
    };
    p.unobserved(|p| assume_reserve(p, &pod, &node, now))?;
    Ok(Placed::Reserved { pod, node })
}

/// Records what `pod`'s binding cycle will need: the node it is assumed on, since `now`.
pub fn record<P: Parts>(p: &mut P, pod: &Pod, node: Arc<str>, now: Time) {
    p.driver(|d| d.record(pod, node, now));
}

/// Assume and reserve `pod` on `node` (see [`place_and_reserve`]); `Err`: the cycle is over,
/// the pod back in the queue.
pub(super) fn assume_reserve<P: Parts>(
    p: &mut P,
    pod: &Pod,
    node: &str,
    now: Time,
) -> Result<(), CycleOutcome> {
    let id = pod.id().clone();
    if let Err(e) = p.cache(|c| c.assume(pod, node)) {
        let status = Status::unschedulable(e.to_string());
        telemetry::schedule_attempt(ScheduleResult::Error);
        tracing::debug!(pod = %id, error = %e, "assume failed");
        // An error, not a plugin's verdict: error backoff.
        return Err(unschedulable(p, &id, None, status, now));
    }
    if let Err(e) = ops::reserve(p.gang(), pod) {
        p.cache(|c| c.forget(&id));
        let status = Status::unschedulable(e.to_string()).with_plugin(GANG_SCHEDULING);
        telemetry::schedule_attempt(ScheduleResult::Unschedulable);
        tracing::debug!(
            pod = %id,
            error = %e,
            plugin = GANG_SCHEDULING.as_str(),
            "reserve failed"
        );
        return Err(unschedulable(p, &id, Some(GANG_SCHEDULING), status, now));
    }
    Ok(())
}

/// A pod no node had room for goes back to the queue, rejected by the placement's plugin;
/// events recorded while it was in flight are replayed for it (I7).
///
/// A placement *error* ([`Code::Error`], a panic included) is not a verdict on the pod: it is
/// counted as one and the pod backs off as an error, rejected by no plugin.
pub fn hand_back_unfit<P: Parts>(p: &mut P, pod: Pod, status: Status, now: Time) -> CycleOutcome {
    let id = pod.id().clone();
    if status.code() == Code::Error {
        count(p, Counted::PlacementError);
        telemetry::schedule_attempt(ScheduleResult::Error);
        tracing::debug!(pod = %id, error = status.message(), "placement failed");
        return unschedulable(p, &id, None, status, now);
    }
    count(p, Counted::Unschedulable);
    telemetry::schedule_attempt(ScheduleResult::Unschedulable);
    tracing::debug!(pod = %id, reason = status.message(), "no node fits");
    let plugin = status
        .plugin()
        .cloned()
        .unwrap_or(ResourceFit::PLUGIN.into());
    unschedulable(p, &id, Some(plugin), status, now)
}

/// Permit for the pod its cycle reserved on `node`. Allowed at once: the decision goes to the
/// binding cycles. Rejected at once: Upstream releases it here and hands it back, as
/// kube-scheduler's scheduling cycle does (`permit_release.rs`); Hardened leaves it to its
/// binding cycle, which hands a failed gang back whole (H2). Waiting: registered in the
/// waiting map before this returns (so no sibling's decision can miss it), and its
/// unscheduled siblings are activated.
pub fn permit<P: Parts>(p: &mut P, pod: Pod, node: Arc<str>, now: Time) -> CycleOutcome {
    let id = pod.id().clone();
    let others = p.permit_plugins();
    let permit = ops::permit_with(p.gang(), &pod, &node, &others, now);
    // Upstream releases a pod Permit rejects in this cycle (`permit_release.rs`); any other
    // decision goes to a binding cycle.
    let release_now = p.mode() == Mode::Upstream && matches!(permit, Permit::Reject { .. });
    if let Some(decision) = permit.decision(&pod).filter(|_| !release_now) {
        p.driver(|d| d.decision_delivered(decision, false));
    }
    // Hardened (I6): a pod deleted after its Reserve and before this Permit is not left
    // waiting with its room until a deadline. Its delete found it not waiting yet and only
    // marked its assignment, so its wait is rejected here, as the delete would have (a plain
    // pod held by an embedder's Permit plugin; a gang's member the gang plugin already turns
    // away). Waiting first and looking second, against the delete's mark first and look
    // second, one of the two sees the other (found by the scheduler_events fuzz target's
    // split cycles). Upstream's waits on, without its room, as kube-scheduler's does.
    if p.mode() == Mode::Hardened
        && matches!(permit, Permit::Wait { .. })
        && p.read_driver(|d| d.assignment(&id).is_some_and(|a| a.deleted))
        && p.gang().remove_waiting(&id)
    {
        tracing::debug!(pod = %id, "deleted before its Permit: its wait rejected");
    }
    // The gang's unscheduled siblings, activated even if a later plugin rejected this pod.
    // Only those not already active can move: the queue lists them (in pod id order, the
    // order of the gang's unscheduled members), the registry says which are unscheduled.
    if let Some(key) = permit.activate().group() {
        let activated = activate_siblings(p, key, permit.activate(), now);
        if activated > 0 {
            tracing::debug!(activated, "queue: siblings activated");
        }
    }
    match permit {
        Permit::Allow => CycleOutcome::Allowed {
            pod: id,
            node: node.to_string(),
        },
        Permit::Wait { .. } => CycleOutcome::Waiting {
            pod: id,
            node: node.to_string(),
        },
        Permit::Reject { status, cause, .. } if release_now => {
            release_at_permit(p, pod, status, cause, now)
        }
        // Counted as an attempt by its binding cycle, which releases it.
        Permit::Reject { status, .. } => CycleOutcome::Rejected { pod: id, status },
    }
}

/// A pod's attempt ends and it goes back to the queue with the queue's record of it, rejected
/// by `rejector` (`None`: an error, so the error backoff); the events recorded during its
/// attempt are replayed (I7). `false`: it was deleted while in flight, and is gone.
pub(super) fn requeue<P: Parts>(
    p: &mut P,
    id: &PodId,
    rejector: Option<PluginName>,
    now: Time,
) -> bool {
    // Not in flight cannot happen: the pod is in flight until handed back.
    let back = p.queue(|q, plugins| q.hand_back(id, rejector, now, plugins));
    !matches!(back, Ok(None))
}

/// A scheduling cycle that failed with `status` ends for `id`: back in the queue
/// ([`requeue`]), its outcome [`CycleOutcome::Unschedulable`] — or, deleted while its cycle
/// ran, gone: [`CycleOutcome::Dropped`], so the embedder never hears "back in the queue" of a
/// pod that is not (found by the `scheduler_events` fuzz target's split cycles).
pub(super) fn unschedulable<P: Parts>(
    p: &mut P,
    id: &PodId,
    rejector: Option<PluginName>,
    status: Status,
    now: Time,
) -> CycleOutcome {
    if requeue(p, id, rejector, now) {
        return CycleOutcome::Unschedulable {
            pod: id.clone(),
            status,
        };
    }
    dropped(p, id)
}

/// [`CycleOutcome::Dropped`] for a pod deleted while its scheduling cycle ran, counted.
pub(super) fn dropped<P: Parts>(p: &mut P, id: &PodId) -> CycleOutcome {
    count(p, Counted::DeletedInFlight);
    tracing::debug!(pod = %id, "deleted during its cycle: dropped");
    CycleOutcome::Dropped { pod: id.clone() }
}
