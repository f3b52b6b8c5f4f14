//! A flaw planted around the gang plugin's real parts ([`GangFlaw`]): the witness mechanism of
//! the `gang_plugin` fuzz target, as `scheduler/planted.rs` is the driver's; compiled only with
//! the `checking` feature.

use std::time::Duration;

use super::decide::{forget_rejected, AttemptWaiting, GangRules};
use super::flaw::GangFlaw;
use super::ops::{refusal, registration_error, Others};
use super::parts::{Batch, Expire, GangParts};
use super::Groups;
use crate::waiting::AddError;
use crate::{Cause, GroupKey, PluginName, Pod, PodId, Status, Time};

/// The gang plugin's parts with `flaw` planted: [`GangParts::planted`] answers yes for it,
/// every other call goes to `parts`. Run the operations of `checking::gang_ops` on it.
pub struct PlantedGang<P> {
    /// The real parts.
    pub parts: P,
    /// The flaw.
    pub flaw: GangFlaw,
}

impl<P: GangParts> GangParts for PlantedGang<P> {
    type Registration = P::Registration;

    fn rules(&self) -> GangRules {
        self.parts.rules()
    }
    fn read_group<R>(&self, key: &GroupKey, read: impl FnOnce(&Groups) -> R) -> R {
        self.parts.read_group(key, read)
    }
    fn write_group<R>(
        &mut self,
        key: &GroupKey,
        change: impl FnOnce(&mut Groups, &mut Batch<'_, Self::Registration>) -> R,
    ) -> R {
        self.parts.write_group(key, change)
    }
    fn add_waiting(
        &mut self,
        pod: Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<Self::Registration, AddError> {
        self.parts.add_waiting(pod, waits, now)
    }
    fn allow_waiting(&mut self, id: &PodId, plugin: &str) -> bool {
        self.parts.allow_waiting(id, plugin)
    }
    fn remove_waiting(&mut self, id: &PodId) -> bool {
        self.parts.remove_waiting(id)
    }
    fn expire_waiting(&mut self, now: Time) -> Vec<PodId> {
        self.parts.expire_waiting(now)
    }
    fn next_waiting_deadline(&self) -> Option<Time> {
        self.parts.next_waiting_deadline()
    }
    fn group_parts(&self) -> usize {
        self.parts.group_parts()
    }
    fn part_deadline(&self, part: usize) -> Option<Time> {
        self.parts.part_deadline(part)
    }
    fn expire_part(
        &mut self,
        part: usize,
        expire: &mut Expire<'_, Self::Registration>,
    ) -> Vec<(Time, GroupKey)> {
        self.parts.expire_part(part, expire)
    }
    fn next_attempt_deadline(&self) -> Option<Time> {
        self.parts.next_attempt_deadline()
    }
    fn planted(&self, flaw: GangFlaw) -> bool {
        flaw == self.flaw
    }
}

/// [`GangFlaw::QuorumAllowsOneByOne`]: the waiting map of a critical section whose
/// [`allow_all`](AttemptWaiting::allow_all) allows each member on its own and skips one that
/// is no longer waiting, as upstream's one `allow` per sibling does. Everything else is
/// forwarded.
pub(crate) struct OneByOne<'a, 'b, R>(pub(crate) &'a mut Batch<'b, R>);

impl<R> AttemptWaiting for OneByOne<'_, '_, R> {
    type Registration = R;

    fn allow_all(&mut self, ids: &[PodId]) -> Result<(), PodId> {
        for id in ids {
            // The flaw: a member that stopped waiting is skipped, not the attempt failed.
            let _ = self.0.allow_all(std::slice::from_ref(id));
        }
        Ok(())
    }
    fn reject_waiting(
        &mut self,
        ids: &[PodId],
        reason: &str,
        cause: Cause,
        rejected: &mut dyn FnMut(&PodId),
    ) {
        self.0.reject_waiting(ids, reason, cause, rejected);
    }
    fn add_untimed(&mut self, pod: &Pod) -> Result<R, AddError> {
        self.0.add_untimed(pod)
    }
    fn add_timed(
        &mut self,
        pod: &Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<R, AddError> {
        self.0.add_timed(pod, waits, now)
    }
}

/// [`GangFlaw::LooksThenRegisters`]: `ops::wait_outside_gang` in two critical sections, the
/// look at the group and the registration, and the member left unmarked (a witness only).
pub(super) fn looks_then_registers<G: GangParts>(
    g: &mut G,
    key: &GroupKey,
    pod: &Pod,
    folded: &Others,
    now: Time,
) -> Result<G::Registration, Status> {
    if let Some(status) = g.read_group(key, |groups| refusal(groups, pod, folded)) {
        g.write_group(key, |groups, _| forget_rejected(groups, pod));
        return Err(status);
    }
    g.add_waiting(pod.clone(), &folded.waits, now)
        .map_err(|e| registration_error(folded, &e))
}
