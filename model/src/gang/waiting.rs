//! Timeouts — of hardened gang attempts (rule A2) and of upstream waiting pods (W2) — and the
//! waiting map's own operations (W3, W4).

use gangsched::gang::GANG_SCHEDULING;

use gangsched::waiting::timeout_message;
use gangsched::GroupKey;
use gangsched::{Cause, Decision, PodId, Status, Time};

use super::rules::rejected;
use super::GangModel;

impl GangModel {
    /// The gang plugin's `expire(now)` (rule A2): fails every open attempt due at `now`, in
    /// (deadline, group) order, and returns those groups.
    pub fn expire_attempts(&mut self, now: Time) -> Vec<GroupKey> {
        let mut due: Vec<(Time, GroupKey)> = self
            .groups
            .iter()
            .filter_map(|g| match &g.attempt {
                Some(a) if a.failure.is_none() && a.deadline <= now => {
                    Some((a.deadline, g.key.clone()))
                }
                _ => None,
            })
            .collect();
        due.sort();
        let reason = timeout_message(self.timeout, &GANG_SCHEDULING);
        for (_, key) in &due {
            let group = self
                .groups
                .iter_mut()
                .find(|g| &g.key == key)
                .expect("due above");
            let members = group.fail_attempt(&reason);
            self.reject_all(&members, &reason, Cause::TimedOut);
        }
        self.tidy();
        due.into_iter().map(|(_, key)| key).collect()
    }

    /// The waiting map's `expire(now)` (rule W2): the decisions, in (deadline, uid) order.
    pub fn expire_waiting(&mut self, now: Time) -> Vec<Decision> {
        let mut due: Vec<(Time, PodId)> = self
            .waiting
            .iter()
            .filter_map(|w| match w.deadline {
                Some(deadline) if deadline <= now => Some((deadline, w.pod.id().clone())),
                _ => None,
            })
            .collect();
        due.sort();
        let status = rejected(timeout_message(self.timeout, &GANG_SCHEDULING));
        let before = self.outbox.len();
        for (_, id) in &due {
            self.decide(id, status.clone(), Cause::TimedOut);
        }
        self.outbox[before..].to_vec()
    }

    /// The waiting map's `reject(id, plugin, message)` (rule W3): whether this call decided.
    pub fn reject_waiting(&mut self, id: &PodId, plugin: &'static str, message: &str) -> bool {
        let status = Status::unschedulable(message).with_plugin(plugin);
        self.decide(id, status, Cause::Rejected)
    }

    /// The waiting map's `remove(id)` (rule W4): whether the pod was waiting.
    pub fn remove_waiting(&mut self, id: &PodId) -> bool {
        self.decide(id, Status::unschedulable("removed"), Cause::Deleted)
    }
}
