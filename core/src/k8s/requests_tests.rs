use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::fixtures::{parse, quantities, spec};
use super::{PodConversionError, QuantityError, RequestSite};
use crate::{GroupKey, Labels, Pod, Resources};

const GPU_POD: &str = include_str!("testdata/gpu-pod.yaml");
const GANG_POD: &str = include_str!("testdata/gang-pod.yaml");
const POD_LEVEL: &str = include_str!("testdata/pod-level-resources.yaml");
const FRACTIONAL_GPU: &str = include_str!("testdata/pod-fractional-gpu.yaml");

const MI: u64 = 1 << 20;
const GI: u64 = 1 << 30;
const GPU: &str = "nvidia.com/gpu";

fn requests(pod: &core::Pod) -> Resources {
    Pod::try_from(pod).unwrap().requests().clone()
}

#[test]
fn the_gpu_pod_requests_every_resource_it_names() {
    let pod = Pod::try_from(&parse::<core::Pod>(GPU_POD)).unwrap();
    assert_eq!(pod.full_name(), "research/llm-train-worker-0");
    assert_eq!(
        pod.group_key(),
        Some(&GroupKey::new("research", "llm-train"))
    );
    assert_eq!(pod.priority(), 100_000);
    // cpu and memory: the trainer plus the metrics sidecar, over the self-test's peak. The
    // GPUs: the trainer's 8, not 16, as the self-test (8 by its limit) runs before it.
    let expected = Resources::new(90_100, 1000 * GI + 128 * MI)
        .with_extended(GPU, 8)
        .with_extended("vpc.amazonaws.com/efa", 32)
        .with_extended("ephemeral-storage", 200 * GI)
        .with_extended("hugepages-2Mi", 5120 * MI);
    assert_eq!(*pod.requests(), expected);
    assert_eq!(
        pod.requests().to_string(),
        "cpu 90100m, memory 1024128Mi, ephemeral-storage 214748364800, hugepages-2Mi \
         5368709120, nvidia.com/gpu 8, vpc.amazonaws.com/efa 32"
    );
    assert_eq!(
        *pod.labels(),
        Labels::from_iter([
            ("app.kubernetes.io/component", "worker"),
            ("job-name", "llm-train")
        ])
    );
    assert_eq!(
        *pod.node_selector(),
        Labels::from_iter([
            ("accelerator", "nvidia-h100"),
            ("node.kubernetes.io/instance-type", "p5.48xlarge")
        ])
    );
}

#[test]
fn a_fraction_of_a_gpu_is_refused() {
    let err = Pod::try_from(&parse::<core::Pod>(FRACTIONAL_GPU)).unwrap_err();
    assert_eq!(
        err,
        PodConversionError::Quantity {
            pod: "research/notebook-0".into(),
            site: RequestSite::Container("jupyter".into()),
            resource: GPU.into(),
            error: QuantityError::NotWhole("500m".into()),
        }
    );
    assert_eq!(
        err.to_string(),
        r#"pod research/notebook-0: container jupyter requests nvidia.com/gpu: quantity "500m" is not a whole number"#
    );
}

#[test]
fn whole_numbers_in_any_form_are_whole() {
    let mut pod = parse::<core::Pod>(FRACTIONAL_GPU);
    for (written, gpus) in [("1", 1), ("2.0", 2), ("1000m", 1), ("1e1", 10), ("0", 0)] {
        let jupyter = &mut spec(&mut pod).containers[0];
        let resources = jupyter.resources.as_mut().unwrap();
        resources.requests = Some(quantities(&[(GPU, written)]));
        resources.limits = None;
        assert_eq!(requests(&pod).extended(GPU), gpus, "{written}");
    }
}

#[test]
fn pod_level_resources_replace_cpu_memory_and_hugepages_only() {
    let pod = parse::<core::Pod>(POD_LEVEL);
    // cpu: the pod-level request (2), not the containers' 3. memory: the pod-level limit
    // (32Gi) as its request. hugepages: the containers' request stands by the pod limit.
    // ephemeral-storage and the GPU: the containers'.
    let expected = Resources::new(2000, 32 * GI)
        .with_extended("hugepages-1Gi", 2 * GI)
        .with_extended("ephemeral-storage", 50 * GI)
        .with_extended(GPU, 1);
    assert_eq!(requests(&pod), expected);
}

#[test]
fn a_pod_level_hugepages_limit_no_container_requests_is_the_request() {
    let mut pod = parse::<core::Pod>(POD_LEVEL);
    let model = &mut spec(&mut pod).containers[0];
    let resources = model.resources.as_mut().unwrap();
    resources.requests.as_mut().unwrap().remove("hugepages-1Gi");
    resources.limits.as_mut().unwrap().remove("hugepages-1Gi");
    assert_eq!(requests(&pod).extended("hugepages-1Gi"), 4 * GI);
}

#[test]
fn sidecars_and_init_containers_count_extended_resources_too() {
    let mut pod = parse::<core::Pod>(GANG_POD);
    let init = spec(&mut pod).init_containers.as_mut().unwrap();
    // log-shipper is a sidecar; warmup runs after it.
    let add_gpus = |c: &mut core::Container, n: &str| {
        let requests = c.resources.as_mut().unwrap().requests.as_mut().unwrap();
        requests.insert(GPU.into(), Quantity(n.into()));
    };
    add_gpus(&mut init[1], "1");
    add_gpus(&mut init[2], "2");
    // Containers: the trainer's 1 plus the sidecar's 1 = 2; warmup runs beside the sidecar:
    // 2 + 1 = 3, the peak.
    assert_eq!(requests(&pod).extended(GPU), 3);
    add_gpus(&mut spec(&mut pod).containers[0], "4");
    assert_eq!(requests(&pod).extended(GPU), 5, "4 + 1 over the peak of 3");
}

#[test]
fn overhead_adds_every_resource_it_names() {
    let mut pod = parse::<core::Pod>(GANG_POD);
    spec(&mut pod).overhead = Some(quantities(&[("cpu", "250m"), ("example.com/vm-slot", "1")]));
    let total = requests(&pod);
    assert_eq!(total.cpu_millis, 4250);
    assert_eq!(total.extended("example.com/vm-slot"), 1);
}

#[test]
fn an_extended_total_past_u64_is_an_overflow_naming_it() {
    let mut pod = parse::<core::Pod>(FRACTIONAL_GPU);
    let jupyter = spec(&mut pod).containers[0].clone();
    let huge = core::ResourceRequirements {
        requests: Some(quantities(&[(GPU, "9223372036854775807")])),
        ..Default::default()
    };
    spec(&mut pod).containers = (0..3)
        .map(|i| core::Container {
            name: format!("jupyter-{i}"),
            resources: Some(huge.clone()),
            ..jupyter.clone()
        })
        .collect();
    let err = Pod::try_from(&pod).unwrap_err();
    assert_eq!(
        err,
        PodConversionError::RequestsOverflow {
            pod: "research/notebook-0".into(),
            resource: GPU.into()
        }
    );
    assert_eq!(
        err.to_string(),
        "pod research/notebook-0 requests more nvidia.com/gpu than fits in 64 bits"
    );
}
