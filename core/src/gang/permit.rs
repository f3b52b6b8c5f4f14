use std::fmt;

use super::decide::UpstreamVerdict;
use super::decide::{error, hardened_permit, upstream_permit, AttemptVerdict, AttemptWaiting};
use super::{GangScheduling, GroupKey, GroupState, Groups, GANG_SCHEDULING};
use crate::telemetry::{self, GangOutcome};
use crate::time::{Alarm, Deadlines};
use crate::waiting::{timeout_message, Deliveries};
use crate::{Mode, Pod, PodId, Status, Time, WaitingPod};

/// How many due attempts [`GangScheduling::expire`] takes from the index, and delivers, at once.
const EXPIRE_BATCH: usize = 64;

/// The outcome of [`GangScheduling::permit`].
pub enum Permit {
    /// The pod may go on to binding now.
    Allow,
    /// The pod waits at Permit. It is already registered in the waiting map (so no sibling's
    /// decision can miss it); `activate` lists the unscheduled siblings to move to the active
    /// queue so they are tried soon.
    Wait {
        /// The pod's registration in the waiting map.
        waiting: WaitingPod,
        /// Unscheduled siblings to activate.
        activate: Vec<Pod>,
    },
    /// The pod is rejected: unreserve it and hand it back to the queue.
    Reject(Status),
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Permit::Allow => f.write_str("Allow"),
            Permit::Wait { waiting, activate } => f
                .debug_struct("Wait")
                .field("pod", waiting.id())
                .field(
                    "activate",
                    &activate.iter().map(Pod::id).collect::<Vec<_>>(),
                )
                .finish(),
            Permit::Reject(status) => f.debug_tuple("Reject").field(status).finish(),
        }
    }
}

impl GangScheduling {
    /// Permit, at the end of the pod's scheduling cycle, after [`reserve`](Self::reserve).
    ///
    /// Below quorum (assumed + assigned < `min_count`) the pod waits: it is registered in the
    /// waiting map before this returns. At quorum it passes and its waiting siblings are
    /// allowed — upstream: one `allow` each, after the group lock is released; hardened: all
    /// in one critical section of the waiting map, or, if one of them is no longer waiting, the
    /// whole attempt is rejected, this pod included (H1). Hardened members wait without a
    /// timer of their own; the attempt's deadline (H3) is applied by
    /// [`expire`](Self::expire). A pod that Hardened Permit rejects no longer counts as
    /// reserved in its group from that moment (its caller's unreserve is then a no-op there),
    /// so a late unreserve cannot lend it to the next member's quorum.
    pub fn permit(&self, pod: &Pod, now: Time) -> Permit {
        let permit = match (GroupKey::of(pod), self.inner.mode) {
            (None, _) => Permit::Allow,
            (Some(_), Mode::Upstream) => self.permit_upstream(pod, now),
            (Some(_), Mode::Hardened) => self.permit_hardened(pod, now),
        };
        permit_event(pod, &permit);
        permit
    }

    fn permit_upstream(&self, pod: &Pod, now: Time) -> Permit {
        let verdict = upstream_permit(&self.inner.registry.lock_for(pod), pod);
        match verdict {
            UpstreamVerdict::Reject(status) => Permit::Reject(status),
            UpstreamVerdict::Allow(siblings) => {
                if !siblings.is_empty() {
                    gang_admitted(pod, siblings.len() + 1);
                }
                for id in &siblings {
                    self.inner.waiting.allow(id, GANG_SCHEDULING.as_str());
                }
                Permit::Allow
            }
            UpstreamVerdict::Wait(activate) => {
                let waits = [(GANG_SCHEDULING, self.inner.timeout)];
                match self.inner.waiting.add(pod.clone(), waits, now) {
                    Ok(waiting) => Permit::Wait { waiting, activate },
                    Err(e) => Permit::Reject(error(e.to_string())),
                }
            }
        }
    }

    fn permit_hardened(&self, pod: &Pod, now: Time) -> Permit {
        let mut groups = self.inner.registry.lock_for(pod);
        let mut waiting = Deferred {
            map: &self.inner.waiting,
            deliveries: Vec::new(),
        };
        let attempt = groups.state_of(pod).and_then(|s| s.attempt());
        let open = attempt.map(|a| a.deadline());
        let open_and_live = attempt.is_some_and(|a| a.failure().is_none());
        // Told once every lock is released: a subscriber or recorder is the embedder's code.
        let mut decided_as_a_whole: Option<Result<usize, String>> = None;
        let verdict = hardened_permit(&mut groups, &mut waiting, pod, now, self.inner.timeout);
        let permit = match verdict {
            AttemptVerdict::Allow(allowed) => {
                let now_open = groups
                    .state_of(pod)
                    .and_then(|s| s.attempt())
                    .map(|a| a.deadline());
                if let (Some(deadline), Some(key), None) = (open, pod.group_key(), now_open) {
                    // The attempt closed at quorum: its deadline no longer matters, so the index
                    // holds open attempts only (and stays small however many gangs pass). A
                    // pod allowed without closing it (its group turned Basic) leaves it indexed.
                    self.inner.attempts.lock().remove(&(deadline, key.clone()));
                    decided_as_a_whole = Some(Ok(allowed.len() + 1));
                }
                Permit::Allow
            }
            AttemptVerdict::Reject(status) => {
                if open_and_live && !live_attempt(&groups, pod) {
                    // A member was no longer waiting at quorum: the attempt failed here.
                    decided_as_a_whole = Some(Err(status.message()));
                }
                Permit::Reject(status)
            }
            AttemptVerdict::Wait {
                registration,
                activate,
                opened,
            } => {
                if let (Some(deadline), Some(key)) = (opened, GroupKey::of(pod)) {
                    self.index_attempt(deadline, key);
                }
                Permit::Wait {
                    waiting: registration,
                    activate,
                }
            }
        };
        drop(groups);
        drop(waiting); // delivers, now that the group lock is released (H5)
        match decided_as_a_whole {
            Some(Ok(members)) => gang_admitted(pod, members),
            Some(Err(reason)) => gang_failed(pod.group_key(), &reason),
            None => {}
        }
        permit
    }

    /// Hardened: rejects every gang attempt whose deadline is at or before `now`, each as a
    /// whole (H1, H3), with upstream's timeout message. Returns the groups it timed out.
    /// Upstream mode keeps no attempts; its members time out in the waiting map.
    pub fn expire(&self, now: Time) -> Vec<GroupKey> {
        let mut timed_out = Vec::new();
        let mut reason: Option<String> = None;
        loop {
            // A batch of due attempts per take of the attempt index, and one sink call per
            // batch: a late timer catching up on 100,000 deadlines takes that lock and wakes
            // the binding side a few thousand times, not 100,000.
            let due: Vec<(Time, GroupKey)> = {
                let mut attempts = self.inner.attempts.lock();
                let mut due = Vec::new();
                while due.len() < EXPIRE_BATCH
                    && attempts
                        .first()
                        .is_some_and(|(deadline, _)| *deadline <= now)
                {
                    due.extend(attempts.pop_first());
                }
                due
            };
            if due.is_empty() {
                return timed_out;
            }
            let reason =
                reason.get_or_insert_with(|| timeout_message(self.inner.timeout, &GANG_SCHEDULING));
            let mut deliveries = Deliveries::none(&self.inner.waiting);
            let batch = timed_out.len();
            for (deadline, key) in due {
                // Each attempt fails on its own, under its own group's shard only.
                let mut groups = self.inner.registry.lock_key(&key);
                let Some(state) = groups.get_mut(&key) else {
                    continue;
                };
                let current = state
                    .attempt()
                    .is_some_and(|a| a.deadline() == deadline && a.failure().is_none());
                if !current {
                    continue; // closed, failed or replaced since it was indexed
                }
                deliveries.append(self.fail_and_reject(state, reason));
                timed_out.push(key);
            }
            drop(deliveries); // delivers the batch, with no group lock held (H5)
            for key in &timed_out[batch..] {
                telemetry::gang_attempt(GangOutcome::TimedOut);
                tracing::info!(gang = %key, reason = reason.as_str(), "gang: attempt timed out");
            }
        }
    }

    /// The earliest deadline of any open attempt (possibly of one already closed; expiring it
    /// then does nothing).
    pub fn next_deadline(&self) -> Option<Time> {
        self.inner
            .attempts
            .lock()
            .first()
            .map(|(deadline, _)| *deadline)
    }

    /// Fails `state`'s open attempt for `reason` and rejects its waiting members together (H1);
    /// the decisions are delivered by the caller once it has released the group lock (H5).
    pub(super) fn fail_and_reject(&self, state: &mut GroupState, reason: &str) -> Deliveries {
        let members = state.fail_attempt(reason);
        self.inner
            .waiting
            .reject_all_deferred(&members, GANG_SCHEDULING, reason)
    }

    fn index_attempt(&self, deadline: Time, key: GroupKey) {
        let earliest = {
            let mut attempts = self.inner.attempts.lock();
            attempts.insert((deadline, key));
            attempts
                .first()
                .is_some_and(|(first, _)| *first == deadline)
        };
        if earliest {
            if let Some(alarm) = &*self.inner.alarm.lock() {
                alarm.ring();
            }
        }
    }
}

/// The event for a Permit decision, told once every lock is released (H5).
fn permit_event(pod: &Pod, permit: &Permit) {
    let (id, gang) = (pod.id(), pod.group());
    match permit {
        Permit::Allow => {
            tracing::debug!(pod = %id, gang, plugin = GANG_SCHEDULING.as_str(), "permit: allowed");
        }
        Permit::Wait { .. } => {
            tracing::debug!(pod = %id, gang, plugin = GANG_SCHEDULING.as_str(), "permit: waiting");
        }
        Permit::Reject(status) => tracing::debug!(
            pod = %id,
            gang,
            plugin = GANG_SCHEDULING.as_str(),
            reason = status.message(),
            "permit: rejected"
        ),
    }
}

/// Whether `pod`'s group has an open attempt that has not failed.
fn live_attempt(groups: &Groups, pod: &Pod) -> bool {
    groups
        .state_of(pod)
        .and_then(|s| s.attempt())
        .is_some_and(|a| a.failure().is_none())
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
pub(super) fn gang_failed(key: Option<&GroupKey>, reason: &str) {
    telemetry::gang_attempt(GangOutcome::Failed);
    tracing::info!(
        gang = key.map(tracing::field::display),
        reason,
        "gang: attempt failed"
    );
}

impl Deadlines for GangScheduling {
    fn expire(&self, now: Time) {
        GangScheduling::expire(self, now);
    }

    fn next_deadline(&self) -> Option<Time> {
        GangScheduling::next_deadline(self)
    }

    fn ring_on_earlier_deadline(&self, alarm: Alarm) {
        *self.inner.alarm.lock() = Some(alarm);
    }
}

/// The waiting map for Hardened Permit under the group lock: decisions are collected and
/// delivered when this is dropped, after the lock (H5).
struct Deferred<'a> {
    map: &'a crate::WaitingPods,
    deliveries: Vec<Deliveries>,
}

impl AttemptWaiting for Deferred<'_> {
    type Registration = WaitingPod;

    fn allow_all(&mut self, ids: &[PodId]) -> Result<(), PodId> {
        let deliveries = self.map.allow_all_deferred(ids, GANG_SCHEDULING.as_str())?;
        self.deliveries.push(deliveries);
        Ok(())
    }

    fn reject_all(&mut self, ids: &[PodId], reason: &str) {
        let deliveries = self.map.reject_all_deferred(ids, GANG_SCHEDULING, reason);
        self.deliveries.push(deliveries);
    }

    fn add_untimed(&mut self, pod: &Pod) -> Result<WaitingPod, String> {
        self.map
            .add_untimed(pod.clone(), GANG_SCHEDULING)
            .map_err(|e| e.to_string())
    }
}
