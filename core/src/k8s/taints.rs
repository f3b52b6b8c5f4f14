use k8s_openapi::api::core::v1 as core;

use super::Unsupported;
use crate::{Taint, TaintEffect, Toleration, TolerationOperator};

/// The taint a cordoned node (`spec.unschedulable`) carries for kube-scheduler's
/// NodeUnschedulable filter, which keeps off the pods that do not tolerate it.
pub(super) const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// A taint effect as the API writes it; `None` if it is none of the three.
fn effect(effect: &str) -> Option<TaintEffect> {
    match effect {
        "NoSchedule" => Some(TaintEffect::NoSchedule),
        "PreferNoSchedule" => Some(TaintEffect::PreferNoSchedule),
        "NoExecute" => Some(TaintEffect::NoExecute),
        _ => None,
    }
}

/// A node's taint, or the effect it has if gangsched does not know it.
pub(super) fn taint(taint: &core::Taint) -> Result<Taint, &str> {
    let value = taint.value.as_deref().unwrap_or_default();
    match effect(&taint.effect) {
        Some(effect) => Ok(Taint::new(&taint.key, value, effect)),
        None => Err(&taint.effect),
    }
}

/// A pod's `spec.tolerations`, as the `Pod` conversion documents: a toleration gangsched
/// cannot match (an operator other than `Equal` and `Exists`, such as 1.35's `Lt` and `Gt`, or
/// an unknown effect) is [`Unsupported::Toleration`], except on a bound pod, where tolerations
/// no longer matter and it is left out.
pub(super) fn tolerations(
    spec: &core::PodSpec,
    bound: bool,
) -> Result<Vec<Toleration>, Unsupported> {
    let mut converted = Vec::new();
    for (index, t) in spec.tolerations.iter().flatten().enumerate() {
        match toleration(t, index) {
            Ok(t) => converted.push(t),
            Err(_) if bound => {}
            Err(unsupported) => return Err(unsupported),
        }
    }
    Ok(converted)
}

fn toleration(t: &core::Toleration, index: usize) -> Result<Toleration, Unsupported> {
    let unsupported = |field, value: &str| Unsupported::Toleration {
        index,
        field,
        value: value.to_owned(),
    };
    let operator = match t.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => TolerationOperator::Equal,
        "Exists" => TolerationOperator::Exists,
        other => return Err(unsupported("operator", other)),
    };
    let effect = match t.effect.as_deref().unwrap_or_default() {
        "" => None,
        written => Some(effect(written).ok_or_else(|| unsupported("effect", written))?),
    };
    Ok(Toleration {
        key: t.key.clone().unwrap_or_default(),
        operator,
        value: t.value.clone().unwrap_or_default(),
        effect,
    })
}
