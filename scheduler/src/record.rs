//! The placement record (H7, crash-atomic bind): before the first bind of an admitted gang, the
//! whole gang's placement is written to the API as each member's `status.nominatedNodeName`.
//! A scheduler killed between two binds leaves the record behind, and its successor finishes
//! it before it schedules anything (`recovery.rs`), so a gang is never left part-bound by a
//! crash. A member that is released instead of bound has its nomination cleared.

use std::collections::HashMap;
use std::sync::Arc;

use gangsched::{Pod, PodId, Scheduler};
use tokio::sync::Mutex;

use crate::api::{refusal, Refusal, Writer};
use crate::faults;

/// The nominations this scheduler has written and not yet seen end. Clones share them.
#[derive(Clone)]
pub struct PlacementRecord {
    writer: Writer,
    recorded: Arc<Mutex<HashMap<PodId, Nominated>>>,
    /// A gang's record is written under its stripe's lock, so that its siblings' binds wait
    /// for it while other gangs' records go on (64 stripes by the gang's key).
    stripes: Arc<[Mutex<()>]>,
    /// Whether a released member's nomination is cleared: always, but for the witness build's
    /// `--keep-released-nominations` (scheduler-plugins#293).
    clears_released: bool,
}

const STRIPES: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Nominated {
    namespace: String,
    name: String,
    node: String,
}

impl PlacementRecord {
    /// A record written through `writer`; `clears_released` is `false` only in the witness
    /// build's `--keep-released-nominations`.
    pub fn new(writer: Writer, clears_released: bool) -> PlacementRecord {
        PlacementRecord {
            writer,
            recorded: Arc::default(),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            clears_released,
        }
    }

    /// Before `pod` binds to `node`: every member of its gang that the core holds a
    /// reservation for (the admitted placement, `pod` among them) has its node recorded. Only
    /// the first bind of a gang writes anything; the others find it done. Holding the gang's
    /// lock while writing makes a sibling's bind wait for the whole record. A member deleted
    /// meanwhile is skipped (its own bind fails); any other failure fails the bind, which
    /// releases the pod — nothing binds unrecorded.
    pub async fn ensure(
        &self,
        scheduler: &Scheduler,
        pod: &Pod,
        node: &str,
    ) -> Result<usize, kube::Error> {
        let Some(key) = pod.group_key() else {
            return Ok(0);
        };
        // The admitted placement, read from the core (its locks only, no await under them).
        let mut placement: Vec<(Pod, String)> = scheduler
            .gang()
            .registry()
            .with_state(key, |state| {
                // Only a gang's placement needs recording: a Basic group's pods bind alone.
                if state.min_count().is_none() {
                    return Vec::new();
                }
                state
                    .assumed()
                    .iter()
                    .filter_map(|id| state.pod(id).cloned())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .filter_map(|member| {
                let node = scheduler.cache().pod_node(member.id())?;
                Some((member, node))
            })
            .collect();
        if !placement.iter().any(|(member, _)| member.id() == pod.id()) {
            placement.push((pod.clone(), node.to_owned()));
        }
        let stripe = {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(key, &mut hasher);
            std::hash::Hasher::finish(&hasher) as usize % STRIPES
        };
        let _gang = self.stripes[stripe].lock().await;
        let mut written = 0;
        for (member, node) in placement {
            let nominated = Nominated {
                namespace: member.namespace().to_owned(),
                name: member.name().to_owned(),
                node,
            };
            if self.recorded.lock().await.get(member.id()) == Some(&nominated) {
                continue;
            }
            match self
                .writer
                .nominate(&nominated.namespace, &nominated.name, Some(&nominated.node))
                .await
            {
                Ok(()) => {
                    written += 1;
                    self.recorded
                        .lock()
                        .await
                        .insert(member.id().clone(), nominated);
                }
                Err(e) if refusal(&e) == Refusal::NotFound => {
                    tracing::info!(pod = %member.full_name(), "placement record: member gone, skipped");
                }
                Err(e) => return Err(e),
            }
        }
        if written > 0 {
            metrics::counter!("gangway_placement_records_total").increment(1);
            tracing::info!(gang = %key, pods = written, "placement recorded before the gang's first bind");
            faults::reached("recorded");
        }
        Ok(written)
    }

    /// `pod` bound or is gone: its nomination is no longer the scheduler's to clear.
    pub async fn forget(&self, id: &PodId) {
        self.recorded.lock().await.remove(id);
    }

    /// `pod` was released instead of bound: its nomination, if this scheduler wrote one, is
    /// cleared, so that a successor does not finish a placement that was given up.
    pub async fn release(&self, pod: &Pod) {
        let Some(nominated) = self.recorded.lock().await.remove(pod.id()) else {
            return;
        };
        if !self.clears_released {
            tracing::info!(pod = %pod.full_name(), node = %nominated.node,
                "placement record: released pod's nomination kept (--keep-released-nominations)");
            return;
        }
        match self
            .writer
            .nominate(&nominated.namespace, &nominated.name, None)
            .await
        {
            Ok(()) => faults::reached("released"),
            Err(e) if refusal(&e) == Refusal::NotFound => {}
            Err(e) => tracing::warn!(
                pod = %pod.full_name(),
                error = %e,
                "placement record: could not clear a released pod's nominated node; \
                 a successor will check it against the cluster before finishing it"
            ),
        }
    }
}
