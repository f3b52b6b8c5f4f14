use k8s_openapi::api::core::v1 as core;

use super::fixtures::{documents, expected, outcome, parse};
use super::{PodConversionError, RequestSite, Unsupported};
use crate::Pod;
use crate::{TaintEffect, Toleration, TolerationOperator};

const CONSTRAINTS: &str = include_str!("testdata/pod-constraints.yaml");
const GPU_POD: &str = include_str!("testdata/gpu-pod.yaml");

fn pods() -> Vec<core::Pod> {
    documents(CONSTRAINTS)
}

fn pod(name: &str) -> core::Pod {
    pods()
        .into_iter()
        .find(|p| p.metadata.name.as_deref() == Some(name))
        .expect("a fixture of that name")
}

fn refusal(pod: &core::Pod) -> Unsupported {
    match Pod::try_from(pod) {
        Err(PodConversionError::Unsupported { constraint, .. }) => constraint,
        other => panic!("expected an unsupported constraint, got {other:?}"),
    }
}

#[test]
fn every_fixture_converts_or_is_refused_as_it_says() {
    let pods = pods();
    assert_eq!(pods.len(), 18);
    for pod in &pods {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        assert_eq!(
            outcome(&Pod::try_from(pod)),
            expected(&pod.metadata),
            "{name}"
        );
    }
}

#[test]
fn each_refusal_names_its_constraint() {
    use Unsupported::*;
    let cases = [
        ("node-affinity", RequiredNodeAffinity),
        ("pod-affinity", RequiredPodAffinity),
        ("anti-affinity", RequiredPodAntiAffinity),
        ("bound-anti-affinity", RequiredPodAntiAffinity),
        (
            "spread",
            TopologySpread {
                index: 1,
                topology_key: "topology.kubernetes.io/zone".into(),
            },
        ),
        ("dra", ResourceClaims),
        ("gated", SchedulingGates),
        (
            "host-port",
            HostPort {
                container: RequestSite::Container("proxy".into()),
                port: 8443,
            },
        ),
        (
            "host-network",
            HostPort {
                container: RequestSite::InitContainer("exporter".into()),
                port: 9100,
            },
        ),
        (
            "pvc",
            Volume {
                volume: "checkpoints".into(),
                source: "persistentVolumeClaim",
            },
        ),
        (
            "ephemeral-volume",
            Volume {
                volume: "scratch".into(),
                source: "ephemeral",
            },
        ),
        (
            "pod-level-gpu",
            PodLevelResource {
                list: "requests",
                resource: "nvidia.com/gpu".into(),
            },
        ),
        (
            "in-tree-disk",
            Volume {
                volume: "data".into(),
                source: "gcePersistentDisk",
            },
        ),
        (
            "toleration-gt",
            Toleration {
                index: 1,
                field: "operator",
                value: "Gt".into(),
            },
        ),
    ];
    for (name, constraint) in cases {
        assert_eq!(refusal(&pod(name)), constraint, "{name}");
    }
}

#[test]
fn the_refusal_names_the_pod() {
    assert_eq!(
        Pod::try_from(&pod("gated")).unwrap_err(),
        PodConversionError::Unsupported {
            pod: "ml/gated".into(),
            constraint: Unsupported::SchedulingGates,
        }
    );
}

#[test]
fn a_bound_pod_keeps_its_requests_whatever_placed_it() {
    let exporter = Pod::try_from(&pod("node-exporter-x7k2p")).unwrap();
    assert_eq!(exporter.node(), Some("worker-3"));
    assert_eq!(exporter.requests().cpu_millis, 100);
    // The same pod before it was bound is refused for its node affinity.
    let mut unbound = pod("node-exporter-x7k2p");
    unbound.spec.as_mut().unwrap().node_name = None;
    assert_eq!(refusal(&unbound), Unsupported::RequiredNodeAffinity);
    unbound.spec.as_mut().unwrap().affinity = None;
    assert_eq!(
        refusal(&unbound),
        Unsupported::HostPort {
            container: RequestSite::Container("exporter".into()),
            port: 9100
        },
        "the host port is the next constraint"
    );
}

#[test]
fn empty_lists_are_no_constraint() {
    // Go's nil and empty slices serialize alike: an empty list constrains nothing.
    let mut gpu = parse::<core::Pod>(GPU_POD);
    let spec = gpu.spec.as_mut().unwrap();
    spec.scheduling_gates = Some(Vec::new());
    spec.resource_claims = Some(Vec::new());
    spec.topology_spread_constraints = Some(Vec::new());
    let anti = spec
        .affinity
        .as_mut()
        .unwrap()
        .pod_anti_affinity
        .as_mut()
        .unwrap();
    anti.required_during_scheduling_ignored_during_execution = Some(Vec::new());
    assert!(Pod::try_from(&gpu).is_ok());
}

#[test]
fn an_unsupported_pod_level_limit_is_named_as_a_limit() {
    let mut p = pod("pod-level-gpu");
    let resources = p.spec.as_mut().unwrap().resources.as_mut().unwrap();
    resources.limits = resources.requests.take();
    resources.limits.as_mut().unwrap().remove("cpu");
    assert_eq!(
        refusal(&p),
        Unsupported::PodLevelResource {
            list: "limits",
            resource: "nvidia.com/gpu".into()
        }
    );
    assert_eq!(
        refusal(&p).to_string(),
        "spec.resources.limits[nvidia.com/gpu]"
    );
}

#[test]
fn displays_name_the_field() {
    let cases = [
        (Unsupported::ResourceClaims, "spec.resourceClaims"),
        (Unsupported::WorkloadRef, "spec.workloadRef"),
        (
            Unsupported::Volume {
                volume: "disk".into(),
                source: "gcePersistentDisk",
            },
            "spec.volumes[disk].gcePersistentDisk",
        ),
    ];
    for (constraint, text) in cases {
        assert_eq!(constraint.to_string(), text);
    }
}

#[test]
fn tolerations_are_kept_in_every_form() {
    let pod = Pod::try_from(&pod("tolerations")).unwrap();
    let equal = |key: &str, value: &str| Toleration {
        key: key.into(),
        operator: TolerationOperator::Equal,
        value: value.into(),
        effect: None,
    };
    assert_eq!(
        pod.tolerations(),
        [
            Toleration::exists("nvidia.com/gpu").with_effect(TaintEffect::NoSchedule),
            Toleration::exists("node.kubernetes.io/not-ready").with_effect(TaintEffect::NoExecute),
            equal("dedicated", "training"),
            Toleration::exists(""),
        ]
    );
}

#[test]
fn a_toleration_it_cannot_match_is_refused_unless_the_pod_is_bound() {
    let mut gt = pod("toleration-gt");
    gt.spec.as_mut().unwrap().tolerations.as_mut().unwrap()[1].operator = Some("Exists".into());
    gt.spec.as_mut().unwrap().tolerations.as_mut().unwrap()[1].effect = Some("Sometimes".into());
    assert_eq!(
        refusal(&gt).to_string(),
        r#"spec.tolerations[1].effect "Sometimes""#
    );
    let mut bound = pod("toleration-gt");
    bound.spec.as_mut().unwrap().node_name = Some("worker-3".into());
    let bound = Pod::try_from(&bound).unwrap();
    assert_eq!(
        bound.tolerations(),
        [Toleration::exists("nvidia.com/gpu")],
        "the Gt one is left out"
    );
}

/// A `hostPort` of 0 is Go's zero value, "not set" (the API server validates a host port only
/// when it is not 0, and kube-scheduler's NodePorts plugin finds no conflict on a port of 0): no
/// constraint. Found missing by mutation testing (issue #43: `port > 0` turned `>= 0` refused
/// such a pod).
#[test]
fn a_host_port_of_zero_is_no_host_port() {
    let mut gpu = parse::<core::Pod>(GPU_POD);
    let container = &mut gpu.spec.as_mut().unwrap().containers[0];
    container.ports = Some(vec![core::ContainerPort {
        container_port: 8080,
        host_port: Some(0),
        ..Default::default()
    }]);
    assert!(Pod::try_from(&gpu).is_ok());
}
