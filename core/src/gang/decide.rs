//! Permit's decisions as pure functions over [`Groups`] (one registry shard in production), so
//! that the concurrent plugin and the model checker (`gangway check`) run the same code: the
//! plugin under its locks, the model on its own copies of the states. The gang's other
//! decisions — a member bound, deleted or unreserved, an attempt timing out — are [`Groups`]'
//! methods in `member_events.rs`, over the same [`AttemptWaiting`].

use std::time::Duration;

use super::{Activation, GroupState, Groups, GANG_SCHEDULING};
use crate::waiting::AddError;
use crate::{Cause, Code, Mode, PluginName, Pod, PodId, Status, Time};

/// The gang plugin's two settings, which every decision reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GangRules {
    /// Upstream's behaviour or gangway's guarantees.
    pub mode: Mode,
    /// How long a member waits at Permit (per pod upstream, per attempt hardened; capped at 15
    /// minutes like every Permit wait).
    pub timeout: Duration,
}

impl GangRules {
    /// The rules for `mode` with a Permit wait of `timeout`, capped at 15 minutes.
    pub fn new(mode: Mode, timeout: Duration) -> GangRules {
        GangRules {
            mode,
            timeout: timeout.min(crate::waiting::MAX_PERMIT_WAIT),
        }
    }

    /// Hardened mode: gang attempts, one decision each (H1).
    pub fn hardened(self) -> bool {
        self.mode == Mode::Hardened
    }
}

/// What Upstream Permit decided under the group lock; the caller carries it out after
/// releasing it (upstream allows the siblings one by one, outside the lock — the partial-gang
/// race lives in that gap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamVerdict {
    /// At quorum: pass, and allow each of these assumed siblings.
    Allow(Vec<PodId>),
    /// Below quorum: wait (with a timer), and activate the gang's unscheduled siblings.
    Wait(Activation),
    /// Rejected.
    Reject(Status),
}

/// Upstream Permit's decision for `pod` (a member of a group).
pub fn upstream_permit(groups: &Groups, pod: &Pod) -> UpstreamVerdict {
    match quorum(groups.state_of(pod), pod) {
        Err(Unquorate::Reject(status)) => UpstreamVerdict::Reject(status),
        Err(Unquorate::NotAGang) => UpstreamVerdict::Allow(Vec::new()),
        Ok((state, false)) => UpstreamVerdict::Wait(state.activation()),
        Ok((state, true)) => {
            let siblings = state.assumed().iter().filter(|id| *id != pod.id());
            UpstreamVerdict::Allow(siblings.cloned().collect())
        }
    }
}

/// Whether `pod` belongs to a gang (its group has a min count), which the gang plugin's Permit
/// may hold.
pub fn is_gang_member(groups: &Groups, pod: &Pod) -> bool {
    groups
        .state_of(pod)
        .and_then(|state| state.group())
        .is_some_and(|group| group.min_count().is_some())
}

/// Hardened: `pod`, rejected at Permit by another plugin before the gang counted it, stops
/// counting towards its gang's quorum at once, as a pod the gang rejects does (see
/// [`hardened_permit`]): its binding cycle's unreserve may come after a sibling's Permit.
pub fn forget_rejected(groups: &mut Groups, pod: &Pod) {
    groups.change_of(pod, |state| state.forget(pod.id()));
}

/// The waiting map as the gang's critical sections use it, under the group lock: the
/// decisions are applied at once and delivered once the lock is released (H5).
pub trait AttemptWaiting {
    /// What a registration hands back (a [`WaitingPod`](crate::WaitingPod) handle, or `()`).
    type Registration;

    /// Allows every one of `ids` at once, or none, naming one that is not waiting.
    fn allow_all(&mut self, ids: &[PodId]) -> Result<(), PodId>;

    /// Rejects those of `ids` that are waiting, for `reason` and `cause`, telling `rejected`
    /// each pod it decided: those still waiting at the moment of the decision (one that
    /// another plugin's decision reached first is not among them).
    fn reject_waiting(
        &mut self,
        ids: &[PodId],
        reason: &str,
        cause: Cause,
        rejected: &mut dyn FnMut(&PodId),
    );

    /// Rejects those of `ids` that are waiting, for `reason` and `cause`.
    fn reject_all(&mut self, ids: &[PodId], reason: &str, cause: Cause) {
        self.reject_waiting(ids, reason, cause, &mut |_| {});
    }

    /// [`reject_all`](AttemptWaiting::reject_all), naming the pods it rejected
    /// ([`reject_waiting`](AttemptWaiting::reject_waiting)'s).
    fn reject_those_waiting(&mut self, ids: &[PodId], reason: &str, cause: Cause) -> Vec<PodId> {
        let mut named = Vec::new();
        self.reject_waiting(ids, reason, cause, &mut |id| named.push(id.clone()));
        named
    }

    /// Registers `pod` as waiting, with no timer of its own (the attempt has the deadline).
    fn add_untimed(&mut self, pod: &Pod) -> Result<Self::Registration, AddError>;

    /// Registers `pod` as waiting for each plugin in `waits` until `now + wait`, each with its
    /// own timer (upstream's): a member of a group that is no gang, which other plugins hold
    /// at Permit, registered in the same critical section that saw its group was no gang.
    fn add_timed(
        &mut self,
        pod: &Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<Self::Registration, AddError>;
}

/// What Hardened Permit decided (its waiting-map effects already applied), saying what it did
/// to the gang's attempt so that nobody has to compare states to find out.
#[derive(Debug)]
pub enum AttemptVerdict<R> {
    /// The pod passes.
    Allow {
        /// This Permit reached quorum and closed the attempt, allowing this many members
        /// together (itself included); `None` if no attempt was decided (no group, Basic, a
        /// gang of one).
        closed: Option<usize>,
    },
    /// The pod waits in its gang's attempt.
    Wait {
        /// Its registration in the waiting map.
        registration: R,
        /// Unscheduled siblings to activate.
        activate: Activation,
    },
    /// The pod is rejected; it no longer counts as reserved in its group.
    Reject {
        /// Why, as the scheduler reports it.
        status: Status,
        /// [`Cause::GangFailed`] when the attempt failed (here or before); otherwise
        /// [`Cause::Rejected`].
        cause: Cause,
        /// This Permit failed the attempt (a member had stopped waiting before quorum, or the
        /// registration failed): the reason, once.
        failed: Option<String>,
    },
}

/// Hardened Permit for `pod`, the whole critical section under the group lock (H1): a failed
/// attempt rejects it; at quorum every waiting member is allowed in one step, or — if one is
/// no longer waiting — the attempt fails and all are rejected; below quorum the pod joins the
/// attempt (opening it, with the one deadline of H3) and is registered untimed. A pod this
/// rejects stops counting towards quorum at once.
pub fn hardened_permit<W: AttemptWaiting + ?Sized>(
    groups: &mut Groups,
    waiting: &mut W,
    pod: &Pod,
    now: Time,
    timeout: Duration,
) -> AttemptVerdict<W::Registration> {
    // One critical section on the group's state: one lookup, one index update.
    let verdict = groups.change_of(pod, |state| {
        let verdict = decide_hardened(state, waiting, pod, now, timeout);
        if matches!(verdict, AttemptVerdict::Reject { .. }) {
            // A pod rejected at Permit stops counting towards quorum at once, whenever its
            // caller gets round to unreserving it (which is then a no-op for the group).
            state.forget(pod.id());
        }
        verdict
    });
    // No state: nothing to change, and none to count a rejection against.
    verdict.unwrap_or_else(|| match quorum(None, pod) {
        Err(Unquorate::Reject(status)) => rejected(status, Cause::Rejected, None),
        _ => AttemptVerdict::Allow { closed: None },
    })
}

fn decide_hardened<W: AttemptWaiting + ?Sized>(
    state: &mut GroupState,
    waiting: &mut W,
    pod: &Pod,
    now: Time,
    timeout: Duration,
) -> AttemptVerdict<W::Registration> {
    let at_quorum = match quorum(Some(state), pod) {
        Err(Unquorate::Reject(status)) => return rejected(status, Cause::Rejected, None),
        Err(Unquorate::NotAGang) => return AttemptVerdict::Allow { closed: None },
        Ok((state, at_quorum)) => {
            if let Some(reason) = state.attempt().and_then(|a| a.failure()) {
                let status = gang_rejection(reason);
                return rejected(status, Cause::GangFailed, None);
            }
            at_quorum
        }
    };
    if at_quorum {
        let members: Vec<PodId> = state
            .attempt()
            .map_or_else(Vec::new, |a| a.waiting().iter().cloned().collect());
        return match waiting.allow_all(&members) {
            Ok(()) => {
                let closed = state.close_attempt();
                AttemptVerdict::Allow {
                    closed: closed.map(|_| members.len() + 1),
                }
            }
            Err(gone) => {
                let reason = format!("gang member {gone} stopped waiting before quorum");
                fail_in(state, waiting, &reason);
                rejected(gang_rejection(&reason), Cause::GangFailed, Some(reason))
            }
        };
    }
    if state.wait_in_attempt(pod.id(), now, timeout).is_none() {
        let status = error(format!("pod {} is not reserved", pod.id()));
        return rejected(status, Cause::Rejected, None);
    }
    // Registered under the group lock: a rejection of the attempt either comes before (and
    // this permit saw the failure above) or after, and then finds this pod waiting (H1).
    match waiting.add_untimed(pod) {
        Ok(registration) => AttemptVerdict::Wait {
            registration,
            activate: state.activation(),
        },
        Err(e) => {
            let reason = e.to_string();
            fail_in(state, waiting, &reason);
            rejected(error(reason.clone()), Cause::GangFailed, Some(reason))
        }
    }
}

/// Fails `state`'s open attempt for `reason` and rejects its waiting members together.
fn fail_in<W: AttemptWaiting + ?Sized>(state: &mut GroupState, waiting: &mut W, reason: &str) {
    let members = state.fail_attempt(reason);
    waiting.reject_all(&members, reason, Cause::GangFailed);
}

/// Fails the open attempt of `pod`'s group for `reason` and rejects its waiting members
/// together, for [`Cause::GangFailed`] (H1). Returns them (none if no attempt was open).
pub fn fail_attempt<W: AttemptWaiting + ?Sized>(
    groups: &mut Groups,
    waiting: &mut W,
    pod: &Pod,
    reason: &str,
) -> Vec<PodId> {
    let members = groups
        .change_of(pod, |s| s.fail_attempt(reason))
        .unwrap_or_default();
    waiting.reject_all(&members, reason, Cause::GangFailed);
    members
}

fn rejected<R>(status: Status, cause: Cause, failed: Option<String>) -> AttemptVerdict<R> {
    AttemptVerdict::Reject {
        status,
        cause,
        failed,
    }
}

/// Why Permit has no quorum to count.
pub(super) enum Unquorate {
    /// No state or object: an error, as upstream.
    Reject(Status),
    /// A Basic group: allow.
    NotAGang,
}

/// Looks up the pod's group for Permit: the state and whether assumed + assigned has reached
/// `min_count`, or why there is nothing to count.
pub(super) fn quorum<'a>(
    state: Option<&'a GroupState>,
    pod: &Pod,
) -> Result<(&'a GroupState, bool), Unquorate> {
    // kube-scheduler's messages: the plugin's error (a lister's NotFound, the cache's missing
    // state) wrapped by RunPermitPlugins, as the real code returns them.
    let Some(state) = state else {
        let key = pod.group_key().map(ToString::to_string).unwrap_or_default();
        return Err(Unquorate::Reject(permit_error(format!(
            "pod group state not found for pod group {key}"
        ))));
    };
    let Some(group) = state.group() else {
        let key = state.key();
        return Err(Unquorate::Reject(permit_error(format!(
            "failed to get podGroup {key}: podgroup.scheduling.k8s.io {:?} not found",
            key.name()
        ))));
    };
    match group.min_count() {
        None => Err(Unquorate::NotAGang),
        Some(min) => Ok((state, state.scheduled_pods_count() >= min as usize)),
    }
}

/// An `Error` from the gang plugin's Permit, as kube-scheduler's `RunPermitPlugins` wraps it.
fn permit_error(message: String) -> Status {
    error(format!(
        "running Permit plugin {:?}: {message}",
        GANG_SCHEDULING.as_str()
    ))
}

/// An `Error` status from the gang plugin.
pub(super) fn error(message: String) -> Status {
    Status::with_reason(Code::Error, message).with_plugin(GANG_SCHEDULING)
}

/// The status of a member rejected because its attempt failed for `reason`.
pub(super) fn gang_rejection(reason: &str) -> Status {
    Status::unschedulable(format!("gang attempt failed: {reason}")).with_plugin(GANG_SCHEDULING)
}
