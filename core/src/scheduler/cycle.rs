use crate::gang::GANG_SCHEDULING;
use crate::queue::Popped;
use crate::{Decision, Permit, PodId, Status, Time};

use super::scheduler::{Assignment, Job};
use super::Scheduler;
use crate::telemetry::{self, ScheduleResult};

/// What one scheduling cycle did with the pod it popped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CycleOutcome {
    /// Placed and allowed at once: its binding cycle is queued.
    Allowed {
        /// The pod.
        pod: PodId,
        /// The node it is assumed on.
        node: String,
    },
    /// Placed; it waits at Permit for its gang.
    Waiting {
        /// The pod.
        pod: PodId,
        /// The node it is assumed on.
        node: String,
    },
    /// Rejected at Permit; its binding cycle releases it.
    Rejected {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
    },
    /// No node fits, or reserving failed: handed back to the queue.
    Unschedulable {
        /// The pod.
        pod: PodId,
        /// Why.
        status: Status,
    },
}

impl Scheduler {
    /// One scheduling cycle, if a pod is active: pop, place, assume, reserve, Permit. A pod
    /// that waits is registered in the waiting map before this returns, so no sibling's
    /// decision can miss it; a pod that passes or is rejected at Permit gets its binding cycle
    /// queued ([`run_binding_cycles`](Self::run_binding_cycles)). `None`: nothing to pop.
    pub fn schedule_one(&self, now: Time) -> Option<CycleOutcome> {
        let popped = self.inner.queue.try_pop()?;
        Some(self.schedule(popped, now))
    }

    pub(super) fn schedule(&self, popped: Popped, now: Time) -> CycleOutcome {
        self.inner.stats.lock().cycles += 1;
        let info = popped.info;
        let pod = info.pod().clone();
        let id = pod.id().clone();
        // The node is recorded once placed; Permit's decision is the gang plugin's event.
        let span = tracing::debug_span!(
            "scheduling_cycle",
            pod = %id,
            gang = pod.group(),
            node = tracing::field::Empty
        )
        .entered();
        let placed = self
            .inner
            .cache
            .with(|cache| self.inner.placement.place(&pod, cache));
        let node = match placed {
            Ok(node) => {
                span.record("node", node.as_str());
                node
            }
            Err(status) => {
                self.inner.stats.lock().unschedulable += 1;
                telemetry::schedule_attempt(ScheduleResult::Unschedulable);
                tracing::debug!(pod = %id, reason = status.message(), "no node fits");
                let plugin = status
                    .plugin()
                    .cloned()
                    .unwrap_or(super::ResourceFit::PLUGIN.into());
                let _ = self
                    .inner
                    .queue
                    .add_unschedulable_if_not_present(info.rejected_by(plugin), now);
                return CycleOutcome::Unschedulable { pod: id, status };
            }
        };
        if let Err(e) = self.inner.cache.assume(&pod, &node) {
            let status = Status::unschedulable(e.to_string());
            telemetry::schedule_attempt(ScheduleResult::Error);
            tracing::debug!(pod = %id, error = %e, "assume failed");
            // An error, not a plugin's verdict: error backoff.
            let _ = self.inner.queue.add_unschedulable_if_not_present(info, now);
            return CycleOutcome::Unschedulable { pod: id, status };
        }
        if let Err(e) = self.inner.gang.reserve(&pod) {
            self.inner.cache.forget(&id);
            let status = Status::unschedulable(e.to_string()).with_plugin(GANG_SCHEDULING);
            telemetry::schedule_attempt(ScheduleResult::Unschedulable);
            tracing::debug!(
                pod = %id,
                error = %e,
                plugin = GANG_SCHEDULING.as_str(),
                "reserve failed"
            );
            let _ = self
                .inner
                .queue
                .add_unschedulable_if_not_present(info.rejected_by(GANG_SCHEDULING), now);
            return CycleOutcome::Unschedulable { pod: id, status };
        }
        // Registered before Permit, so a decision that comes at once finds it.
        self.inner.assigned.lock().insert(
            id.clone(),
            Assignment {
                info,
                node: node.clone(),
                since: now,
                deleted: false,
                rejected: false,
            },
        );
        match self.inner.gang.permit(&pod, now) {
            Permit::Allow => {
                let decision = Decision {
                    pod,
                    status: Status::success(),
                };
                let _ = self.inner.jobs.send(Job::Decided {
                    decision,
                    waited: false,
                });
                CycleOutcome::Allowed { pod: id, node }
            }
            Permit::Wait { activate, .. } => {
                let siblings: Vec<PodId> = activate.iter().map(|p| p.id().clone()).collect();
                self.inner.queue.activate(&siblings, now);
                CycleOutcome::Waiting { pod: id, node }
            }
            Permit::Reject(status) => {
                // Counted as an attempt by its binding cycle, which releases it.
                let decision = Decision {
                    pod,
                    status: status.clone(),
                };
                let _ = self.inner.jobs.send(Job::Decided {
                    decision,
                    waited: false,
                });
                CycleOutcome::Rejected { pod: id, status }
            }
        }
    }
}
