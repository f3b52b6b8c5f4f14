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
}
