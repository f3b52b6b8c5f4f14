use k8s_openapi::api::core::v1 as core;

use super::meta::{labels, non_empty};
use super::quantity::resource_amount;
use super::taints::{taint, UNSCHEDULABLE};
use super::NodeConversionError;
use crate::scheduler::Node;
use crate::Resources;
use crate::{Taint, TaintEffect};

/// A k8s-openapi `Node` as gangsched reads it, for every Kubernetes version k8s-openapi
/// supports.
///
/// | gangsched | from | when absent |
/// |---|---|---|
/// | [`name`](Node::name) | `metadata.name` | error |
/// | [`capacity`](Node::capacity) | `status.allocatable`, else `status.capacity` | zero |
/// | [`labels`](Node::labels) | `metadata.labels` | none |
/// | [`taints`](Node::taints) | `spec.taints`, and `spec.unschedulable` as a taint | none |
///
/// **Capacity** is what kube-scheduler fits pods into, the node's allocatable resources
/// (`status.capacity` only when the kubelet has reported no `allocatable`): every resource,
/// in the units the [`Pod`](crate::Pod) conversion counts requests in — `cpu` in millicores;
/// `memory`, `ephemeral-storage` and `hugepages-<size>` in bytes; every other resource
/// (`nvidia.com/gpu`, `pods`) as an [extended resource](Resources::extended) in whole units.
/// A quantity that does not parse, is negative, exceeds 2^63 − 1 or is a fraction of a
/// whole-unit resource is a [`NodeConversionError::Quantity`]. `pods`, the most pods the
/// kubelet runs, is carried like any other resource; converted pods do not request it, so
/// nothing counts pods against it.
///
/// **Taints** keep the pods that do not tolerate them off the node (the default placement
/// runs kube-scheduler's TaintToleration filter; `PreferNoSchedule` only scores, and is kept
/// but not enforced). A taint whose effect is none of the three is a
/// [`NodeConversionError::TaintEffect`]. A cordoned node (`spec.unschedulable: true`) gets the
/// taint `node.kubernetes.io/unschedulable:NoSchedule`, unless it has it already (the node
/// lifecycle controller adds it): kube-scheduler's NodeUnschedulable filter keeps off exactly
/// the pods that do not tolerate that taint. Conditions, addresses and images are not read.
#[cfg_attr(docsrs, doc(cfg(feature = "k8s")))]
impl TryFrom<&core::Node> for Node {
    type Error = NodeConversionError;

    fn try_from(node: &core::Node) -> Result<Node, NodeConversionError> {
        let name = non_empty(&node.metadata.name).ok_or(NodeConversionError::NoName)?;
        let spec = node.spec.as_ref();
        let mut taints = Vec::new();
        for t in spec.and_then(|s| s.taints.as_ref()).into_iter().flatten() {
            taints.push(taint(t).map_err(|effect| NodeConversionError::TaintEffect {
                node: name.to_owned(),
                key: t.key.clone(),
                effect: effect.to_owned(),
            })?);
        }
        let cordoned = spec.is_some_and(|s| s.unschedulable == Some(true));
        let unschedulable = Taint::new(UNSCHEDULABLE, "", TaintEffect::NoSchedule);
        let has = |t: &Taint| t.key == UNSCHEDULABLE && t.effect == TaintEffect::NoSchedule;
        if cordoned && !taints.iter().any(has) {
            taints.push(unschedulable);
        }
        let status = node.status.as_ref();
        let allocatable = status
            .and_then(|s| s.allocatable.as_ref())
            .filter(|a| !a.is_empty());
        let (list, quantities) = match allocatable {
            Some(allocatable) => ("allocatable", Some(allocatable)),
            None => ("capacity", status.and_then(|s| s.capacity.as_ref())),
        };
        let mut capacity = Resources::ZERO;
        for (resource, quantity) in quantities.into_iter().flatten() {
            let amount = resource_amount(resource, &quantity.0).map_err(|error| {
                NodeConversionError::Quantity {
                    node: name.to_owned(),
                    list,
                    resource: resource.as_str().into(),
                    error,
                }
            })?;
            match resource.as_str() {
                "cpu" => capacity.cpu_millis = amount,
                "memory" => capacity.memory_bytes = amount,
                _ => capacity.set_extended(resource, amount),
            }
        }
        let converted = Node::new(name, capacity).with_labels(labels(&node.metadata.labels));
        Ok(taints.into_iter().fold(converted, Node::with_taint))
    }
}

/// As the conversion from `&Node`.
#[cfg_attr(docsrs, doc(cfg(feature = "k8s")))]
impl TryFrom<core::Node> for Node {
    type Error = NodeConversionError;

    fn try_from(node: core::Node) -> Result<Node, NodeConversionError> {
        Node::try_from(&node)
    }
}
