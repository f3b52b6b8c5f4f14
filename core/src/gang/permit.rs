use std::fmt;

use super::{GangScheduling, GroupKey, GroupState, Groups, GANG_SCHEDULING};
use crate::time::{Alarm, Deadlines};
use crate::waiting::{timeout_message, Deliveries};
use crate::{Code, Mode, Pod, PodId, Status, Time, WaitingPod};

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

/// What Permit decided under the group lock, to be carried out after it is released.
enum Verdict {
    Allow(Vec<PodId>),
    Wait(Vec<Pod>),
    Reject(Status),
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
        if GroupKey::of(pod).is_none() {
            return Permit::Allow;
        }
        match self.inner.mode {
            Mode::Upstream => self.permit_upstream(pod, now),
            Mode::Hardened => self.permit_hardened(pod, now),
        }
    }

    fn permit_upstream(&self, pod: &Pod, now: Time) -> Permit {
        let verdict = {
            let groups = self.inner.registry.lock();
            match quorum(groups.state_of(pod), pod) {
                Err(verdict) => verdict,
                Ok((state, false)) => Verdict::Wait(state.unscheduled_pods()),
                Ok((state, true)) => {
                    let siblings = state.assumed().iter().filter(|id| *id != pod.id());
                    Verdict::Allow(siblings.cloned().collect())
                }
            }
        };
        match verdict {
            Verdict::Reject(status) => Permit::Reject(status),
            Verdict::Allow(siblings) => {
                for id in &siblings {
                    self.inner.waiting.allow(id, GANG_SCHEDULING.as_str());
                }
                Permit::Allow
            }
            Verdict::Wait(activate) => {
                let waits = [(GANG_SCHEDULING, self.inner.timeout)];
                match self.inner.waiting.add(pod.clone(), waits, now) {
                    Ok(waiting) => Permit::Wait { waiting, activate },
                    Err(e) => Permit::Reject(error(e.to_string())),
                }
            }
        }
    }

    fn permit_hardened(&self, pod: &Pod, now: Time) -> Permit {
        let mut groups = self.inner.registry.lock();
        let (permit, deliveries) = self.permit_hardened_locked(&mut groups, pod, now);
        if matches!(permit, Permit::Reject(_)) {
            // A pod rejected at Permit stops counting towards quorum at once, whenever its
            // caller gets round to unreserving it (which is then a no-op for the group).
            if let Some(state) = groups.state_of_mut(pod) {
                state.forget(pod.id());
            }
        }
        drop(groups);
        if let Some(deliveries) = deliveries {
            deliveries.deliver();
        }
        permit
    }

    /// Hardened Permit under the group lock; decisions are handed back for delivery after it.
    fn permit_hardened_locked(
        &self,
        groups: &mut Groups,
        pod: &Pod,
        now: Time,
    ) -> (Permit, Option<Deliveries>) {
        let at_quorum = match quorum(groups.state_of(pod), pod) {
            Err(Verdict::Reject(status)) => return (Permit::Reject(status), None),
            Err(_) => return (Permit::Allow, None),
            Ok((state, at_quorum)) => {
                if let Some(reason) = state.attempt().and_then(|a| a.failure()) {
                    return (Permit::Reject(gang_rejection(reason)), None);
                }
                at_quorum
            }
        };
        let state = groups.state_of_mut(pod).expect("looked up above");
        if at_quorum {
            let members: Vec<PodId> = state
                .attempt()
                .map_or_else(Vec::new, |a| a.waiting().iter().cloned().collect());
            return match self
                .inner
                .waiting
                .allow_all_deferred(&members, GANG_SCHEDULING.as_str())
            {
                Ok(deliveries) => {
                    state.close_attempt();
                    (Permit::Allow, Some(deliveries))
                }
                Err(gone) => {
                    let reason = format!("gang member {gone} stopped waiting before quorum");
                    let deliveries = self.fail_and_reject(state, &reason);
                    (Permit::Reject(gang_rejection(&reason)), Some(deliveries))
                }
            };
        }
        let opens = state.attempt().is_none();
        let Some(deadline) = state.wait_in_attempt(pod.id(), now, self.inner.timeout) else {
            return (
                Permit::Reject(error(format!("pod {} is not reserved", pod.id()))),
                None,
            );
        };
        // Registered under the group lock: a rejection of the attempt either comes before (and
        // this permit saw the failure above) or after, and then finds this pod waiting (H1).
        let waiting = match self.inner.waiting.add_untimed(pod.clone(), GANG_SCHEDULING) {
            Ok(waiting) => waiting,
            Err(e) => {
                let reason = e.to_string();
                let deliveries = self.fail_and_reject(state, &reason);
                return (Permit::Reject(error(reason)), Some(deliveries));
            }
        };
        let activate = state.unscheduled_pods();
        if opens {
            self.index_attempt(deadline, state.key().clone());
        }
        (Permit::Wait { waiting, activate }, None)
    }

    /// Hardened: rejects every gang attempt whose deadline is at or before `now`, each as a
    /// whole (H1, H3), with upstream's timeout message. Returns the groups it timed out.
    /// Upstream mode keeps no attempts; its members time out in the waiting map.
    pub fn expire(&self, now: Time) -> Vec<GroupKey> {
        let mut timed_out = Vec::new();
        loop {
            let due = {
                let mut attempts = self.inner.attempts.lock();
                match attempts.first() {
                    Some((deadline, _)) if *deadline <= now => attempts.pop_first(),
                    _ => None,
                }
            };
            let Some((deadline, key)) = due else {
                return timed_out;
            };
            let mut groups = self.inner.registry.lock();
            let Some(state) = groups.get_mut(&key) else {
                continue;
            };
            let current = state
                .attempt()
                .is_some_and(|a| a.deadline() == deadline && a.failure().is_none());
            if !current {
                continue; // closed, failed or replaced since it was indexed
            }
            let reason = timeout_message(self.inner.timeout, &GANG_SCHEDULING);
            let deliveries = self.fail_and_reject(state, &reason);
            drop(groups);
            deliveries.deliver();
            timed_out.push(key);
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

/// Looks up the pod's group for Permit: `Err` with the verdict when there is nothing to count
/// (no state or object: an error, as upstream; Basic: allow), else the state and whether
/// assumed + assigned has reached `min_count`.
fn quorum<'a>(state: Option<&'a GroupState>, pod: &Pod) -> Result<(&'a GroupState, bool), Verdict> {
    let Some(state) = state else {
        return Err(Verdict::Reject(error(format!(
            "pod {} has no pod group state",
            pod.id()
        ))));
    };
    let Some(group) = state.group() else {
        return Err(Verdict::Reject(error(format!(
            "pod group {} does not exist",
            state.key()
        ))));
    };
    match group.min_count() {
        None => Err(Verdict::Allow(Vec::new())),
        Some(min) => Ok((state, state.scheduled_pods_count() >= min as usize)),
    }
}

fn error(message: String) -> Status {
    Status::with_reason(Code::Error, message).with_plugin(GANG_SCHEDULING)
}

fn gang_rejection(reason: &str) -> Status {
    Status::unschedulable(format!("gang attempt failed: {reason}")).with_plugin(GANG_SCHEDULING)
}
