use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::quantity::resource_amount;
use super::{QuantityError, RequestSite, Unsupported};
use crate::Resources;

/// Why a pod's requests could not be summed; the pod conversion adds the pod's name.
#[derive(Debug)]
pub(super) enum RequestsError {
    /// A quantity does not parse, or is a fraction of a whole-unit resource.
    Quantity {
        site: RequestSite,
        resource: String,
        error: QuantityError,
    },
    /// A total exceeds `u64::MAX`.
    Overflow { resource: String },
    /// A pod-level request or limit of a resource pod-level resources do not cover.
    Unsupported(Unsupported),
}

/// Amounts by resource name, in [`resource_amount`]'s units.
type Amounts = BTreeMap<String, u64>;

/// What kube-scheduler's NodeResourcesFit counts a pod as requesting (its `PodRequests` helper,
/// without in-place resize), every resource by name, as the `Pod` conversion documents.
pub(super) fn pod_requests(spec: &PodSpec) -> Result<Resources, RequestsError> {
    let mut total = Amounts::new();
    for c in &spec.containers {
        let own = container_requests(c, || RequestSite::Container(c.name.clone()))?;
        add(&mut total, &own)?;
    }
    // Sidecars (restartable init containers) run alongside everything after them: each adds
    // to the total, and an ordinary init container runs next to the sidecars started before it.
    let mut sidecars = Amounts::new();
    let mut init_peak = Amounts::new();
    for c in spec.init_containers.iter().flatten() {
        let own = container_requests(c, || RequestSite::InitContainer(c.name.clone()))?;
        let mut running = sidecars.clone();
        add(&mut running, &own)?;
        if c.restart_policy.as_deref() == Some("Always") {
            add(&mut total, &own)?;
            sidecars = running.clone();
        }
        max(&mut init_peak, &running);
    }
    max(&mut total, &init_peak);
    if let Some(pod_level) = &spec.resources {
        pod_level_requests(pod_level, &mut total)?;
    }
    if let Some(overhead) = &spec.overhead {
        add(&mut total, &amounts(overhead, || RequestSite::Overhead)?)?;
    }
    let mut resources = Resources::ZERO;
    for (name, amount) in total {
        match name.as_str() {
            "cpu" => resources.cpu_millis = amount,
            "memory" => resources.memory_bytes = amount,
            _ => resources.set_extended(&name, amount),
        }
    }
    Ok(resources)
}

/// A container's requests, each missing one defaulting to its limit (the API server's
/// defaulting, for objects that have not been through it).
fn container_requests(
    c: &Container,
    site: impl Fn() -> RequestSite,
) -> Result<Amounts, RequestsError> {
    let Some(ResourceRequirements {
        requests, limits, ..
    }) = &c.resources
    else {
        return Ok(Amounts::new());
    };
    let mut own = amounts(requests.as_ref().unwrap_or(&BTreeMap::new()), &site)?;
    for (name, limit) in limits.iter().flatten() {
        if !own.contains_key(name) {
            own.insert(name.clone(), read(name, limit, &site)?);
        }
    }
    Ok(own)
}

/// Pod-level resources (`spec.resources`), which cover `cpu`, `memory` and hugepages only:
/// where one is requested, its request replaces the containers' total. Where one has only a
/// limit, the API server's defaulting applies: the limit is the request, except for hugepages
/// that a container requests, where the containers' total stands.
fn pod_level_requests(
    pod_level: &ResourceRequirements,
    total: &mut Amounts,
) -> Result<(), RequestsError> {
    let site = || RequestSite::PodResources;
    let empty = BTreeMap::new();
    let requests = pod_level.requests.as_ref().unwrap_or(&empty);
    let limits = pod_level.limits.as_ref().unwrap_or(&empty);
    for (list, quantities) in [("requests", requests), ("limits", limits)] {
        if let Some(resource) = quantities.keys().find(|name| !is_pod_level(name)) {
            return Err(RequestsError::Unsupported(Unsupported::PodLevelResource {
                list,
                resource: resource.clone(),
            }));
        }
    }
    for (name, request) in requests {
        total.insert(name.clone(), read(name, request, site)?);
    }
    for (name, limit) in limits {
        let hugepages = name.starts_with("hugepages-");
        if requests.contains_key(name) || (hugepages && total.contains_key(name)) {
            continue;
        }
        total.insert(name.clone(), read(name, limit, site)?);
    }
    Ok(())
}

/// Whether pod-level resources may name `resource`.
fn is_pod_level(resource: &str) -> bool {
    resource == "cpu" || resource == "memory" || resource.starts_with("hugepages-")
}

/// Every resource of `list`.
fn amounts(
    list: &BTreeMap<String, Quantity>,
    site: impl Fn() -> RequestSite,
) -> Result<Amounts, RequestsError> {
    list.iter()
        .map(|(name, quantity)| Ok((name.clone(), read(name, quantity, &site)?)))
        .collect()
}

/// One quantity of `resource`, in [`resource_amount`]'s unit.
fn read(
    resource: &str,
    Quantity(q): &Quantity,
    site: impl Fn() -> RequestSite,
) -> Result<u64, RequestsError> {
    resource_amount(resource, q).map_err(|error| RequestsError::Quantity {
        site: site(),
        resource: resource.to_owned(),
        error,
    })
}

/// `total += more`, per resource.
fn add(total: &mut Amounts, more: &Amounts) -> Result<(), RequestsError> {
    for (name, amount) in more {
        let sum = total.entry(name.clone()).or_insert(0);
        *sum = sum
            .checked_add(*amount)
            .ok_or_else(|| RequestsError::Overflow {
                resource: name.clone(),
            })?;
    }
    Ok(())
}

/// `total = max(total, other)`, per resource.
fn max(total: &mut Amounts, other: &Amounts) {
    for (name, amount) in other {
        let peak = total.entry(name.clone()).or_insert(0);
        *peak = (*peak).max(*amount);
    }
}
