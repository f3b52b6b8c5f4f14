//! The GangScheduling plugin's operations, written once over [`GangParts`]: the plugin
//! ([`GangScheduling`](super::GangScheduling)) runs them on its locked registry and waiting
//! map, the model checker on its pure states. Each takes the critical sections its parts
//! offer, decides with the pure functions of `decide.rs` and `member_events.rs`, and tells
//! telemetry once every lock is released (H5).

use std::time::Duration;

use smallvec::SmallVec;

use super::decide::{
    forget_rejected, hardened_permit, is_gang_member, upstream_permit, AttemptVerdict,
    UpstreamVerdict,
};
#[cfg(feature = "checking")]
use super::flaw::GangFlaw;
use super::parts::GangParts;
use super::permit_plugins::plugin_error;
#[cfg(feature = "checking")]
use super::planted::{looks_then_registers, OneByOne};
use super::{
    decide, gang_pre_enqueue, Activation, Groups, JoinGroupError, Permit, ReserveError,
    GANG_SCHEDULING, PERMIT_WAIT_REASON,
};
use crate::telemetry::{self, GangOutcome};
use crate::waiting::{timeout_message, MAX_PERMIT_WAIT};
use crate::GroupKey;
use crate::{Cause, Code, Mode, PermitPlugins, PermitVerdict, PluginName, Pod, Status, Time};

#[cfg(feature = "checking")]
pub use super::group_object_ops::BECAME_A_GANG;
pub use super::group_object_ops::{group_added, group_deleted, group_updated};

/// How many due attempts one critical section of [`expire`] fails at most: a late timer
/// catching up on 100,000 deadlines holds a shard for a few dozen at a time.
pub const EXPIRE_BATCH: usize = 64;

/// Permit (see [`GangScheduling::permit`](super::GangScheduling::permit)).
pub fn permit<G: GangParts>(g: &mut G, pod: &Pod, now: Time) -> Permit<G::Registration> {
    let node = pod.node().unwrap_or_default();
    permit_with(g, pod, node, &PermitPlugins::none(), now)
}

/// The Permit step with `others` beside the gang plugin (see
/// [`GangScheduling::permit_with`](super::GangScheduling::permit_with)). With no others it is
/// the gang plugin's Permit alone.
pub fn permit_with<G: GangParts>(
    g: &mut G,
    pod: &Pod,
    node: &str,
    others: &PermitPlugins,
    now: Time,
) -> Permit<G::Registration> {
    let permit = match g.rules().mode {
        Mode::Upstream => permit_upstream(g, pod, node, others, now),
        Mode::Hardened => permit_hardened(g, pod, node, others, now),
    };
    permit_event(pod, &permit);
    permit
}

/// The plugins a pod waits for, with their waits: inline for the gang and one more, so the
/// gang's Permit alone allocates no list.
type Waits = SmallVec<[(PluginName, Duration); 2]>;

/// What the other plugins said, folded as `RunPermitPlugins` folds them: the first rejection
/// ends the fold; each wait adds its plugin (capped at 15 minutes) and becomes the step's wait
/// status.
#[derive(Default)]
pub(super) struct Others {
    pub(super) waits: Waits,
    wait_status: Option<Status>,
    rejected: Option<Status>,
}

impl Others {
    fn run(others: &PermitPlugins, pod: &Pod, node: &str) -> Others {
        let mut folded = Others::default();
        others.run(pod, node, |name, verdict| folded.add(name, verdict));
        folded
    }

    /// Hardened: the error of gang member `pod` that a plugin asked to wait (the last that
    /// did): only its gang may hold a member at Permit.
    fn wait_refused(&self, pod: &Pod) -> Status {
        let (plugin, _) = self.waits.last().expect("a plugin asked to wait");
        Status::with_reason(
            Code::Error,
            format!(
                "permit plugin {plugin} asked gang member {} to wait: \
                 in hardened mode only its gang holds a member at permit",
                pod.id()
            ),
        )
        .with_plugin(plugin.clone())
    }

    /// Takes one plugin's verdict; `false` once the pod is rejected.
    fn add(&mut self, name: &PluginName, verdict: PermitVerdict) -> bool {
        match verdict {
            PermitVerdict::Allow => true,
            PermitVerdict::Wait { timeout, reason } => {
                self.waits
                    .push((name.clone(), timeout.min(MAX_PERMIT_WAIT)));
                self.wait_status = Some(if reason.is_empty() {
                    Status::new(Code::Wait)
                } else {
                    Status::with_reason(Code::Wait, reason)
                });
                true
            }
            PermitVerdict::Reject(status) => {
                self.rejected = Some(if status.is_rejected() {
                    status.with_plugin(name.clone())
                } else if status.is_success() || status.is_wait() {
                    let code = status.code();
                    plugin_error(
                        name,
                        &format!("rejected with {code}, which is not a rejection"),
                    )
                } else {
                    plugin_error(name, &status.message())
                });
                false
            }
        }
    }
}

/// Upstream's `RunPermitPlugins` with the gang plugin first (as the default profile orders
/// it) and `others` after it, then `AddWaitingPod`: the gang's verdict takes effect at once
/// — its waiting siblings allowed, its unscheduled ones to be activated — whatever a later
/// plugin says, and the pod is registered for every plugin that asked it to wait only once
/// all have answered.
fn permit_upstream<G: GangParts>(
    g: &mut G,
    pod: &Pod,
    node: &str,
    others: &PermitPlugins,
    now: Time,
) -> Permit<G::Registration> {
    let verdict = match pod.group_key() {
        None => UpstreamVerdict::Allow(Vec::new()),
        Some(key) => g.read_group(key, |groups| upstream_permit(groups, pod)),
    };
    let mut waits = Waits::new();
    // Whether a plugin asked the pod to wait; `Some(None)`: the gang, whose status
    // `Permit::status` makes only when asked.
    let mut wait_status: Option<Option<Status>> = None;
    let activate = match verdict {
        UpstreamVerdict::Reject(status) => return Permit::reject(status, Cause::Rejected),
        UpstreamVerdict::Allow(siblings) => {
            // One at a time, after the group lock: upstream's partial-gang race is here — a
            // sibling counted as assumed may wait no more (its timeout rejected it, its
            // release still to come), and this pod passes without it. The event tells the
            // members this Permit actually let through.
            let allowed = siblings
                .iter()
                .filter(|id| g.allow_waiting(id, GANG_SCHEDULING.as_str()))
                .count();
            if !siblings.is_empty() {
                gang_admitted(pod, allowed + 1);
            }
            Activation::NONE
        }
        UpstreamVerdict::Wait(activate) => {
            waits.push((GANG_SCHEDULING, g.rules().timeout));
            wait_status = Some(None);
            activate
        }
    };
    let folded = Others::run(others, pod, node);
    if let Some(status) = folded.rejected {
        return Permit::Reject {
            status,
            cause: Cause::Rejected,
            activate,
        };
    }
    waits.extend(folded.waits);
    let Some(status) = folded.wait_status.map(Some).or(wait_status) else {
        return Permit::Allow;
    };
    match g.add_waiting(pod.clone(), &waits, now) {
        Ok(waiting) => Permit::Wait {
            waiting,
            activate,
            status: status.map(|s| s.with_appended_reason(PERMIT_WAIT_REASON)),
        },
        Err(e) => Permit::Reject {
            status: decide::error(e.to_string()),
            cause: Cause::Rejected,
            activate,
        },
    }
}

/// What the embedder's Permit plugins say of a gang member placed in a pod-group cycle's
/// simulation ([`others_on_snapshot`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OthersOnSnapshot {
    /// They allow it.
    Allow,
    /// One asks it to wait (Upstream: it stays placed and counts towards quorum, but its own
    /// Permit cannot be the success that makes the group feasible); the status says why.
    Wait(Status),
    /// It cannot be placed there: a rejection, or (Hardened) a request to wait, which only its
    /// gang may make of a member.
    Refuse(Status),
}

/// The embedder's Permit plugins on a member placed in a pod-group simulation. 1.36's
/// `podGroupPodSchedulingAlgorithm` runs every Permit plugin on each assumed member there: a
/// rejection reverts the member, a wait keeps it assumed with a waiting Permit status. Hardened
/// refuses a wait as its Permit does (H1).
pub fn others_on_snapshot(
    others: &PermitPlugins,
    pod: &Pod,
    node: &str,
    hardened: bool,
) -> OthersOnSnapshot {
    let folded = Others::run(others, pod, node);
    if let Some(rejected) = folded.rejected {
        return OthersOnSnapshot::Refuse(rejected);
    }
    match folded.wait_status.clone() {
        None => OthersOnSnapshot::Allow,
        Some(_) if hardened => OthersOnSnapshot::Refuse(folded.wait_refused(pod)),
        // As `RunPermitPlugins` returns the last wait, with its reason appended.
        Some(wait) => OthersOnSnapshot::Wait(wait.with_appended_reason(PERMIT_WAIT_REASON)),
    }
}

/// Hardened: the other plugins first, the gang's decision last, so that the gang's quorum —
/// one linearization point (H1) — is never followed by another plugin turning a member away.
/// A gang member that another plugin asks to wait is refused: only its gang may hold it at
/// Permit. A pod outside a gang waits for the others as upstream's does.
fn permit_hardened<G: GangParts>(
    g: &mut G,
    pod: &Pod,
    node: &str,
    others: &PermitPlugins,
    now: Time,
) -> Permit<G::Registration> {
    let folded = Others::run(others, pod, node);
    if let Some(status) = folded.rejected {
        return reject_before_gang(g, pod, status);
    }
    let Some(wait_status) = folded.wait_status.clone() else {
        return match pod.group_key() {
            None => Permit::Allow,
            Some(key) => permit_gang_hardened(g, key, pod, now),
        };
    };
    let registered = match pod.group_key() {
        None => g
            .add_waiting(pod.clone(), &folded.waits, now)
            .map_err(|e| registration_error(&folded, &e)),
        Some(key) => wait_outside_gang(g, key, pod, &folded, now),
    };
    match registered {
        Ok(waiting) => Permit::Wait {
            waiting,
            activate: Activation::NONE,
            status: Some(wait_status.with_appended_reason(PERMIT_WAIT_REASON)),
        },
        Err(status) => Permit::reject(status, Cause::Rejected),
    }
}

/// Hardened: member `pod` of group `key`, which other plugins ask to wait. One critical
/// section looks at the group and registers the pod: a gang member may not wait on another
/// plugin; outside a gang the gang plugin allows, or rejects a pod whose group is missing.
/// Registered and marked ([`GroupState::wait_for_others`](super::GroupState::wait_for_others))
/// under the lock that saw its group was no gang, so that a change making it one finds it
/// (I3). (Not the gang's own Permit: if the group became a gang since, that would register
/// the pod in its attempt as well.) A pod refused here stops counting at once, as any member
/// rejected at Permit does.
fn wait_outside_gang<G: GangParts>(
    g: &mut G,
    key: &GroupKey,
    pod: &Pod,
    folded: &Others,
    now: Time,
) -> Result<G::Registration, Status> {
    #[cfg(feature = "checking")]
    if g.planted(GangFlaw::LooksThenRegisters) {
        return looks_then_registers(g, key, pod, folded, now);
    }
    g.write_group(key, |groups, waiting| {
        let registered = match refusal(groups, pod, folded) {
            Some(status) => Err(status),
            None => waiting
                .add_timed(pod, &folded.waits, now)
                .map_err(|e| registration_error(folded, &e)),
        };
        match &registered {
            Ok(_) => {
                groups.change_of(pod, |state| state.wait_for_others(pod.id()));
            }
            Err(_) => forget_rejected(groups, pod),
        }
        registered
    })
}

/// Why member `pod`, which other plugins ask to wait, may not: it is a gang member (only its
/// gang holds it at Permit), or the gang plugin rejects it (its group is missing).
pub(super) fn refusal(groups: &Groups, pod: &Pod, folded: &Others) -> Option<Status> {
    if is_gang_member(groups, pod) {
        return Some(folded.wait_refused(pod));
    }
    match upstream_permit(groups, pod) {
        UpstreamVerdict::Reject(status) => Some(status),
        _ => None,
    }
}

/// A registration the waiting map refused, as the error of the first plugin that asked the
/// pod to wait.
pub(super) fn registration_error(folded: &Others, e: &crate::waiting::AddError) -> Status {
    plugin_error(&folded.waits[0].0, &e.to_string())
}

/// Hardened: another plugin rejected `pod` before the gang plugin ran. A gang member stops
/// counting towards quorum at once (under its group's lock), whenever its binding cycle gets
/// round to unreserving it — or a sibling's Permit could count it and pass alone (I3; the
/// model checker's `--permit-rejections` found it).
fn reject_before_gang<G: GangParts>(
    g: &mut G,
    pod: &Pod,
    status: Status,
) -> Permit<G::Registration> {
    if let Some(key) = pod.group_key() {
        g.write_group(key, |groups, _| forget_rejected(groups, pod));
    }
    Permit::reject(status, Cause::Rejected)
}

/// The hardened gang plugin's Permit for a member of group `key`.
fn permit_gang_hardened<G: GangParts>(
    g: &mut G,
    key: &GroupKey,
    pod: &Pod,
    now: Time,
) -> Permit<G::Registration> {
    let timeout = g.rules().timeout;
    #[cfg(feature = "checking")]
    let one_by_one = g.planted(GangFlaw::QuorumAllowsOneByOne);
    let verdict = g.write_group(key, |groups, waiting| {
        #[cfg(feature = "checking")]
        if one_by_one {
            return hardened_permit(groups, &mut OneByOne(waiting), pod, now, timeout);
        }
        hardened_permit(groups, waiting, pod, now, timeout)
    });
    match verdict {
        AttemptVerdict::Allow { closed } => {
            if let Some(members) = closed {
                gang_admitted(pod, members);
            }
            Permit::Allow
        }
        AttemptVerdict::Wait {
            registration,
            activate,
        } => Permit::Wait {
            waiting: registration,
            activate,
            status: None,
        },
        AttemptVerdict::Reject {
            status,
            cause,
            failed,
        } => {
            if let Some(reason) = failed {
                gang_failed(Some(key), &reason);
            }
            Permit::reject(status, cause)
        }
    }
}

/// PreEnqueue (see [`GangScheduling::pre_enqueue`](super::GangScheduling::pre_enqueue)).
pub fn pre_enqueue<G: GangParts>(g: &G, pod: &Pod) -> Status {
    match pod.group_key() {
        None => Status::success(),
        Some(key) => g.read_group(key, |groups| gang_pre_enqueue(groups, pod)),
    }
}

/// Reserve (see [`GangScheduling::reserve`](super::GangScheduling::reserve)).
pub fn reserve<G: GangParts>(g: &mut G, pod: &Pod) -> Result<(), ReserveError> {
    match pod.group_key() {
        None => Ok(()),
        Some(key) => g.write_group(key, |groups, _| groups.assume(pod)),
    }
}

/// Unreserve (see [`GangScheduling::unreserve`](super::GangScheduling::unreserve)).
pub fn unreserve<G: GangParts>(g: &mut G, pod: &Pod) {
    let Some(key) = pod.group_key() else {
        return;
    };
    let rules = g.rules();
    #[cfg(feature = "checking")]
    let restores = g.planted(GangFlaw::ForgetRestoresDeletedMember)
        && g.read_group(key, |groups| !groups.is_member(pod.id()));
    let failed = g.write_group(key, |groups, waiting| groups.unreserve(waiting, rules, pod));
    #[cfg(feature = "checking")]
    if restores {
        let _ = g.write_group(key, |groups, _| groups.add_pod(pod.clone(), false));
    }
    if let Some(reason) = failed {
        gang_failed(Some(key), &reason);
    }
}

/// A pod was added (see [`GangScheduling::on_pod_added`](super::GangScheduling::on_pod_added)).
pub fn pod_added<G: GangParts>(g: &mut G, pod: Pod, bound: bool) -> Result<(), JoinGroupError> {
    let Some(key) = pod.group_key().cloned() else {
        return Ok(());
    };
    g.write_group(&key, |groups, _| groups.add_pod(pod, bound))
}

/// A pod's object changed (see
/// [`GangScheduling::on_pod_updated`](super::GangScheduling::on_pod_updated)).
pub fn pod_updated<G: GangParts>(g: &mut G, pod: Pod) -> bool {
    let Some(key) = pod.group_key().cloned() else {
        return false;
    };
    g.write_group(&key, |groups, _| groups.update_pod(pod))
}

/// A pod was observed bound (see
/// [`GangScheduling::on_pod_bound`](super::GangScheduling::on_pod_bound)).
pub fn pod_bound<G: GangParts>(g: &mut G, pod: &Pod) -> bool {
    let Some(key) = pod.group_key() else {
        return false;
    };
    let rules = g.rules();
    g.write_group(key, |groups, waiting| {
        groups.observe_bound(waiting, rules, pod)
    })
}

/// A pod was deleted (see
/// [`GangScheduling::on_pod_deleted`](super::GangScheduling::on_pod_deleted)).
pub fn pod_deleted<G: GangParts>(g: &mut G, pod: &Pod) -> Option<Pod> {
    let key = pod.group_key()?;
    let rules = g.rules();
    let removed = g.write_group(key, |groups, waiting| {
        groups.remove_member(waiting, rules, pod)
    })?;
    if let Some(reason) = &removed.failed {
        gang_failed(Some(key), reason);
    }
    Some(removed.pod)
}

/// Fails every gang attempt whose deadline is at or before `now` (see
/// [`GangScheduling::expire`](super::GangScheduling::expire)).
pub fn expire<G: GangParts>(g: &mut G, now: Time) -> Vec<GroupKey> {
    let timeout = g.rules().timeout;
    let mut reason: Option<String> = None;
    let mut timed_out = Vec::new();
    for part in 0..g.group_parts() {
        // Each part on its own, a batch at a time for as long as it has a due attempt: a batch
        // holds one shard, never several, so binding workers on other gangs do not wait for it.
        while g.part_deadline(part).is_some_and(|d| d <= now) {
            let done = g.expire_part(part, &mut |groups, waiting| {
                let reason =
                    reason.get_or_insert_with(|| timeout_message(timeout, &GANG_SCHEDULING));
                groups.expire(waiting, now, reason, EXPIRE_BATCH)
            });
            if done.is_empty() {
                break;
            }
            timed_out.extend(done);
        }
    }
    // Part by part, each in deadline order: told in (deadline, group) order across parts.
    timed_out.sort_unstable();
    let timed_out: Vec<GroupKey> = timed_out.into_iter().map(|(_, key)| key).collect();
    if let Some(reason) = &reason {
        for key in &timed_out {
            telemetry::gang_attempt(GangOutcome::TimedOut);
            tracing::info!(gang = %key, reason = reason.as_str(), "gang: attempt timed out");
        }
    }
    timed_out
}

/// The event for a Permit decision, told once every lock is released (H5).
fn permit_event<R>(pod: &Pod, permit: &Permit<R>) {
    let (id, gang) = (pod.id(), pod.group());
    match permit {
        Permit::Allow => {
            tracing::debug!(pod = %id, gang, plugin = GANG_SCHEDULING.as_str(), "permit: allowed");
        }
        Permit::Wait { .. } => {
            tracing::debug!(pod = %id, gang, plugin = GANG_SCHEDULING.as_str(), "permit: waiting");
        }
        Permit::Reject { status, cause, .. } => tracing::debug!(
            pod = %id,
            gang,
            plugin = GANG_SCHEDULING.as_str(),
            cause = %cause,
            reason = status.message(),
            "permit: rejected"
        ),
    }
}

/// Quorum released `members` members of `pod`'s gang together. Call it with no lock held.
fn gang_admitted(pod: &Pod, members: usize) {
    telemetry::gang_attempt(GangOutcome::Admitted);
    tracing::info!(
        gang = pod.group(),
        members,
        "gang: quorum, members allowed together"
    );
}

/// A gang attempt failed as a whole for `reason` (a member lost). Call it with no lock held.
fn gang_failed(key: Option<&GroupKey>, reason: &str) {
    telemetry::gang_attempt(GangOutcome::Failed);
    tracing::info!(
        gang = key.map(tracing::field::display),
        reason,
        "gang: attempt failed"
    );
}
