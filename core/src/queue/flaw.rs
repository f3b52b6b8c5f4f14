//! A deliberate bug a checker plants in the real queue ([`QueueFlaw`]): the witness mechanism
//! of the `queue_moves` fuzz target, as `waiting/flaw.rs` is the waiting map's. Production
//! never builds a planted queue.

/// A deliberate bug in the queue, planted only through `checking::queue_state_with_flaw` (the
/// state) or `checking::scheduling_queue_with_flaw` (the blocking queue) to show that a checker
/// finds it: a witness. A queue built any other way has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QueueFlaw {
    /// A pod handed back after its attempt ignores the cluster events recorded while it was
    /// in flight — the race the in-flight event log exists for (an event arriving during the
    /// scheduling cycle is lost): a pod an event could have helped parks in the unschedulable
    /// pool until some later event or the leftover flush, breaking I7.
    ForgetsEventsInFlight,
    /// The blocking queue wakes one blocked `pop` — not all — and only when it had nothing to
    /// pop before (planted through `checking::scheduling_queue_with_flaw`): two adds racing two
    /// blocked pops wake one popper twice or once in all, and the other sleeps with a pod
    /// waiting for it, a lost wake-up (I2).
    WakesOneOnlyWhenEmpty,
    /// An update of a pod in flight, found in none of the queue's pools, adds it to the
    /// active queue (kubernetes#118226: `PriorityQueue.Update` looked for the pod in activeQ,
    /// backoffQ and unschedulablePods only): the pod is in flight and queued at once, and can
    /// be popped a second time while its first attempt runs (I4).
    UpdateQueuesPodInFlight,
    /// A pop keeps the rejectors of the pod's last attempt (kubernetes PR #120334:
    /// `UnschedulablePlugins` never cleared between attempts): an attempt that then fails with
    /// an error parks the pod as unschedulable by a plugin that did not reject it this time,
    /// waiting for an event that may never come, where it should back off (I7).
    KeepsStaleRejectors,
    /// A hand-back that makes its pod poppable at once (an event it waited for came while it
    /// was in flight: straight to the active queue, or backing off with 1.36's pop from
    /// backoff) wakes no blocked `pop` (kubernetes PR #119784: with
    /// queueing hints `AddUnschedulableIfNotPresent` could requeue a pod to activeQ without
    /// `cond.Broadcast()`): a popper asleep on the empty queue sleeps on with a pod there, a lost
    /// wake-up (I2). Planted through `checking::scheduling_queue_with_flaw`.
    HandBackWakesNobody,
    /// A blocking `pop` looks for a pod in one critical section and goes to sleep in another
    /// (kubernetes#130976, open: `Pop` checks the backoff queue's length under one lock and
    /// waits on a condition broadcast under none): a pod made poppable in between, and its
    /// wake-up, are missed (I2). Planted through `checking::scheduling_queue_with_flaw`.
    ChecksThenSleeps,
    /// The hand-back of a pod deleted during its attempt does not end that attempt
    /// (kubernetes#138316: `handleSchedulingFailure` looked the failed pod up again by
    /// namespace/name, found the pod recreated under a new uid, and `Done` was called on the
    /// new uid): the popped pod stays in flight for ever, and the in-flight event log, pruned
    /// only up to the oldest attempt in flight, grows without bound (I4).
    DeletedPodStaysInFlight,
}
