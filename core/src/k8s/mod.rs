//! Conversions from [k8s-openapi](https://docs.rs/k8s-openapi) 0.29 objects, with the `k8s`
//! feature. The rules are documented on each `TryFrom` impl.
//!
//! 1. `core/v1` `Pod` → [`Pod`](crate::Pod) (`TryFrom`, by reference or value):
//!    uid, priority, scheduling group, creation time, `cpu`/`memory` requests summed as
//!    kube-scheduler does, node. Fails with a [`PodConversionError`].
//! 2. `scheduling.k8s.io` `PodGroup` → [`PodGroup`](crate::PodGroup): exactly one of the
//!    `basic` and `gang` policies. Fails with a [`PodGroupConversionError`].
//! 3. [`quantity_value`], [`quantity_milli_value`]: Kubernetes quantities (`500m`, `1Gi`,
//!    `129e6`), exact and rounded up. Fail with a [`QuantityError`].
//!
//! # Kubernetes versions
//!
//! The feature picks no Kubernetes version: as k8s-openapi requires of a library, the
//! application does, with k8s-openapi's own feature (or `K8S_OPENAPI_ENABLED_VERSION` for
//! `cargo check` and `cargo doc`), and gangsched's build script gates the conversions on it:
//!
//! ```toml
//! [dependencies]
//! gangsched = { version = "0.1", features = ["k8s"] }
//! k8s-openapi = { version = "0.29", features = ["v1_37"] }
//! ```
//!
//! | k8s-openapi feature | `Pod` | `PodGroup` |
//! |---|---|---|
//! | `v1_33`, `v1_34`, `v1_35` | converted (no scheduling group in the API; 1.35's `spec.workloadRef` is not read) | none: 1.35's groups live inside a Workload, with no object of their own |
//! | `v1_36` | converted, with `spec.schedulingGroup` | `scheduling.k8s.io/v1alpha2` |
//! | `v1_37` | converted, with `spec.schedulingGroup` | `scheduling.k8s.io/v1beta1` and `v1alpha3` |
//!
//! Kubernetes 1.37 promotes gang scheduling to beta: `v1beta1` is the PodGroup version
//! kube-scheduler's gang scheduling reads and workload controllers create (Kueue does from
//! 1.37); `v1alpha3`, with the same fields, converts too, by the same rules. The documentation
//! here is built for `v1_36`, so it shows only that version's `PodGroup` impl.
//!
//! # Example
//!
//! ```
//! use gangsched::{Pod, PodGroup, Policy, Resources};
//! use gangsched::k8s::k8s_openapi::api::{core::v1 as core, scheduling::v1alpha2 as scheduling};
//!
//! let pod: core::Pod = serde_yaml_ng::from_str(r#"
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: trainer-0, namespace: ml, uid: 0b6b7c1e-8f0a-4c8e-9d55-3f1f6b0a2c11}
//! spec:
//!   priority: 1000
//!   schedulingGroup: {podGroupName: trainer}
//!   containers:
//!   - {name: worker, image: trainer:1.4, resources: {requests: {cpu: 1500m, memory: 4Gi}}}
//!   - {name: logs, image: fluent-bit:3.0, resources: {requests: {cpu: 100m, memory: 64Mi}}}
//! "#)?;
//! let pod = Pod::try_from(&pod)?;
//! assert_eq!(pod.full_name(), "ml/trainer-0");
//! assert_eq!(pod.group(), Some("trainer"));
//! assert_eq!(*pod.requests(), Resources::new(1600, (4 << 30) + (64 << 20)));
//!
//! let group: scheduling::PodGroup = serde_yaml_ng::from_str(r#"
//! apiVersion: scheduling.k8s.io/v1alpha2
//! kind: PodGroup
//! metadata: {name: trainer, namespace: ml}
//! spec: {schedulingPolicy: {gang: {minCount: 3}}}
//! "#)?;
//! assert_eq!(PodGroup::try_from(&group)?.policy(), Policy::Gang { min_count: 3 });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod meta;
mod pod;
#[cfg(any(k8s_pod_group_v1alpha2, k8s_pod_group_v1alpha3, k8s_pod_group_v1beta1))]
mod pod_group;
#[cfg(all(test, k8s_pod_group_v1alpha2))]
mod pod_group_tests;
#[cfg(test)]
mod pod_tests;
mod quantity;
#[cfg(test)]
mod quantity_tests;
mod requests;

pub use error::{PodConversionError, PodGroupConversionError, QuantityError, RequestSite};
/// The k8s-openapi these conversions take, for naming its types at the same version.
pub use k8s_openapi;
pub use quantity::{quantity_milli_value, quantity_value};
