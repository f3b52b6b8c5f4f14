use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{quantity_milli_value, quantity_value, QuantityError, RequestSite};
use crate::Resources;

/// Why a pod's requests could not be summed; the pod conversion adds the pod's name.
#[derive(Debug)]
pub(super) enum RequestsError {
    /// A `cpu` or `memory` quantity does not parse.
    Quantity {
        site: RequestSite,
        resource: &'static str,
        error: QuantityError,
    },
    /// A total exceeds `u64::MAX`.
    Overflow { resource: &'static str },
}

/// A request total, or why there is none.
type Sum = Result<Resources, RequestsError>;

/// What kube-scheduler's NodeResourcesFit counts a pod as requesting (its `PodRequests` helper,
/// without in-place resize), as the `Pod` conversion documents.
pub(super) fn pod_requests(spec: &PodSpec) -> Sum {
    let mut total = Resources::ZERO;
    for c in &spec.containers {
        total = add(
            total,
            container_requests(c, || RequestSite::Container(c.name.clone()))?,
        )?;
    }
    // Sidecars (restartable init containers) run alongside everything after them: each adds
    // to the total, and an ordinary init container runs next to the sidecars started before it.
    let mut sidecars = Resources::ZERO;
    let mut init_peak = Resources::ZERO;
    for c in spec.init_containers.iter().flatten() {
        let own = container_requests(c, || RequestSite::InitContainer(c.name.clone()))?;
        let running = add(sidecars.clone(), own.clone())?;
        if c.restart_policy.as_deref() == Some("Always") {
            total = add(total, own)?;
            sidecars = running.clone();
        }
        init_peak = max(init_peak, running);
    }
    total = max(total, init_peak);
    // Pod-level requests, where set, replace the containers' figure for that resource.
    let pod_level = spec.resources.as_ref().and_then(|r| r.requests.as_ref());
    if let Some(requests) = pod_level {
        let site = || RequestSite::PodResources;
        if let Some(cpu) = read(requests, "cpu", site)? {
            total.cpu_millis = cpu;
        }
        if let Some(memory) = read(requests, "memory", site)? {
            total.memory_bytes = memory;
        }
    }
    if let Some(overhead) = &spec.overhead {
        total = add(total, resources(overhead, None, || RequestSite::Overhead)?)?;
    }
    Ok(total)
}

/// A container's requests, each missing one defaulting to its limit (the API server's
/// defaulting, for objects that have not been through it).
fn container_requests(c: &Container, site: impl Fn() -> RequestSite) -> Sum {
    let Some(ResourceRequirements {
        requests, limits, ..
    }) = &c.resources
    else {
        return Ok(Resources::ZERO);
    };
    let empty = BTreeMap::new();
    resources(requests.as_ref().unwrap_or(&empty), limits.as_ref(), site)
}

/// The `cpu` and `memory` of `list`, each falling back to `fallback`'s; zero if neither has it.
fn resources(
    list: &BTreeMap<String, Quantity>,
    fallback: Option<&BTreeMap<String, Quantity>>,
    site: impl Fn() -> RequestSite,
) -> Sum {
    let get = |resource: &'static str| -> Result<u64, RequestsError> {
        if let Some(value) = read(list, resource, &site)? {
            return Ok(value);
        }
        match fallback {
            Some(fallback) => Ok(read(fallback, resource, &site)?.unwrap_or(0)),
            None => Ok(0),
        }
    };
    Ok(Resources::new(get("cpu")?, get("memory")?))
}

/// `resource` from `list` (millicores for `cpu`, bytes otherwise), if it is there.
fn read(
    list: &BTreeMap<String, Quantity>,
    resource: &'static str,
    site: impl Fn() -> RequestSite,
) -> Result<Option<u64>, RequestsError> {
    let Some(Quantity(q)) = list.get(resource) else {
        return Ok(None);
    };
    let parsed = if resource == "cpu" {
        quantity_milli_value(q)
    } else {
        quantity_value(q)
    };
    parsed.map(Some).map_err(|error| RequestsError::Quantity {
        site: site(),
        resource,
        error,
    })
}

fn add(a: Resources, b: Resources) -> Sum {
    let cpu = a.cpu_millis.checked_add(b.cpu_millis);
    let memory = a.memory_bytes.checked_add(b.memory_bytes);
    match (cpu, memory) {
        (Some(cpu), Some(memory)) => Ok(Resources::new(cpu, memory)),
        (None, _) => Err(RequestsError::Overflow { resource: "cpu" }),
        (_, None) => Err(RequestsError::Overflow { resource: "memory" }),
    }
}

fn max(a: Resources, b: Resources) -> Resources {
    Resources::new(
        a.cpu_millis.max(b.cpu_millis),
        a.memory_bytes.max(b.memory_bytes),
    )
}
