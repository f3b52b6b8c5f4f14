use std::fmt;

use crate::gang::PodGroupError;
use crate::GroupKey;

/// An error returned from [`quantity_value`](super::quantity_value) and
/// [`quantity_milli_value`](super::quantity_milli_value). Each variant holds the quantity as
/// written.
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
    /// A `cpu` or `memory` request (or the limit standing in for it) is not a valid quantity.
    #[error("pod {pod}: {site} requests {resource}: {error}")]
    Quantity {
        /// The pod.
        pod: String,
        /// Where the quantity is.
        site: RequestSite,
        /// `cpu` or `memory`.
        resource: &'static str,
        /// What is wrong with it.
        error: QuantityError,
    },
    /// The pod's total request of `resource` exceeds `u64::MAX` millicores or bytes.
    #[error("pod {pod} requests more {resource} than fits in 64 bits")]
    RequestsOverflow {
        /// The pod.
        pod: String,
        /// `cpu` or `memory`.
        resource: &'static str,
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
