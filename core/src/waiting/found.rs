use std::fmt;

use super::{Cause, Ticket, WaitingPod, WaitingPods};
use crate::{PluginName, PodId, Status};

/// A waiting pod's registration, found with [`WaitingPods::find`] and borrowed from the map
/// and the caller's id: allow or reject it without taking a [`WaitingPod`] handle, so no
/// reference count is touched — what a lookup-heavy caller wants (a gang walking its members,
/// many threads probing the map), as upstream's `GetWaitingPod` hands out a bare pointer. Like
/// a handle it decides only the registration it found (H4), never a later one of the same uid.
#[derive(Clone, Copy)]
pub struct WaitingRef<'a> {
    map: &'a WaitingPods,
    id: &'a PodId,
    ticket: Ticket,
}

impl<'a> WaitingRef<'a> {
    pub(super) fn new(map: &'a WaitingPods, id: &'a PodId, ticket: Ticket) -> WaitingRef<'a> {
        WaitingRef { map, id, ticket }
    }

    /// The pod's uid.
    pub fn id(&self) -> &'a PodId {
        self.id
    }

    /// The registration found.
    pub fn ticket(&self) -> Ticket {
        self.ticket
    }

    /// Clears `plugin`; `true` only if this call allowed the pod (H4).
    pub fn allow(&self, plugin: &str) -> bool {
        self.map.allow_ticket(self.id, Some(self.ticket), plugin)
    }

    /// Rejects the pod as `Unschedulable` with `message`, attributed to `plugin`; `true` only
    /// if this call made the decision (H4, I1).
    pub fn reject(&self, plugin: impl Into<PluginName>, message: &str) -> bool {
        let status = Status::unschedulable(message).with_plugin(plugin);
        self.map
            .reject_ticket(self.id, Some(self.ticket), status, Cause::Rejected)
    }

    /// An owned handle on the same registration, if it is still waiting.
    pub fn to_handle(&self) -> Option<WaitingPod> {
        self.map
            .get(self.id)
            .filter(|handle| handle.ticket() == self.ticket)
    }
}

impl fmt::Debug for WaitingRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitingRef")
            .field("id", self.id)
            .field("ticket", &self.ticket)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{Pod, PodId, Time, WaitingPods};

    fn add(waiting: &WaitingPods, uid: &str) {
        let waits = [("GangScheduling".into(), Duration::from_secs(60))];
        waiting
            .add(Pod::new(uid, "ml", uid), waits, Time::ZERO)
            .unwrap();
    }

    #[test]
    fn a_found_registration_is_decided_once_and_never_a_later_one() {
        let waiting = WaitingPods::new();
        let a = PodId::from("a");
        assert!(waiting.find(&a).is_none());
        add(&waiting, "a");
        let found = waiting.find(&a).unwrap();
        assert_eq!(found.to_handle().unwrap().ticket(), found.ticket());
        assert!(found.reject("GangScheduling", "no"));
        assert!(!found.reject("GangScheduling", "again"), "decided once");
        assert!(found.to_handle().is_none());

        add(&waiting, "a"); // a new registration of the same uid
        assert!(
            !found.allow("GangScheduling"),
            "the stale one decides nothing"
        );
        assert!(waiting.find(&a).unwrap().allow("GangScheduling"));
        assert!(waiting.is_empty());
    }
}
