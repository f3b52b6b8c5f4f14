//! Conversions from [k8s-openapi](https://docs.rs/k8s-openapi) 0.29 objects, with the `k8s`
//! feature. The rules are documented on each `TryFrom` impl.
//!
//! 1. `core/v1` `Pod` → [`Pod`](crate::Pod) (`TryFrom`, by reference or value): uid,
//!    priority, scheduling group, creation time, labels, node selector, tolerations, node, and
//!    every resource requested, summed as kube-scheduler does (`cpu`, `memory`, and extended
//!    resources such as `nvidia.com/gpu`). A scheduling constraint gangsched cannot honour
//!    (required affinity, `DoNotSchedule` spread, DRA claims, …) is refused, not dropped.
//!    Fails with a [`PodConversionError`].
//! 2. `core/v1` `Node` → [`scheduler::Node`](crate::scheduler::Node): name, allocatable
//!    resources (all of them), labels, taints (a cordoned node's as the taint kube-scheduler
//!    treats it as). Fails with a [`NodeConversionError`].
//! 3. `scheduling.k8s.io` `PodGroup` → [`PodGroup`](crate::PodGroup): exactly one of the
//!    `basic` and `gang` policies. Fails with a [`PodGroupConversionError`].
//! 4. [`quantity_value`], [`quantity_milli_value`]: Kubernetes quantities (`500m`, `1Gi`,
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
//! | k8s-openapi feature | `Pod`, `Node` | `PodGroup` |
//! |---|---|---|
//! | `v1_33`, `v1_34` | converted (no scheduling group in the API) | none |
//! | `v1_35` | converted; a pod with `spec.workloadRef` is refused | none: 1.35's groups live inside a Workload, with no object of their own |
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
//! A worker of a GPU training gang, its PodGroup, and a GPU node it fits, selects and
//! tolerates:
//!
//! ```
//! use gangsched::scheduler::Node;
//! use gangsched::{Pod, PodGroup, Policy, Resources};
//! use gangsched::k8s::k8s_openapi::api::{core::v1 as core, scheduling::v1alpha2 as scheduling};
//!
//! let pod: core::Pod = serde_yaml_ng::from_str(r#"
//! apiVersion: v1
//! kind: Pod
//! metadata:
//!   {name: trainer-0, namespace: ml, uid: 0b6b7c1e-8f0a-4c8e-9d55-3f1f6b0a2c11, labels: {job: trainer}}
//! spec:
//!   priority: 1000
//!   schedulingGroup: {podGroupName: trainer}
//!   nodeSelector: {accelerator: h100}
//!   tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
//!   containers:
//!   - name: worker
//!     image: trainer:1.4
//!     resources:
//!       requests: {cpu: "16", memory: 64Gi}
//!       limits: {nvidia.com/gpu: 8}
//!   - {name: logs, image: fluent-bit:3.0, resources: {requests: {cpu: 100m, memory: 64Mi}}}
//! "#)?;
//! let pod = Pod::try_from(&pod)?;
//! assert_eq!(pod.full_name(), "ml/trainer-0");
//! assert_eq!(pod.group(), Some("trainer"));
//! assert_eq!(pod.labels().get("job"), Some("trainer"));
//! assert_eq!(pod.node_selector().get("accelerator"), Some("h100"));
//! // The GPU limit stands in for the missing request, as the API server defaults it.
//! let requests = Resources::new(16_100, (64 << 30) + (64 << 20)).with_extended("nvidia.com/gpu", 8);
//! assert_eq!(*pod.requests(), requests);
//!
//! let node: core::Node = serde_yaml_ng::from_str(r#"
//! apiVersion: v1
//! kind: Node
//! metadata: {name: gpu-0, labels: {accelerator: h100}}
//! spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}
//! status:
//!   capacity: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8", pods: "110"}
//!   allocatable: {cpu: 95500m, memory: 1020Gi, nvidia.com/gpu: "8", pods: "110"}
//! "#)?;
//! let node = Node::try_from(&node)?;
//! assert_eq!(node.capacity().extended("nvidia.com/gpu"), 8);
//! assert!(pod.requests().fits_in(node.capacity()));
//! assert!(pod.node_selector().matches(node.labels()));
//! assert!(pod.tolerations()[0].tolerates(&node.taints()[0]));
//!
//! let group: scheduling::PodGroup = serde_yaml_ng::from_str(r#"
//! apiVersion: scheduling.k8s.io/v1alpha2
//! kind: PodGroup
//! metadata: {name: trainer, namespace: ml}
//! spec: {schedulingPolicy: {gang: {minCount: 4}}}
//! "#)?;
//! assert_eq!(PodGroup::try_from(&group)?.policy(), Policy::Gang { min_count: 4 });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The gang scheduled from its YAML, and each pod's `PodScheduled` condition written from its
//! outcome (`cargo run -p gangsched --features k8s --example gpu_gang` is the longer version):
//!
//! ```
//! use gangsched::k8s::k8s_openapi::api::{core::v1 as core, scheduling::v1alpha2 as scheduling};
//! use gangsched::scheduler::{outcome_channel, Node, PodScheduled};
//! use gangsched::{Pod, PodGroup, Scheduler, SchedulerConfig, Time};
//!
//! let worker = |i: usize| format!(r#"
//! apiVersion: v1
//! kind: Pod
//! metadata: {{name: trainer-{i}, namespace: ml, uid: trainer-uid-{i}}}
//! spec:
//!   schedulingGroup: {{podGroupName: trainer}}
//!   nodeSelector: {{accelerator: h100}}
//!   containers:
//!   - {{name: worker, image: trainer:1.4, resources: {{limits: {{nvidia.com/gpu: 4}}}}}}
//! "#);
//! let node: core::Node = serde_yaml_ng::from_str(r#"
//! apiVersion: v1
//! kind: Node
//! metadata: {name: gpu-0, labels: {accelerator: h100}}
//! status: {allocatable: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8"}}
//! "#)?;
//! let group: scheduling::PodGroup = serde_yaml_ng::from_str(r#"
//! apiVersion: scheduling.k8s.io/v1alpha2
//! kind: PodGroup
//! metadata: {name: trainer, namespace: ml}
//! spec: {schedulingPolicy: {gang: {minCount: 2}}}
//! "#)?;
//!
//! let (outcomes, received) = outcome_channel();
//! let s = Scheduler::builder(SchedulerConfig::default()).outcomes(outcomes).build();
//! let now = Time::ZERO;
//! s.add_node(Node::try_from(&node)?, now)?;
//! s.add_group(PodGroup::try_from(&group)?, now)?;
//! for i in 0..3 {
//!     let pod: core::Pod = serde_yaml_ng::from_str(&worker(i))?;
//!     s.add_pod(Pod::try_from(&pod)?, now)?;
//! }
//! while s.schedule_one(now).is_some() || s.run_binding_cycles(now) > 0 {}
//!
//! // The status writer: each outcome becomes the pod's condition.
//! let mut conditions = Vec::new();
//! while let Some(outcome) = received.try_recv() {
//!     let scheduled = outcome.pod_scheduled().expect("nothing was deleted");
//!     let condition = core::PodCondition {
//!         type_: PodScheduled::TYPE.to_owned(),
//!         status: scheduled.status_str().to_owned(),
//!         reason: (!scheduled.reason.is_empty()).then(|| scheduled.reason.to_owned()),
//!         message: (!scheduled.message.is_empty()).then_some(scheduled.message),
//!         ..Default::default()
//!     };
//!     conditions.push((outcome.pod().name().to_owned(), condition));
//! }
//! conditions.sort_by(|a, b| a.0.cmp(&b.0));
//! let statuses: Vec<(&str, &str)> =
//!     conditions.iter().map(|(pod, c)| (pod.as_str(), c.status.as_str())).collect();
//! // Two workers hold the node's eight GPUs; the third waits for room.
//! assert_eq!(statuses, [("trainer-0", "True"), ("trainer-1", "True"), ("trainer-2", "False")]);
//! assert_eq!(
//!     conditions[2].1.message.as_deref(),
//!     Some("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A constraint gangsched cannot honour fails the conversion and names its field:
//!
//! ```
//! use gangsched::k8s::{k8s_openapi::api::core::v1 as core, PodConversionError, Unsupported};
//! use gangsched::Pod;
//!
//! let pod: core::Pod = serde_yaml_ng::from_str(r#"
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: web-0, namespace: shop, uid: 3c5e0f3a}
//! spec:
//!   containers: [{name: web, image: web:2.3}]
//!   topologySpreadConstraints:
//!   - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
//! "#)?;
//! let err = Pod::try_from(&pod).unwrap_err();
//! assert!(matches!(
//!     &err,
//!     PodConversionError::Unsupported { constraint: Unsupported::TopologySpread { .. }, .. }
//! ));
//! assert_eq!(
//!     err.to_string(),
//!     "pod shop/web-0: spec.topologySpreadConstraints[0] (topology.kubernetes.io/zone, \
//!      DoNotSchedule) is not supported"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod constraints;
#[cfg(test)]
mod constraints_tests;
mod error;
#[cfg(test)]
mod fixtures;
mod meta;
mod node;
#[cfg(test)]
mod node_tests;
mod pod;
#[cfg(any(k8s_pod_group_v1alpha2, k8s_pod_group_v1alpha3, k8s_pod_group_v1beta1))]
mod pod_group;
#[cfg(all(test, k8s_pod_group_v1alpha2))]
mod pod_group_tests;
#[cfg(test)]
mod pod_tests;
pub(crate) mod quantity;
#[cfg(test)]
mod quantity_tests;
mod requests;
#[cfg(test)]
mod requests_tests;
mod taints;

pub use error::{
    NodeConversionError, PodConversionError, PodGroupConversionError, QuantityError, RequestSite,
    Unsupported,
};
/// The k8s-openapi these conversions take, for naming its types at the same version.
pub use k8s_openapi;
pub use quantity::{quantity_milli_value, quantity_value};
