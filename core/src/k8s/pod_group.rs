use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::meta::non_empty;
use super::PodGroupConversionError;
use crate::{GroupKey, PodGroup, Policy};

/// What the conversion reads of a PodGroup, the same in every API version.
struct Read<'a> {
    meta: &'a ObjectMeta,
    basic: bool,
    gang_min_count: Option<i32>,
    /// The first set field gangsched cannot honour.
    unsupported: Option<&'static str>,
}

/// The conversion of every API version, as the impls `pod_group_conversions!` writes document it.
fn convert(group: Read<'_>) -> Result<PodGroup, PodGroupConversionError> {
    let name = non_empty(&group.meta.name).ok_or(PodGroupConversionError::NoName)?;
    let namespace =
        non_empty(&group.meta.namespace).ok_or_else(|| PodGroupConversionError::NoNamespace {
            name: name.to_owned(),
        })?;
    let key = || GroupKey::new(namespace, name);
    if let Some(field) = group.unsupported {
        return Err(PodGroupConversionError::Unsupported {
            group: key(),
            field,
        });
    }
    let policy = match (group.basic, group.gang_min_count) {
        (true, None) => Policy::Basic,
        (false, Some(min_count)) => match u32::try_from(min_count) {
            Ok(count) if count >= 1 => Policy::Gang { min_count: count },
            _ => {
                return Err(PodGroupConversionError::InvalidMinCount {
                    group: key(),
                    min_count,
                })
            }
        },
        (true, Some(_)) => return Err(PodGroupConversionError::AmbiguousPolicy(key())),
        (false, None) => return Err(PodGroupConversionError::UnknownPolicy(key())),
    };
    Ok(PodGroup::new(namespace, name, policy)?)
}

/// The `TryFrom` impls for the PodGroup of one `scheduling.k8s.io` API version. `$extra` are
/// the version's own fields that gangsched cannot honour, beyond those all versions share.
macro_rules! pod_group_conversions {
    ($version:ident, $api:literal $(, $extra:ident => $field:literal)*) => {
        #[doc = concat!("A k8s-openapi `scheduling.k8s.io/", $api, "` `PodGroup` as gangsched")]
        /// reads it: its namespace and name (both required), and its policy from `spec.schedulingPolicy`, which must set exactly one of `basic`
        /// ([`Policy::Basic`]) and `gang` ([`Policy::Gang`], `minCount` at least 1).
        ///
        /// Fields gangsched cannot honour are refused with
        /// [`PodGroupConversionError::Unsupported`] naming the field, rather than dropped:
        /// `spec.schedulingConstraints.topology` (every member in one topology domain),
        /// `spec.resourceClaims` (devices shared by the group), and from Kubernetes 1.37
        /// `spec.parentCompositePodGroupName` (a group within a group of groups). Not read:
        /// priority and priority class (the members' own priorities order them), disruption
        /// mode (preemption), the template reference and status.
        #[cfg_attr(docsrs, doc(cfg(feature = "k8s")))]
        impl TryFrom<&k8s_openapi::api::scheduling::$version::PodGroup> for PodGroup {
            type Error = PodGroupConversionError;

            fn try_from(
                group: &k8s_openapi::api::scheduling::$version::PodGroup,
            ) -> Result<PodGroup, PodGroupConversionError> {
                let spec = &group.spec;
                let topology = spec.scheduling_constraints.as_ref().and_then(|c| c.topology.as_ref());
                let unsupported = [
                    (
                        topology.is_some_and(|t| !t.is_empty()),
                        "spec.schedulingConstraints.topology",
                    ),
                    (
                        spec.resource_claims.as_ref().is_some_and(|c| !c.is_empty()),
                        "spec.resourceClaims",
                    ),
                    $((non_empty(&spec.$extra).is_some(), $field),)*
                ];
                let policy = &spec.scheduling_policy;
                convert(Read {
                    meta: &group.metadata,
                    basic: policy.basic.is_some(),
                    gang_min_count: policy.gang.as_ref().map(|g| g.min_count),
                    unsupported: unsupported.into_iter().find_map(|(set, f)| set.then_some(f)),
                })
            }
        }

        /// As the conversion from `&PodGroup`.
        #[cfg_attr(docsrs, doc(cfg(feature = "k8s")))]
        impl TryFrom<k8s_openapi::api::scheduling::$version::PodGroup> for PodGroup {
            type Error = PodGroupConversionError;

            fn try_from(
                group: k8s_openapi::api::scheduling::$version::PodGroup,
            ) -> Result<PodGroup, PodGroupConversionError> {
                PodGroup::try_from(&group)
            }
        }
    };
}

// Kubernetes 1.36.
#[cfg(k8s_pod_group_v1alpha2)]
pod_group_conversions!(v1alpha2, "v1alpha2");
// Kubernetes 1.37: the beta API gang scheduling is served by, and the alpha one beside it.
#[cfg(k8s_pod_group_v1beta1)]
pod_group_conversions!(v1beta1, "v1beta1", parent_composite_pod_group_name => "spec.parentCompositePodGroupName");
#[cfg(k8s_pod_group_v1alpha3)]
pod_group_conversions!(v1alpha3, "v1alpha3", parent_composite_pod_group_name => "spec.parentCompositePodGroupName");
