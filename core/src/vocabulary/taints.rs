//! Node taints and pod tolerations, as kube-scheduler's TaintToleration filter reads them.

use std::fmt;

/// What a taint does to pods that do not tolerate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaintEffect {
    /// No new pod is placed on the node.
    NoSchedule,
    /// The scheduler prefers other nodes (a score, not a filter: the default placement
    /// ignores it).
    PreferNoSchedule,
    /// No new pod is placed on the node, and running ones are evicted (by the kubelet's
    /// side, not the scheduler's).
    NoExecute,
}

impl TaintEffect {
    /// Whether the effect keeps a pod that does not tolerate it off the node.
    pub fn filters(self) -> bool {
        matches!(self, TaintEffect::NoSchedule | TaintEffect::NoExecute)
    }
}

/// A node's taint (`spec.taints[]`): pods that do not tolerate it are kept off the node when
/// its effect [filters](TaintEffect::filters).
///
/// ```
/// use gangsched::{Taint, TaintEffect, Toleration};
/// let gpu_only = Taint::new("nvidia.com/gpu", "present", TaintEffect::NoSchedule);
/// assert!(Toleration::exists("nvidia.com/gpu").tolerates(&gpu_only));
/// assert!(!Toleration::equal("nvidia.com/gpu", "absent").tolerates(&gpu_only));
/// assert_eq!(gpu_only.to_string(), "{nvidia.com/gpu: present}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Taint {
    /// The key.
    pub key: String,
    /// The value (may be empty).
    pub value: String,
    /// The effect.
    pub effect: TaintEffect,
}

impl Taint {
    /// A taint `key=value:effect`.
    pub fn new(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint {
            key: key.to_owned(),
            value: value.to_owned(),
            effect,
        }
    }
}

/// `{key: value}`, as kube-scheduler's "untolerated taint" reason shows it.
impl fmt::Display for Taint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}: {}}}", self.key, self.value)
    }
}

/// How a toleration compares a taint's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TolerationOperator {
    /// The values are equal.
    Equal,
    /// Any value.
    Exists,
}

/// A pod's toleration (`spec.tolerations[]`), matched as Kubernetes does: the key is equal
/// (or empty with `Exists`: every key), the value equal (`Equal`) or anything (`Exists`), the
/// effect equal or unset (every effect).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Toleration {
    /// The key; empty with [`Exists`](TolerationOperator::Exists) tolerates every key.
    pub key: String,
    /// How the value is compared.
    pub operator: TolerationOperator,
    /// The value (with `Equal`).
    pub value: String,
    /// The effect tolerated; `None` tolerates every effect.
    pub effect: Option<TaintEffect>,
}

impl Toleration {
    /// Tolerates the taints with `key`, whatever their value and effect.
    pub fn exists(key: &str) -> Toleration {
        Toleration {
            key: key.to_owned(),
            operator: TolerationOperator::Exists,
            value: String::new(),
            effect: None,
        }
    }

    /// Tolerates the taints `key=value`, whatever their effect.
    pub fn equal(key: &str, value: &str) -> Toleration {
        Toleration {
            key: key.to_owned(),
            operator: TolerationOperator::Equal,
            value: value.to_owned(),
            effect: None,
        }
    }

    /// This toleration, for the taints with `effect` only.
    pub fn with_effect(mut self, effect: TaintEffect) -> Toleration {
        self.effect = Some(effect);
        self
    }

    /// Whether it tolerates `taint`.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|effect| effect != taint.effect) {
            return false;
        }
        let any_key = self.key.is_empty() && self.operator == TolerationOperator::Exists;
        if !any_key && self.key != taint.key {
            return false;
        }
        match self.operator {
            TolerationOperator::Exists => true,
            TolerationOperator::Equal => self.value == taint.value,
        }
    }
}

/// The first of `taints` that filters and that none of `tolerations` tolerates: what keeps
/// a pod off the node (kube-scheduler's TaintToleration filter).
pub(crate) fn untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|taint| taint.effect.filters())
        .find(|taint| !tolerations.iter().any(|t| t.tolerates(taint)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint::new(key, value, effect)
    }

    #[test]
    fn tolerations_match_key_value_and_effect_as_kubernetes_does() {
        let t = taint("gpu", "h100", TaintEffect::NoSchedule);
        assert!(Toleration::exists("gpu").tolerates(&t));
        assert!(Toleration::equal("gpu", "h100").tolerates(&t));
        assert!(!Toleration::equal("gpu", "a100").tolerates(&t));
        assert!(!Toleration::exists("other").tolerates(&t));
        assert!(
            Toleration::exists("").tolerates(&t),
            "empty key with Exists: all"
        );
        assert!(
            !Toleration::equal("", "h100").tolerates(&t),
            "empty key with Equal: none"
        );
        let no_execute = Toleration::exists("gpu").with_effect(TaintEffect::NoExecute);
        assert!(!no_execute.tolerates(&t), "another effect");
        assert!(Toleration::exists("gpu")
            .with_effect(TaintEffect::NoSchedule)
            .tolerates(&t));
    }

    #[test]
    fn only_filtering_effects_keep_a_pod_off() {
        let taints = [
            taint("soft", "", TaintEffect::PreferNoSchedule),
            taint("hard", "x", TaintEffect::NoSchedule),
            taint("evict", "", TaintEffect::NoExecute),
        ];
        assert_eq!(untolerated(&taints, &[]), Some(&taints[1]));
        let hard = [Toleration::exists("hard")];
        assert_eq!(untolerated(&taints, &hard), Some(&taints[2]));
        let both = [Toleration::exists("hard"), Toleration::exists("evict")];
        assert_eq!(untolerated(&taints, &both), None);
        assert_eq!(untolerated(&taints[..1], &[]), None);
    }
}
