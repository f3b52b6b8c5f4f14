use crate::{GroupKey, Pod, PodGroup, PodId};

/// Why a pod could not join its group ([`GroupState::add_pod`](super::GroupState::add_pod),
/// [`Groups::add_pod`](super::Groups::add_pod),
/// [`GangScheduling::on_pod_added`](super::GangScheduling::on_pod_added)). Hands the pod back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JoinGroupError {
    /// The pod names no scheduling group.
    #[error("pod {} names no pod group", .0.id())]
    NoGroup(Pod),
    /// The pod names a different group (or lives in another namespace).
    #[error("pod {} belongs to another pod group than {group}", .pod.id())]
    OtherGroup {
        /// The pod, handed back.
        pod: Pod,
        /// The group it was offered to.
        group: GroupKey,
    },
    /// A pod with this uid is already a member.
    #[error("pod {} is already a member of its pod group", .0.id())]
    AlreadyMember(Pod),
}

impl JoinGroupError {
    /// The pod that could not be added.
    pub fn into_pod(self) -> Pod {
        match self {
            JoinGroupError::NoGroup(pod)
            | JoinGroupError::OtherGroup { pod, .. }
            | JoinGroupError::AlreadyMember(pod) => pod,
        }
    }
}

/// An error returned when a PodGroup object is added, updated or set. Hands the group back
/// where it has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupUpdateError {
    /// Adding a PodGroup that already exists.
    #[error("pod group {} already exists", .0.key())]
    AlreadyExists(PodGroup),
    /// Updating a PodGroup that does not exist.
    #[error("pod group {} does not exist", .0.key())]
    NotFound(PodGroup),
    /// The update names another group than the state it was applied to.
    #[error("pod group {} cannot replace {state}", .group.key())]
    OtherGroup {
        /// The group, handed back.
        group: PodGroup,
        /// The state it was applied to.
        state: GroupKey,
    },
    /// Raising a gang's min count above the number of members it has: pods that already
    /// passed the gate would wait for members that do not exist.
    #[error("pod group {} raises min count to {} with only {members} members", .group.key(), .group.min_count().unwrap_or(0))]
    MinCountAboveMembers {
        /// The group, handed back.
        group: PodGroup,
        /// How many members the group has.
        members: usize,
    },
}

impl GroupUpdateError {
    /// The group that was refused.
    pub fn into_group(self) -> PodGroup {
        match self {
            GroupUpdateError::AlreadyExists(group)
            | GroupUpdateError::NotFound(group)
            | GroupUpdateError::OtherGroup { group, .. }
            | GroupUpdateError::MinCountAboveMembers { group, .. } => group,
        }
    }
}

/// An error returned from [`GangScheduling::reserve`](super::GangScheduling::reserve).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReserveError {
    /// No group state exists for the pod's group (the pod was never added, or was deleted).
    #[error("pod {0} has no pod group state")]
    NoGroupState(PodId),
    /// The pod is not an unscheduled member of its group (never added, already assumed or
    /// bound).
    #[error("pod {0} is not an unscheduled member of its pod group")]
    NotUnscheduled(PodId),
}
