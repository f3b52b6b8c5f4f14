//! A reference model of the waiting-pod map: the sequential specification that
//! [`gangsched::WaitingState`] is checked against.
//!
//! It is deliberately naive: a `Vec` of records in registration order, linear scans, no
//! deadline index and no cleverness, so that each method can be read as the rule it states.
//! Property tests run it in lockstep with the real state and compare every result.
//!
//! The rules:
//!
//! - A pod waits at most once at a time. Adding a pod that is already waiting, naming no
//!   plugin, or naming a plugin twice is an error that hands the pod back (checked in that
//!   order; the first repeated plugin is reported).
//! - Each plugin wait is capped at [`MAX_PERMIT_WAIT`]; its deadline is `now + capped wait`.
//! - `allow(id, plugin)` clears `plugin` if it is pending. When no plugin remains, the pod is
//!   allowed (`Success`) and leaves. A plugin that is not pending changes nothing.
//! - `reject(id, status)` decides the pod with `status`; it leaves.
//! - `expire(now)` rejects every pod whose earliest pending deadline is `<= now`, in order of
//!   (that deadline, pod id). The status names the pending plugin with the earliest deadline
//!   (ties: the one registered first among those still pending):
//!   `Unschedulable`, [`timeout_message`]`(wait, plugin)`, attributed to that plugin.
//! - `add_untimed(pod, plugin)` registers a pod waiting for one plugin with no deadline (the
//!   plugin owns the timeout): `expire` never decides it and `next_deadline` does not see it.
//!   Only an already waiting pod is refused.
//! - `next_deadline()` is the smallest earliest-pending deadline of any waiting pod.
//! - Each successful add gets a fresh [`Registration`]; an operation given a registration
//!   acts only if that exact registration is still waiting.

use std::time::Duration;

use gangsched::waiting::{timeout_message, PendingPlugin, MAX_PERMIT_WAIT};
use gangsched::{AddError, Cause, PluginName, Pod, PodId, Status, Time};

/// The deadline of an untimed registration ([`WaitingModel::add_untimed`]): none.
const UNTIMED: Time = Time::MAX;

/// Names one successful registration of a pod in the model — the model's counterpart of
/// [`gangsched::waiting::Ticket`]. The n-th successful add (counting from 0) gets `Registration(n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Registration(pub u64);

/// One waiting pod in the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelEntry {
    /// The waiting pod.
    pub pod: Pod,
    /// The registration under which it waits.
    pub registration: Registration,
    /// The plugins it still waits for, in registration order. Never empty.
    pub pending: Vec<PendingPlugin>,
}

impl ModelEntry {
    /// The pending plugin with the earliest deadline; among equal deadlines, the one that comes
    /// first in registration order.
    pub fn earliest(&self) -> &PendingPlugin {
        let mut best = &self.pending[0];
        for p in &self.pending[1..] {
            // Strictly earlier only: on a tie the earlier-registered plugin stays.
            if p.deadline < best.deadline {
                best = p;
            }
        }
        best
    }
}

/// A decision as the model reports it: which pod, which registration, and how it was decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelDecision {
    /// The decided pod (exactly the one that was added).
    pub pod: Pod,
    /// The registration that was decided.
    pub registration: Registration,
    /// `Success` when allowed; the given status when rejected; the timeout status when expired.
    pub status: Status,
    /// `Allowed` when allowed; the given cause when rejected; `TimedOut` when expired.
    pub cause: Cause,
}

/// What [`WaitingModel::allow`] did (mirrors [`gangsched::waiting::AllowOutcome`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelAllow {
    /// The pod (or that registration of it) is not waiting; nothing changed.
    NotWaiting,
    /// The plugin was cleared, or was not pending, and some plugin is still pending.
    StillPending,
    /// That was the last pending plugin: the pod is allowed and has left.
    Allowed(ModelDecision),
}

/// The reference model of the waiting-pod map. See the [module documentation](self) for the
/// rules it specifies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaitingModel {
    /// The waiting pods, in the order they were added.
    entries: Vec<ModelEntry>,
    /// How many adds have succeeded so far (the next registration number).
    added: u64,
}

impl WaitingModel {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `pod` as waiting for each plugin in `waits`, each until `now + wait` with the
    /// wait capped at [`MAX_PERMIT_WAIT`].
    pub fn add<I>(&mut self, pod: Pod, waits: I, now: Time) -> Result<Registration, AddError>
    where
        I: IntoIterator<Item = (PluginName, Duration)>,
    {
        if self.position(pod.id(), None).is_some() {
            return Err(AddError::AlreadyWaiting(pod));
        }
        let waits: Vec<(PluginName, Duration)> = waits.into_iter().collect();
        for (i, (plugin, _)) in waits.iter().enumerate() {
            if waits[..i].iter().any(|(earlier, _)| earlier == plugin) {
                let plugin = plugin.clone();
                return Err(AddError::DuplicatePlugin { pod, plugin });
            }
        }
        if waits.is_empty() {
            return Err(AddError::NothingToWaitFor(pod));
        }
        let pending = waits
            .into_iter()
            .map(|(plugin, wait)| {
                let wait = if wait > MAX_PERMIT_WAIT {
                    MAX_PERMIT_WAIT
                } else {
                    wait
                };
                PendingPlugin {
                    plugin,
                    wait,
                    deadline: now + wait,
                }
            })
            .collect();
        let registration = Registration(self.added);
        self.added += 1;
        self.entries.push(ModelEntry {
            pod,
            registration,
            pending,
        });
        Ok(registration)
    }

    /// Registers `pod` as waiting for `plugin` with no deadline: its pending plugin waits
    /// `Duration::MAX` until `Time::MAX`, which [`expire`](Self::expire) and
    /// [`next_deadline`](Self::next_deadline) pass over.
    pub fn add_untimed(&mut self, pod: Pod, plugin: PluginName) -> Result<Registration, AddError> {
        if self.position(pod.id(), None).is_some() {
            return Err(AddError::AlreadyWaiting(pod));
        }
        let registration = Registration(self.added);
        self.added += 1;
        self.entries.push(ModelEntry {
            pod,
            registration,
            pending: vec![PendingPlugin {
                plugin,
                wait: Duration::MAX,
                deadline: UNTIMED,
            }],
        });
        Ok(registration)
    }

    /// Clears `plugin` for pod `id` (only if it waits under `registration`, when given).
    pub fn allow(
        &mut self,
        id: &PodId,
        registration: Option<Registration>,
        plugin: &str,
    ) -> ModelAllow {
        let Some(index) = self.position(id, registration) else {
            return ModelAllow::NotWaiting;
        };
        let entry = &mut self.entries[index];
        let Some(p) = entry
            .pending
            .iter()
            .position(|p| p.plugin.as_str() == plugin)
        else {
            return ModelAllow::StillPending;
        };
        entry.pending.remove(p);
        if !entry.pending.is_empty() {
            return ModelAllow::StillPending;
        }
        ModelAllow::Allowed(self.decide(index, Status::success(), Cause::Allowed))
    }

    /// Rejects pod `id` (only if it waits under `registration`, when given) with `status`,
    /// for `cause`; `None` if it is not waiting.
    pub fn reject(
        &mut self,
        id: &PodId,
        registration: Option<Registration>,
        status: Status,
        cause: Cause,
    ) -> Option<ModelDecision> {
        let index = self.position(id, registration)?;
        Some(self.decide(index, status, cause))
    }

    /// `allow_all`'s rule: if a pod of `ids` is not waiting, nothing changes and the first such
    /// is named; otherwise `plugin` is cleared for each pod of `ids` in turn (a repeat finds it
    /// cleared, or the pod allowed and gone), and the pods that had nothing else pending are
    /// allowed, in that order.
    pub fn allow_all(&mut self, ids: &[PodId], plugin: &str) -> Result<Vec<ModelDecision>, PodId> {
        if let Some(missing) = ids.iter().find(|id| self.get(id).is_none()) {
            return Err(missing.clone());
        }
        let decided = ids
            .iter()
            .filter_map(|id| match self.allow(id, None, plugin) {
                ModelAllow::Allowed(d) => Some(d),
                ModelAllow::NotWaiting | ModelAllow::StillPending => None,
            })
            .collect();
        Ok(decided)
    }

    /// `reject_all`'s rule: each pod of `ids` still waiting (under any registration) is
    /// rejected with `status` for `cause`, in that order; repeats and pods not waiting are
    /// skipped.
    pub fn reject_all(
        &mut self,
        ids: &[PodId],
        status: &Status,
        cause: Cause,
    ) -> Vec<ModelDecision> {
        ids.iter()
            .filter_map(|id| self.reject(id, None, status.clone(), cause))
            .collect()
    }

    /// Rejects, with the timeout status, every pod whose earliest pending deadline is at or
    /// before `now`, ordered by (that deadline, pod id).
    pub fn expire(&mut self, now: Time) -> Vec<ModelDecision> {
        let mut due: Vec<(Time, PodId)> = self
            .entries
            .iter()
            .map(|e| (e.earliest().deadline, e.pod.id().clone()))
            .filter(|(deadline, _)| *deadline != UNTIMED && *deadline <= now)
            .collect();
        due.sort();
        let mut decided = Vec::new();
        for (_, id) in due {
            let index = self.position(&id, None).expect("a due pod is waiting");
            let timed_out = self.entries[index].earliest();
            let status = Status::unschedulable(timeout_message(timed_out.wait, &timed_out.plugin))
                .with_plugin(timed_out.plugin.clone());
            decided.push(self.decide(index, status, Cause::TimedOut));
        }
        decided
    }

    /// The earliest pending deadline of any waiting pod.
    pub fn next_deadline(&self) -> Option<Time> {
        self.entries
            .iter()
            .map(|e| e.earliest().deadline)
            .filter(|d| *d != UNTIMED)
            .min()
    }

    /// The waiting pod `id`, if any.
    pub fn get(&self, id: &PodId) -> Option<&ModelEntry> {
        self.position(id, None).map(|i| &self.entries[i])
    }

    /// Every waiting pod, in the order they were added.
    pub fn entries(&self) -> &[ModelEntry] {
        &self.entries
    }

    /// How many pods are waiting.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no pod is waiting.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Where pod `id` is, if it waits (under `registration`, when given).
    fn position(&self, id: &PodId, registration: Option<Registration>) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.pod.id() == id && registration.is_none_or(|r| r == e.registration))
    }

    /// Takes the entry at `index` out as decided with `status`, for `cause`.
    fn decide(&mut self, index: usize, status: Status, cause: Cause) -> ModelDecision {
        let entry = self.entries.remove(index);
        ModelDecision {
            pod: entry.pod,
            registration: entry.registration,
            status,
            cause,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(list: &[(&'static str, u64)]) -> Vec<(PluginName, Duration)> {
        list.iter()
            .map(|&(p, secs)| (PluginName::from(p), Duration::from_secs(secs)))
            .collect()
    }

    #[test]
    fn expire_names_the_earliest_plugin_registered_first_among_remaining() {
        let mut m = WaitingModel::new();
        let pod = Pod::new("p", "ns", "p");
        m.add(pod, waits(&[("A", 60), ("B", 600), ("C", 600)]), Time::ZERO)
            .unwrap();
        assert_eq!(m.allow(&"p".into(), None, "A"), ModelAllow::StillPending);
        let decided = m.expire(Time::from_secs(600));
        assert_eq!(decided.len(), 1);
        assert_eq!(
            decided[0].status.plugin().map(PluginName::as_str),
            Some("B")
        );
        assert!(m.is_empty());
    }

    #[test]
    fn add_errors_in_order() {
        let mut m = WaitingModel::new();
        let pod = Pod::new("p", "ns", "p");
        assert!(matches!(
            m.add(pod.clone(), waits(&[]), Time::ZERO),
            Err(AddError::NothingToWaitFor(_))
        ));
        assert!(matches!(
            m.add(pod.clone(), waits(&[("A", 1), ("A", 2)]), Time::ZERO),
            Err(AddError::DuplicatePlugin { .. })
        ));
        assert_eq!(
            m.add(pod.clone(), waits(&[("A", 1)]), Time::ZERO),
            Ok(Registration(0))
        );
        assert_eq!(
            m.add(pod.clone(), waits(&[]), Time::ZERO),
            Err(AddError::AlreadyWaiting(pod))
        );
    }
}
