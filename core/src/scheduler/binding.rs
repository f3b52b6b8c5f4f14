use std::time::Duration;

use crate::gang::GANG_SCHEDULING;
use crate::queue::{ClusterEvent, QueuedPodInfo};
use crate::{Decision, Mode, PluginName, Pod, PodId, Status, Time};

use super::scheduler::Job;
use super::Scheduler;
use crate::telemetry::{self, BindingResult, ScheduleResult};

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
                Job::Decided { decision, waited } => {
                    self.binding_cycle(decision, waited, now);
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
    pub(super) fn binding_cycle(&self, decision: Decision, waited: bool, now: Time) {
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
        let _span = tracing::debug_span!(
            "binding_cycle",
            pod = %id,
            gang = pod.group(),
            node = node.as_str()
        )
        .entered();
        let wait = now.saturating_duration_since(since);
        self.inner.permit_waits.lock().push(wait.as_nanos() as u64);
        if waited {
            telemetry::permit_waited(wait, decision.status.code());
        }
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
            (Ok(()), false) => {
                self.bound(&pod, &id);
                telemetry::binding_attempt(BindingResult::Bound);
                telemetry::schedule_attempt(ScheduleResult::Scheduled);
                tracing::debug!(pod = %id, node = node.as_str(), "bound");
            }
            (Ok(()), true) => {
                // Bound, but deleted meanwhile: it is gone, its resources are free.
                self.inner.cache.remove_pod(&id);
                self.inner.queue.done(&id);
                self.inner.stats.lock().deleted_in_flight += 1;
                telemetry::binding_attempt(BindingResult::Deleted);
                self.moved(ClusterEvent::AssignedPodDelete(pod), now);
            }
            (Err(_), true) => self.failed(pod, info, Failure::Deleted, now),
            (Err(failure), false) => self.failed(pod, info, failure, now),
        }
    }

    /// H2: a member of a failed Hardened gang attempt comes back with every sibling whose
    /// rejection is already marked, in one `add_gang_unschedulable` (one backoff for the
    /// gang); their own binding cycles then find nothing to do. Their reservations are
    /// released here, and the freed resources announced once, excluding the gang.
    fn hand_back_gang(&self, first: QueuedPodInfo, status: &Status, plugin: PluginName, now: Time) {
        let pod = first.pod().clone();
        // Each sibling with how long it waited at Permit.
        let siblings: Vec<(QueuedPodInfo, Duration)> = {
            let mut assigned = self.inner.assigned.lock();
            let ids: Vec<PodId> = assigned
                .iter()
                .filter(|(_, a)| a.rejected && !a.deleted && same_group(a.info.pod(), &pod))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| assigned.remove(id))
                .map(|a| (a.info, now.saturating_duration_since(a.since)))
                .collect()
        };
        {
            let mut stats = self.inner.stats.lock();
            let timeout = status.message().contains("timeout");
            let mut waits = self.inner.permit_waits.lock();
            for (_, wait) in &siblings {
                stats.permit_rejections += 1;
                stats.permit_timeouts += u64::from(timeout);
                waits.push(wait.as_nanos() as u64);
            }
        }
        let mut members = vec![first];
        for (info, wait) in siblings {
            // Each sibling waited at Permit, and this is its binding cycle too.
            telemetry::permit_waited(wait, status.code());
            telemetry::binding_attempt(BindingResult::Rejected);
            telemetry::schedule_attempt(attempt_result(status));
            self.inner.gang.unreserve(info.pod());
            self.inner.cache.forget(info.id());
            members.push(info.rejected_by(plugin.clone()));
        }
        let ids: Vec<PodId> = members.iter().map(|m| m.id().clone()).collect();
        // Already queued cannot happen: every member is in flight until handed back.
        let _ = self.inner.queue.add_gang_unschedulable(members, now);
        let not_the_gang = |other: &QueuedPodInfo| !ids.contains(other.id());
        self.inner.queue.move_all_to_active_or_backoff(
            ClusterEvent::AssignedPodDelete(pod),
            Some(&not_the_gang),
            now,
        );
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
                telemetry::binding_attempt(BindingResult::Deleted);
                self.inner.queue.done(&id);
                self.inner.stats.lock().deleted_in_flight += 1;
                self.moved(freed, now);
            }
            Failure::Rejected(status) => {
                telemetry::binding_attempt(BindingResult::Rejected);
                telemetry::schedule_attempt(attempt_result(&status));
                {
                    let mut stats = self.inner.stats.lock();
                    stats.permit_rejections += 1;
                    stats.permit_timeouts += u64::from(status.message().contains("timeout"));
                }
                let plugin = status.plugin().cloned().unwrap_or(GANG_SCHEDULING);
                if self.inner.config.mode == Mode::Hardened && pod.group().is_some() {
                    let first = info.rejected_by(plugin.clone());
                    return self.hand_back_gang(first, &status, plugin, now);
                }
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
                telemetry::binding_attempt(BindingResult::Error);
                telemetry::schedule_attempt(ScheduleResult::Error);
                tracing::debug!(pod = %id, "bind failed");
                self.inner.stats.lock().bind_failures += 1;
                self.moved(freed, now);
                // No rejecting plugin: it backs off in the error backoff.
                let _ = self.inner.queue.add_unschedulable_if_not_present(info, now);
            }
        }
    }
}

/// A rejection's result as kube-scheduler counts scheduling attempts: an error is an error,
/// anything else (a plugin's rejection, a timeout) unschedulable.
pub(super) fn attempt_result(status: &Status) -> ScheduleResult {
    if status.code() == crate::Code::Error {
        ScheduleResult::Error
    } else {
        ScheduleResult::Unschedulable
    }
}

/// Whether `a` and `b` name the same pod group.
fn same_group(a: &Pod, b: &Pod) -> bool {
    a.group().is_some() && a.group() == b.group() && a.namespace() == b.namespace()
}
