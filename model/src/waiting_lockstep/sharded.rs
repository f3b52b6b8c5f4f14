//! The sharded [`WaitingPods`] map as a [`Subject`]: the public API (and the deferred batches
//! and a registration's `reject_for` through `gangsched::checking`), every decision caught by
//! a recording sink. Beyond its merged state, it checks what only the map shows: each shard's
//! own state, the views (`len`, `snapshot`, `get`, `find`…), and every handle's latch.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::checking::{self, Undelivered, WaitingFlaw};
use gangsched::sync::{Arc, Mutex};
use gangsched::waiting::Ticket;
use gangsched::{
    AddError, Decision, DecisionSink, PluginName, Pod, Time, WaitingPod, WaitingPods, WaitingState,
};

use crate::ops::waiting::{Answer, Call, Delivered, Expect, Rejection, Report, Subject};
use crate::waiting::ModelDecision;

/// A sink that records each call it gets: the decisions of one `deliver` or `deliver_all`.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Vec<Decision>>>>);

impl Recorder {
    /// The calls since the last take.
    fn take(&self) -> Vec<Vec<Decision>> {
        std::mem::take(&mut *self.0.lock())
    }

    fn record(&self, decisions: Vec<Decision>) {
        self.0.lock().push(decisions);
    }
}

impl DecisionSink for Recorder {
    fn deliver(&self, decision: Decision) {
        self.record(vec![decision]);
    }

    fn deliver_all(&self, decisions: Vec<Decision>) {
        self.record(decisions);
    }
}

/// The sharded map, its recording sink, and the handle of every registration it issued.
pub struct ShardedMap {
    /// The real map.
    pub map: WaitingPods,
    sink: Recorder,
    handles: BTreeMap<Ticket, WaitingPod>,
}

impl std::fmt::Debug for ShardedMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedMap")
            .field("state", &checking::waiting_state(&self.map))
            .finish()
    }
}

impl Default for ShardedMap {
    fn default() -> Self {
        ShardedMap::new()
    }
}

impl ShardedMap {
    /// An empty map (`WaitingPods::with_sink`).
    pub fn new() -> ShardedMap {
        let sink = Recorder::default();
        ShardedMap {
            map: WaitingPods::with_sink(sink.clone()),
            sink,
            handles: BTreeMap::new(),
        }
    }

    /// An empty map with `flaw` planted in its own code (`checking::waiting_pods_with_flaw`),
    /// for a witness.
    pub fn with_flaw(flaw: WaitingFlaw) -> ShardedMap {
        let sink = Recorder::default();
        ShardedMap {
            map: checking::waiting_pods_with_flaw(sink.clone(), flaw),
            sink,
            handles: BTreeMap::new(),
        }
    }

    fn handle(&self, ticket: Ticket) -> Result<&WaitingPod, String> {
        self.handles
            .get(&ticket)
            .ok_or_else(|| format!("no handle for {ticket:?}"))
    }

    /// Calls `decide` on the registration `ticket` names: through the map's borrowed
    /// registration when it is the one waiting (`find`), else through its (stale) handle.
    fn on_registration(
        &self,
        id: &gangsched::PodId,
        ticket: Ticket,
        found: impl FnOnce(gangsched::WaitingRef<'_>) -> bool,
        handle: impl FnOnce(&WaitingPod) -> bool,
    ) -> Result<bool, String> {
        match self.map.find(id) {
            Some(waiting) if waiting.ticket() == ticket => Ok(found(waiting)),
            _ => Ok(handle(self.handle(ticket)?)),
        }
    }

    /// A deferred batch before its delivery: it holds exactly the model's decisions, in
    /// order; each is already published on its registration's latch; none reached the sink
    /// (H5: the holder delivers once its own locks are released).
    fn held_back(&self, held: &Undelivered, expected: &[ModelDecision]) -> Result<(), String> {
        let model: Vec<&gangsched::PodId> = expected.iter().map(|d| d.pod.id()).collect();
        let ids = held.ids();
        if ids.iter().collect::<Vec<_>>() != model {
            return Err(format!(
                "I1: a deferred batch holds {ids:?}, the model {model:?}"
            ));
        }
        let early = self.sink.take();
        if !early.is_empty() {
            return Err(format!(
                "H5: a deferred batch reached the sink first: {early:?}"
            ));
        }
        for d in expected {
            let published = self
                .handles
                .values()
                .find(|h| h.pod() == &d.pod)
                .and_then(WaitingPod::decision);
            if published.as_ref() != Some(&d.status) {
                return Err(format!(
                    "I2: {} held back, its latch shows {published:?}",
                    d.pod.id()
                ));
            }
        }
        Ok(())
    }
}

impl Subject for ShardedMap {
    fn add(
        &mut self,
        pod: Pod,
        waits: Vec<(PluginName, Duration)>,
        now: Time,
    ) -> Result<Ticket, AddError> {
        let handle = self.map.add(pod, waits, now)?;
        let ticket = handle.ticket();
        self.handles.insert(ticket, handle);
        Ok(ticket)
    }

    fn add_untimed(&mut self, pod: Pod, plugin: PluginName) -> Result<Ticket, AddError> {
        let handle = self.map.add_untimed(pod, plugin)?;
        let ticket = handle.ticket();
        self.handles.insert(ticket, handle);
        Ok(ticket)
    }

    fn decide(&mut self, call: &Call, expected: &[ModelDecision]) -> Result<Report, String> {
        let map = &self.map;
        let mut removed = None;
        let answer = match call {
            Call::Allow { id, ticket, plugin } => Answer::Decided(match ticket {
                None => map.allow(id, plugin.as_str()),
                Some(t) => self.on_registration(
                    id,
                    *t,
                    |found| found.allow(plugin.as_str()),
                    |handle| handle.allow(plugin.as_str()),
                )?,
            }),
            Call::Reject {
                id,
                ticket,
                rejection,
            } => Answer::Decided(match (rejection, ticket) {
                (Rejection::Reject { plugin, message }, None) => {
                    map.reject(id, plugin.clone(), message)
                }
                (Rejection::Reject { plugin, message }, Some(t)) => self.on_registration(
                    id,
                    *t,
                    |found| found.reject(plugin.clone(), message),
                    |handle| handle.reject(plugin.clone(), message),
                )?,
                (Rejection::Preempt { plugin, message }, None) => {
                    map.preempt(id, plugin.clone(), message)
                }
                (Rejection::Preempt { plugin, message }, Some(t)) => {
                    self.handle(*t)?.preempt(plugin.clone(), message)
                }
                (Rejection::For { status, cause }, None) => {
                    map.reject_for(id, status.clone(), *cause)
                }
                (Rejection::For { status, cause }, Some(t)) => {
                    checking::reject_registration(map, id, *t, status.clone(), *cause)
                }
                (Rejection::Remove, _) => match map.remove(id) {
                    Some(handle) => {
                        let decision = handle.decision();
                        if decision != Some(rejection.status()) {
                            return Err(format!("I2: removed {id}, its handle shows {decision:?}"));
                        }
                        removed = Some(handle.ticket());
                        true
                    }
                    None => false,
                },
            }),
            Call::AllowAll {
                ids,
                plugin,
                deferred: false,
            } => Answer::Batch(map.allow_all(ids, plugin.as_str())),
            Call::AllowAll {
                ids,
                plugin,
                deferred: true,
            } => match checking::allow_all_deferred(map, ids, plugin.as_str()) {
                Err(missing) => Answer::Batch(Err(missing)),
                Ok(held) => {
                    self.held_back(&held, expected)?;
                    Answer::Batch(Ok(held.deliver()))
                }
            },
            Call::RejectAll {
                batches,
                plugin,
                message,
                cause,
                deferred: false,
            } => Answer::Count(
                batches
                    .iter()
                    .map(|batch| map.reject_all(batch, plugin.clone(), message, *cause))
                    .sum(),
            ),
            Call::RejectAll {
                batches,
                plugin,
                message,
                cause,
                deferred: true,
            } => {
                let mut batches = batches.iter().map(|batch| {
                    checking::reject_all_deferred(map, batch, plugin.clone(), message, *cause)
                });
                let mut held = batches.next().ok_or("a deferred reject with no batch")?;
                for more in batches {
                    held.append(more);
                }
                self.held_back(&held, expected)?;
                Answer::Count(held.deliver())
            }
            Call::Expire { now } => {
                let returned = map.expire(*now);
                let model: Vec<Decision> = expected
                    .iter()
                    .map(|d| Decision::new(d.pod.clone(), d.status.clone(), d.cause))
                    .collect();
                if returned != model {
                    let names = |ds: &[Decision]| -> Vec<String> {
                        ds.iter().map(|d| d.pod.name().to_owned()).collect()
                    };
                    return Err(format!(
                        "H4: expire({now}) timed out {:?}, the model {:?} (the pods due)",
                        names(&returned),
                        names(&model)
                    ));
                }
                Answer::Count(returned.len())
            }
        };
        let calls = self.sink.take();
        let batch = matches!(call, Call::AllowAll { .. } | Call::RejectAll { .. });
        if batch && calls.len() > 1 {
            return Err(format!(
                "sink: one batch's decisions reached the sink in {} calls",
                calls.len()
            ));
        }
        let mut delivered: Vec<Delivered> =
            calls.into_iter().flatten().map(Delivered::untold).collect();
        if let (Some(ticket), [only]) = (removed, delivered.as_mut_slice()) {
            only.ticket = Some(ticket);
        }
        Ok(Report { answer, delivered })
    }

    fn state(&self) -> Cow<'_, WaitingState<()>> {
        Cow::Owned(checking::waiting_state(&self.map))
    }

    /// Each shard's own check (`checking::check_waiting_shards`: its `check()`, each pod in
    /// its uid's shard, each waiting latch undecided); the views equal to the merged state —
    /// `len`, `is_empty`, `next_deadline`, `snapshot` (ids, tickets, in id order), `get` and
    /// `find` of each waiting pod (its registration and pending plugins), `for_each`; and every
    /// handle the map ever gave out shows what the model says of its registration: waiting
    /// with its pending plugins and no decision, or decided with the model's status and cause,
    /// which `wait` returns at once (I1, I2).
    fn check<'m>(
        &self,
        state: &WaitingState<()>,
        expect: &dyn Fn(Ticket) -> Option<Expect<'m>>,
    ) -> Result<(), String> {
        let map = &self.map;
        checking::check_waiting_shards(map).map_err(|e| format!("check: {e}"))?;
        let views = [
            ("len", map.len() == state.len()),
            ("is_empty", map.is_empty() == state.is_empty()),
            (
                "next_deadline",
                map.next_deadline() == state.next_deadline(),
            ),
        ];
        if let Some((view, _)) = views.iter().find(|(_, same)| !same) {
            return Err(format!("{view}: the map's differs from its state's"));
        }
        let snapshot: Vec<(gangsched::PodId, Ticket)> = map
            .snapshot()
            .iter()
            .map(|h| (h.id().clone(), h.ticket()))
            .collect();
        let listed: Vec<(gangsched::PodId, Ticket)> = state
            .iter()
            .map(|e| (e.pod().id().clone(), e.ticket()))
            .collect();
        if snapshot != listed {
            return Err(format!("snapshot: {snapshot:?}, the state {listed:?}"));
        }
        let mut visited = 0;
        map.for_each(|_| visited += 1);
        if visited != state.len() {
            return Err(format!("for_each visited {visited} of {}", state.len()));
        }
        for entry in state.iter() {
            let id = entry.pod().id();
            let got = map.get(id).map(|h| (h.ticket(), h.pending()));
            if got != Some((entry.ticket(), entry.pending().to_vec())) {
                return Err(format!("get({id}): {got:?}, the state {entry:?}"));
            }
            let found = map.find(id).map(|f| f.ticket());
            if found != Some(entry.ticket()) {
                return Err(format!(
                    "find({id}): {found:?}, the state {:?}",
                    entry.ticket()
                ));
            }
        }
        for (ticket, handle) in &self.handles {
            let shown = (handle.decision(), handle.cause(), handle.pending());
            match expect(*ticket) {
                None => {
                    return Err(format!(
                        "a handle of {ticket:?}, which the driver never saw"
                    ))
                }
                Some(Expect::Waiting(entry)) => {
                    if handle.pod() != &entry.pod || shown != (None, None, entry.pending.clone()) {
                        return Err(format!(
                            "I1: waiting {}'s handle shows {shown:?}",
                            entry.pod.name()
                        ));
                    }
                }
                Some(Expect::Decided(d)) => {
                    let decided = (Some(d.status.clone()), Some(d.cause), Vec::new());
                    if handle.pod() != &d.pod || shown != decided {
                        return Err(format!(
                            "I2: decided {}'s handle shows {shown:?}",
                            d.pod.name()
                        ));
                    }
                    if handle.wait() != d.status {
                        return Err(format!("I2: {}'s wait differs", d.pod.name()));
                    }
                }
            }
        }
        Ok(())
    }
}
