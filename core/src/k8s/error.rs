use std::fmt;

use crate::GroupKey;
use crate::PodGroupError;

/// An error returned from [`quantity_value`](super::quantity_value) and
/// [`quantity_milli_value`](super::quantity_milli_value), and inside the conversions' errors for
/// a quantity they could not read. Each variant holds the quantity as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuantityError {
    /// Not a number: empty, no digit, or something other than a sign before the digits.
    #[error("quantity {0:?} is not a number")]
    Malformed(String),
    /// A number followed by something that is not a Kubernetes suffix (`12x`, `1K`, `1 Gi`).
    #[error("quantity {quantity:?} has an unknown suffix {suffix:?}")]
    UnknownSuffix {
        /// The quantity.
        quantity: String,
        /// What follows the number.
        suffix: String,
    },
    /// Less than zero: no request or capacity can be negative.
    #[error("quantity {0:?} is negative")]
    Negative(String),
    /// More than 2^63 − 1 in the unit asked for (millicores or bytes): beyond the largest
    /// Kubernetes quantity.
    #[error("quantity {0:?} is too large")]
    TooLarge(String),
    /// A fraction of a resource counted in whole units: an extended resource such as
    /// `nvidia.com/gpu: 500m`, which the API server refuses. Only the conversions return it.
    #[error("quantity {0:?} is not a whole number")]
    NotWhole(String),
}

/// Where in a pod spec a resource request was read from: named in a
/// [`PodConversionError::Quantity`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestSite {
    /// `spec.containers[]`, by name.
    Container(String),
    /// `spec.initContainers[]` (sidecars included), by name.
    InitContainer(String),
    /// `spec.resources`: pod-level resources.
    PodResources,
    /// `spec.overhead`: the RuntimeClass's pod overhead.
    Overhead,
}

/// `container NAME`, `init container NAME`, `pod resources`, `pod overhead`.
impl fmt::Display for RequestSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestSite::Container(name) => write!(f, "container {name}"),
            RequestSite::InitContainer(name) => write!(f, "init container {name}"),
            RequestSite::PodResources => f.write_str("pod resources"),
            RequestSite::Overhead => f.write_str("pod overhead"),
        }
    }
}

/// A scheduling constraint kube-scheduler would enforce and gangsched cannot: the
/// [`Pod`](crate::Pod) conversion refuses it ([`PodConversionError::Unsupported`]) rather than
/// place the pod without it. `Display` names the field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unsupported {
    /// `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`: node
    /// selector terms beyond `spec.nodeSelector`'s exact labels.
    RequiredNodeAffinity,
    /// `spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    RequiredPodAffinity,
    /// `spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`: refused
    /// on a bound pod too, as it keeps other pods away from its node.
    RequiredPodAntiAffinity,
    /// A `spec.topologySpreadConstraints[]` entry with `whenUnsatisfiable: DoNotSchedule`.
    TopologySpread {
        /// Its index in the list.
        index: usize,
        /// Its `topologyKey`.
        topology_key: String,
    },
    /// `spec.resourceClaims`: devices allocated through dynamic resource allocation.
    ResourceClaims,
    /// `spec.schedulingGates`: kube-scheduler does not schedule the pod until they are removed.
    SchedulingGates,
    /// A container port bound on the node (`hostPort`, or any port with `hostNetwork: true`):
    /// kube-scheduler's NodePorts keeps two on one node apart.
    HostPort {
        /// The container, as `container NAME` or `init container NAME`.
        container: RequestSite,
        /// The port on the node.
        port: i32,
    },
    /// A volume whose placement kube-scheduler checks (VolumeBinding, VolumeZone,
    /// VolumeRestrictions, NodeVolumeLimits): `persistentVolumeClaim`, `ephemeral`, and the
    /// in-tree disks `gcePersistentDisk`, `awsElasticBlockStore`, `azureDisk`, `rbd`, `iscsi`.
    Volume {
        /// The volume's name.
        volume: String,
        /// Its source field, e.g. `persistentVolumeClaim`.
        source: &'static str,
    },
    /// A pod-level request or limit (`spec.resources`) of a resource other than `cpu`, `memory`
    /// and `hugepages-<size>`, which the API server refuses.
    PodLevelResource {
        /// `requests` or `limits`.
        list: &'static str,
        /// The resource.
        resource: String,
    },
    /// `spec.workloadRef` (Kubernetes 1.35): a Workload's pod group, which has no standalone
    /// PodGroup object to convert.
    WorkloadRef,
    /// A `spec.tolerations[]` entry gangsched cannot match: an `operator` other than `Equal`
    /// and `Exists` (such as `Lt` and `Gt`, behind a feature gate), or an unknown `effect`.
    Toleration {
        /// Its index in the list.
        index: usize,
        /// `operator` or `effect`.
        field: &'static str,
        /// The value as written.
        value: String,
    },
}

/// The field, e.g. `spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution`,
/// `spec.volumes[data].persistentVolumeClaim`, `hostPort 8080 of container web`.
impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
        match self {
            Unsupported::RequiredNodeAffinity => write!(f, "spec.affinity.nodeAffinity.{REQUIRED}"),
            Unsupported::RequiredPodAffinity => write!(f, "spec.affinity.podAffinity.{REQUIRED}"),
            Unsupported::RequiredPodAntiAffinity => {
                write!(f, "spec.affinity.podAntiAffinity.{REQUIRED}")
            }
            Unsupported::TopologySpread {
                index,
                topology_key,
            } => write!(
                f,
                "spec.topologySpreadConstraints[{index}] ({topology_key}, DoNotSchedule)"
            ),
            Unsupported::ResourceClaims => f.write_str("spec.resourceClaims"),
            Unsupported::SchedulingGates => f.write_str("spec.schedulingGates"),
            Unsupported::HostPort { container, port } => {
                write!(f, "hostPort {port} of {container}")
            }
            Unsupported::Volume { volume, source } => {
                write!(f, "spec.volumes[{volume}].{source}")
            }
            Unsupported::PodLevelResource { list, resource } => {
                write!(f, "spec.resources.{list}[{resource}]")
            }
            Unsupported::WorkloadRef => f.write_str("spec.workloadRef"),
            Unsupported::Toleration {
                index,
                field,
                value,
            } => write!(f, "spec.tolerations[{index}].{field} {value:?}"),
        }
    }
}

/// An error converting a k8s-openapi `Pod` into a [`Pod`](crate::Pod). Pods are named
/// `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PodConversionError {
    /// `metadata.name` is missing or empty.
    #[error("pod has no name")]
    NoName,
    /// `metadata.namespace` is missing or empty.
    #[error("pod {name} has no namespace")]
    NoNamespace {
        /// The pod's name.
        name: String,
    },
    /// `metadata.uid` is missing or empty (a manifest not yet created in a cluster).
    #[error("pod {pod} has no uid")]
    NoUid {
        /// The pod.
        pod: String,
    },
    /// `spec` is missing.
    #[error("pod {pod} has no spec")]
    NoSpec {
        /// The pod.
        pod: String,
    },
    /// `spec.schedulingGroup` is set without a (non-empty) `podGroupName`.
    #[error("pod {pod} has a scheduling group without a pod group name")]
    NoGroupName {
        /// The pod.
        pod: String,
    },
    /// A request (or the limit standing in for it) is not a valid quantity, or is a fraction
    /// of a resource counted in whole units ([`QuantityError::NotWhole`]).
    #[error("pod {pod}: {site} requests {resource}: {error}")]
    Quantity {
        /// The pod.
        pod: String,
        /// Where the quantity is.
        site: RequestSite,
        /// The resource, e.g. `memory` or `nvidia.com/gpu`.
        resource: Box<str>,
        /// What is wrong with it.
        error: QuantityError,
    },
    /// The pod's total request of `resource` exceeds `u64::MAX` (millicores, bytes or units).
    #[error("pod {pod} requests more {resource} than fits in 64 bits")]
    RequestsOverflow {
        /// The pod.
        pod: String,
        /// The resource, e.g. `cpu` or `nvidia.com/gpu`.
        resource: Box<str>,
    },
    /// The pod has a scheduling constraint gangsched cannot honour.
    #[error("pod {pod}: {constraint} is not supported")]
    Unsupported {
        /// The pod.
        pod: String,
        /// The constraint, naming its field.
        constraint: Unsupported,
    },
}

/// An error converting a k8s-openapi `PodGroup` into a [`PodGroup`](crate::PodGroup).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PodGroupConversionError {
    /// `metadata.name` is missing or empty.
    #[error("pod group has no name")]
    NoName,
    /// `metadata.namespace` is missing or empty.
    #[error("pod group {name} has no namespace")]
    NoNamespace {
        /// The group's name.
        name: String,
    },
    /// `spec.schedulingPolicy` sets neither `basic` nor `gang` (perhaps a policy newer than
    /// this API version, dropped when the object was parsed).
    #[error("pod group {0} has no known scheduling policy")]
    UnknownPolicy(GroupKey),
    /// `spec.schedulingPolicy` sets both `basic` and `gang`.
    #[error("pod group {0} has both a basic and a gang scheduling policy")]
    AmbiguousPolicy(GroupKey),
    /// A field gangsched cannot honour is set: `spec.schedulingConstraints.topology` (all
    /// members in one topology domain), `spec.resourceClaims` (devices shared by the group), or
    /// `spec.parentCompositePodGroupName` (Kubernetes 1.37: a group of groups).
    #[error("pod group {group}: {field} is not supported")]
    Unsupported {
        /// The group.
        group: GroupKey,
        /// The field, e.g. `spec.schedulingConstraints.topology`.
        field: &'static str,
    },
    /// `spec.schedulingPolicy.gang.minCount` is zero or negative.
    #[error("pod group {group} has gang min count {min_count}, not at least 1")]
    InvalidMinCount {
        /// The group.
        group: GroupKey,
        /// The min count as written.
        min_count: i32,
    },
    /// [`PodGroup::new`](crate::PodGroup::new) refused the group. The checks above leave it
    /// nothing to refuse; the variant keeps the conversion free of panics.
    #[error(transparent)]
    Rejected(#[from] PodGroupError),
}

/// An error converting a k8s-openapi `Node` into a [`Node`](crate::scheduler::Node).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeConversionError {
    /// `metadata.name` is missing or empty.
    #[error("node has no name")]
    NoName,
    /// A quantity in `status.allocatable` (or `status.capacity`) is not valid, or is a
    /// fraction of a resource counted in whole units ([`QuantityError::NotWhole`]).
    #[error("node {node}: {list} {resource}: {error}")]
    Quantity {
        /// The node.
        node: String,
        /// `allocatable` or `capacity`: the list the resources were read from.
        list: &'static str,
        /// The resource, e.g. `memory` or `nvidia.com/gpu`.
        resource: Box<str>,
        /// What is wrong with it.
        error: QuantityError,
    },
    /// A taint's effect is none of `NoSchedule`, `PreferNoSchedule` and `NoExecute`.
    #[error("node {node} has taint {key} with unknown effect {effect:?}")]
    TaintEffect {
        /// The node.
        node: String,
        /// The taint's key.
        key: String,
        /// The effect as written.
        effect: String,
    },
}
