//! Reading the YAML fixtures in `testdata/`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::serde::de::DeserializeOwned;

/// One object from YAML.
pub(super) fn parse<T: DeserializeOwned>(yaml: &str) -> T {
    serde_yaml_ng::from_str(yaml).expect("fixture parses")
}

/// Every document of a multi-document YAML file.
pub(super) fn documents<T: DeserializeOwned>(yaml: &str) -> Vec<T> {
    serde_yaml_ng::Deserializer::from_str(yaml)
        .map(|doc| T::deserialize(doc).expect("fixture document parses"))
        .collect()
}

/// What a fixture says its conversion says: its `gangsched.test/expect` annotation.
pub(super) fn expected(meta: &ObjectMeta) -> &str {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get("gangsched.test/expect"))
        .expect("fixture has a gangsched.test/expect annotation")
}

/// A conversion's outcome as the fixtures write it: the error, or `converts`.
pub(super) fn outcome<T, E: std::fmt::Display>(result: &Result<T, E>) -> String {
    match result {
        Ok(_) => "converts".to_owned(),
        Err(e) => e.to_string(),
    }
}

/// A resource list from `(name, quantity)` pairs.
pub(super) fn quantities(entries: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    entries
        .iter()
        .map(|&(k, v)| (k.to_owned(), Quantity(v.to_owned())))
        .collect()
}

/// A fixture pod's spec, to change.
pub(super) fn spec(pod: &mut core::Pod) -> &mut core::PodSpec {
    pod.spec.as_mut().expect("fixture has a spec")
}
