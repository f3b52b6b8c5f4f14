use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use smallvec::{smallvec, SmallVec};

use super::batch::{allow_all_in, reject_all_in};
use super::{AddError, Cause};
use crate::debug_map::DebugMap;
use crate::fast_hash::{hash_unordered, BuildFastHasher};
use crate::{GoDuration, PluginName, Pod, PodId, Status, Time};

/// The longest a plugin may make a pod wait at Permit; longer waits are cut to this
/// (kube-scheduler's `maxTimeout`).
pub const MAX_PERMIT_WAIT: Duration = Duration::from_secs(15 * 60);

/// Names one registration of a pod in the waiting map, so a stale handle cannot decide a pod
/// that was re-added under the same uid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(u64);

/// One plugin a waiting pod still waits for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PendingPlugin {
    /// The plugin that returned `Wait`.
    pub plugin: PluginName,
    /// How long it asked the pod to wait (capped at [`MAX_PERMIT_WAIT`]).
    pub wait: Duration,
    /// When the wait runs out: registration time + `wait`.
    pub deadline: Time,
}

/// A pod waiting at Permit: the plugins it still waits for, each with its deadline.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WaitingEntry<L> {
    pub(super) pod: Pod,
    pub(super) ticket: Ticket,
    /// Never empty: a pod with nothing pending has been allowed and left the state. Inline
    /// for the usual one plugin, so a registration allocates no list.
    pub(super) pending: SmallVec<[PendingPlugin; 1]>,
    pub(super) latch: L,
}

impl<L> WaitingEntry<L> {
    /// The waiting pod.
    pub fn pod(&self) -> &Pod {
        &self.pod
    }

    /// This registration's ticket.
    pub fn ticket(&self) -> Ticket {
        self.ticket
    }

    /// The plugins still pending, in registration order.
    pub fn pending(&self) -> &[PendingPlugin] {
        &self.pending
    }

    /// What the owner attached to this pod (the wrapper's wake-up latch; `()` in models).
    pub fn latch(&self) -> &L {
        &self.latch
    }

    /// The pending plugin whose deadline comes first (ties: the earlier registered).
    pub(super) fn earliest(&self) -> &PendingPlugin {
        self.pending
            .iter()
            .min_by_key(|p| p.deadline)
            .expect("a waiting entry always has a pending plugin")
    }
}

/// A pod taken out of the waiting state by a decision. The state holds only undecided pods,
/// so taking the entry out *is* the decision: it happens once (I1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decided<L> {
    /// The decided pod.
    pub pod: Pod,
    /// The registration that was decided.
    pub ticket: Ticket,
    /// `Success`, or the rejection with its plugin.
    pub status: Status,
    /// Why.
    pub cause: Cause,
    /// What the owner attached at registration.
    pub latch: L,
}

/// What [`WaitingState::allow`] did.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AllowOutcome<L> {
    /// No such pod (or registration) is waiting; nothing changed.
    NotWaiting,
    /// The plugin is cleared (or was not pending) but others are still pending.
    StillPending,
    /// That was the last pending plugin: the pod is allowed, by this call.
    Allowed(Decided<L>),
}

/// The waiting-pod map as pure data: the pods waiting at Permit, their pending plugins and a
/// deadline index. Every transition is a `&mut self` method with no locking and no clock, so
/// proptest, the model checker and the fuzzer drive it directly; [`WaitingPods`] is this
/// struct split into shards behind their locks. `L` is whatever the owner attaches per pod
/// (`()` in models).
///
/// It keeps, after every transition: each pod has at least one pending plugin, no plugin twice;
/// the deadline index holds exactly one entry per pod, its earliest pending deadline
/// ([`WaitingState::check`] verifies this).
///
/// A pod is found with one hash lookup of its uid. Everything that shows the pods —
/// [`iter`](WaitingState::iter), `Debug`, `Hash` — goes in pod id order, so the value is as
/// deterministic as an ordered map.
///
/// [`WaitingPods`]: super::WaitingPods
#[derive(Clone, PartialEq, Eq)]
pub struct WaitingState<L = ()> {
    pub(super) pods: HashMap<PodId, WaitingEntry<L>, BuildFastHasher>,
    pub(super) deadlines: BTreeSet<(Time, PodId)>,
    pub(super) next_ticket: u64,
}

impl<L> Default for WaitingState<L> {
    fn default() -> Self {
        WaitingState {
            pods: HashMap::default(),
            deadlines: BTreeSet::new(),
            next_ticket: 0,
        }
    }
}

/// Independent of the map's order: the entries' own hashes (each with the unkeyed fast hasher),
/// summed, then the index and the ticket counter. Equal values hash alike; nothing is
/// allocated.
impl<L: Hash> Hash for WaitingState<L> {
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        hasher.write_usize(self.pods.len());
        hasher.write_u64(hash_unordered(self.pods.values()));
        self.deadlines.hash(hasher);
        self.next_ticket.hash(hasher);
    }
}

impl<L: fmt::Debug> fmt::Debug for WaitingState<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitingState")
            .field(
                "pods",
                &DebugMap(self.iter().map(|e| (e.pod.id(), e)).collect()),
            )
            .field("deadlines", &self.deadlines)
            .field("next_ticket", &self.next_ticket)
            .finish()
    }
}

impl<L> WaitingState<L> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `pod` as waiting for each plugin in `waits` until `now + wait` (each wait
    /// capped at [`MAX_PERMIT_WAIT`]), with `latch` attached.
    pub fn add<I>(&mut self, pod: Pod, waits: I, now: Time, latch: L) -> Result<Ticket, AddError>
    where
        I: IntoIterator<Item = (PluginName, Duration)>,
    {
        self.add_numbered(pod, waits, now, latch, |own| own)
    }

    /// [`add`](Self::add), numbering the registration `number(own next ticket)`, drawn only
    /// once the pod is known to be new: a sharded map draws its tickets from one counter for
    /// all its shards, so that they run in registration order as a single state's do.
    pub(super) fn add_numbered<I>(
        &mut self,
        pod: Pod,
        waits: I,
        now: Time,
        latch: L,
        number: impl FnOnce(u64) -> u64,
    ) -> Result<Ticket, AddError>
    where
        I: IntoIterator<Item = (PluginName, Duration)>,
    {
        if self.pods.contains_key(pod.id()) {
            return Err(AddError::AlreadyWaiting(pod));
        }
        let mut pending: SmallVec<[PendingPlugin; 1]> = SmallVec::new();
        for (plugin, wait) in waits {
            if pending.iter().any(|p| p.plugin == plugin) {
                return Err(AddError::DuplicatePlugin { pod, plugin });
            }
            let wait = wait.min(MAX_PERMIT_WAIT);
            pending.push(PendingPlugin {
                plugin,
                wait,
                deadline: now + wait,
            });
        }
        if pending.is_empty() {
            return Err(AddError::NothingToWaitFor(pod));
        }
        self.insert(pod, pending, latch, number)
    }

    /// Registers `pod` as waiting for `plugin` with **no deadline in this map**: the plugin
    /// owns the timeout and decides the pod itself. The hardened gang uses this, so that a
    /// member never times out on its own but only with its whole gang attempt (H1, H3).
    pub fn add_untimed(
        &mut self,
        pod: Pod,
        plugin: PluginName,
        latch: L,
    ) -> Result<Ticket, AddError> {
        self.add_untimed_numbered(pod, plugin, latch, |own| own)
    }

    /// [`add_untimed`](Self::add_untimed), numbered as [`add_numbered`](Self::add_numbered).
    pub(super) fn add_untimed_numbered(
        &mut self,
        pod: Pod,
        plugin: PluginName,
        latch: L,
        number: impl FnOnce(u64) -> u64,
    ) -> Result<Ticket, AddError> {
        let pending = smallvec![PendingPlugin {
            plugin,
            wait: Duration::MAX,
            deadline: Time::MAX,
        }];
        self.insert(pod, pending, latch, number)
    }

    /// Files a new entry (one search of the map); refuses a pod already waiting.
    fn insert(
        &mut self,
        pod: Pod,
        pending: SmallVec<[PendingPlugin; 1]>,
        latch: L,
        number: impl FnOnce(u64) -> u64,
    ) -> Result<Ticket, AddError> {
        let slot = match self.pods.entry(pod.id().clone()) {
            Entry::Occupied(_) => return Err(AddError::AlreadyWaiting(pod)),
            Entry::Vacant(slot) => slot,
        };
        let ticket = Ticket(number(self.next_ticket));
        self.next_ticket = ticket.0 + 1;
        let entry = slot.insert(WaitingEntry {
            pod,
            ticket,
            pending,
            latch,
        });
        let deadline = entry.earliest().deadline;
        let id = entry.pod.id().clone();
        self.index(deadline, &id);
        Ok(ticket)
    }

    /// Indexes pod `id` under `deadline`, unless it has none ([`Time::MAX`]).
    pub(super) fn index(&mut self, deadline: Time, id: &PodId) {
        if deadline != Time::MAX {
            self.deadlines.insert((deadline, id.clone()));
        }
    }

    /// Clears `plugin` for pod `id` (for registration `ticket`, or whichever is waiting if
    /// `None`); the pod is allowed when no plugin is left pending. A plugin that is not
    /// pending changes nothing.
    pub fn allow(&mut self, id: &PodId, ticket: Option<Ticket>, plugin: &str) -> AllowOutcome<L> {
        let Some(entry) = self.entry_mut(id, ticket) else {
            return AllowOutcome::NotWaiting;
        };
        let Some(index) = entry.pending.iter().position(|p| p.plugin == plugin) else {
            return AllowOutcome::StillPending;
        };
        let before = entry.earliest().deadline;
        entry.pending.remove(index);
        if entry.pending.is_empty() {
            return match self.take(id, before, Status::success(), Cause::Allowed) {
                Some(decided) => AllowOutcome::Allowed(decided),
                None => AllowOutcome::NotWaiting,
            };
        }
        let after = entry.earliest().deadline;
        if after != before {
            self.deadlines.remove(&(before, id.clone()));
            self.index(after, id);
        }
        AllowOutcome::StillPending
    }

    /// Rejects pod `id` (registration `ticket`, or whichever is waiting if `None`) with
    /// `status`, for `cause`; `None` if it is not waiting.
    pub fn reject(
        &mut self,
        id: &PodId,
        ticket: Option<Ticket>,
        status: Status,
        cause: Cause,
    ) -> Option<Decided<L>> {
        let entry = self.pods.remove(id)?;
        if ticket.is_some_and(|t| t != entry.ticket) {
            self.pods.insert(id.clone(), entry); // another registration of that uid
            return None;
        }
        let deadline = entry.earliest().deadline;
        Some(self.decided(entry, deadline, status, cause))
    }

    /// Clears `plugin` for every pod in `ids` — all of them or none: if any is not waiting,
    /// nothing changes and that pod's id is returned. Otherwise returns the pods this call
    /// allowed (those with no other plugin pending), in `ids` order. One step, so no other
    /// decision can land between two members (the hardened gang's quorum, H1).
    pub fn allow_all(&mut self, ids: &[PodId], plugin: &str) -> Result<Vec<Decided<L>>, PodId> {
        allow_all_in(self, ids, plugin)
    }

    /// Rejects every pod in `ids` that is still waiting with `status`, for `cause`, in one
    /// step; returns those this call decided, in `ids` order.
    pub fn reject_all(&mut self, ids: &[PodId], status: &Status, cause: Cause) -> Vec<Decided<L>> {
        reject_all_in(self, ids, status, cause)
    }

    /// Rejects every pod whose earliest pending deadline is at or before `now`, in deadline
    /// order, each with "rejected due to timeout after waiting `<wait>` at plugin `<plugin>`"
    /// attributed to that plugin, for [`Cause::TimedOut`] — the only way a timeout takes effect.
    pub fn expire(&mut self, now: Time) -> Vec<Decided<L>> {
        self.expire_dated(now).into_iter().map(|(_, d)| d).collect()
    }

    /// [`expire`](Self::expire), each decision with the deadline it timed out at (for merging
    /// the shards of a map in deadline order).
    pub(super) fn expire_dated(&mut self, now: Time) -> Vec<(Time, Decided<L>)> {
        let mut decided = Vec::new();
        while let Some((deadline, id)) = self.deadlines.first().cloned() {
            if deadline > now {
                break;
            }
            let entry = self
                .pods
                .get(&id)
                .expect("every deadline names a waiting pod");
            let timed_out = entry.earliest();
            let status = Status::unschedulable(timeout_message(timed_out.wait, &timed_out.plugin))
                .with_plugin(timed_out.plugin.clone());
            let timed_out = self.take(&id, deadline, status, Cause::TimedOut);
            decided.extend(timed_out.map(|d| (deadline, d)));
        }
        decided
    }

    /// The earliest deadline of any waiting pod.
    pub fn next_deadline(&self) -> Option<Time> {
        self.deadlines.first().map(|(deadline, _)| *deadline)
    }

    /// The waiting pod `id`, if any.
    pub fn get(&self, id: &PodId) -> Option<&WaitingEntry<L>> {
        self.pods.get(id)
    }

    /// Every waiting pod, in pod id order.
    pub fn iter(&self) -> impl Iterator<Item = &WaitingEntry<L>> {
        let mut entries: Vec<&WaitingEntry<L>> = self.pods.values().collect();
        entries.sort_unstable_by(|a, b| a.pod.id().cmp(b.pod.id()));
        entries.into_iter()
    }

    /// How many pods are waiting.
    pub fn len(&self) -> usize {
        self.pods.len()
    }

    /// Whether no pod is waiting.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// The same state with every attached latch replaced by `f(latch)`.
    pub fn map_latches<M>(&self, mut f: impl FnMut(&L) -> M) -> WaitingState<M> {
        WaitingState {
            pods: self
                .pods
                .iter()
                .map(|(id, e)| {
                    let entry = WaitingEntry {
                        pod: e.pod.clone(),
                        ticket: e.ticket,
                        pending: e.pending.clone(),
                        latch: f(&e.latch),
                    };
                    (id.clone(), entry)
                })
                .collect(),
            deadlines: self.deadlines.clone(),
            next_ticket: self.next_ticket,
        }
    }

    /// Verifies the structural invariants; `Err` names the first one broken.
    pub fn check(&self) -> Result<(), String> {
        let timed = self
            .pods
            .values()
            .filter(|e| e.earliest().deadline != Time::MAX)
            .count();
        if self.deadlines.len() != timed {
            return Err(format!(
                "{} deadline entries for {timed} waiting pods with a deadline",
                self.deadlines.len(),
            ));
        }
        let mut entries: Vec<_> = self.pods.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (id, entry) in entries {
            if entry.pod.id() != id {
                return Err(format!("pod {} is filed under {id}", entry.pod.id()));
            }
            if entry.pending.is_empty() {
                return Err(format!("pod {id} waits for no plugin"));
            }
            for (i, p) in entry.pending.iter().enumerate() {
                if entry.pending[..i].iter().any(|q| q.plugin == p.plugin) {
                    return Err(format!("pod {id} waits for {} twice", p.plugin));
                }
            }
            let earliest = entry.earliest().deadline;
            if earliest != Time::MAX && !self.deadlines.contains(&(earliest, id.clone())) {
                return Err(format!(
                    "pod {id}: earliest deadline {earliest} is not indexed"
                ));
            }
            if entry.ticket.0 >= self.next_ticket {
                return Err(format!("pod {id} has a ticket from the future"));
            }
        }
        Ok(())
    }

    fn entry_mut(&mut self, id: &PodId, ticket: Option<Ticket>) -> Option<&mut WaitingEntry<L>> {
        self.pods
            .get_mut(id)
            .filter(|entry| ticket.is_none_or(|t| t == entry.ticket))
    }

    /// Takes pod `id`, indexed under `deadline`, out of the state as decided with `status`.
    fn take(
        &mut self,
        id: &PodId,
        deadline: Time,
        status: Status,
        cause: Cause,
    ) -> Option<Decided<L>> {
        let entry = self.pods.remove(id)?;
        Some(self.decided(entry, deadline, status, cause))
    }

    /// `entry`, already out of the map and indexed under `deadline`, decided with `status` for
    /// `cause`: its index entry goes too.
    pub(super) fn decided(
        &mut self,
        entry: WaitingEntry<L>,
        deadline: Time,
        status: Status,
        cause: Cause,
    ) -> Decided<L> {
        if deadline != Time::MAX {
            self.deadlines.remove(&(deadline, entry.pod.id().clone()));
        }
        Decided {
            pod: entry.pod,
            ticket: entry.ticket,
            status,
            cause,
            latch: entry.latch,
        }
    }
}

/// kube-scheduler's timeout message, word for word.
pub fn timeout_message(wait: Duration, plugin: &PluginName) -> String {
    format!(
        "rejected due to timeout after waiting {} at plugin {plugin}",
        GoDuration(wait)
    )
}
