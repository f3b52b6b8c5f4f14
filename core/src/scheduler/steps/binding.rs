//! A pod's binding cycle after its Permit decision (upstream's `runBindingCycle` and
//! `handleBindingCycleError`): bind, or release everything and hand the pod back — unreserve,
//! forget, announce the freed resources (deferred and excluding the pod when it was rejected,
//! at once when it was an error), then requeue. Hardened, the first binding cycle of a failed
//! gang attempt hands the whole gang back at once (H2), and a failed bind that leaves a gang
//! the pod-group cycle admitted short of quorum releases its members still waiting to bind
//! (`admitted.rs`) and hands them back with the failed member, in one backoff (H2): a member
//! that came back alone would find its gang short in its own pod-group cycle, and the gang
//! would wait for the leftover flush though it fits (found by the timeliness property,
//! `gangway_check`'s progress without timeouts).

use crate::gang::{ops, GANG_SCHEDULING};
use crate::queue::{ClusterEvent, QueuedPodInfo};
use crate::telemetry::{self, BindingResult, ScheduleResult};
use crate::{Cause, Code, Decision, Mode, PluginName, Pod, PodId, Status, Time};

#[cfg(feature = "checking")]
use super::super::flaw::Flaw;
use super::super::jobs::Job;
use super::super::parts::count;
use super::super::parts::Parts;
use super::super::tally::{Counted, Tally as _};
use super::super::{BindError, PodOutcome};
use super::admitted;
use super::cycle::requeue;
use super::events::announce;

/// What a binding cycle did.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindingOutcome {
    /// No pod in binding has this decision (a stale or foreign one): nothing was done.
    Ignored,
    /// Bound to the node.
    Bound {
        /// The pod.
        pod: Pod,
        /// Its node.
        node: String,
    },
    /// The pod was deleted meanwhile: its reservation is released (or, if it bound, its room
    /// freed) and announced; it does not come back.
    Deleted {
        /// The pod.
        pod: Pod,
    },
    /// Rejected at Permit: released and back in the queue — Hardened, with every rejected
    /// member of its gang attempt (H2), listed after it.
    Released {
        /// The pods handed back.
        pods: Vec<Pod>,
        /// The pod's rejection.
        status: Status,
        /// Why it was rejected.
        cause: Cause,
    },
    /// The binder failed: released, and back in the error backoff — Hardened, with the members
    /// of its admitted gang that the failure left short of quorum (H2).
    BindFailed {
        /// The pod.
        pod: Pod,
        /// The binder's error.
        error: BindError,
        /// Hardened, pod-group cycle: the members of the pod's admitted gang whose binding had
        /// not begun, released because the failed bind left the gang short of its quorum and
        /// handed back with it, in one backoff (H2) — each with its rejection.
        released: Vec<Decision>,
    },
}

/// Why a binding cycle did not bind.
enum Failure {
    /// Permit rejected the pod (a plugin, a timeout, a failed gang, a preemption).
    Rejected(Status, Cause),
    /// The binder failed.
    Error(BindError),
    /// The pod was deleted meanwhile.
    Deleted,
}

/// A binding cycle under way: its pod's assignment claimed ([`begin_binding`]), the decision
/// it acts on, what it found, and — once it binds — the pod's queue record, taken out of the
/// queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pod: Pod,
    node: crate::sync::Arc<str>,
    deleted: bool,
    decision: crate::Decision,
    record: Option<QueuedPodInfo>,
}

impl Binding {
    /// Whether it binds (the pod was allowed and is not deleted): the binder is called.
    pub fn binds(&self) -> bool {
        !self.deleted && self.decision.cause.is_allowed()
    }

    #[cfg(feature = "checking")]
    /// The pod.
    pub fn pod(&self) -> &Pod {
        &self.pod
    }

    #[cfg(feature = "checking")]
    /// The node it binds to.
    pub fn node(&self) -> &str {
        &self.node
    }
}

/// Runs `job`'s binding cycle at `now` (see the module docs): [`begin_binding`], the bind
/// (user code, no lock held) if the pod was allowed, [`end_binding`]. A decision for a pod
/// this driver is not binding is ignored.
pub fn binding_cycle<P: Parts>(p: &mut P, job: Job, now: Time) -> BindingOutcome {
    let Some(binding) = begin_binding(p, job, now) else {
        return BindingOutcome::Ignored;
    };
    let bound = binding.binds().then(|| p.bind(&binding.pod, &binding.node));
    end_binding(p, binding, bound, now)
}

/// A binding cycle begins on the assignment its job's worker claimed when it took the job
/// (`DriverState::next_job`) — so a sibling's whole-gang hand-back (H2) cannot take it while
/// this cycle runs — and notes the Permit wait. A pod that
/// binds (allowed, not deleted) is done with the queue from here: its attempt ends and the
/// events recorded for it go, its record kept in the cycle for a failed bind's hand-back — as
/// kube-scheduler calls `Done` once `WaitOnPermit` has passed, before PreBind and Bind.
/// `None`: no claimed pod in binding has this decision (a job not taken from the driver).
pub fn begin_binding<P: Parts>(p: &mut P, job: Job, now: Time) -> Option<Binding> {
    let id = job.decision.pod.id().clone();
    let (node, deleted, wait) = p.driver(|d| {
        let a = d.claimed(&id)?;
        let (node, deleted, since) = (a.node.clone(), a.deleted, a.since);
        let wait = d.tally_mut().permit_wait(since, now);
        Some((node, deleted, wait))
    })?;
    if let (true, Some(wait)) = (job.waited, wait) {
        telemetry::permit_waited(wait, job.decision.status.code());
    }
    let record = (!deleted && job.decision.cause.is_allowed())
        .then(|| p.queue(|q, _| q.take_done(&id)))
        .flatten();
    Some(Binding {
        pod: job.decision.pod.clone(),
        node,
        deleted,
        decision: job.decision,
        record,
    })
}

/// A binding cycle ends, with `bound` the binder's answer if it was asked: the pod is bound,
/// or released and handed back (see the module docs).
pub fn end_binding<P: Parts>(
    p: &mut P,
    binding: Binding,
    bound: Option<Result<(), BindError>>,
    now: Time,
) -> BindingOutcome {
    let Binding {
        pod,
        node,
        deleted,
        decision,
        record,
    } = binding;
    let id = pod.id().clone();
    let _span = tracing::debug_span!(
        "binding_cycle",
        pod = %id,
        gang = pod.group(),
        node = &*node
    )
    .entered();
    let outcome = match (deleted, bound) {
        (true, _) => Err(Failure::Deleted),
        (false, Some(bound)) => bound.map_err(Failure::Error),
        (false, None) => Err(Failure::Rejected(decision.status, decision.cause)),
    };
    // From the finish to the release the pod has left the driver but not yet the cache and
    // the queue: one step that the scheduler's check never sees half done.
    p.unobserved(|p| finish(p, pod, node, outcome, record, now))
}

/// The end of a binding cycle past the binder (see [`end_binding`]).
fn finish<P: Parts>(
    p: &mut P,
    pod: Pod,
    node: crate::sync::Arc<str>,
    outcome: Result<(), Failure>,
    record: Option<QueuedPodInfo>,
    now: Time,
) -> BindingOutcome {
    let id = pod.id().clone();
    // The assignment this cycle claimed: no other cycle or hand-back takes it meanwhile.
    let Some(assignment) = p.driver(|d| d.finish(&id)) else {
        return BindingOutcome::Ignored;
    };
    match (outcome, assignment.deleted) {
        (Ok(()), false) => {
            // The cache entry can only be missing if the node was removed meanwhile.
            let _ = p.cache(|c| c.finish_binding(&id));
            ops::pod_bound(p.gang(), &pod);
            p.queue(|q, _| q.done(&id));
            count(p, Counted::Bound);
            telemetry::binding_attempt(BindingResult::Bound);
            telemetry::schedule_attempt(ScheduleResult::Scheduled);
            tracing::debug!(pod = %id, node = &*node, "bound");
            BindingOutcome::Bound {
                pod,
                node: node.to_string(),
            }
        }
        (Ok(()), true) => {
            // Bound, but deleted meanwhile: it is gone, its resources are free — announced
            // here unless its delete freed them already (`pod_deleted`).
            let removed = p.cache(|c| c.remove_pod(&id));
            p.queue(|q, _| q.done(&id));
            count(p, Counted::DeletedInFlight);
            telemetry::binding_attempt(BindingResult::Deleted);
            tracing::debug!(pod = %id, node = &*node, "bound, but deleted meanwhile");
            if removed.is_some() {
                announce(p, ClusterEvent::AssignedPodDelete(pod.clone()), None, now);
            }
            BindingOutcome::Deleted { pod }
        }
        (Err(_), true) => failed(p, pod, Failure::Deleted, record, now),
        (Err(failure), false) => failed(p, pod, failure, record, now),
    }
}

fn failed<P: Parts>(
    p: &mut P,
    pod: Pod,
    failure: Failure,
    record: Option<QueuedPodInfo>,
    now: Time,
) -> BindingOutcome {
    let id = pod.id().clone();
    ops::unreserve(p.gang(), &pod);
    let node_too = match failure {
        Failure::Error(_) => !planted!(p, Flaw::BindFailureKeepsNodeReservation),
        Failure::Rejected(..) => !planted!(p, Flaw::ReleaseKeepsNodeReservation),
        Failure::Deleted => true,
    };
    // The planted double releases, read before the release (the seam is `planted.rs`'s).
    #[cfg(feature = "checking")]
    let twice = super::planted::double_release(
        p,
        &id,
        matches!(failure, Failure::Error(_)),
        matches!(failure, Failure::Rejected(_, Cause::TimedOut)),
    );
    let forgotten = node_too && p.cache(|c| c.forget(&id)).is_some();
    #[cfg(feature = "checking")]
    super::planted::release_again(p, twice);
    // Nothing to forget if its delete already freed its room (`pod_deleted`, Upstream): then
    // kube-scheduler's ForgetPod answers nil all the same (a pod no longer in the cache) and
    // handleBindingCycleError announces the move-all a second time. Hardened announces only
    // what this cycle frees.
    let announces = forgotten || (node_too && p.mode() == Mode::Upstream);
    let freed = ClusterEvent::AssignedPodDelete(pod.clone());
    match failure {
        Failure::Deleted => {
            telemetry::binding_attempt(BindingResult::Deleted);
            p.queue(|q, _| q.done(&id));
            count(p, Counted::DeletedInFlight);
            tracing::debug!(pod = %id, "deleted before it bound: released");
            if announces && !planted!(p, Flaw::DeleteAnnouncesNothing) {
                announce(p, freed, None, now);
            }
            BindingOutcome::Deleted { pod }
        }
        Failure::Rejected(status, cause) => {
            telemetry::binding_attempt(BindingResult::Rejected);
            telemetry::schedule_attempt(attempt_result(&status));
            let timed_out = cause == Cause::TimedOut;
            count(p, Counted::PermitRejection { timed_out });
            let plugin = status.plugin().cloned().unwrap_or(GANG_SCHEDULING);
            if p.mode() == Mode::Hardened && pod.group_key().is_some() {
                return hand_back_gang(p, pod, status, cause, plugin, now);
            }
            if planted!(p, Flaw::RejectedNotRequeued) {
                p.queue(|q, _| q.done(&id));
            } else {
                let forgets = planted!(p, Flaw::WaitRejectionForgetsItsPlugin);
                let rejector = (!forgets).then(|| rejector(&status, plugin)).flatten();
                requeue(p, &id, rejector, now);
            }
            if !planted!(p, Flaw::ReleaseAnnouncesNothing) {
                let not_this_pod = |other: &QueuedPodInfo| other.id() != &id;
                announce(p, freed, Some(&not_this_pod), now);
            }
            BindingOutcome::Released {
                pods: vec![pod],
                status,
                cause,
            }
        }
        Failure::Error(error) => {
            telemetry::binding_attempt(BindingResult::Error);
            telemetry::schedule_attempt(ScheduleResult::Error);
            tracing::debug!(pod = %id, error = %error, "bind failed");
            count(p, Counted::BindFailure);
            if let Some(group) = pod.group_key() {
                // The binder's own error is the failed member's outcome; its siblings' says
                // which bind failed.
                let why = format!("the bind of {} failed", pod.full_name());
                let released = admitted::release_if_short(p, group, &why);
                if !released.is_empty() && !planted!(p, Flaw::BindFailureBacksOffAlone) {
                    let fallback = Decision::new(
                        pod.clone(),
                        Status::unschedulable(why).with_plugin(GANG_SCHEDULING),
                        Cause::GangFailed,
                    );
                    return bind_failed_with_siblings(p, pod, error, record, &fallback, now);
                }
            }
            announce(p, freed, None, now);
            match record {
                _ if planted!(p, Flaw::BindFailureLosesPod) => {
                    p.queue(|q, _| q.done(&id));
                }
                // No rejecting plugin: it backs off in the error backoff, with the record its
                // binding cycle took from the queue.
                Some(record) => {
                    let _ = p.queue(|q, plugins| {
                        q.add_unschedulable_if_not_present(record, now, plugins)
                    });
                }
                None => {
                    requeue(p, &id, None, now);
                }
            }
            BindingOutcome::BindFailed {
                pod,
                error,
                released: Vec::new(),
            }
        }
    }
}

/// H2 after a failed bind (Hardened, pod-group cycle): the failed member comes back with the
/// siblings its failure released (`admitted::release_if_short`), in one `hand_back_gang` —
/// one backoff, the error backoff's strategy for all, since the failed member has no
/// rejector. The freed resources are announced once, excluding the gang.
fn bind_failed_with_siblings<P: Parts>(
    p: &mut P,
    pod: Pod,
    error: BindError,
    record: Option<QueuedPodInfo>,
    fallback: &Decision,
    now: Time,
) -> BindingOutcome {
    let released = release_rejected_siblings(p, &pod, fallback, now);
    let mut members: Vec<(PodId, Option<PluginName>)> = released
        .iter()
        .map(|d| (d.pod.id().clone(), sibling_rejector(d)))
        .collect();
    let mut ids: Vec<PodId> = vec![pod.id().clone()];
    ids.extend(members.iter().map(|(id, _)| id.clone()));
    let taken = match record {
        // The failed member lost; its siblings still go back.
        _ if planted!(p, Flaw::BindFailureLosesPod) => {
            p.queue(|q, _| q.done(pod.id()));
            Vec::new()
        }
        Some(record) => vec![record],
        // Its binding cycle found no record in flight to take: it is handed back as a member
        // in flight, with no rejector.
        None => {
            members.insert(0, (pod.id().clone(), None));
            Vec::new()
        }
    };
    // Every sibling is in flight until handed back, and the failed member's record left the
    // queue with its binding cycle: nothing is queued twice.
    let _ = p.queue(|q, plugins| q.hand_back_gang_with(taken, &members, now, plugins));
    let not_the_gang = |other: &QueuedPodInfo| !ids.contains(other.id());
    announce(
        p,
        ClusterEvent::AssignedPodDelete(pod.clone()),
        Some(&not_the_gang),
        now,
    );
    BindingOutcome::BindFailed {
        pod,
        error,
        released,
    }
}

/// H2: the members of `pod`'s gang whose rejection is marked, taken out of the driver with
/// their jobs — so their own binding cycles have nothing left to do — and their reservations
/// released. Each with its rejection; `fallback`'s status and cause for one whose job a worker
/// had already taken.
fn release_rejected_siblings<P: Parts>(
    p: &mut P,
    pod: &Pod,
    fallback: &Decision,
    now: Time,
) -> Vec<Decision> {
    let siblings = p.driver(|d| {
        let siblings = d.take_rejected_siblings(pod);
        siblings
            .into_iter()
            .map(|(a, decision)| {
                let decision = decision.unwrap_or_else(|| {
                    tracing::debug!(pod = %a.pod.id(), "sibling's decision already taken: released with the gang's");
                    Decision::new(a.pod.clone(), fallback.status.clone(), fallback.cause)
                });
                let timed_out = decision.cause == Cause::TimedOut;
                d.tally_mut().count(Counted::PermitRejection { timed_out });
                (decision, d.tally_mut().permit_wait(a.since, now))
            })
            .collect::<Vec<_>>()
    });
    let mut released = Vec::with_capacity(siblings.len());
    for (decision, wait) in siblings {
        // Each sibling waited at Permit, and this is its binding cycle too.
        if let Some(wait) = wait {
            telemetry::permit_waited(wait, decision.status.code());
        }
        telemetry::binding_attempt(BindingResult::Rejected);
        telemetry::schedule_attempt(attempt_result(&decision.status));
        ops::unreserve(p.gang(), &decision.pod);
        if !planted!(p, Flaw::ReleaseKeepsNodeReservation) {
            p.cache(|c| c.forget(decision.pod.id()));
        }
        released.push(decision);
    }
    released
}

/// The plugin a released sibling goes back rejected by.
fn sibling_rejector(decision: &Decision) -> Option<PluginName> {
    let plugin = decision.status.plugin().cloned().unwrap_or(GANG_SCHEDULING);
    rejector(&decision.status, plugin)
}

/// H2: a member of a failed Hardened gang attempt comes back with every sibling whose
/// rejection is already marked, in one `hand_back_gang` (one backoff for the gang); their
/// assignments and jobs go with it, so their own binding cycles have nothing left to do.
/// Their reservations are released here, and the freed resources announced once, excluding
/// the gang.
fn hand_back_gang<P: Parts>(
    p: &mut P,
    pod: Pod,
    status: Status,
    cause: Cause,
    plugin: PluginName,
    now: Time,
) -> BindingOutcome {
    let fallback = Decision::new(pod.clone(), status.clone(), cause);
    let siblings = release_rejected_siblings(p, &pod, &fallback, now);
    let mut members = vec![(pod.id().clone(), rejector(&status, plugin.clone()))];
    let mut pods = vec![pod.clone()];
    for sibling in siblings {
        members.push((sibling.pod.id().clone(), Some(plugin.clone())));
        pods.push(sibling.pod);
    }
    let ids: Vec<PodId> = members.iter().map(|(id, _)| id.clone()).collect();
    if planted!(p, Flaw::RejectedNotRequeued) {
        p.queue(|q, _| {
            for id in &ids {
                q.done(id);
            }
        });
    } else {
        // Not in flight cannot happen: every member is in flight until handed back.
        let _ = p.queue(|q, plugins| q.hand_back_gang(&members, now, plugins));
    }
    if !planted!(p, Flaw::ReleaseAnnouncesNothing) {
        let not_the_gang = |other: &QueuedPodInfo| !ids.contains(other.id());
        let freed = ClusterEvent::AssignedPodDelete(pod);
        announce(p, freed, Some(&not_the_gang), now);
    }
    BindingOutcome::Released {
        pods,
        status,
        cause,
    }
}

/// Who a rejected pod goes back rejected by: the plugin that said no — or, for an `Error`,
/// not a plugin's verdict on the pod (a preemption, upstream's `Preempt`), nobody, so it backs
/// off in the error backoff and is tried again.
pub(super) fn rejector(status: &Status, plugin: PluginName) -> Option<PluginName> {
    (status.code() != Code::Error).then_some(plugin)
}

/// A rejection's result as kube-scheduler counts scheduling attempts: an error is an error,
/// anything else (a plugin's rejection, a timeout) unschedulable.
pub(crate) fn attempt_result(status: &Status) -> ScheduleResult {
    if status.code() == Code::Error {
        ScheduleResult::Error
    } else {
        ScheduleResult::Unschedulable
    }
}

impl BindingOutcome {
    /// The outcomes a binding cycle's result stands for (a Hardened gang's hand-back is one
    /// per member; a decision nobody was binding, none).
    pub fn pod_outcomes(self) -> Vec<PodOutcome> {
        match self {
            BindingOutcome::Ignored => Vec::new(),
            BindingOutcome::Bound { pod, node } => vec![PodOutcome::Bound { pod, node }],
            BindingOutcome::Deleted { pod } => vec![PodOutcome::Dropped { pod }],
            BindingOutcome::Released {
                pods,
                status,
                cause,
            } => pods
                .into_iter()
                .map(|pod| PodOutcome::Rejected {
                    pod,
                    status: status.clone(),
                    cause,
                })
                .collect(),
            BindingOutcome::BindFailed {
                pod,
                error,
                released,
            } => {
                let mut outcomes = vec![PodOutcome::BindFailed { pod, error }];
                outcomes.extend(released.into_iter().map(|d| PodOutcome::Rejected {
                    pod: d.pod,
                    status: d.status,
                    cause: d.cause,
                }));
                outcomes
            }
        }
    }
}
