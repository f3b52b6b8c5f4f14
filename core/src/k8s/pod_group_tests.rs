use k8s_openapi::api::scheduling::v1alpha2 as scheduling;

use super::fixtures::{documents, expected, outcome};
use super::PodGroupConversionError;
use crate::{GroupKey, PodGroup, Policy};

const GANG: &str = include_str!("testdata/podgroup-gang.yaml");
const BASIC: &str = include_str!("testdata/podgroup-basic.yaml");
const MIN_COUNT_ZERO: &str = include_str!("testdata/podgroup-min-count-zero.yaml");
const BOTH_POLICIES: &str = include_str!("testdata/podgroup-both-policies.yaml");
const NO_POLICY: &str = include_str!("testdata/podgroup-no-policy.yaml");
const UNSUPPORTED: &str = include_str!("testdata/podgroup-unsupported.yaml");

fn parse(yaml: &str) -> scheduling::PodGroup {
    serde_yaml_ng::from_str(yaml).expect("fixture parses as a PodGroup")
}

fn convert(yaml: &str) -> Result<PodGroup, PodGroupConversionError> {
    PodGroup::try_from(&parse(yaml))
}

fn trainer() -> GroupKey {
    GroupKey::new("ml", "trainer")
}

#[test]
fn a_gang_policy_keeps_its_min_count() {
    let group = convert(GANG).unwrap();
    assert_eq!(group, PodGroup::gang("ml", "trainer", 3).unwrap());
    assert_eq!(group.policy(), Policy::Gang { min_count: 3 });
}

#[test]
fn a_basic_policy_is_basic() {
    let group = convert(BASIC).unwrap();
    assert_eq!(group.key(), &GroupKey::new("etl", "batch-shards"));
    assert_eq!(group.policy(), Policy::Basic);
    assert_eq!(group.min_count(), None);
}

#[test]
fn a_min_count_below_one_is_refused_with_its_value() {
    let err = convert(MIN_COUNT_ZERO).unwrap_err();
    assert_eq!(
        err,
        PodGroupConversionError::InvalidMinCount {
            group: trainer(),
            min_count: 0
        }
    );
    assert_eq!(
        err.to_string(),
        "pod group ml/trainer has gang min count 0, not at least 1"
    );
    let negative = GANG.replace("minCount: 3", "minCount: -2");
    assert_eq!(
        convert(&negative).unwrap_err(),
        PodGroupConversionError::InvalidMinCount {
            group: trainer(),
            min_count: -2
        }
    );
    let largest = GANG.replace("minCount: 3", "minCount: 2147483647");
    assert_eq!(
        convert(&largest).unwrap().min_count(),
        Some(i32::MAX as u32)
    );
}

#[test]
fn both_policies_are_ambiguous() {
    let err = convert(BOTH_POLICIES).unwrap_err();
    assert_eq!(err, PodGroupConversionError::AmbiguousPolicy(trainer()));
    assert_eq!(
        err.to_string(),
        "pod group ml/trainer has both a basic and a gang scheduling policy"
    );
}

#[test]
fn neither_policy_is_unknown() {
    let err = convert(NO_POLICY).unwrap_err();
    assert_eq!(err, PodGroupConversionError::UnknownPolicy(trainer()));
    assert_eq!(
        err.to_string(),
        "pod group ml/trainer has no known scheduling policy"
    );
}

#[test]
fn missing_or_empty_names_are_refused() {
    let mut group = parse(GANG);
    group.metadata.namespace = Some(String::new());
    let err = PodGroup::try_from(&group).unwrap_err();
    assert_eq!(
        err,
        PodGroupConversionError::NoNamespace {
            name: "trainer".into()
        }
    );
    assert_eq!(err.to_string(), "pod group trainer has no namespace");
    group.metadata.name = None;
    let err = PodGroup::try_from(group).unwrap_err();
    assert_eq!(err, PodGroupConversionError::NoName);
    assert_eq!(err.to_string(), "pod group has no name");
}

#[test]
fn conversion_by_value_matches_by_reference() {
    let group = parse(GANG);
    assert_eq!(
        PodGroup::try_from(group.clone()),
        PodGroup::try_from(&group)
    );
}

#[test]
fn fields_gangsched_cannot_honour_are_refused_by_name() {
    let groups = documents::<scheduling::PodGroup>(UNSUPPORTED);
    assert_eq!(groups.len(), 3);
    for group in &groups {
        assert_eq!(
            outcome(&PodGroup::try_from(group)),
            expected(&group.metadata),
            "{:?}",
            group.metadata.name
        );
    }
    assert_eq!(
        PodGroup::try_from(&groups[0]).unwrap_err(),
        PodGroupConversionError::Unsupported {
            group: trainer(),
            field: "spec.schedulingConstraints.topology"
        }
    );
}
