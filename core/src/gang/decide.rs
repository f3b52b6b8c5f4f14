//! Permit's decisions as pure functions over [`Groups`], so that the concurrent plugin and the
//! model checker (`gangway check`) run the same code: the plugin under its locks, the model on
//! its own copies of the states.

use std::time::Duration;

use super::{GroupState, Groups, GANG_SCHEDULING};
use crate::{Code, Pod, PodId, Status, Time};

/// What Upstream Permit decided under the group lock; the caller carries it out after
/// releasing it (upstream allows the siblings one by one, outside the lock — the partial-gang
/// race lives in that gap).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamVerdict {
    /// At quorum: pass, and allow each of these assumed siblings.
    Allow(Vec<PodId>),
    /// Below quorum: wait (with a timer), and activate these unscheduled siblings.
    Wait(Vec<Pod>),
    /// Rejected.
    Reject(Status),
}

/// Upstream Permit's decision for `pod` (a member of a group).
pub fn upstream_permit(groups: &Groups, pod: &Pod) -> UpstreamVerdict {
    match quorum(groups.state_of(pod), pod) {
        Err(verdict) => verdict,
        Ok((state, false)) => UpstreamVerdict::Wait(state.unscheduled_pods()),
        Ok((state, true)) => {
            let siblings = state.assumed().iter().filter(|id| *id != pod.id());
            UpstreamVerdict::Allow(siblings.cloned().collect())
        }
    }
}

/// The waiting map as Hardened Permit uses it inside the group's critical section.
pub trait AttemptWaiting {
    /// What a registration hands back.
    type Registration;

    /// Allows every one of `ids` at once, or none, naming one that is not waiting.
    fn allow_all(&mut self, ids: &[PodId]) -> Result<(), PodId>;

    /// Rejects those of `ids` that are waiting, for `reason`.
    fn reject_all(&mut self, ids: &[PodId], reason: &str);

    /// Registers `pod` as waiting, with no timer of its own (the attempt has the deadline).
    fn add_untimed(&mut self, pod: &Pod) -> Result<Self::Registration, String>;
}

/// What Hardened Permit decided (its waiting-map effects already applied).
#[derive(Debug)]
pub enum AttemptVerdict<R> {
    /// The pod passes; at quorum its waiting siblings were allowed with it (listed).
    Allow(Vec<PodId>),
    /// The pod waits in its gang's attempt.
    Wait {
        /// Its registration in the waiting map.
        registration: R,
        /// Unscheduled siblings to activate.
        activate: Vec<Pod>,
        /// The attempt's deadline, if this pod opened the attempt.
        opened: Option<Time>,
    },
    /// The pod is rejected; it no longer counts as reserved in its group.
    Reject(Status),
}

/// Hardened Permit for `pod`, the whole critical section under the group lock (H1): a failed
/// attempt rejects it; at quorum every waiting member is allowed in one step, or — if one is
/// no longer waiting — the attempt fails and all are rejected; below quorum the pod joins the
/// attempt (opening it, with the one deadline of H3) and is registered untimed. A pod this
/// rejects stops counting towards quorum at once.
pub fn hardened_permit<W: AttemptWaiting>(
    groups: &mut Groups,
    waiting: &mut W,
    pod: &Pod,
    now: Time,
    timeout: Duration,
) -> AttemptVerdict<W::Registration> {
    let verdict = 'decide: {
        let at_quorum = match quorum(groups.state_of(pod), pod) {
            Err(UpstreamVerdict::Reject(status)) => break 'decide AttemptVerdict::Reject(status),
            Err(_) => break 'decide AttemptVerdict::Allow(Vec::new()),
            Ok((state, at_quorum)) => {
                if let Some(reason) = state.attempt().and_then(|a| a.failure()) {
                    break 'decide AttemptVerdict::Reject(gang_rejection(reason));
                }
                at_quorum
            }
        };
        let state = groups.state_of_mut(pod).expect("looked up above");
        if at_quorum {
            let members: Vec<PodId> = state
                .attempt()
                .map_or_else(Vec::new, |a| a.waiting().iter().cloned().collect());
            break 'decide match waiting.allow_all(&members) {
                Ok(()) => {
                    state.close_attempt();
                    AttemptVerdict::Allow(members)
                }
                Err(gone) => {
                    let reason = format!("gang member {gone} stopped waiting before quorum");
                    fail_attempt(state, waiting, &reason);
                    AttemptVerdict::Reject(gang_rejection(&reason))
                }
            };
        }
        let opens = state.attempt().is_none();
        let Some(deadline) = state.wait_in_attempt(pod.id(), now, timeout) else {
            break 'decide AttemptVerdict::Reject(error(format!(
                "pod {} is not reserved",
                pod.id()
            )));
        };
        // Registered under the group lock: a rejection of the attempt either comes before (and
        // this permit saw the failure above) or after, and then finds this pod waiting (H1).
        match waiting.add_untimed(pod) {
            Ok(registration) => AttemptVerdict::Wait {
                registration,
                activate: state.unscheduled_pods(),
                opened: opens.then_some(deadline),
            },
            Err(reason) => {
                fail_attempt(state, waiting, &reason);
                AttemptVerdict::Reject(error(reason))
            }
        }
    };
    if matches!(verdict, AttemptVerdict::Reject(_)) {
        // A pod rejected at Permit stops counting towards quorum at once, whenever its
        // caller gets round to unreserving it (which is then a no-op for the group).
        if let Some(state) = groups.state_of_mut(pod) {
            state.forget(pod.id());
        }
    }
    verdict
}

/// Fails `state`'s open attempt for `reason` and rejects its waiting members together (H1).
/// Returns them.
pub fn fail_attempt<W: AttemptWaiting>(
    state: &mut GroupState,
    waiting: &mut W,
    reason: &str,
) -> Vec<PodId> {
    let members = state.fail_attempt(reason);
    waiting.reject_all(&members, reason);
    members
}

/// Looks up the pod's group for Permit: `Err` with the verdict when there is nothing to count
/// (no state or object: an error, as upstream; Basic: allow), else the state and whether
/// assumed + assigned has reached `min_count`.
fn quorum<'a>(
    state: Option<&'a GroupState>,
    pod: &Pod,
) -> Result<(&'a GroupState, bool), UpstreamVerdict> {
    let Some(state) = state else {
        return Err(UpstreamVerdict::Reject(error(format!(
            "pod {} has no pod group state",
            pod.id()
        ))));
    };
    let Some(group) = state.group() else {
        return Err(UpstreamVerdict::Reject(error(format!(
            "pod group {} does not exist",
            state.key()
        ))));
    };
    match group.min_count() {
        None => Err(UpstreamVerdict::Allow(Vec::new())),
        Some(min) => Ok((state, state.scheduled_pods_count() >= min as usize)),
    }
}

pub(super) fn error(message: String) -> Status {
    Status::with_reason(Code::Error, message).with_plugin(GANG_SCHEDULING)
}

fn gang_rejection(reason: &str) -> Status {
    Status::unschedulable(format!("gang attempt failed: {reason}")).with_plugin(GANG_SCHEDULING)
}
