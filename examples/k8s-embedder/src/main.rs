//! An application embedding gangsched, as a user's crate would: it picks Kubernetes 1.37 for
//! k8s-openapi (gangsched's `k8s` feature picks none), reads a cluster's Nodes, a
//! `scheduling.k8s.io/v1beta1` PodGroup and the gang's GPU Pods from YAML, converts them with
//! `TryFrom`, schedules the gang with a `Scheduler` driven by hand, and asserts where it bound.
//!
//! Run it with `cargo run` in this directory; every outcome is asserted.

use std::error::Error;

use gangsched::scheduler::{CycleOutcome, InMemoryBinder, Node, ResourceFit};
use gangsched::{Pod, PodGroup, Policy, Scheduler, SchedulerConfig, Time};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::{v1alpha3, v1beta1};
use k8s_openapi::serde::de::DeserializeOwned;

/// Every document of a multi-document YAML file.
fn documents<T: DeserializeOwned>(yaml: &str) -> Result<Vec<T>, serde_yaml_ng::Error> {
    serde_yaml_ng::Deserializer::from_str(yaml)
        .map(T::deserialize)
        .collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    let nodes: Vec<core::Node> = documents(include_str!("../manifests/nodes.yaml"))?;
    let group: v1beta1::PodGroup =
        serde_yaml_ng::from_str(include_str!("../manifests/podgroup.yaml"))?;
    let pods: Vec<core::Pod> = documents(include_str!("../manifests/pods.yaml"))?;

    let nodes = nodes
        .iter()
        .map(Node::try_from)
        .collect::<Result<Vec<_>, _>>()?;
    let group = PodGroup::try_from(&group)?;
    let pods = pods
        .iter()
        .map(Pod::try_from)
        .collect::<Result<Vec<_>, _>>()?;

    for node in &nodes {
        println!("node  {:<6} {}", node.name(), node.capacity());
    }
    println!("group {} {:?}", group.key(), group.policy());
    for pod in &pods {
        println!("pod   {} requests {}", pod.full_name(), pod.requests());
    }
    assert_eq!(group.policy(), Policy::Gang { min_count: 2 });
    assert_eq!(nodes[0].capacity().extended("nvidia.com/gpu"), 8);
    assert_eq!(nodes[0].taints().len(), 1);
    assert!(pods
        .iter()
        .all(|p| p.requests().extended("nvidia.com/gpu") == 8 && p.group() == Some("llm-train")));

    // 1.37 serves the alpha version beside the beta one; both convert alike.
    let alpha: v1alpha3::PodGroup = serde_yaml_ng::from_str(
        &include_str!("../manifests/podgroup.yaml").replace("v1beta1", "v1alpha3"),
    )?;
    assert_eq!(PodGroup::try_from(&alpha)?, group);

    let binder = InMemoryBinder::new();
    let s = Scheduler::with(SchedulerConfig::default(), ResourceFit, binder.clone());
    let now = Time::ZERO;
    for node in nodes {
        s.add_node(node, now)?;
    }
    s.add_group(group, now)?;
    for pod in &pods {
        s.add_pod(pod.clone(), now)?;
    }
    while let Some(outcome) = s.schedule_one(now) {
        println!("cycle {}", describe(&outcome));
    }
    let bound = s.run_binding_cycles(now);
    println!("binding cycles run: {bound}");

    let bindings = binder.bindings();
    for (pod, node) in &bindings {
        println!("bound {pod} -> {node}");
    }
    assert!(
        pods.iter().all(|p| s.is_bound(p.id())),
        "the whole gang bound"
    );
    let mut used: Vec<&str> = bindings.values().map(String::as_str).collect();
    used.sort_unstable();
    assert_eq!(
        used,
        ["gpu-a", "gpu-b"],
        "one worker per GPU node, none on the CPU node"
    );
    s.check()?;
    println!("ok: the gang bound, 8 GPUs a node");
    Ok(())
}

fn describe(outcome: &CycleOutcome) -> String {
    match outcome {
        CycleOutcome::Allowed { pod, node } => format!("{pod} allowed on {node}"),
        CycleOutcome::Waiting { pod, node } => format!("{pod} waits at Permit on {node}"),
        other => format!("{other:?}"),
    }
}
