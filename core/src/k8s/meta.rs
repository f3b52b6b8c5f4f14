use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::{Labels, Time};

/// A string field that is set and not empty: Go's zero value `""` means unset.
pub(super) fn non_empty(field: &Option<String>) -> Option<&str> {
    field.as_deref().filter(|s| !s.is_empty())
}

/// `metadata.creationTimestamp` as nanoseconds since the Unix epoch; [`Time::ZERO`] when it is
/// missing or before 1970, [`Time::MAX`] past what a `u64` of nanoseconds holds (year 2554).
pub(super) fn creation_time(meta: &ObjectMeta) -> Time {
    meta.creation_timestamp.as_ref().map_or(Time::ZERO, |t| {
        let nanos = t.0.as_nanosecond().max(0);
        Time::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    })
}

/// A label map (`metadata.labels`, `spec.nodeSelector`) as [`Labels`]; absent is none.
pub(super) fn labels(map: &Option<BTreeMap<String, String>>) -> Labels {
    map.iter().flatten().collect()
}
