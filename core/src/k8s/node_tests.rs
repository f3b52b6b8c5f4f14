use k8s_openapi::api::core::v1 as core;

use super::fixtures::{documents, expected, outcome, parse};
use super::{NodeConversionError, QuantityError};
use crate::scheduler::Node;
use crate::{Labels, Resources};
use crate::{Taint, TaintEffect, Toleration};

const GPU_NODE: &str = include_str!("testdata/gpu-node.yaml");
const PROBLEMS: &str = include_str!("testdata/node-problems.yaml");

const KI: u64 = 1 << 10;
const GI: u64 = 1 << 30;

fn problem(name: &str) -> core::Node {
    documents::<core::Node>(PROBLEMS)
        .into_iter()
        .find(|n| n.metadata.name.as_deref() == Some(name))
        .expect("a fixture of that name")
}

#[test]
fn the_gpu_node_has_its_allocatable_resources_and_labels() {
    let node = Node::try_from(&parse::<core::Node>(GPU_NODE)).unwrap();
    assert_eq!(node.name(), "ip-10-0-12-34.ec2.internal");
    // Allocatable, not capacity; hugepages-1Gi: 0 is no resource at all.
    let expected = Resources::new(191_450, 2_085_470_016 * KI)
        .with_extended("ephemeral-storage", 3_455_797_727_722)
        .with_extended("hugepages-2Mi", 10 * GI)
        .with_extended("nvidia.com/gpu", 8)
        .with_extended("vpc.amazonaws.com/efa", 32)
        .with_extended("pods", 110);
    assert_eq!(*node.capacity(), expected);
    assert_eq!(node.labels().get("accelerator"), Some("nvidia-h100"));
    assert_eq!(node.labels().len(), 4);
    assert!(Labels::from_iter([("accelerator", "nvidia-h100")]).matches(node.labels()));
    assert_eq!(
        node.taints(),
        [
            Taint::new("nvidia.com/gpu", "present", TaintEffect::NoSchedule),
            Taint::new(
                "example.com/draining-soon",
                "",
                TaintEffect::PreferNoSchedule
            ),
        ]
    );
}

#[test]
fn a_cordoned_node_carries_the_unschedulable_taint_once() {
    let unschedulable = Taint::new(
        "node.kubernetes.io/unschedulable",
        "",
        TaintEffect::NoSchedule,
    );
    let cordoned = Node::try_from(&problem("cordoned")).unwrap();
    assert_eq!(
        cordoned.taints(),
        [
            Taint::new("node.kubernetes.io/not-ready", "", TaintEffect::NoSchedule),
            unschedulable.clone()
        ]
    );
    assert!(Toleration::exists("node.kubernetes.io/unschedulable").tolerates(&cordoned.taints()[1]));
    let tainted = Node::try_from(&problem("cordoned-tainted")).unwrap();
    assert_eq!(tainted.taints(), [unschedulable]);
    let mut uncordoned = problem("cordoned");
    uncordoned.spec.as_mut().unwrap().unschedulable = Some(false);
    assert_eq!(Node::try_from(&uncordoned).unwrap().taints().len(), 1);
}

#[test]
fn every_problem_fixture_converts_or_is_refused_as_it_says() {
    let nodes = documents::<core::Node>(PROBLEMS);
    assert_eq!(nodes.len(), 8);
    for node in &nodes {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        assert_eq!(
            outcome(&Node::try_from(node)),
            expected(&node.metadata),
            "{name}"
        );
    }
}

#[test]
fn refusals_are_typed() {
    assert_eq!(
        Node::try_from(&problem("bad-effect")).unwrap_err(),
        NodeConversionError::TaintEffect {
            node: "bad-effect".into(),
            key: "example.com/x".into(),
            effect: "NoScheduleNow".into()
        }
    );
    assert_eq!(
        Node::try_from(&problem("half-a-gpu")).unwrap_err(),
        NodeConversionError::Quantity {
            node: "half-a-gpu".into(),
            list: "allocatable",
            resource: "nvidia.com/gpu".into(),
            error: QuantityError::NotWhole("7.5".into()),
        }
    );
    let mut unnamed = problem("no-status");
    unnamed.metadata.name = Some(String::new());
    assert_eq!(
        Node::try_from(&unnamed).unwrap_err(),
        NodeConversionError::NoName
    );
}

#[test]
fn without_allocatable_the_capacity_stands_in_and_without_status_nothing() {
    let node = Node::try_from(&problem("capacity-only")).unwrap();
    assert_eq!(
        *node.capacity(),
        Resources::new(4000, 16 * GI).with_extended("example.com/fpga", 2)
    );
    let mut empty_allocatable = problem("capacity-only");
    empty_allocatable.status.as_mut().unwrap().allocatable = Some(Default::default());
    assert_eq!(
        Node::try_from(&empty_allocatable).unwrap(),
        node,
        "{{}} is unset"
    );
    let bare = Node::try_from(&problem("no-status")).unwrap();
    assert_eq!(*bare.capacity(), Resources::ZERO);
    assert!(bare.labels().is_empty());
}

#[test]
fn conversion_by_value_matches_by_reference() {
    let node = parse::<core::Node>(GPU_NODE);
    assert_eq!(Node::try_from(node.clone()), Node::try_from(&node));
}

#[test]
fn the_gpu_pod_fits_the_gpu_node_and_tolerates_its_taints() {
    let node = Node::try_from(&parse::<core::Node>(GPU_NODE)).unwrap();
    let pod = parse::<core::Pod>(include_str!("testdata/gpu-pod.yaml"));
    let pod = crate::Pod::try_from(&pod).unwrap();
    assert!(pod.requests().fits_in(node.capacity()));
    assert!(pod.node_selector().matches(node.labels()));
    let mut hard = node.taints().iter().filter(|t| t.effect.filters());
    assert!(hard.all(|t| pod.tolerations().iter().any(|tol| tol.tolerates(t))));
    // Two such pods do not fit: the GPUs, the EFA interfaces and the memory run short.
    let two = pod.requests().saturating_add(pod.requests());
    let short: Vec<&str> = two.insufficient(node.capacity()).collect();
    assert_eq!(short, ["memory", "nvidia.com/gpu", "vpc.amazonaws.com/efa"]);
}
