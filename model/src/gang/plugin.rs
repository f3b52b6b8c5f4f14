//! The cluster events (rules G2–G5) and the plugin's operations (rules P1–P7).

use std::collections::BTreeSet;

use gangsched::gang::{GroupUpdateError, JoinGroupError, MemberPlace, ReserveError};

use gangsched::{AddError, Cause, Code, Mode, Pod, PodId, Status, Time};
use gangsched::{GroupKey, PodGroup, Policy};

use super::rules::{error, gang_rejection, ModelAttempt, ModelMember, ModelWaiter};
use super::{GangModel, ModelPermit};

impl GangModel {
    // ---- cluster events -------------------------------------------------------------------

    /// A pod was added, `bound` if already bound to a node (rule G2).
    pub fn add_pod(&mut self, pod: Pod, bound: bool) -> Result<(), JoinGroupError> {
        let Some(key) = GroupKey::of(&pod) else {
            return Ok(());
        };
        let group = self.group_or_new(&key);
        if group.place_of(pod.id()).is_some() {
            return Err(JoinGroupError::AlreadyMember(pod));
        }
        let placement = if bound {
            MemberPlace::Assigned
        } else {
            MemberPlace::Unscheduled
        };
        group.members.push(ModelMember { pod, placement });
        Ok(())
    }

    /// A pod was observed bound (rule G3).
    pub fn pod_bound(&mut self, pod: &Pod) -> bool {
        let mode = self.mode;
        let Some(group) = self.group_of_mut(pod) else {
            return false;
        };
        if !matches!(
            group.place_of(pod.id()),
            Some(MemberPlace::Unscheduled | MemberPlace::Assumed)
        ) {
            return false;
        }
        group.set_place(pod.id(), MemberPlace::Assigned);
        let was_waiting = group.leave_attempt(pod.id());
        if mode == Mode::Hardened && was_waiting {
            self.reject_all(
                &[pod.id().clone()],
                "bound by another binder",
                Cause::Rejected,
            );
        }
        self.tidy();
        true
    }

    /// A pod was deleted (rule G4): the plugin's `on_pod_deleted`. Upstream callers also call
    /// [`remove_waiting`](Self::remove_waiting).
    pub fn delete_pod(&mut self, pod: &Pod) -> Option<Pod> {
        let mode = self.mode;
        let group = self.group_of_mut(pod)?;
        let index = group.members.iter().position(|m| m.pod.id() == pod.id())?;
        let deleted = group.members.remove(index).pod;
        let was_waiting = group.leave_attempt(pod.id());
        if mode == Mode::Hardened && was_waiting {
            let reason = format!("gang member {} was deleted", pod.full_name());
            // Empty if the deleted pod was the last one waiting: the attempt is over (A4).
            let members = group.fail_attempt(&reason);
            self.reject_all(&members, &reason, Cause::GangFailed);
            self.reject_all(&[pod.id().clone()], &reason, Cause::Deleted);
        }
        self.tidy();
        Some(deleted)
    }

    /// A PodGroup object was created (rule G5).
    pub fn add_group(&mut self, object: PodGroup) -> Result<(), GroupUpdateError> {
        let group = self.group_or_new(object.key());
        if group.object.is_some() {
            return Err(GroupUpdateError::AlreadyExists(object));
        }
        group.object = Some(object);
        Ok(())
    }

    /// A PodGroup object changed (rule G5); returns the old one.
    pub fn update_group(&mut self, object: PodGroup) -> Result<PodGroup, GroupUpdateError> {
        let Some(group) = self.groups.iter_mut().find(|g| &g.key == object.key()) else {
            return Err(GroupUpdateError::NotFound(object));
        };
        let Some(old) = group.object.clone() else {
            return Err(GroupUpdateError::NotFound(object));
        };
        if let (Some(old_min), Some(new_min)) = (old.min_count(), object.min_count()) {
            let members = group.members.len();
            if new_min > old_min && new_min as usize > members {
                return Err(GroupUpdateError::MinCountAboveMembers {
                    group: object,
                    members,
                });
            }
        }
        group.object = Some(object);
        Ok(old)
    }

    /// A PodGroup object was deleted (rule G5).
    pub fn delete_group(&mut self, key: &GroupKey) -> Option<PodGroup> {
        let group = self.groups.iter_mut().find(|g| &g.key == key)?;
        let old = group.object.take()?;
        self.tidy();
        Some(old)
    }

    // ---- the plugin -----------------------------------------------------------------------

    /// PreEnqueue (rule P1).
    pub fn pre_enqueue(&self, pod: &Pod) -> Status {
        let Some(key) = GroupKey::of(pod) else {
            return Status::success();
        };
        let group = self.group(&key);
        let Some(object) = group.and_then(|g| g.object.as_ref()) else {
            return Status::with_reason(
                Code::UnschedulableAndUnresolvable,
                format!(
                    "waiting for pods's pod group {:?} to appear in scheduling queue",
                    key.name()
                ),
            );
        };
        let members = group.map_or(0, |g| g.members.len());
        match object.policy() {
            Policy::Gang { min_count } if members < min_count as usize => Status::with_reason(
                Code::UnschedulableAndUnresolvable,
                "waiting for minCount pods from a gang to appear in scheduling queue",
            ),
            _ => Status::success(),
        }
    }

    /// Reserve (rule P2).
    pub fn reserve(&mut self, pod: &Pod) -> Result<(), ReserveError> {
        if GroupKey::of(pod).is_none() {
            return Ok(());
        }
        let Some(group) = self.group_of_mut(pod) else {
            return Err(ReserveError::NoGroupState(pod.id().clone()));
        };
        if group.place_of(pod.id()) != Some(MemberPlace::Unscheduled) {
            return Err(ReserveError::NotUnscheduled(pod.id().clone()));
        }
        group.set_place(pod.id(), MemberPlace::Assumed);
        Ok(())
    }

    /// Unreserve (rule P3).
    pub fn unreserve(&mut self, pod: &Pod) {
        let mode = self.mode;
        let Some(group) = self.group_of_mut(pod) else {
            return;
        };
        let mut cascade = None;
        if mode == Mode::Hardened && group.waits_in_open_attempt(pod.id()) {
            let reason = format!("gang member {} was unreserved", pod.full_name());
            cascade = Some((group.fail_attempt(&reason), reason));
        }
        group.forget(pod.id());
        if let Some((members, reason)) = cascade {
            self.reject_all(&members, &reason, Cause::GangFailed);
        }
        self.tidy();
    }

    /// Permit at `now` (rules P4–P7).
    pub fn permit(&mut self, pod: &Pod, now: Time) -> ModelPermit {
        let outcome = self.permit_outcome(pod, now);
        if self.mode == Mode::Hardened && matches!(outcome, ModelPermit::Reject(..)) {
            // P7: a pod rejected at Permit stops counting at once.
            if let Some(group) = self.group_of_mut(pod) {
                group.forget(pod.id());
            }
        }
        self.tidy();
        outcome
    }

    /// Rules P4–P6.
    fn permit_outcome(&mut self, pod: &Pod, now: Time) -> ModelPermit {
        if GroupKey::of(pod).is_none() {
            return ModelPermit::Allow;
        }
        let Some(group) = self.group_of(pod) else {
            let key = GroupKey::of(pod).map(|k| k.to_string()).unwrap_or_default();
            let status = error(format!(
                "running Permit plugin \"GangScheduling\": \
                 pod group state not found for pod group {key}"
            ));
            return ModelPermit::Reject(status, Cause::Rejected);
        };
        let Some(object) = &group.object else {
            let status = error(format!(
                "running Permit plugin \"GangScheduling\": failed to get podGroup {}: \
                 podgroup.scheduling.k8s.io {:?} not found",
                group.key,
                group.key.name()
            ));
            return ModelPermit::Reject(status, Cause::Rejected);
        };
        let Policy::Gang { min_count } = object.policy() else {
            return ModelPermit::Allow;
        };
        let at_quorum = group.scheduled() >= min_count as usize;
        match self.mode {
            Mode::Upstream => self.permit_upstream(pod, now, at_quorum),
            Mode::Hardened => self.permit_hardened(pod, now, at_quorum),
        }
    }

    /// Rule P5.
    fn permit_upstream(&mut self, pod: &Pod, now: Time, at_quorum: bool) -> ModelPermit {
        let group = self.group_of(pod).expect("looked up by permit");
        if at_quorum {
            let siblings: Vec<PodId> = group
                .ids(MemberPlace::Assumed)
                .into_iter()
                .filter(|id| id != pod.id())
                .collect();
            for id in &siblings {
                self.decide(id, Status::success(), Cause::Allowed);
            }
            return ModelPermit::Allow;
        }
        let activate = group.unscheduled_pods();
        if self.is_waiting(pod.id()) {
            let reason = AddError::AlreadyWaiting(pod.clone()).to_string();
            return ModelPermit::Reject(error(reason), Cause::Rejected);
        }
        self.waiting.push(ModelWaiter {
            pod: pod.clone(),
            deadline: Some(now + self.timeout),
        });
        ModelPermit::Wait { activate }
    }

    /// Rule P6 (P7 is applied by [`permit`](Self::permit)).
    fn permit_hardened(&mut self, pod: &Pod, now: Time, at_quorum: bool) -> ModelPermit {
        let timeout = self.timeout;
        let group = self.group_of(pod).expect("looked up by permit");
        if let Some(failure) = group.attempt.as_ref().and_then(|a| a.failure.clone()) {
            return ModelPermit::Reject(gang_rejection(&failure), Cause::GangFailed);
        }
        if at_quorum {
            let members: Vec<PodId> = match &group.attempt {
                Some(attempt) => attempt.waiting.iter().cloned().collect(),
                None => Vec::new(),
            };
            let gone = members.iter().find(|id| !self.is_waiting(id)).cloned();
            let group = self.group_of_mut(pod).expect("looked up by permit");
            if let Some(gone) = gone {
                let reason = format!("gang member {gone} stopped waiting before quorum");
                let members = group.fail_attempt(&reason);
                self.reject_all(&members, &reason, Cause::GangFailed);
                return ModelPermit::Reject(gang_rejection(&reason), Cause::GangFailed);
            }
            group.attempt = None;
            for id in &members {
                self.decide(id, Status::success(), Cause::Allowed);
            }
            return ModelPermit::Allow;
        }
        if group.place_of(pod.id()) != Some(MemberPlace::Assumed) {
            let status = error(format!("pod {} is not reserved", pod.id()));
            return ModelPermit::Reject(status, Cause::Rejected);
        }
        let already_waiting = self.is_waiting(pod.id());
        let group = self.group_of_mut(pod).expect("looked up by permit");
        let attempt = group.attempt.get_or_insert_with(|| ModelAttempt {
            deadline: now + timeout,
            waiting: BTreeSet::new(),
            failure: None,
        });
        attempt.waiting.insert(pod.id().clone());
        if already_waiting {
            let reason = AddError::AlreadyWaiting(pod.clone()).to_string();
            let members = group.fail_attempt(&reason);
            self.reject_all(&members, &reason, Cause::GangFailed);
            return ModelPermit::Reject(error(reason), Cause::GangFailed);
        }
        let activate = group.unscheduled_pods();
        self.waiting.push(ModelWaiter {
            pod: pod.clone(),
            deadline: None,
        });
        ModelPermit::Wait { activate }
    }
}
