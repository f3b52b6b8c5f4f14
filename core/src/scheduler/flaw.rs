//! The deliberate bugs a checker plants in the driver's steps ([`Flaw`]), for witnesses:
//! compiled only with the `checking` feature; [`Planted`](super::planted::Planted) parts plant
//! one.

/// Deliberate bugs planted in the driver's own steps, for witnesses: a model checker run with
/// one must find the invariant it breaks. Each sits where the real code would go wrong, and
/// only [`Planted`](super::planted::Planted) parts say yes to
/// [`Parts::planted`](super::parts::Parts::planted).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flaw {
    /// A pod's arrival does not announce the pod-add event, so gated siblings are never
    /// re-checked (kubernetes#139162's class of bug): I8.
    ArrivalSkipsMoveEvent,
    /// The scheduling cycle records what the binding cycle needs only after Permit, so a
    /// decision that comes at once (a timeout, a sibling's failure) finds nothing to act on
    /// and the pod is left holding its reservation (kubernetes#88179's class): I4, I6, I8.
    RecordsAfterPermit,
    /// A failed bind releases the group's reservation but not the node's: I5.
    BindFailureKeepsNodeReservation,
    /// A failed bind ends the pod's attempt without handing it back to the queue: I4.
    BindFailureLosesPod,
    /// A rejected pod's binding cycle releases the group's reservation but not the node's: I5.
    ReleaseKeepsNodeReservation,
    /// A rejected pod's binding cycle frees its room without announcing it: I7.
    ReleaseAnnouncesNothing,
    /// The binding cycle of a pod deleted while in binding frees its room without
    /// announcing it: I7.
    DeleteAnnouncesNothing,
    /// A rejected pod's binding cycle releases it but ends its attempt without handing it back
    /// to the queue (Hardened: nor its gang's other rejected members): I4.
    RejectedNotRequeued,
    /// The Hardened pod-group cycle admits the gang its snapshot found feasible without
    /// checking the quorum again on the real state, so a sibling deleted since the snapshot
    /// leaves the gang admitted short: I3.
    CommitTrustsTheSnapshot,
    /// A Hardened pod-group gang left short of its quorum while it binds (a member's bind
    /// failed, a member deleted, its minimum raised) keeps its other members binding: I9.
    ShortGangKeepsBinding,
    /// A Hardened release of an admitted pod-group gang left short (steps/admitted.rs) does not
    /// ask the quorum again after unreserving its members, so a commit of the gang's next
    /// attempt that counted them between their rejection and their unreserve — admitted, its
    /// own re-check passed on them — is left admitted short with nobody to release it: I9.
    ReleaseSkipsQuorumRecheck,
    /// A Hardened failed bind that leaves its admitted pod-group gang short of quorum sends the
    /// failed member to the error backoff alone, its released siblings following in their own
    /// binding cycle: back first, the failed member's pod-group cycle finds its gang short and
    /// parks it, the siblings are parked the same way, and the gang — which fits — waits for
    /// the leftover flush (H2; gangway's own bug, found by the timeliness property): progress
    /// without timeouts.
    BindFailureBacksOffAlone,
    /// A Permit's activation of its gang's unscheduled members (`steps/activate.rs`) keeps the
    /// candidates the queue listed at the group's first unscheduled stamp although a member
    /// became unscheduled before the registry was asked: a member the queue skipped as past
    /// Reserve is left unactivated, where the full walk over the group activates it (issue
    /// #23's "nothing observable changes").
    ActivationTrustsItsFirstStamp,
    /// A failed bind releases the pod's reservation on its node twice — the failure path's
    /// release and then the Unreserve's — taking its requests off the node a second time
    /// (kubernetes PR #139418: a DRA claim's reservation count decremented in PreBind's failure
    /// path and again in Unreserve): the node's requested resources fall below its pods' sum,
    /// I5.
    BindFailureReleasesTwice,
    /// A pod whose Permit wait timed out has its reservation released twice by its binding
    /// cycle (YUNIKORN-2953: a gang's placeholder timeout released its allocated placeholders
    /// once as asks and again as allocations): the node's requested resources fall below its
    /// pods' sum, I5.
    TimeoutReleasesTwice,
    /// A pod deleted while it waits at Permit is marked deleted but left in the waiting map
    /// (kubernetes#84554, fixed by PR #84578: the delete handler did not reject the waiting
    /// pod): nothing decides it until its Permit deadline, and meanwhile it holds its room.
    DeleteLeavesPodWaiting,
    /// A pod rejected while it waited at Permit goes back to the queue without the plugin
    /// that rejected it (kubernetes PR #119785: `WaitOnPermit`'s rejection was returned as it
    /// was, so the rejecting plugin was not recorded): it backs off as after an error and is
    /// retried whatever happens, where it should wait for an event its rejector cares about.
    WaitRejectionForgetsItsPlugin,
}
