//! The deliberate bugs a checker plants in the gang plugin's operations ([`GangFlaw`]), for
//! witnesses: compiled only with the `checking` feature;
//! [`PlantedGang`](super::planted::PlantedGang) parts plant one.

/// A deliberate bug in the gang plugin's operations, planted only by a checker (through
/// [`GangParts::planted`](super::parts::GangParts::planted)) to show that its checks find it: a witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GangFlaw {
    /// Hardened Permit at quorum allows the attempt's waiting members one by one, skipping any
    /// that stopped waiting (preempted, say) instead of failing the attempt — upstream's
    /// partial gang: the pod passes with a member short (H1, I3).
    QuorumAllowsOneByOne,
    /// Hardened Permit of a member of a group that is no gang, which another plugin asks to
    /// wait, looks at its group in one critical section and registers the pod in the waiting
    /// map in another, unmarked: a change making the group a gang in between finds nothing to
    /// take out of the quorum, and a sibling passes alone (I3).
    LooksThenRegisters,
    /// A change that makes a group a gang takes out of the quorum only the members it still
    /// finds waiting for another plugin: one whose wait is over — timed out, or rejected by
    /// the embedder — keeps counting until its binding cycle unreserves it, and a sibling
    /// passes alone (I3; the `scheduler_events` fuzz target's fourth find).
    ConversionForgetsOnlyWaiters,
    /// The Unreserve of a member deleted while assumed puts it back among its group's
    /// unscheduled pods (kubernetes#138422: the cache's `ForgetPod` of an assumed pod with a
    /// deletion timestamp moved it from assumed back to unscheduled, where it was counted for
    /// ever): the group counts a pod that no longer exists, and its gate lets a gang through
    /// that is missing a member.
    ForgetRestoresDeletedMember,
}
