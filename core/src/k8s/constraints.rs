use k8s_openapi::api::core::v1::{Container, PodSpec, Volume};

use super::{RequestSite, Unsupported};

/// The first scheduling constraint of `spec` that gangsched cannot honour, as the `Pod`
/// conversion documents. A bound pod's placement is made: only what keeps other pods away from
/// its node (required pod anti-affinity) is checked.
pub(super) fn unsupported(spec: &PodSpec, bound: bool) -> Option<Unsupported> {
    let affinity = spec.affinity.as_ref();
    let anti = affinity.and_then(|a| a.pod_anti_affinity.as_ref());
    if anti.is_some_and(|a| !is_empty(&a.required_during_scheduling_ignored_during_execution)) {
        return Some(Unsupported::RequiredPodAntiAffinity);
    }
    if bound {
        return None;
    }
    #[cfg(k8s_pod_workload_ref)]
    if spec.workload_ref.is_some() {
        return Some(Unsupported::WorkloadRef);
    }
    if !is_empty(&spec.scheduling_gates) {
        return Some(Unsupported::SchedulingGates);
    }
    let node_affinity = affinity.and_then(|a| a.node_affinity.as_ref());
    if node_affinity.is_some_and(|n| {
        n.required_during_scheduling_ignored_during_execution
            .is_some()
    }) {
        return Some(Unsupported::RequiredNodeAffinity);
    }
    let pod_affinity = affinity.and_then(|a| a.pod_affinity.as_ref());
    if pod_affinity
        .is_some_and(|a| !is_empty(&a.required_during_scheduling_ignored_during_execution))
    {
        return Some(Unsupported::RequiredPodAffinity);
    }
    let spread = spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate();
    for (index, constraint) in spread {
        if constraint.when_unsatisfiable == "DoNotSchedule" {
            return Some(Unsupported::TopologySpread {
                index,
                topology_key: constraint.topology_key.clone(),
            });
        }
    }
    if !is_empty(&spec.resource_claims) {
        return Some(Unsupported::ResourceClaims);
    }
    let host_network = spec.host_network == Some(true);
    let init = spec.init_containers.iter().flatten().map(|c| (c, true));
    for (c, is_init) in spec.containers.iter().map(|c| (c, false)).chain(init) {
        if let Some(port) = host_port(c, host_network) {
            let name = c.name.clone();
            let container = if is_init {
                RequestSite::InitContainer(name)
            } else {
                RequestSite::Container(name)
            };
            return Some(Unsupported::HostPort { container, port });
        }
    }
    spec.volumes.iter().flatten().find_map(|v| {
        volume_source(v).map(|source| Unsupported::Volume {
            volume: v.name.clone(),
            source,
        })
    })
}

/// Whether a list is absent or empty (Go's `nil` and empty slices serialize alike).
fn is_empty<T>(list: &Option<Vec<T>>) -> bool {
    list.as_ref().is_none_or(Vec::is_empty)
}

/// The first port `c` binds on the node: a `hostPort`, or with the host's network (where the
/// API server defaults `hostPort` to `containerPort`) any port.
fn host_port(c: &Container, host_network: bool) -> Option<i32> {
    c.ports.iter().flatten().find_map(|p| match p.host_port {
        Some(port) if port > 0 => Some(port),
        _ if host_network => Some(p.container_port),
        _ => None,
    })
}

/// The source field of a volume whose placement kube-scheduler's volume plugins check.
fn volume_source(v: &Volume) -> Option<&'static str> {
    let sources = [
        (v.persistent_volume_claim.is_some(), "persistentVolumeClaim"),
        (v.ephemeral.is_some(), "ephemeral"),
        (v.gce_persistent_disk.is_some(), "gcePersistentDisk"),
        (v.aws_elastic_block_store.is_some(), "awsElasticBlockStore"),
        (v.azure_disk.is_some(), "azureDisk"),
        (v.rbd.is_some(), "rbd"),
        (v.iscsi.is_some(), "iscsi"),
    ];
    sources
        .into_iter()
        .find_map(|(set, source)| set.then_some(source))
}
