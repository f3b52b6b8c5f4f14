//! A reference model of the scheduling queue: the sequential specification that
//! [`gangsched::queue::QueueState`] is checked against.
//!
//! It is deliberately naive: a `Vec` of pod records (kept in id order), each with an explicit
//! [`ModelPlace`]; linear scans; the active queue is sorted when it is read; the cluster events seen by a pod
//! in flight are kept *in that pod's record*, not in a shared log with sequence numbers. Each
//! method reads as the rule it states. Property tests and the fuzzer run it in lockstep with the
//! real queue and compare every result ([`QueueModel::agrees_with`]).
//!
//! The rules (kube-scheduler 1.36 with queueing hints):
//!
//! - **Places.** A known pod is in exactly one place: active, backing off (after an
//!   unschedulable attempt), error-backing off (after an attempt that failed with no rejecting
//!   plugin), unschedulable (gated pods included), or in flight (popped, attempt not over).
//! - **Order.** PrioritySort: the active pod with the highest priority pops first, then the
//!   earliest timestamp, then the smallest pod id.
//! - **Backoff.** After `attempts` attempts the backoff is zero before the first, then the
//!   initial backoff doubled once per earlier attempt, capped at the maximum. The expiry is the
//!   pod's timestamp (its last failure) plus that backoff, truncated to the ordering window when
//!   there is one. A pod backs off while its expiry is after `now` (with a window: while the
//!   expiry is not before the truncated `now`).
//! - **Entering the active queue** (upstream `moveToActiveQ`): PreEnqueue runs first; a pod it
//!   rejects is gated by that plugin — it waits in the unschedulable pool and the plugin joins
//!   its unschedulable plugins (so the gate's hints apply). Otherwise it is active, and its
//!   first activation time is recorded. Leaving any place ungates a pod.
//! - **Add.** A new pod enters the active queue with its timestamp at `now`; adding a known pod
//!   (in flight included) is an error naming where it is.
//! - **Update.** In flight: the update is only seen by that pod's attempt. Active: the pod
//!   object changes and the pod is re-sorted (no PreEnqueue). Backing off: the object changes,
//!   the expiry does not. Unschedulable (gated or not): the object changes, then the update is
//!   an event for that one pod, as in *move all* below (a gated pod moves only if its gate
//!   registered for pod updates). Unknown: added as a new pod.
//! - **Delete.** A queued pod leaves. A pod in flight stays in flight until its attempt is over,
//!   and is not queued again when handed back.
//! - **Pop.** The first active pod goes in flight: one more attempt, last attempt's rejecting
//!   plugins forgotten, the scheduling cycle counted.
//! - **Events during an attempt (I7).** An event of interest that happens while pods are in
//!   flight is seen by every one of them; an update or activation of an in-flight pod is seen by
//!   that pod only. Events are kept only for pods in flight.
//! - **Worth requeuing** (upstream `isPodWorthRequeuing`): a pod with no rejecting plugin, or
//!   any wildcard event: after backoff. Otherwise ask the hints of the rejecting plugins
//!   registered for the event's kind (a failing hint counts as `Queue`): a pending plugin saying
//!   `Queue` means immediately; an unschedulable plugin saying `Queue` means after backoff;
//!   otherwise skip.
//! - **Requeue** (upstream `requeuePodViaQueueingHint`): skip → unschedulable pool; after
//!   backoff and still backing off → backoff (error backoff if the pod has no rejecting plugin);
//!   otherwise enter the active queue.
//! - **Hand back** (`add_unschedulable_if_not_present`): a pod that is queued is an error. A
//!   pod deleted in flight vanishes. Otherwise its timestamp becomes `now` and it is requeued by
//!   the strongest verdict of the events its attempt saw — after backoff if it has no rejecting
//!   plugin or was not in flight (nothing is known, as upstream); skip if it saw nothing worth
//!   it. Its attempt is over.
//! - **Gang hand back** (hardened): if any member is queued, an error and nothing changes.
//!   Otherwise every member's timestamp becomes `now`; the strongest verdict of any member
//!   (computed as for one pod) and the latest expiry of any member apply to all: members that
//!   back off share that one expiry. Deleted members vanish. A pod listed twice is one member
//!   (its first listing).
//! - **Activate.** A pod unschedulable or backing off enters the active queue (PreEnqueue
//!   still applies); for a pod in flight the activation (a wildcard event) is seen by its attempt;
//!   others are ignored. Counts the pods that became active.
//! - **Move all** (upstream `MoveAllToActiveOrBackoffQueue`): an event no plugin registered
//!   for (and not a wildcard) does nothing at all. Otherwise every unschedulable pod that passes
//!   the precheck is considered: a gated pod only if its gate registered for the event's kind,
//!   or the event is a wildcard and `QueueConfig::wildcards_move_gated` is on
//!   (kubernetes#139162); it moves if the event is worth requeuing it. Then the pods in flight
//!   see the event. Counts the pods that left the pool.
//! - **Flush backoff.** Every pod whose backoff (error backoff included) has ended at `now`
//!   enters the active queue. Counts the pods that left backoff.
//! - **Flush leftover.** A pod is *parked since* its timestamp, or its last flush if that is
//!   later. Every unschedulable pod parked for more than the maximum unschedulable time at `now`
//!   is moved as by the wildcard `UnschedulableTimeout` (so a gated one stays, and stays stale,
//!   unless wildcards move gated pods); with `wildcards_move_gated`, those that stay (still
//!   gated) are flushed at `now` (their timestamp, hence their order and backoff, is kept;
//!   upstream #139331). If any pod was stale, the pods in flight see the event. Counts the pods
//!   that left the pool.
//! - **Close** only sets a flag.
//!
//! [`plugins`] is the small fixed plugin set the tests and the fuzzer give both the real queue
//! and the model; the model calls its `pre_enqueue`, `registered`, `is_event_of_interest` and
//! `hint` (the specification is about the queue's rules, not the plugins').

mod apply;
mod compare;
pub mod lockstep;
mod model;
mod plugin_set;
mod requeue;
#[cfg(test)]
mod tests;

pub use model::{ModelInfo, ModelPlace, ModelPopped, QueueModel};
pub use plugin_set::{plugins, CLAIMS, FIT, GATE, SILENT};
