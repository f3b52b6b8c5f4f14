//! What the timer thread does: permit deadlines, the backoff flush and the unschedulable
//! pool's leftover flush, each applied at the time it is given.

use crate::gang::ops;
use crate::gang::parts::GangParts;

use super::super::parts::Parts;
use super::admitted;
use crate::{GroupKey, PodId, Time};

/// Every permit deadline due at `now` passes: each waiting pod's own (Upstream, in the waiting
/// map), each live gang attempt's (Hardened, which rejects every waiting member together,
/// H1, H3) and each admitted pod-group gang's binding deadline (Hardened, which releases the
/// members whose binding has not begun, H3). The decisions reach the binding cycles. Returns
/// the pods whose own deadline passed and the gangs whose attempt's did.
pub fn expire_deadlines<P: Parts>(p: &mut P, now: Time) -> (Vec<PodId>, Vec<GroupKey>) {
    let pods = p.gang().expire_waiting(now);
    let mut gangs = ops::expire(p.gang(), now);
    gangs.extend(admitted::expire_binding_deadlines(p, now));
    (pods, gangs)
}

/// The earliest permit deadline: a waiting pod's own, a live gang attempt's, or the binding
/// deadline of a gang the pod-group cycle admitted (Hardened).
pub fn next_permit_deadline<P: Parts>(p: &mut P) -> Option<Time> {
    let binding = p.read_driver(|d| d.next_binding_deadline());
    let gang = p.gang();
    [
        gang.next_waiting_deadline(),
        gang.next_attempt_deadline(),
        binding,
    ]
    .into_iter()
    .flatten()
    .min()
}

/// Backoffs that have ended at `now` go to the active queue; returns how many pods moved.
pub fn flush_backoff<P: Parts>(p: &mut P, now: Time) -> usize {
    let moved = p.queue(|q, plugins| q.flush_backoff_completed(now, plugins));
    if moved > 0 {
        tracing::debug!(moved, "queue: backoff completed");
    }
    moved
}

/// Pods parked in the unschedulable pool for longer than the queue allows are retried;
/// returns how many moved.
pub fn flush_leftover<P: Parts>(p: &mut P, now: Time) -> usize {
    let moved = p.queue(|q, plugins| q.flush_unschedulable_leftover(now, plugins));
    if moved > 0 {
        tracing::debug!(moved, "queue: unschedulable leftover flushed");
    }
    moved
}
