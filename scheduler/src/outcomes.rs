//! What became of each pod, told to the cluster: the core delivers a `PodOutcome` per ended
//! attempt (outside its locks), this module hands it to one task that writes — as
//! kube-scheduler does — the pod's `PodScheduled` condition and a `Scheduled` or
//! `FailedScheduling` Event, the PodGroup's `PodGroupScheduled` condition (never taken back
//! from `True`), and clears the nomination of a recorded member that was released.

use std::collections::HashMap;

use gangsched::scheduler::{Cache, OutcomeSink, PodGroupScheduled, PodOutcome, PodScheduled};
use gangsched::{GroupKey, PodId};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::api::{refusal, Refusal, Writer};
use crate::record::PlacementRecord;

/// How many pods' and groups' last written conditions are remembered.
const MEMORY: usize = 1 << 16;

/// The core's sink: a channel to [`write_outcomes`].
pub struct Outcomes(pub UnboundedSender<PodOutcome>);

impl OutcomeSink for Outcomes {
    fn deliver(&self, outcome: PodOutcome) {
        // Closed only when the writer has stopped, at shutdown.
        let _ = self.0.send(outcome);
    }
}

/// Writes each outcome as it comes, until the channel closes.
pub async fn write_outcomes(
    mut outcomes: UnboundedReceiver<PodOutcome>,
    writer: Writer,
    record: Option<(PlacementRecord, Cache)>,
) {
    let mut pods: HashMap<PodId, PodScheduled> = HashMap::new();
    let mut groups: HashMap<GroupKey, PodGroupScheduled> = HashMap::new();
    while let Some(outcome) = outcomes.recv().await {
        // What was last written only saves a repeated write; a pod deleted while pending sends
        // no outcome to clear its entry, so past a bound both are forgotten.
        if pods.len() > MEMORY || groups.len() > MEMORY {
            pods.clear();
            groups.clear();
        }
        let pod = outcome.pod().clone();
        let name = pod.full_name();
        if outcome.is_final() {
            tracing::debug!(pod = %name, outcome = %outcome, "attempt ended");
        } else {
            tracing::info!(pod = %name, outcome = %outcome, "attempt ended");
        }
        if let Some((record, cache)) = &record {
            match &outcome {
                PodOutcome::Bound { .. } | PodOutcome::Dropped { .. } => {
                    record.forget(pod.id()).await
                }
                _ => record.release(cache, &pod).await,
            }
        }
        let condition = outcome.pod_scheduled();
        match (&outcome, &condition) {
            (PodOutcome::Bound { node, .. }, _) => {
                pods.remove(pod.id());
                let note = format!("Successfully assigned {name} to {node}");
                report(
                    writer.pod_event(&pod, false, "Scheduled", note).await,
                    &name,
                    "event",
                );
            }
            (PodOutcome::Dropped { .. }, _) | (_, None) => {
                pods.remove(pod.id());
            }
            (_, Some(condition)) => {
                if pods.get(pod.id()) != Some(condition) {
                    report(
                        writer.pod_scheduled(&pod, condition).await,
                        &name,
                        "PodScheduled condition",
                    );
                    pods.insert(pod.id().clone(), condition.clone());
                }
                let note = condition.message.clone();
                report(
                    writer.pod_event(&pod, true, "FailedScheduling", note).await,
                    &name,
                    "event",
                );
            }
        }
        let Some(key) = pod.group_key() else { continue };
        let group_condition = match (&outcome, &condition) {
            (PodOutcome::Bound { .. }, _) => PodGroupScheduled::scheduled(),
            (_, Some(c)) if c.reason == PodScheduled::SCHEDULER_ERROR => {
                let mut error = PodGroupScheduled::unschedulable(c.message.clone());
                error.reason = PodGroupScheduled::SCHEDULER_ERROR;
                error
            }
            (_, Some(c)) => PodGroupScheduled::unschedulable(c.message.clone()),
            (_, None) => continue,
        };
        if group_condition.supersedes(groups.get(key)) {
            let written = writer.pod_group_scheduled(key, &group_condition).await;
            report(written, &key.to_string(), "PodGroupScheduled condition");
            groups.insert(key.clone(), group_condition);
        }
    }
}

/// A failed write is logged; a gone object is not a fault.
fn report(written: Result<(), kube::Error>, object: &str, what: &str) {
    if let Err(e) = written {
        if refusal(&e) != Refusal::NotFound {
            tracing::warn!(object, error = %e, "could not write {what}");
        }
    }
}
