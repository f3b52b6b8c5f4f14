//! Finishing what a crashed predecessor recorded (H7, I10): before a new leader schedules
//! anything, every gang with recorded members (unbound pods of ours whose
//! `status.nominatedNodeName` is set) is either bound as recorded or has its record cleared.
//!
//! A record is finished when every recorded member still fits on its node beside what is bound
//! there (checked on the core's own cache, `gangsched::scheduler::CacheState`), and the
//! gang's bound and recorded members together reach its minimum. Otherwise — a node gone, its
//! room taken, the PodGroup deleted — the record is cleared with a log line saying why, and the
//! members go through scheduling like any pod. A pod bound meanwhile (409) is skipped.

use std::collections::BTreeMap;

use gangsched::scheduler::{CacheState, Node};
use gangsched::{GroupKey, Pod, PodGroup};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1beta1;
use kube::api::ListParams;
use kube::{Api, Client};

use crate::api::{refusal, Refusal, Writer};
use crate::mirror::convert;

/// What recovery did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Gangs whose recorded placement was finished.
    pub finished: usize,
    /// Pods bound to finish them.
    pub bound: usize,
    /// Gangs whose record was cleared instead.
    pub cleared: usize,
}

/// A recorded gang: its bound members and its recorded, unbound ones.
#[derive(Default)]
struct Recorded {
    bound: usize,
    members: Vec<(Pod, String)>,
}

/// Finishes or clears every recorded placement; an error only when the API could not be read.
pub async fn finish_recorded(
    client: &Client,
    writer: &Writer,
    scheduler_name: &str,
) -> Result<Recovered, kube::Error> {
    let list = ListParams::default();
    let nodes = Api::<core::Node>::all(client.clone()).list(&list).await?;
    let groups = Api::<v1beta1::PodGroup>::all(client.clone())
        .list(&list)
        .await?;
    let pods = Api::<core::Pod>::all(client.clone())
        .list(
            &list
                .clone()
                .fields("status.phase!=Succeeded,status.phase!=Failed"),
        )
        .await?;

    let mut cache = CacheState::new();
    for node in &nodes.items {
        if let Ok(node) = Node::try_from(node) {
            let _ = cache.add_node(node);
        }
    }
    let min_counts: BTreeMap<GroupKey, Option<u32>> = groups
        .items
        .iter()
        .filter_map(|g| PodGroup::try_from(g).ok())
        .map(|g| (g.key().clone(), g.min_count()))
        .collect();
    let mut gangs: BTreeMap<GroupKey, Recorded> = BTreeMap::new();
    for raw in &pods.items {
        let Some(spec) = &raw.spec else { continue };
        let bound = spec.node_name.as_deref().is_some_and(|n| !n.is_empty());
        let Ok(pod) = convert(raw, bound) else {
            continue;
        };
        if pod.node().is_some() {
            let _ = cache.add_bound(&pod);
            if let Some(key) = pod.group_key() {
                gangs.entry(key.clone()).or_default().bound += 1;
            }
            continue;
        }
        let nominated = raw
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone());
        let (Some(node), Some(key)) = (nominated.filter(|n| !n.is_empty()), pod.group_key()) else {
            continue;
        };
        if spec.scheduler_name.as_deref() != Some(scheduler_name) {
            continue;
        }
        gangs
            .entry(key.clone())
            .or_default()
            .members
            .push((pod.clone(), node));
    }

    let mut recovered = Recovered::default();
    for (key, gang) in gangs.into_iter().filter(|(_, g)| !g.members.is_empty()) {
        let min_count = min_counts.get(&key).copied().flatten();
        match check(&mut cache.clone(), &gang, min_count) {
            Ok(()) => {
                let mut bound = 0;
                for (pod, node) in &gang.members {
                    match writer.bind(pod, node).await {
                        Ok(()) => bound += 1,
                        Err(e) if refusal(&e) == Refusal::Conflict => {
                            tracing::info!(pod = %pod.full_name(), "recovery: already bound");
                        }
                        Err(e) if refusal(&e) == Refusal::NotFound => {
                            tracing::info!(pod = %pod.full_name(), "recovery: pod gone");
                        }
                        Err(e) => return Err(e),
                    }
                    let _ = cache.assume(pod, node);
                }
                tracing::info!(gang = %key, bound, already_bound = gang.bound,
                    "recovery: finished the gang's recorded placement");
                recovered.finished += 1;
                recovered.bound += bound;
            }
            Err(why) => {
                tracing::warn!(gang = %key, why = %why,
                    "recovery: recorded placement cannot be finished; cleared, the gang is scheduled again");
                for (pod, _) in &gang.members {
                    match writer.nominate(pod.namespace(), pod.name(), None).await {
                        Ok(()) => {}
                        Err(e) if refusal(&e) == Refusal::NotFound => {}
                        Err(e) => return Err(e),
                    }
                }
                recovered.cleared += 1;
            }
        }
    }
    metrics::counter!("gangway_recovered_pods_total").increment(recovered.bound as u64);
    Ok(recovered)
}

/// Whether `gang`'s record can be finished on `cache` (which it changes).
fn check(cache: &mut CacheState, gang: &Recorded, min_count: Option<u32>) -> Result<(), String> {
    let Some(min_count) = min_count else {
        return Err("its pod group is gone or not a gang".into());
    };
    let total = gang.bound + gang.members.len();
    if total < min_count as usize {
        return Err(format!(
            "{total} bound and recorded members, below its minimum {min_count}"
        ));
    }
    for (pod, node) in &gang.members {
        let Some(view) = cache.node(node) else {
            return Err(format!("node {node} of {} is gone", pod.full_name()));
        };
        if !pod
            .requests()
            .fits_beside(view.requested(), view.capacity())
        {
            return Err(format!("{} no longer fits on node {node}", pod.full_name()));
        }
        cache
            .assume(pod, node)
            .map_err(|e| format!("{}: {e}", pod.full_name()))?;
    }
    Ok(())
}
