//! What is checked of a converted object, with the public functions only: the fields the
//! conversions' tables say they copy, each resource amount against `quantity_value` /
//! `quantity_milli_value` of the quantity it came from, and — for a Pod — the documented
//! shape of the requests (each container's request within the total; a lone container's
//! requests are the total; the overhead adds), by converting the pod again with a part
//! removed, never by summing the requests here.

use std::collections::{BTreeMap, BTreeSet};

use gangsched::k8s::k8s_openapi::api::core::v1 as core;
use gangsched::k8s::k8s_openapi::api::scheduling::v1alpha2 as scheduling;
use gangsched::k8s::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use gangsched::k8s::{
    quantity_milli_value, quantity_value, NodeConversionError, PodConversionError, QuantityError,
    RequestSite,
};
use gangsched::scheduler::Node;
use gangsched::{Pod, PodGroup, Policy, Resources};

use super::quantity::{expect, Parts};

/// A resource list.
type List = BTreeMap<String, Quantity>;

/// The name of a quantity error's kind.
pub fn kind(error: &QuantityError) -> &'static str {
    match error {
        QuantityError::Malformed(_) => "Malformed",
        QuantityError::UnknownSuffix { .. } => "UnknownSuffix",
        QuantityError::Negative(_) => "Negative",
        QuantityError::TooLarge(_) => "TooLarge",
        QuantityError::NotWhole(_) => "NotWhole",
        _ => "another error",
    }
}

/// The amount of `resource` the quantity `q` stands for, as the conversions document it —
/// `cpu` in millicores (`quantity_milli_value`); `memory`, `ephemeral-storage` and
/// `hugepages-<size>` in bytes (`quantity_value`); anything else in whole units, a fraction
/// being `NotWhole` — or the kind of error it is. `None` when that cannot be told: a whole-unit
/// resource given as a JSON number, whose parts the oracle does not have.
pub fn amount(
    resource: &str,
    Quantity(q): &Quantity,
    quantities: &[Parts],
) -> Option<Result<u64, &'static str>> {
    if resource == "cpu" {
        return Some(quantity_milli_value(q).map_err(|e| kind(&e)));
    }
    let value = quantity_value(q).map_err(|e| kind(&e));
    if resource == "memory" || resource == "ephemeral-storage" || resource.starts_with("hugepages-")
    {
        return Some(value);
    }
    let parts = quantities.iter().find(|p| p.text() == *q)?;
    match (value, expect(parts, 0).1) {
        (Ok(_), false) => Some(Err("NotWhole")),
        (value, _) => Some(value),
    }
}

/// What `resources` holds of `resource`.
fn held(resources: &Resources, resource: &str) -> u64 {
    match resource {
        "cpu" => resources.cpu_millis,
        "memory" => resources.memory_bytes,
        _ => resources.extended(resource),
    }
}

/// A container's own quantities as the conversion reads them: each request, and each limit
/// where that resource has no request.
fn own(c: &core::Container) -> List {
    let Some(r) = &c.resources else {
        return List::new();
    };
    let mut own = r.requests.clone().unwrap_or_default();
    for (name, limit) in r.limits.iter().flatten() {
        own.entry(name.clone()).or_insert_with(|| limit.clone());
    }
    own
}

fn is_empty<T>(list: &Option<Vec<T>>) -> bool {
    list.as_ref().is_none_or(Vec::is_empty)
}

/// Checks a converted Pod against its source.
pub fn pod(
    source: &core::Pod,
    converted: &Result<Pod, PodConversionError>,
    q: &[Parts],
) -> Result<(), String> {
    let spec = source.spec.as_ref();
    let containers: Vec<(&core::Container, bool)> = spec
        .iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .map(|c| (c, false))
                .chain(s.init_containers.iter().flatten().map(|c| (c, true)))
        })
        .collect();
    let pod = match converted {
        Ok(pod) => pod,
        Err(PodConversionError::Quantity {
            site,
            resource,
            error,
            ..
        }) => {
            let mut lists: Vec<List> = Vec::new();
            let spec = spec.ok_or("a quantity error without a spec")?;
            match site {
                RequestSite::Container(name) | RequestSite::InitContainer(name) => {
                    let init = matches!(site, RequestSite::InitContainer(_));
                    for (c, is_init) in &containers {
                        if c.name == *name && *is_init == init {
                            let r = c.resources.clone().unwrap_or_default();
                            lists.extend(r.requests);
                            lists.extend(r.limits);
                        }
                    }
                }
                RequestSite::PodResources => {
                    let r = spec.resources.clone().unwrap_or_default();
                    lists.extend(r.requests);
                    lists.extend(r.limits);
                }
                RequestSite::Overhead => lists.extend(spec.overhead.clone()),
            }
            let reported = kind(error);
            let found = lists
                .iter()
                .filter_map(|l| l.get(&**resource))
                .any(|quantity| amount(resource, quantity, q).is_none_or(|a| a == Err(reported)));
            return if found {
                Ok(())
            } else {
                Err(format!("pod conversion: {site} {resource} reported {reported}, but no such quantity there is ({converted:?})"))
            };
        }
        Err(_) => return Ok(()),
    };
    let spec = spec.ok_or("a pod converted without a spec")?;
    let meta = &source.metadata;
    let same = |field: &str, got: Option<&str>, want: Option<&String>| {
        if got == want.map(String::as_str).filter(|s| !s.is_empty()) {
            Ok(())
        } else {
            Err(format!(
                "pod conversion: {field} is {got:?}, the object's {want:?}"
            ))
        }
    };
    same("name", Some(pod.name()), meta.name.as_ref())?;
    same("namespace", Some(pod.namespace()), meta.namespace.as_ref())?;
    same("uid", Some(pod.id().as_str()), meta.uid.as_ref())?;
    same("node", pod.node(), spec.node_name.as_ref())?;
    if let Some(group) = &spec.scheduling_group {
        same("group", pod.group(), group.pod_group_name.as_ref())?;
    } else if pod.group().is_some() {
        return Err("pod conversion: a group the object does not name".into());
    }
    if pod.priority() != spec.priority.unwrap_or(0) {
        return Err(format!(
            "pod conversion: priority {} for {:?}",
            pod.priority(),
            spec.priority
        ));
    }
    let total = pod.requests();
    let pod_level = spec.resources.as_ref().is_some_and(|r| {
        r.requests.as_ref().is_some_and(|l| !l.is_empty())
            || r.limits.as_ref().is_some_and(|l| !l.is_empty())
    });
    for (c, init) in &containers {
        for (resource, quantity) in own(c) {
            let within = match amount(&resource, &quantity, q) {
                None => continue,
                Some(Err(e)) => {
                    return Err(format!(
                        "pod conversion: accepted {} {resource}: {quantity:?} ({e})",
                        if *init { "init container" } else { "container" }
                    ))
                }
                // Pod-level requests replace the containers' total.
                Some(Ok(a)) => pod_level || a <= held(total, &resource),
            };
            if !within {
                return Err(format!(
                    "pod conversion: {resource} total {} below {} {:?}'s {quantity:?}",
                    held(total, &resource),
                    if *init { "init container" } else { "container" },
                    c.name
                ));
            }
        }
    }
    let overhead = spec.overhead.clone().unwrap_or_default();
    if containers.len() == 1 && is_empty(&spec.init_containers) && !pod_level && overhead.is_empty()
    {
        // A lone container: its requests (or limits where it requests nothing) are the pod's.
        let own = own(containers[0].0);
        let mut named: BTreeSet<&str> = total.extended_resources().map(|(n, _)| n).collect();
        named.extend(["cpu", "memory"]);
        named.extend(own.keys().map(String::as_str));
        for resource in named {
            let want = match own.get(resource) {
                None => Some(Ok(0)),
                Some(quantity) => amount(resource, quantity, q),
            };
            if let Some(Ok(want)) = want {
                if held(total, resource) != want {
                    return Err(format!(
                        "pod conversion: a lone container's {resource} is {want}, the pod's {}",
                        held(total, resource)
                    ));
                }
            }
        }
    }
    if !overhead.is_empty() {
        // The overhead adds to what the pod requests without it.
        let mut bare = source.clone();
        bare.spec.as_mut().expect("a spec").overhead = None;
        let bare = Pod::try_from(&bare)
            .map_err(|e| format!("pod conversion: fails without its overhead: {e}"))?;
        let mut named: BTreeSet<String> = total
            .extended_resources()
            .map(|(n, _)| n.to_owned())
            .collect();
        named.extend(
            bare.requests()
                .extended_resources()
                .map(|(n, _)| n.to_owned()),
        );
        named.extend(["cpu".to_owned(), "memory".to_owned()]);
        named.extend(overhead.keys().cloned());
        for resource in named {
            let added = match overhead.get(&resource) {
                None => Some(Ok(0)),
                Some(quantity) => amount(&resource, quantity, q),
            };
            match added {
                Some(Ok(added))
                    if Some(held(total, &resource))
                        != held(bare.requests(), &resource).checked_add(added) =>
                {
                    return Err(format!(
                        "pod conversion: {resource} is {} with an overhead of {added}, {} without",
                        held(total, &resource),
                        held(bare.requests(), &resource)
                    ));
                }
                Some(Err(e)) => {
                    return Err(format!(
                        "pod conversion: accepted overhead {resource} ({e})"
                    ))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Checks a converted Node against its source.
pub fn node(
    source: &core::Node,
    converted: &Result<Node, NodeConversionError>,
    q: &[Parts],
) -> Result<(), String> {
    let status = source.status.as_ref();
    let allocatable = status
        .and_then(|s| s.allocatable.clone())
        .filter(|a| !a.is_empty());
    let (which, list) = match allocatable {
        Some(list) => ("allocatable", list),
        None => (
            "capacity",
            status.and_then(|s| s.capacity.clone()).unwrap_or_default(),
        ),
    };
    match converted {
        Ok(node) => {
            if Some(node.name()) != source.metadata.name.as_deref() {
                return Err(format!("node conversion: name {:?}", node.name()));
            }
            for (resource, quantity) in &list {
                match amount(resource, quantity, q) {
                    Some(Ok(a)) if held(node.capacity(), resource) != a => {
                        return Err(format!("node conversion: {which} {resource} {quantity:?} is {a}, the node's {}", held(node.capacity(), resource)));
                    }
                    Some(Err(e)) => {
                        return Err(format!(
                            "node conversion: accepted {which} {resource} {quantity:?} ({e})"
                        ))
                    }
                    _ => {}
                }
            }
            let taints = source
                .spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .map_or(0, Vec::len);
            if node.taints().len() < taints {
                return Err("node conversion: a taint lost".into());
            }
            Ok(())
        }
        Err(NodeConversionError::Quantity {
            list: reported_list,
            resource,
            error,
            ..
        }) => {
            let reported = kind(error);
            let fits = *reported_list == which
                && list.get(&**resource).is_some_and(|quantity| {
                    amount(resource, quantity, q).is_none_or(|a| a == Err(reported))
                });
            if fits {
                Ok(())
            } else {
                Err(format!("node conversion: reported {reported_list} {resource} {reported}, but it is not ({converted:?})"))
            }
        }
        Err(_) => Ok(()),
    }
}

/// Checks a converted PodGroup against its source: the key and, for one policy, that policy.
pub fn pod_group(
    source: &scheduling::PodGroup,
    converted: &Result<PodGroup, impl std::fmt::Debug>,
) -> Result<(), String> {
    let Ok(group) = converted else {
        return Ok(());
    };
    let meta = &source.metadata;
    if Some(group.key().name()) != meta.name.as_deref()
        || Some(group.key().namespace()) != meta.namespace.as_deref()
    {
        return Err(format!("pod group conversion: key {}", group.key()));
    }
    let policy = &source.spec.scheduling_policy;
    let want = match (&policy.basic, &policy.gang) {
        (Some(_), None) => Policy::Basic,
        (None, Some(gang)) => match u32::try_from(gang.min_count) {
            Ok(min_count) => Policy::Gang { min_count },
            Err(_) => {
                return Err(format!(
                    "pod group conversion: accepted min count {}",
                    gang.min_count
                ))
            }
        },
        _ => return Err("pod group conversion: accepted no single policy".into()),
    };
    if group.policy() != want {
        return Err(format!(
            "pod group conversion: policy {:?}, the object's {want:?}",
            group.policy()
        ));
    }
    Ok(())
}
