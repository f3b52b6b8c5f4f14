//! The model's state, and the rules shared by several operations: leaving an attempt (A4),
//! failing one (A3), forgetting unused groups and failed attempts (G1, A3), deciding a waiting
//! pod (W1). The full rule list is on [`GangModel`].

use std::collections::BTreeSet;
use std::time::Duration;

use gangsched::gang::{MemberPlace, DEFAULT_PERMIT_TIMEOUT, GANG_SCHEDULING};

use gangsched::{Cause, Code, Decision, Mode, Pod, PodId, Status, Time};
use gangsched::{GroupKey, PodGroup, Policy};

/// One member of a group in the model: the pod and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelMember {
    /// The member pod.
    pub pod: Pod,
    /// Unscheduled, assumed (reserved) or assigned (bound).
    pub placement: MemberPlace,
}

/// A hardened gang attempt in the model (rule A1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelAttempt {
    /// When it times out: its first member's Permit time plus the timeout.
    pub deadline: Time,
    /// The members waiting in it. Empty once it has failed.
    pub waiting: BTreeSet<PodId>,
    /// Why it failed, once it has.
    pub failure: Option<String>,
}

/// One pod group in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelGroup {
    /// The group's key.
    pub key: GroupKey,
    /// The PodGroup object, while it exists.
    pub object: Option<PodGroup>,
    /// The members, in the order they were added.
    pub members: Vec<ModelMember>,
    /// The current gang attempt (hardened mode only).
    pub attempt: Option<ModelAttempt>,
}

impl ModelGroup {
    /// The gang quorum, if the object exists and is a gang.
    pub fn min_count(&self) -> Option<u32> {
        match self.object.as_ref().map(PodGroup::policy) {
            Some(Policy::Gang { min_count }) => Some(min_count),
            _ => None,
        }
    }

    /// Where member `id` is, if it is a member.
    pub fn place_of(&self, id: &PodId) -> Option<MemberPlace> {
        self.members
            .iter()
            .find(|m| m.pod.id() == id)
            .map(|m| m.placement)
    }

    /// The uids of the members in `placement`.
    pub fn ids(&self, placement: MemberPlace) -> BTreeSet<PodId> {
        self.members
            .iter()
            .filter(|m| m.placement == placement)
            .map(|m| m.pod.id().clone())
            .collect()
    }

    /// How many members are in `placement`.
    pub fn count(&self, placement: MemberPlace) -> usize {
        self.members
            .iter()
            .filter(|m| m.placement == placement)
            .count()
    }

    /// Assumed plus assigned members (what Permit counts against the quorum).
    pub fn scheduled(&self) -> usize {
        self.count(MemberPlace::Assumed) + self.count(MemberPlace::Assigned)
    }

    /// The unscheduled members, in uid order (a Wait's activate list).
    pub fn unscheduled_pods(&self) -> Vec<Pod> {
        let mut pods: Vec<Pod> = self
            .members
            .iter()
            .filter(|m| m.placement == MemberPlace::Unscheduled)
            .map(|m| m.pod.clone())
            .collect();
        pods.sort_by(|a, b| a.id().cmp(b.id()));
        pods
    }

    pub(super) fn set_place(&mut self, id: &PodId, placement: MemberPlace) {
        for m in &mut self.members {
            if m.pod.id() == id {
                m.placement = placement;
            }
        }
    }

    /// Whether the attempt exists and has failed.
    pub(super) fn attempt_failed(&self) -> bool {
        self.attempt.as_ref().is_some_and(|a| a.failure.is_some())
    }

    /// Whether `id` waits in an open attempt of this group.
    pub(super) fn waits_in_open_attempt(&self, id: &PodId) -> bool {
        self.attempt
            .as_ref()
            .is_some_and(|a| a.failure.is_none() && a.waiting.contains(id))
    }

    /// Rule A4: member `id` leaves the attempt; returns whether it was waiting in it. An open
    /// attempt left with nobody waiting is over.
    pub(super) fn leave_attempt(&mut self, id: &PodId) -> bool {
        let Some(attempt) = &mut self.attempt else {
            return false;
        };
        let was_waiting = attempt.waiting.remove(id);
        if attempt.failure.is_none() && attempt.waiting.is_empty() {
            self.attempt = None;
        }
        was_waiting
    }

    /// An `Assumed` member's reservation is released: it becomes `Unscheduled` and leaves the
    /// attempt (A4). Anything else: no-op, `false`. (Rules P3 and P7; A3 follows in `tidy`.)
    pub(super) fn forget(&mut self, id: &PodId) -> bool {
        if self.place_of(id) != Some(MemberPlace::Assumed) {
            return false;
        }
        self.set_place(id, MemberPlace::Unscheduled);
        self.leave_attempt(id);
        true
    }

    /// Fails the open attempt with `reason` and returns the members that were waiting in it
    /// (in uid order) for the caller to reject (A3). No open attempt: nothing, empty.
    pub(super) fn fail_attempt(&mut self, reason: &str) -> Vec<PodId> {
        match &mut self.attempt {
            Some(attempt) if attempt.failure.is_none() => {
                attempt.failure = Some(reason.to_owned());
                std::mem::take(&mut attempt.waiting).into_iter().collect()
            }
            _ => Vec::new(),
        }
    }
}

/// A pod waiting at Permit in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelWaiter {
    /// The waiting pod.
    pub pod: Pod,
    /// Its own deadline (upstream); `None` in hardened mode, where only the attempt has one.
    pub deadline: Option<Time>,
}

/// What [`GangModel::permit`] decided (mirrors [`gangsched::Permit`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelPermit {
    /// The pod goes on to binding now.
    Allow,
    /// The pod waits in the waiting map; `activate` are the unscheduled members, in uid order.
    Wait {
        /// The members to activate.
        activate: Vec<Pod>,
    },
    /// The pod is rejected with this status, for this cause (`GangFailed` when its gang
    /// attempt failed, here or before; otherwise `Rejected`).
    Reject(Status, Cause),
}

/// The reference model of the gang plugin plus its waiting map, and the rules it specifies.
///
/// Names: `GS` is the plugin name [`GANG_SCHEDULING`]; `error(m)` is `Error` with reason `m`
/// attributed to `GS`; `rejected(m)` is `Unschedulable` with reason `m` attributed to `GS`;
/// every decision carries a cause — `Allowed`; `TimedOut` for a deadline (a pod's or an
/// attempt's); `GangFailed` for the members of a failed attempt, and for a Permit rejected
/// because of one; `Deleted` for a deleted pod's own entry; `Rejected` otherwise;
/// `timeout` is [`DEFAULT_PERMIT_TIMEOUT`] (5 minutes); a pod's `full name` is
/// `namespace/name`. A pod belongs to the group its [`Pod::group`] names in its own namespace.
///
/// # Groups and members (cluster events)
///
/// - **G1 record.** A group is known while it has a PodGroup object or at least one member; the
///   moment it has neither it is forgotten, its attempt with it.
/// - **G2 add pod.** A pod that names no group is ignored (`Ok`). A pod whose uid is already a
///   member is refused (`AlreadyMember`). Otherwise it becomes a member: `Assigned` if it was
///   added bound, else `Unscheduled`.
/// - **G3 bound.** A member that is not `Assigned` becomes `Assigned` (`true`) and leaves its
///   group's attempt (A4); anything else is a no-op (`false`). *Hardened:* if it was waiting in
///   the attempt (bound by another binder while parked at Permit), its own waiting entry is
///   rejected with `rejected("bound by another binder")`; the member now counts as assigned, and
///   the attempt stays open if another member still waits in it.
/// - **G4 delete pod.** A member leaves its group from whatever placement (also from `Assumed`:
///   gangway does not reproduce kubernetes#138422) and leaves its group's attempt (A4). Not a
///   member: no-op (`None`). *Hardened:* if it was waiting in its group's open attempt, the
///   reason is `gang member <full name> was deleted`: the attempt — if others still wait in it,
///   so it is not over — fails with that reason, and every pod of it still waiting, the deleted
///   one included, is rejected with `rejected(reason)`. *Upstream:* the waiting map is not
///   touched; the caller removes the pod from it
///   ([`remove_waiting`](GangModel::remove_waiting)).
/// - **G5 group objects.** Adding an object that exists: `AlreadyExists`. Updating one that does
///   not: `NotFound`. An update from `Gang { a }` to `Gang { b }` with `b > a` and `b` above the
///   number of members: `MinCountAboveMembers` (no other update is refused, not even `Basic` to
///   a large gang). A successful update returns the old object. Deleting a missing object:
///   `None`; members stay.
///
/// # The plugin
///
/// - **P1 PreEnqueue.** No group named: `Success`. No object: `UnschedulableAndUnresolvable`
///   `waiting for pods's pod group "<name>" to appear in scheduling queue`. `Basic`: `Success`.
///   `Gang { min }` with fewer than `min` members (in any placement):
///   `UnschedulableAndUnresolvable` `waiting for minCount pods from a gang to appear in
///   scheduling queue`. Otherwise `Success`.
/// - **P2 Reserve.** No group named: `Ok`. Group unknown: `NoGroupState`. An `Unscheduled`
///   member becomes `Assumed` (`Ok`); anything else: `NotUnscheduled`, nothing changes.
/// - **P3 Unreserve.** Group unknown: no-op. *Hardened:* if the pod waits in its group's open
///   attempt, the attempt fails with `gang member <full name> was unreserved` and every pod of
///   it still waiting (this one included) is rejected with `rejected(reason)`. Then, both
///   modes: an `Assumed` member becomes `Unscheduled` and leaves the attempt (A4); anything
///   else is unchanged — in particular a pod whose hardened Permit was rejected (P7).
/// - **P4 Permit, both modes.** No group named: `Allow`. Group unknown: `Reject(error("running Permit plugin
///   \"GangScheduling\": pod group state not found for pod group <ns/name>"))`. No object:
///   `Reject(error("running Permit plugin \"GangScheduling\": failed to get podGroup <ns/name>:
///   podgroup.scheduling.k8s.io \"<name>\" not found"))` (kube-scheduler 1.36's messages). `Basic`: `Allow`. `Gang { min }`: *scheduled* = `Assumed` + `Assigned` members
///   (whether or not this pod is one of them); *at quorum* when scheduled ≥ min. The activate
///   list of a `Wait` is every `Unscheduled` member, in uid order.
/// - **P5 Permit, upstream.** At quorum: every `Assumed` member other than this pod that is in
///   the waiting map is allowed (`Success`); `Allow`. Below quorum: the pod joins the waiting map
///   with its own deadline `now + timeout`, and `Wait` (if it is already waiting:
///   `Reject(error("pod <uid> is already waiting"))`, nothing changes).
/// - **P6 Permit, hardened.** If the group's attempt has failed: `Reject(rejected("gang attempt
///   failed: <failure>"))`. At quorum: take the members of the open attempt (none if there is
///   none). If any of them is no longer in the waiting map, the attempt fails with `gang member
///   <first such uid> stopped waiting before quorum`, the others are rejected with
///   `rejected(reason)`, and this pod gets `Reject(rejected("gang attempt failed: <reason>"))`.
///   Otherwise all of them are allowed at once (`Success`), the attempt is over (forgotten), and
///   `Allow`. Below quorum: a pod that is not `Assumed` gets `Reject(error("pod <uid> is not
///   reserved"))`; otherwise it joins the open attempt — opening one with deadline
///   `now + timeout` if there is none — and the waiting map with **no deadline of its own**, and
///   `Wait`. (Should it already be waiting, the attempt fails with `pod <uid> is already
///   waiting`, its members are rejected, and `Reject(error(reason))`.)
/// - **P7 Permit rejection, hardened.** Whenever hardened Permit returns `Reject` (P4's
///   rejections included), the pod's reservation is released at once, after the rejections P6
///   made: an `Assumed` pod becomes `Unscheduled` and leaves the attempt (A4), without P3's
///   cascade. It no longer counts towards any quorum, and its caller's later Unreserve is a
///   no-op for the group. Upstream keeps the pod `Assumed` until that Unreserve.
///
/// # Gang attempts (hardened only; upstream never has one)
///
/// - **A1.** A group has at most one attempt: its deadline (set when its first member waits,
///   never moved), the members waiting in it, and — once failed — why.
/// - **A2 timeout.** [`expire_attempts(now)`](GangModel::expire_attempts) fails every open
///   attempt whose deadline is at or before `now`, in (deadline, group) order, with the timeout
///   message [`timeout_message`](gangsched::waiting::timeout_message)`(timeout, GS)`, rejecting
///   its waiting members with it; it returns those groups.
/// - **A3 failure.** A failed attempt has no waiting members. It stays, rejecting every member
///   that reaches Permit (P6), until its group has no `Assumed` member left; then it is
///   forgotten.
/// - **A4 leaving.** A member leaves the attempt when it is bound (G3), deleted (G4) or its
///   reservation is released (P3, P7): it no longer waits in it. An *open* attempt left with
///   nobody waiting is over (forgotten): the next member to wait opens a new one with a fresh
///   deadline. A failed attempt is kept (A3).
///
/// # The waiting map
///
/// - **W1.** A pod is in the map at most once; the first decision takes it out and is appended
///   to the outbox ([`take_decisions`](GangModel::take_decisions)). Deciding a pod that is not in
///   the map does nothing and reports `false`.
/// - **W2 timeout.** [`expire_waiting(now)`](GangModel::expire_waiting) rejects every pod whose
///   own deadline is at or before `now` (upstream pods only; hardened pods have none), in
///   (deadline, uid) order, with `rejected(timeout_message(timeout, GS))`.
/// - **W3 external reject** (preemption): [`reject_waiting`](GangModel::reject_waiting) rejects
///   the pod with `Unschedulable` `message` attributed to the given plugin. Nothing else happens
///   — in hardened mode the gang reacts when that member is unreserved (P3), reaches a quorum
///   (P6) or times out (A2).
/// - **W4 remove** (pod deleted): [`remove_waiting`](GangModel::remove_waiting) rejects it with
///   `Unschedulable` `removed`, attributed to no plugin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GangModel {
    pub(super) mode: Mode,
    pub(super) timeout: Duration,
    /// Known groups (rule G1), in the order they became known.
    pub(super) groups: Vec<ModelGroup>,
    /// Pods waiting at Permit, in the order they started waiting.
    pub(super) waiting: Vec<ModelWaiter>,
    /// Decisions made and not yet taken, in the order they were made.
    pub(super) outbox: Vec<Decision>,
}

impl GangModel {
    /// An empty model in `mode` with the default 5-minute Permit wait.
    pub fn new(mode: Mode) -> Self {
        GangModel {
            mode,
            timeout: DEFAULT_PERMIT_TIMEOUT,
            groups: Vec::new(),
            waiting: Vec::new(),
            outbox: Vec::new(),
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The Permit wait (per pod upstream, per attempt hardened).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Every known group, in the order they became known.
    pub fn groups(&self) -> &[ModelGroup] {
        &self.groups
    }

    /// Group `key`, if known.
    pub fn group(&self, key: &GroupKey) -> Option<&ModelGroup> {
        self.groups.iter().find(|g| &g.key == key)
    }

    /// The pods waiting at Permit, in the order they started waiting.
    pub fn waiting(&self) -> &[ModelWaiter] {
        &self.waiting
    }

    /// Whether pod `id` is waiting at Permit.
    pub fn is_waiting(&self, id: &PodId) -> bool {
        self.waiting.iter().any(|w| w.pod.id() == id)
    }

    /// The decisions made since the last call, in the order they were made.
    pub fn take_decisions(&mut self) -> Vec<Decision> {
        std::mem::take(&mut self.outbox)
    }

    /// Takes pod `id` out of the waiting map with `status`, for `cause` (rule W1).
    pub(super) fn decide(&mut self, id: &PodId, status: Status, cause: Cause) -> bool {
        let Some(index) = self.waiting.iter().position(|w| w.pod.id() == id) else {
            return false;
        };
        let waiter = self.waiting.remove(index);
        self.outbox.push(Decision::new(waiter.pod, status, cause));
        true
    }

    /// Rejects every pod of `ids` still waiting with `rejected(reason)`, for `cause`.
    pub(super) fn reject_all(&mut self, ids: &[PodId], reason: &str, cause: Cause) {
        for id in ids {
            self.decide(id, rejected(reason), cause);
        }
    }

    /// Rules G1 and A3, applied after every change: forget groups with neither object nor
    /// members, and failed attempts of groups with no assumed member.
    pub(super) fn tidy(&mut self) {
        self.groups
            .retain(|g| g.object.is_some() || !g.members.is_empty());
        for g in &mut self.groups {
            if g.attempt_failed() && g.count(MemberPlace::Assumed) == 0 {
                g.attempt = None;
            }
        }
    }

    pub(super) fn group_of(&self, pod: &Pod) -> Option<&ModelGroup> {
        self.group(&GroupKey::of(pod)?)
    }

    pub(super) fn group_of_mut(&mut self, pod: &Pod) -> Option<&mut ModelGroup> {
        let key = GroupKey::of(pod)?;
        self.groups.iter_mut().find(|g| g.key == key)
    }

    pub(super) fn group_or_new(&mut self, key: &GroupKey) -> &mut ModelGroup {
        if let Some(index) = self.groups.iter().position(|g| &g.key == key) {
            return &mut self.groups[index];
        }
        self.groups.push(ModelGroup {
            key: key.clone(),
            object: None,
            members: Vec::new(),
            attempt: None,
        });
        self.groups.last_mut().expect("just pushed")
    }
}

/// `error(m)`: `Error` with reason `m`, attributed to `GS`.
pub(super) fn error(message: String) -> Status {
    Status::with_reason(Code::Error, message).with_plugin(GANG_SCHEDULING)
}

/// `rejected(m)`: `Unschedulable` with reason `m`, attributed to `GS`.
pub(super) fn rejected(message: impl Into<String>) -> Status {
    Status::unschedulable(message).with_plugin(GANG_SCHEDULING)
}

/// `rejected("gang attempt failed: <reason>")`.
pub(super) fn gang_rejection(reason: &str) -> Status {
    rejected(format!("gang attempt failed: {reason}"))
}
