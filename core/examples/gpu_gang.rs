//! A GPU gang from Kubernetes YAML, with each pod's `PodScheduled` condition written from its
//! outcome — what an embedder's status writer does.
//!
//! Two GPU nodes (8 `nvidia.com/gpu` each, labelled `accelerator: h100`, tainted for GPU
//! pods), one CPU node; a PodGroup `llm-train` with min count 2; two 8-GPU workers with a
//! node selector and a toleration, and a third gang's lone 8-GPU worker that finds no room.
//! The objects convert with `TryFrom` (the `k8s` feature), the scheduler runs by hand in
//! virtual time, and every `PodOutcome` becomes a `core/v1` `PodCondition`.
//!
//! Run it with `cargo run -p gangsched --features k8s --example gpu_gang`; every outcome is
//! asserted.

use std::collections::BTreeMap;
use std::error::Error;

use gangsched::k8s::k8s_openapi::api::core::v1 as core;
use gangsched::k8s::k8s_openapi::api::scheduling::v1alpha2 as scheduling;
use gangsched::scheduler::{outcome_channel, Node, PodOutcome, PodScheduled};
use gangsched::{Pod, PodGroup, Scheduler, SchedulerConfig, Time};

const NODES: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: gpu-a, labels: {accelerator: h100}}
spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}
status: {allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-b, labels: {accelerator: h100}}
spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}
status: {allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-a}
status: {allocatable: {cpu: "64", memory: 256Gi}}
"#;

const GROUPS: &str = r#"
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: llm-train, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: eval, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 1}}}
"#;

/// A worker asking for 8 GPUs on an H100 node, tolerating the GPU taint.
fn worker(name: &str, uid: &str, group: &str) -> String {
    format!(
        r#"
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, uid: {uid}, labels: {{app: {group}}}}}
spec:
  schedulingGroup: {{podGroupName: {group}}}
  nodeSelector: {{accelerator: h100}}
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
  containers:
  - name: worker
    image: trainer:2.1
    resources:
      requests: {{cpu: "16", memory: 128Gi, nvidia.com/gpu: "8"}}
      limits: {{nvidia.com/gpu: "8"}}
"#
    )
}

/// Every document of a multi-document YAML string.
fn documents<T: gangsched::k8s::k8s_openapi::serde::de::DeserializeOwned>(
    yaml: &str,
) -> Result<Vec<T>, serde_yaml_ng::Error> {
    serde_yaml_ng::Deserializer::from_str(yaml)
        .map(T::deserialize)
        .collect()
}

/// The `PodScheduled` condition an outcome stands for, as the API object.
fn condition(outcome: &PodOutcome) -> Option<core::PodCondition> {
    let scheduled = outcome.pod_scheduled()?;
    Some(core::PodCondition {
        type_: PodScheduled::TYPE.to_owned(),
        status: scheduled.status_str().to_owned(),
        reason: (!scheduled.reason.is_empty()).then(|| scheduled.reason.to_owned()),
        message: (!scheduled.message.is_empty()).then_some(scheduled.message),
        ..Default::default()
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let nodes: Vec<core::Node> = documents(NODES)?;
    let groups: Vec<scheduling::PodGroup> = documents(GROUPS)?;
    let yaml = [
        worker(
            "llm-train-0",
            "6f1c2a00-0000-4000-8000-000000000000",
            "llm-train",
        ),
        worker(
            "llm-train-1",
            "6f1c2a00-0000-4000-8000-000000000001",
            "llm-train",
        ),
        worker("eval-0", "6f1c2a00-0000-4000-8000-000000000002", "eval"),
    ];
    let pods: Vec<core::Pod> = yaml
        .iter()
        .map(|y| serde_yaml_ng::from_str(y))
        .collect::<Result<_, _>>()?;

    let (outcomes, received) = outcome_channel();
    let s = Scheduler::builder(SchedulerConfig::default())
        .outcomes(outcomes)
        .build();
    let now = Time::ZERO;
    for node in &nodes {
        s.add_node(Node::try_from(node)?, now)?;
    }
    for group in &groups {
        s.add_group(PodGroup::try_from(group)?, now)?;
    }
    for pod in &pods {
        let pod = Pod::try_from(pod)?;
        println!("pod   {} requests {}", pod.full_name(), pod.requests());
        s.add_pod(pod, now)?;
    }
    // The gang first: the eval pod arrives last, when both GPU nodes are taken.
    while s.schedule_one(now).is_some() || s.run_binding_cycles(now) > 0 {}

    // The status writer: one condition per outcome, keyed by the pod's name.
    let mut conditions = BTreeMap::new();
    while let Some(outcome) = received.try_recv() {
        println!("outcome {outcome}");
        if let Some(condition) = condition(&outcome) {
            conditions.insert(outcome.pod().full_name(), condition);
        }
    }
    for (pod, c) in &conditions {
        println!(
            "{pod}: {}={} {} {}",
            c.type_,
            c.status,
            c.reason.as_deref().unwrap_or(""),
            c.message.as_deref().unwrap_or("")
        );
    }
    for name in ["ml/llm-train-0", "ml/llm-train-1"] {
        assert_eq!(conditions[name].status, "True", "{name} is scheduled");
    }
    let eval = &conditions["ml/eval-0"];
    assert_eq!(
        (eval.status.as_str(), eval.reason.as_deref()),
        ("False", Some("Unschedulable"))
    );
    assert_eq!(
        eval.message.as_deref(),
        Some(
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, \
             2 Insufficient nvidia.com/gpu."
        )
    );
    s.check()?;
    println!("ok: the gang holds both GPU nodes; eval-0 is unschedulable until one frees");
    Ok(())
}
