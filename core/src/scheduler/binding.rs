use crate::gang::GANG_SCHEDULING;
use crate::queue::{ClusterEvent, QueuedPodInfo};
use crate::{Decision, Pod, PodId, Status, Time};

use super::scheduler::Job;
use super::Scheduler;

/// Why a binding cycle did not bind.
enum Failure {
    /// Permit rejected the pod (a plugin, a timeout, a deleted sibling).
    Rejected(Status),
    /// The binder failed.
    Error,
    /// The pod was deleted meanwhile.
    Deleted,
}

impl Scheduler {
    /// Runs the binding cycle of every pod whose Permit decision has arrived, on this thread,
    /// without blocking; returns how many ran. For embedders that drive the scheduler
    /// themselves (and for `gangway simulate`'s virtual time); [`start`](Self::start)'s
    /// workers do this on their own threads.
    pub fn run_binding_cycles(&self, now: Time) -> usize {
        let mut ran = 0;
        while let Some(job) = self.inner.job_queue.try_recv() {
            match job {
                Job::Decided(decision) => {
                    self.binding_cycle(decision, now);
                    ran += 1;
                }
                Job::Stop => {}
            }
        }
        ran
    }

    /// One pod's binding cycle after its Permit decision: bind, or release everything and
    /// hand it back (upstream's order: unreserve, forget, announce the freed resources —
    /// deferred and excluding the pod when it was rejected, at once when it was an error —
    /// then requeue). A decision for a pod this scheduler is not binding is ignored.
    pub(super) fn binding_cycle(&self, decision: Decision, now: Time) {
        let pod = decision.pod;
        let id = pod.id().clone();
        let Some((info, node, since, deleted)) = self
            .inner
            .assigned
            .lock()
            .get(&id)
            .map(|a| (a.info.clone(), a.node.clone(), a.since, a.deleted))
        else {
            return;
        };
        self.inner
            .stats
            .lock()
            .permit_waits
            .push((now.saturating_duration_since(since)).as_nanos() as u64);
        let outcome = if deleted {
            Err(Failure::Deleted)
        } else if decision.status.is_success() {
            self.inner
                .binder
                .bind(&pod, &node)
                .map_err(|_| Failure::Error)
        } else {
            Err(Failure::Rejected(decision.status))
        };
        let deleted = self
            .inner
            .assigned
            .lock()
            .remove(&id)
            .is_none_or(|a| a.deleted);
        match (outcome, deleted) {
            (Ok(()), false) => self.bound(&pod, &id),
            (Ok(()), true) => {
                // Bound, but deleted meanwhile: it is gone, its resources are free.
                self.inner.cache.remove_pod(&id);
                self.inner.queue.done(&id);
                self.inner.stats.lock().deleted_in_flight += 1;
                self.moved(ClusterEvent::AssignedPodDelete(pod), now);
            }
            (Err(_), true) => self.failed(pod, info, Failure::Deleted, now),
            (Err(failure), false) => self.failed(pod, info, failure, now),
        }
    }

    fn bound(&self, pod: &Pod, id: &PodId) {
        // The cache entry can only be missing if the node was removed meanwhile.
        let _ = self.inner.cache.finish_binding(id);
        self.inner.gang.on_pod_bound(pod);
        self.inner.queue.done(id);
        self.inner.stats.lock().bound += 1;
    }

    fn failed(&self, pod: Pod, info: QueuedPodInfo, failure: Failure, now: Time) {
        let id = pod.id().clone();
        self.inner.gang.unreserve(&pod);
        self.inner.cache.forget(&id);
        let freed = ClusterEvent::AssignedPodDelete(pod.clone());
        match failure {
            Failure::Deleted => {
                self.inner.queue.done(&id);
                self.inner.stats.lock().deleted_in_flight += 1;
                self.moved(freed, now);
            }
            Failure::Rejected(status) => {
                {
                    let mut stats = self.inner.stats.lock();
                    stats.permit_rejections += 1;
                    stats.permit_timeouts += u64::from(status.message().contains("timeout"));
                }
                let plugin = status.plugin().cloned().unwrap_or(GANG_SCHEDULING);
                // Already queued cannot happen: the pod is in flight until handed back.
                let _ = self
                    .inner
                    .queue
                    .add_unschedulable_if_not_present(info.rejected_by(plugin), now);
                let not_this_pod = |other: &QueuedPodInfo| other.id() != &id;
                self.inner
                    .queue
                    .move_all_to_active_or_backoff(freed, Some(&not_this_pod), now);
            }
            Failure::Error => {
                self.inner.stats.lock().bind_failures += 1;
                self.moved(freed, now);
                // No rejecting plugin: it backs off in the error backoff.
                let _ = self.inner.queue.add_unschedulable_if_not_present(info, now);
            }
        }
    }
}
