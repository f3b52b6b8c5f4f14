use k8s_openapi::api::core::v1 as core;

use super::constraints::unsupported;
use super::meta::{creation_time, labels, non_empty};
use super::requests::{pod_requests, RequestsError};
use super::taints::tolerations;
use super::PodConversionError;
use crate::Pod;

/// A k8s-openapi `Pod` as gangsched reads it, for every Kubernetes version k8s-openapi
/// supports (the group only from 1.36).
///
/// | gangsched | from | when absent |
/// |---|---|---|
/// | [`id`](Pod::id) | `metadata.uid` | error |
/// | [`namespace`](Pod::namespace), [`name`](Pod::name) | `metadata` | error |
/// | [`labels`](Pod::labels) | `metadata.labels` | none |
/// | [`priority`](Pod::priority) | `spec.priority` | 0 |
/// | [`group`](Pod::group) | `spec.schedulingGroup.podGroupName` (1.36+) | no group |
/// | [`creation_time`](Pod::creation_time) | `metadata.creationTimestamp` | [`Time::ZERO`] |
/// | [`requests`](Pod::requests) | every resource requested, below | zero |
/// | [`node_selector`](Pod::node_selector) | `spec.nodeSelector` | none |
/// | [`tolerations`](Pod::tolerations) | `spec.tolerations` | none |
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
/// resize), for every resource the pod names: `cpu` in millicores, `memory`,
/// `ephemeral-storage` and `hugepages-<size>` in bytes (both rounded up, as Go's `Value()`),
/// and every other resource as an [extended resource](crate::Resources::extended) in whole
/// units (`nvidia.com/gpu: 8`), where a fraction is an error, as the API server refuses it.
/// Per resource:
/// 1. each container's request, or its limit where the request is missing (the API server's
///    defaulting, for manifests that have not been through it);
/// 2. the sum over `spec.containers` and the sidecars (init containers with
///    `restartPolicy: Always`);
/// 3. at least the peak of the init containers, each counted with the sidecars started before
///    it;
/// 4. replaced by `spec.resources.requests` (pod-level resources, which cover only `cpu`,
///    `memory` and hugepages) where set; a pod-level limit without a request stands in for
///    it, except for hugepages some container requests (the API server's defaulting);
/// 5. plus `spec.overhead`.
///
/// A quantity that does not parse, is negative, exceeds 2^63 − 1 or is a fraction of a
/// whole-unit resource is a [`PodConversionError::Quantity`] naming its container and resource;
/// a total past `u64::MAX` is [`PodConversionError::RequestsOverflow`] naming the resource.
///
/// **Scheduling constraints.** `spec.nodeSelector` and `spec.tolerations` are kept, and the
/// default placement honours both (the tolerations against the nodes' taints; a toleration's
/// `tolerationSeconds` concerns eviction and is not read). Every constraint kube-scheduler
/// would enforce and gangsched cannot is refused with [`PodConversionError::Unsupported`]
/// naming its field ([`Unsupported`](super::Unsupported)), rather than dropped: required node
/// affinity, required pod affinity and anti-affinity, topology spread with
/// `whenUnsatisfiable: DoNotSchedule`, `spec.resourceClaims` (DRA), `spec.schedulingGates`,
/// host ports, volumes kube-scheduler places by (PVCs, generic ephemeral volumes, in-tree
/// disks), pod-level resources other than `cpu`, `memory` and hugepages, `spec.workloadRef`
/// (1.35), and tolerations with an operator other than `Equal` and `Exists` or an unknown
/// effect. A bound pod (`spec.nodeName` set) is only refused for required pod anti-affinity,
/// which keeps later pods off its node; the rest concern its own placement, already made (a
/// toleration it cannot match is left out).
///
/// Not read: preferred (soft) affinity and anti-affinity terms and `ScheduleAnyway` spread
/// constraints, which only score nodes; `spec.schedulerName` (choose your pods by it);
/// priority class names (the API server resolves them into `spec.priority`); status,
/// including resized resources.
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
        let node = non_empty(&spec.node_name);
        if let Some(constraint) = unsupported(spec, node.is_some()) {
            return Err(PodConversionError::Unsupported {
                pod: full_name(),
                constraint,
            });
        }
        let requests = pod_requests(spec).map_err(|e| match e {
            RequestsError::Quantity {
                site,
                resource,
                error,
            } => PodConversionError::Quantity {
                pod: full_name(),
                site,
                resource: resource.into(),
                error,
            },
            RequestsError::Overflow { resource } => PodConversionError::RequestsOverflow {
                pod: full_name(),
                resource: resource.into(),
            },
            RequestsError::Unsupported(constraint) => PodConversionError::Unsupported {
                pod: full_name(),
                constraint,
            },
        })?;
        let tolerated = tolerations(spec, node.is_some()).map_err(|constraint| {
            PodConversionError::Unsupported {
                pod: full_name(),
                constraint,
            }
        })?;
        let mut converted = Pod::new(uid, namespace, name)
            .with_priority(spec.priority.unwrap_or(0))
            .with_creation_time(creation_time(meta))
            .with_requests(requests)
            .with_labels(labels(&meta.labels))
            .with_node_selector(labels(&spec.node_selector));
        #[cfg(k8s_pod_scheduling_group)]
        if let Some(group) = &spec.scheduling_group {
            let group = non_empty(&group.pod_group_name)
                .ok_or_else(|| PodConversionError::NoGroupName { pod: full_name() })?;
            converted = converted.with_group(group);
        }
        if let Some(node) = node {
            converted = converted.with_node(node);
        }
        Ok(tolerated.into_iter().fold(converted, Pod::with_toleration))
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
