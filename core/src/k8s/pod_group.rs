use k8s_openapi::api::scheduling::v1alpha2 as scheduling;

use super::meta::non_empty;
use super::PodGroupConversionError;
use crate::{GroupKey, PodGroup, Policy};

/// A k8s-openapi `scheduling.k8s.io/v1alpha2` `PodGroup` as gangway reads it: its namespace and
/// name (both required), and its policy from `spec.schedulingPolicy`, which must set exactly
/// one of `basic` ([`Policy::Basic`]) and `gang` ([`Policy::Gang`], `minCount` at least 1).
/// Every other field (priority, constraints, template reference, status) is not read.
impl TryFrom<&scheduling::PodGroup> for PodGroup {
    type Error = PodGroupConversionError;

    fn try_from(group: &scheduling::PodGroup) -> Result<PodGroup, PodGroupConversionError> {
        let meta = &group.metadata;
        let name = non_empty(&meta.name).ok_or(PodGroupConversionError::NoName)?;
        let namespace =
            non_empty(&meta.namespace).ok_or_else(|| PodGroupConversionError::NoNamespace {
                name: name.to_owned(),
            })?;
        let key = || GroupKey::new(namespace, name);
        let policy = &group.spec.scheduling_policy;
        let policy = match (&policy.basic, &policy.gang) {
            (Some(_), None) => Policy::Basic,
            (None, Some(gang)) => match u32::try_from(gang.min_count) {
                Ok(min_count) if min_count >= 1 => Policy::Gang { min_count },
                _ => {
                    return Err(PodGroupConversionError::InvalidMinCount {
                        group: key(),
                        min_count: gang.min_count,
                    })
                }
            },
            (Some(_), Some(_)) => return Err(PodGroupConversionError::AmbiguousPolicy(key())),
            (None, None) => return Err(PodGroupConversionError::UnknownPolicy(key())),
        };
        Ok(PodGroup::new(namespace, name, policy)?)
    }
}

/// As the conversion from `&PodGroup`.
impl TryFrom<scheduling::PodGroup> for PodGroup {
    type Error = PodGroupConversionError;

    fn try_from(group: scheduling::PodGroup) -> Result<PodGroup, PodGroupConversionError> {
        PodGroup::try_from(&group)
    }
}
