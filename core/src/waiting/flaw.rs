//! Deliberate bugs that a checker can plant in a waiting map, for witnesses: a fuzzer or test
//! run with one must find the rule it breaks. Planted only through
//! `checking::waiting_pods_with_flaw`; a map built any other way has none, and each costs one
//! comparison where it sits.

/// A bug planted in a [`WaitingPods`](super::WaitingPods) map's own code (the sharded layer,
/// not the [`WaitingState`](super::WaitingState) each shard is).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitingFlaw {
    /// `expire(now)` skips a shard whose earliest deadline is exactly `now` (a `>=` for a `>`
    /// in its look at each shard before locking it): a pod due now is not timed out until a
    /// later expiry, and `expire` does not report exactly the pods due (H4).
    ExpirySkipsPodDueNow,
    /// `expire` hands back (and delivers) the pods it timed out shard by shard, in shard
    /// order, not merged into (deadline, pod) order as one state's would be: H4.
    ExpiryInShardOrder,
    /// A single rejection (`reject`, `reject_for`, a handle's own) hands its decision to the
    /// sink — and tells telemetry — while still holding its shard's write lock: a sink or a
    /// subscriber that looks at the map blocks on that lock for ever (H5).
    DeliversUnderLock,
    /// A rejection or preemption of a pod that is no longer waiting — already allowed, or
    /// decided by someone else — still reports that it decided (before kubernetes PR #135719,
    /// `Reject` returned nothing and the preemption executor assumed it had stopped the victim:
    /// a victim already allowed at Permit went on to bind while the preemptor counted on its
    /// room): two callers each believe the decision was theirs (H4).
    RejectClaimsADecidedPod,
}
