//! The gang plugin's operations as values ([`GangOp`]: its cluster events and extension
//! points) and the one function that applies them to the real plugin ([`apply`]), over the
//! parts its public methods run on (`checking::gang_parts`) or the same parts with a flaw
//! planted (`checking::PlantedGang`). The lockstep driver (`model/src/gang/lockstep/`) and the
//! differential against kube-scheduler's gang plugin (`gangway differential --gang`) translate
//! their inputs into these.

use gangsched::checking::{gang_ops, GangParts};
use gangsched::gang::{GroupUpdateError, JoinGroupError, Permit, ReserveError};
use gangsched::{GroupKey, PermitPlugins, Pod, PodGroup, Status, Time};

/// One operation on the gang plugin, its arguments as values.
#[derive(Clone, Debug)]
pub enum GangOp {
    /// A pod is created (`on_pod_added`), bound already if `bound`.
    PodAdded {
        /// The pod.
        pod: Pod,
        /// Whether it arrives bound.
        bound: bool,
    },
    /// A pod is observed bound (`on_pod_bound`).
    PodBound(Pod),
    /// A pod is deleted (`on_pod_deleted`).
    PodDeleted(Pod),
    /// A PodGroup object is created (`on_group_added`).
    GroupAdded(PodGroup),
    /// A PodGroup object changes (`on_group_updated`).
    GroupUpdated(PodGroup),
    /// A PodGroup object is deleted (`on_group_deleted`).
    GroupDeleted(GroupKey),
    /// PreEnqueue for a pod (`pre_enqueue`).
    PreEnqueue(Pod),
    /// Reserve (`reserve`).
    Reserve(Pod),
    /// Permit for a pod reserved on `node` at `now`, `others` folded beside the gang's
    /// (`permit_with`).
    Permit {
        /// The pod.
        pod: Pod,
        /// Its node.
        node: String,
        /// The Permit plugins besides the gang's.
        others: PermitPlugins,
        /// The time.
        now: Time,
    },
    /// Unreserve (`unreserve`).
    Unreserve(Pod),
    /// The gang attempts' deadlines at `now` (`expire`).
    Expire(Time),
}

/// What an operation did: the result of the call it stands for. `R` is a waiting pod's
/// registration (the real plugin's `WaitingPod`).
pub enum GangOutcome<R> {
    /// `on_pod_added`'s result.
    PodAdded(Result<(), JoinGroupError>),
    /// `on_pod_bound`'s result.
    PodBound(bool),
    /// `on_pod_deleted`'s result.
    PodDeleted(Option<Pod>),
    /// `on_group_added`'s result.
    GroupAdded(Result<(), GroupUpdateError>),
    /// `on_group_updated`'s result.
    GroupUpdated(Result<PodGroup, GroupUpdateError>),
    /// `on_group_deleted`'s result.
    GroupDeleted(Option<PodGroup>),
    /// PreEnqueue's status.
    PreEnqueue(Status),
    /// Reserve's result.
    Reserved(Result<(), ReserveError>),
    /// Permit's verdict.
    Permit(Permit<R>),
    /// Unreserve ran.
    Unreserved,
    /// The gangs whose attempt timed out.
    Expired(Vec<GroupKey>),
}

impl<R> GangOutcome<R> {
    /// The outcome's name, for a message that an operation returned another's.
    fn name(&self) -> &'static str {
        match self {
            GangOutcome::PodAdded(_) => "pod added",
            GangOutcome::PodBound(_) => "pod bound",
            GangOutcome::PodDeleted(_) => "pod deleted",
            GangOutcome::GroupAdded(_) => "group added",
            GangOutcome::GroupUpdated(_) => "group updated",
            GangOutcome::GroupDeleted(_) => "group deleted",
            GangOutcome::PreEnqueue(_) => "pre-enqueue",
            GangOutcome::Reserved(_) => "reserved",
            GangOutcome::Permit(_) => "permit",
            GangOutcome::Unreserved => "unreserved",
            GangOutcome::Expired(_) => "expired",
        }
    }
}

outcome_of! {
    GangOutcome<R>;
    pod_added: PodAdded(Result<(), JoinGroupError>);
    pod_bound: PodBound(bool);
    pod_deleted: PodDeleted(Option<Pod>);
    group_added: GroupAdded(Result<(), GroupUpdateError>);
    group_updated: GroupUpdated(Result<PodGroup, GroupUpdateError>);
    group_deleted: GroupDeleted(Option<PodGroup>);
    pre_enqueue: PreEnqueue(Status);
    reserved: Reserved(Result<(), ReserveError>);
    permit: Permit(Permit<R>);
    expired: Expired(Vec<GroupKey>);
}

/// Applies `op` to the gang plugin's parts `g` — the plugin's own operations, as its public
/// methods run them.
pub fn apply<G: GangParts>(g: &mut G, op: &GangOp) -> GangOutcome<G::Registration> {
    match op {
        GangOp::PodAdded { pod, bound } => {
            GangOutcome::PodAdded(gang_ops::pod_added(g, pod.clone(), *bound))
        }
        GangOp::PodBound(pod) => GangOutcome::PodBound(gang_ops::pod_bound(g, pod)),
        GangOp::PodDeleted(pod) => GangOutcome::PodDeleted(gang_ops::pod_deleted(g, pod)),
        GangOp::GroupAdded(group) => {
            GangOutcome::GroupAdded(gang_ops::group_added(g, group.clone()))
        }
        GangOp::GroupUpdated(group) => {
            GangOutcome::GroupUpdated(gang_ops::group_updated(g, group.clone()))
        }
        GangOp::GroupDeleted(key) => GangOutcome::GroupDeleted(gang_ops::group_deleted(g, key)),
        GangOp::PreEnqueue(pod) => GangOutcome::PreEnqueue(gang_ops::pre_enqueue(g, pod)),
        GangOp::Reserve(pod) => GangOutcome::Reserved(gang_ops::reserve(g, pod)),
        GangOp::Permit {
            pod,
            node,
            others,
            now,
        } => GangOutcome::Permit(gang_ops::permit_with(g, pod, node, others, *now)),
        GangOp::Unreserve(pod) => {
            gang_ops::unreserve(g, pod);
            GangOutcome::Unreserved
        }
        GangOp::Expire(now) => GangOutcome::Expired(gang_ops::expire(g, *now)),
    }
}
