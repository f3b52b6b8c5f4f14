//! The gang plugin's rules for members that change while their gang waits — bound, deleted,
//! unreserved — and for attempts whose deadline passes, as [`Groups`] methods over an
//! [`AttemptWaiting`]: the plugin runs them under a registry shard's lock, the model checker on
//! its own states. In [`Mode::Upstream`](crate::Mode) only the group's accounting changes;
//! in Hardened mode a member that waited in an open attempt takes the attempt down with it,
//! every waiting member rejected in one step (H1).

use super::decide::{fail_attempt, AttemptWaiting, GangRules};
use super::Groups;
use crate::GroupKey;
use crate::{Cause, Pod, Time};

/// A member taken out of its group by [`Groups::remove_member`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovedMember {
    /// The member's pod as the group knew it.
    pub pod: Pod,
    /// It waited in an open attempt, which failed for this reason (Hardened).
    pub failed: Option<String>,
}

impl Groups {
    /// A member was observed bound (by this scheduler's binding cycle or by another binder);
    /// `false` (no-op) if it is not a member or already assigned. Hardened: if it still waited
    /// in its gang's attempt — bound by somebody else — its waiting entry is rejected so its
    /// binding cycle ends; it counts as assigned towards quorum from now on.
    pub fn observe_bound<W: AttemptWaiting + ?Sized>(
        &mut self,
        waiting: &mut W,
        rules: GangRules,
        pod: &Pod,
    ) -> bool {
        let hardened = rules.hardened();
        let observed = self.change_of(pod, |s| {
            let in_attempt = hardened && s.waits_in_attempt(pod.id());
            (in_attempt, s.bind_observed(pod.id()))
        });
        let Some((in_attempt, true)) = observed else {
            return false;
        };
        if in_attempt {
            let id = [pod.id().clone()];
            waiting.reject_all(&id, "bound by another binder", Cause::Rejected);
        }
        true
    }

    /// A member was deleted: it leaves its group. Hardened: if it waited at Permit, its whole
    /// gang attempt fails — every other waiting member rejected together for
    /// [`Cause::GangFailed`] (H1), then its own entry for [`Cause::Deleted`]. Upstream: only
    /// the group changes; the caller rejects the pod's own waiting entry
    /// ([`WaitingPods::remove`](crate::WaitingPods::remove)), as kube-scheduler does. `None`
    /// (no-op) if it was not a member.
    pub fn remove_member<W: AttemptWaiting + ?Sized>(
        &mut self,
        waiting: &mut W,
        rules: GangRules,
        pod: &Pod,
    ) -> Option<RemovedMember> {
        let in_attempt = self.waits_in_attempt(rules, pod);
        let removed = self.delete_pod(pod)?;
        if !in_attempt {
            return Some(RemovedMember {
                pod: removed,
                failed: None,
            });
        }
        let reason = format!("gang member {} was deleted", pod.full_name());
        fail_attempt(self, waiting, pod, &reason);
        waiting.reject_all(&[pod.id().clone()], &reason, Cause::Deleted);
        Some(RemovedMember {
            pod: removed,
            failed: Some(reason),
        })
    }

    /// Unreserve: the member's reservation is released (assumed → unscheduled). Hardened: if
    /// it was waiting in an open attempt, the attempt fails and every waiting member, itself
    /// included, is rejected together (H1); the reason is returned. Unknown, deleted or
    /// unassumed pods: no-op.
    pub fn unreserve<W: AttemptWaiting + ?Sized>(
        &mut self,
        waiting: &mut W,
        rules: GangRules,
        pod: &Pod,
    ) -> Option<String> {
        let reason = self
            .waits_in_attempt(rules, pod)
            .then(|| format!("gang member {} was unreserved", pod.full_name()));
        if let Some(reason) = &reason {
            fail_attempt(self, waiting, pod, reason);
        }
        self.forget(pod);
        reason
    }

    /// Fails every live attempt whose deadline is at or before `now` — at most `limit` of
    /// them, earliest first — rejecting each one's waiting members together with `reason`
    /// (upstream's timeout message), for [`Cause::TimedOut`] (H1, H3). Returns the groups it
    /// timed out with their deadlines, in that order; fewer than `limit` means none is left
    /// due.
    pub fn expire<W: AttemptWaiting + ?Sized>(
        &mut self,
        waiting: &mut W,
        now: Time,
        reason: &str,
        limit: usize,
    ) -> Vec<(Time, GroupKey)> {
        let mut timed_out = Vec::new();
        while timed_out.len() < limit {
            let Some((deadline, key)) = self.deadlines.first().cloned() else {
                break;
            };
            if deadline > now {
                break;
            }
            let Some(members) = self.change(&key, |state| state.fail_attempt(reason)) else {
                // Cannot happen (the index holds live attempts only); never loop on it.
                self.deadlines.remove(&(deadline, key));
                continue;
            };
            waiting.reject_all(&members, reason, Cause::TimedOut);
            timed_out.push((deadline, key));
        }
        timed_out
    }

    /// Hardened mode, and `pod` waits at Permit in its group's open attempt.
    pub fn waits_in_attempt(&self, rules: GangRules, pod: &Pod) -> bool {
        rules.hardened()
            && self
                .state_of(pod)
                .is_some_and(|s| s.waits_in_attempt(pod.id()))
    }
}
