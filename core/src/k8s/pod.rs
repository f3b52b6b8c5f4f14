use k8s_openapi::api::core::v1 as core;

use super::meta::{creation_time, non_empty};
use super::requests::{pod_requests, RequestsError};
use super::PodConversionError;
use crate::Pod;

/// A k8s-openapi `Pod` as gangway reads it, for every Kubernetes version k8s-openapi
/// supports (the group only from 1.36).
///
/// | gangway | from | when absent |
/// |---|---|---|
/// | [`id`](Pod::id) | `metadata.uid` | error |
/// | [`namespace`](Pod::namespace), [`name`](Pod::name) | `metadata` | error |
/// | [`priority`](Pod::priority) | `spec.priority` | 0 |
/// | [`group`](Pod::group) | `spec.schedulingGroup.podGroupName` (1.36+) | no group |
/// | [`creation_time`](Pod::creation_time) | `metadata.creationTimestamp` | [`Time::ZERO`] |
/// | [`requests`](Pod::requests) | `cpu` and `memory` requests, below | zero |
/// | [`node`](Pod::node) | `spec.nodeName` | unbound |
///
/// The group is in the pod's namespace. An empty string counts as absent, as in Go. A
/// `schedulingGroup` without a `podGroupName` and a missing `spec` are errors.
///
/// **Creation time** is nanoseconds since the Unix epoch: a wall-clock timeline, comparable
/// between converted pods but not with a [`SystemClock`](crate::SystemClock)'s times. Before
/// 1970 it is [`Time::ZERO`]; past 2554 (the end of a `u64` of nanoseconds), [`Time::MAX`].
///
/// **Requests** follow kube-scheduler's NodeResourcesFit (`PodRequests`, without in-place
/// resize), for `cpu` (millicores, rounded up) and `memory` (bytes, rounded up); other
/// resources are not read and not checked:
/// 1. each container's request, or its limit where the request is missing (the API server's
///    defaulting, for manifests that have not been through it);
/// 2. the sum over `spec.containers` and the sidecars (init containers with
///    `restartPolicy: Always`);
/// 3. at least the peak of the init containers, each counted with the sidecars started before
///    it, per resource;
/// 4. replaced, per resource, by `spec.resources.requests` (pod-level resources) where set;
/// 5. plus `spec.overhead`.
///
/// A quantity that does not parse, is negative or exceeds 2^63 − 1 is a
/// [`PodConversionError::Quantity`] naming its container and resource; a total past `u64::MAX`
/// is [`PodConversionError::RequestsOverflow`].
///
/// [`Time::ZERO`]: crate::Time::ZERO
/// [`Time::MAX`]: crate::Time::MAX
#[cfg_attr(docsrs, doc(cfg(feature = "k8s")))]
impl TryFrom<&core::Pod> for Pod {
    type Error = PodConversionError;

    fn try_from(pod: &core::Pod) -> Result<Pod, PodConversionError> {
        let meta = &pod.metadata;
        let name = non_empty(&meta.name).ok_or(PodConversionError::NoName)?;
        let namespace =
            non_empty(&meta.namespace).ok_or_else(|| PodConversionError::NoNamespace {
                name: name.to_owned(),
            })?;
        let full_name = || format!("{namespace}/{name}");
        let uid =
            non_empty(&meta.uid).ok_or_else(|| PodConversionError::NoUid { pod: full_name() })?;
        let spec = pod
            .spec
            .as_ref()
            .ok_or_else(|| PodConversionError::NoSpec { pod: full_name() })?;
        let requests = pod_requests(spec).map_err(|e| match e {
            RequestsError::Quantity {
                site,
                resource,
                error,
            } => PodConversionError::Quantity {
                pod: full_name(),
                site,
                resource,
                error,
            },
            RequestsError::Overflow { resource } => PodConversionError::RequestsOverflow {
                pod: full_name(),
                resource,
            },
        })?;
        let mut converted = Pod::new(uid, namespace, name)
            .with_priority(spec.priority.unwrap_or(0))
            .with_creation_time(creation_time(meta))
            .with_requests(requests);
        #[cfg(k8s_pod_scheduling_group)]
        if let Some(group) = &spec.scheduling_group {
            let group = non_empty(&group.pod_group_name)
                .ok_or_else(|| PodConversionError::NoGroupName { pod: full_name() })?;
            converted = converted.with_group(group);
        }
        if let Some(node) = non_empty(&spec.node_name) {
            converted = converted.with_node(node);
        }
        Ok(converted)
    }
}

/// As the conversion from `&Pod`.
#[cfg_attr(docsrs, doc(cfg(feature = "k8s")))]
impl TryFrom<core::Pod> for Pod {
    type Error = PodConversionError;

    fn try_from(pod: core::Pod) -> Result<Pod, PodConversionError> {
        Pod::try_from(&pod)
    }
}
