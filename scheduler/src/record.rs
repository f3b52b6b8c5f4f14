//! The placement record (H7, crash-atomic bind): before the first bind of an admitted gang, the
//! whole gang's placement is written to the API as each member's `status.nominatedNodeName`.
//! A scheduler killed between two binds leaves the record behind, and its successor finishes
//! it before it schedules anything (`recovery.rs`), so a gang is never left part-bound by a
//! crash. A member that is released instead of bound has its nomination cleared.

use std::collections::HashMap;
use std::sync::Arc;

use gangsched::scheduler::{Cache, PodPhase};
use gangsched::{GroupKey, Pod, PodId, Scheduler};
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
        // The admitted placement, read from the core (its locks only, no await under them): the
        // members its registry holds reserved. Each is asked again under the gang's lock below.
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
        // The race with a sibling's bind is here: a test holds this thread (`--pause-at
        // placement-read:1:MILLIS`) while the sibling records, binds and is forgotten.
        faults::reached("placement-read");
        let _gang = self.stripe(key).lock().await;
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
            // Asked under the gang's lock: a sibling whose own bind has finished (its record then
            // forgotten) is bound in the cache, and needs none. The API refuses a nomination for
            // a bound pod, and a failed record releases the pod that asked for it, leaving its
            // gang part-bound (found by `e2e_crash` on 2026-12-07: the registry was read before a
            // sibling's bind finished, the nomination written after, I10).
            if member.id() != pod.id()
                && scheduler.cache().phase(member.id()) != Some(PodPhase::Assumed)
            {
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
                // A sibling bound since the look above by someone else (the API refuses a
                // nomination for a bound pod): it needs no record.
                Err(e)
                    if member.id() != pod.id()
                        && self
                            .writer
                            .is_bound(&nominated.namespace, &nominated.name)
                            .await
                            .unwrap_or(false) =>
                {
                    tracing::info!(pod = %member.full_name(), error = %e,
                        "placement record: member bound meanwhile, skipped");
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

    /// The lock a gang's record is written under.
    fn stripe(&self, key: &GroupKey) -> &Mutex<()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(key, &mut hasher);
        &self.stripes[std::hash::Hasher::finish(&hasher) as usize % STRIPES]
    }

    /// An attempt of `pod` ended without a bind: its nomination, if this scheduler wrote one, is
    /// cleared, so that a successor does not finish a placement that was given up. Not if the
    /// core's `cache` holds a reservation for it again: outcomes are written behind the
    /// scheduler (one task, throttled with every other write), so an earlier attempt's end can
    /// come after the next attempt's record, and clearing that would let a crash between the
    /// gang's binds leave it part-bound (I10; seen by reading, while mending the record's race
    /// with a sibling's bind). Under the gang's lock, so that no record is half written while
    /// this looks, and none starts before its clear is done.
    pub async fn release(&self, cache: &Cache, pod: &Pod) {
        let _gang = match pod.group_key() {
            Some(key) => Some(self.stripe(key).lock().await),
            None => None,
        };
        if cache.phase(pod.id()) == Some(PodPhase::Assumed) {
            tracing::debug!(pod = %pod.full_name(),
                "placement record: an earlier attempt ended; the pod is reserved again, its record kept");
            return;
        }
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
