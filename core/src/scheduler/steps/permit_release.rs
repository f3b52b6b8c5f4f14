//! `Mode::Upstream`: a pod rejected by Permit itself is released in its own scheduling cycle,
//! as kube-scheduler's `prepareForBindingCycle` does — `unreserveAndForget` right after
//! `RunPermitPlugins`, then the failure handler hands it back (schedule_one.go). No binding
//! cycle runs for it, and no move-all announces its room: the room was taken in this very
//! cycle, and no other scheduling cycle ran meanwhile to be turned away by it.
//!
//! Before this, gangway's driver left the release to the pod's binding cycle, and in between
//! a sibling's Permit could count the rejected member towards its gang's quorum and let a
//! partial gang through — a race kube-scheduler does not have (I3, docs/races.md; the driver
//! differential, `upstream/traces/driver_permit_reject.jsonl`, runs this path against the real
//! `ScheduleOne`).
//!
//! Hardened keeps the release in the binding cycle, where the first binding cycle of a failed
//! gang attempt hands the whole gang back together (H2); a rejected member stops counting at
//! once there too (`gang/ops.rs`, `reject_before_gang`).

use crate::gang::{ops, GANG_SCHEDULING};
use crate::telemetry;
use crate::{Cause, Pod, Status, Time};

#[cfg(feature = "checking")]
use super::super::flaw::Flaw;
use super::super::parts::count;
use super::super::parts::Parts;
use super::super::tally::Counted;
use super::super::CycleOutcome;
use super::binding::{attempt_result, rejector};
use super::cycle::{dropped, requeue};

/// Releases `pod`, which Permit rejected with `status` in this scheduling cycle: the gang's
/// Unreserve, the cache's forget, the driver's record dropped, and the pod back in the queue
/// rejected by the plugin that said no (an `Error`: the error backoff) — or, deleted while
/// its cycle ran, done with the queue for good. One step: the scheduler's check never sees it
/// half done.
pub(super) fn release_at_permit<P: Parts>(
    p: &mut P,
    pod: Pod,
    status: Status,
    cause: Cause,
    now: Time,
) -> CycleOutcome {
    p.unobserved(|p| release(p, pod, status, cause, now))
}

fn release<P: Parts>(p: &mut P, pod: Pod, status: Status, cause: Cause, now: Time) -> CycleOutcome {
    let id = pod.id().clone();
    ops::unreserve(p.gang(), &pod);
    if !planted!(p, Flaw::ReleaseKeepsNodeReservation) {
        p.cache(|c| c.forget(&id));
    }
    // With `Flaw::RecordsAfterPermit` planted nothing is recorded yet (`steps::record`).
    let deleted = p
        .driver(|d| d.finish(&id))
        .is_some_and(|assignment| assignment.deleted);
    telemetry::schedule_attempt(attempt_result(&status));
    count(p, Counted::PermitRejection { timed_out: false });
    tracing::debug!(pod = %id, reason = status.message(), "rejected at permit, released");
    if deleted {
        // `handleSchedulingFailure` finds the pod gone from the informer: `Done`, no requeue.
        p.queue(|q, _| q.done(&id));
        return dropped(p, &id);
    }
    if planted!(p, Flaw::RejectedNotRequeued) {
        p.queue(|q, _| q.done(&id));
    } else {
        let plugin = status.plugin().cloned().unwrap_or(GANG_SCHEDULING);
        requeue(p, &id, rejector(&status, plugin), now);
    }
    CycleOutcome::Released {
        pod: id,
        status,
        cause,
    }
}
