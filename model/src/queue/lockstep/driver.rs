//! The driver: both queues stepped by one op at a time, every check made after each.

use std::collections::BTreeMap;

use gangsched::queue::{PluginSet, QueuePlace, QueuePlugins, QueueState};
use gangsched::{ClusterEvent, Pod, PodId, QueueConfig, QueuedPodInfo, QueueingHint, Time};

use super::ops::tables;
use super::{event, pod_id, rejectors, universe_pod, Op, POD_NAMES, STEPS};
#[cfg(doc)]
use crate::queue::plugins;
use crate::queue::{ModelInfo, QueueModel};

/// Runs `ops` from an empty queue with `config`; the first failed check, described.
pub fn run<'a>(config: QueueConfig, ops: impl IntoIterator<Item = &'a Op>) -> Result<(), String> {
    let mut lockstep = Lockstep::new(config);
    for (i, op) in ops.into_iter().enumerate() {
        lockstep
            .step(op)
            .map_err(|e| format!("op {i} {op:?} at {}: {e}", lockstep.now))?;
    }
    Ok(())
}

/// The real queue and the model side by side.
#[derive(Debug)]
pub struct Lockstep {
    /// The real queue.
    pub state: QueueState,
    /// The model.
    pub model: QueueModel,
    /// The plugins both use ([`plugins`]).
    pub plugins: PluginSet,
    /// The clock.
    pub now: Time,
    /// The record each pod in flight was popped with.
    popped: BTreeMap<PodId, QueuedPodInfo>,
    /// The driver's own log, per pod in flight, of the events its attempt saw (for I7).
    seen: BTreeMap<PodId, Vec<ClusterEvent>>,
    /// A deliberately broken run, for witness tests: `MoveAll` events reach neither queue
    /// (only the driver's log), as if both lost them. Equality then holds, so only the I7
    /// check can notice.
    pub lose_events: bool,
}

impl Lockstep {
    /// Both queues empty, at time zero.
    pub fn new(config: QueueConfig) -> Lockstep {
        Lockstep {
            state: QueueState::new(config),
            model: QueueModel::new(config),
            plugins: tables().plugins.clone(),
            now: Time::ZERO,
            popped: BTreeMap::new(),
            seen: BTreeMap::new(),
            lose_events: false,
        }
    }

    /// This lockstep with `flaw` planted in the real queue (`checking::queue_state_with_flaw`),
    /// for a witness that the checks find it. Call it before [`with_indexes`](Self::with_indexes).
    pub fn planted(mut self, flaw: gangsched::checking::QueueFlaw) -> Lockstep {
        let config = *self.state.config();
        self.state = gangsched::checking::queue_state_with_flaw(config, flaw);
        self
    }

    /// This lockstep with the real queue's derived indexes built from the start (they are
    /// otherwise built only once a queue is large): its leftover flushes and deadlines then
    /// read the pool by time parked, and every change keeps the group index, all checked by
    /// `check()` and against the model.
    pub fn with_indexes(mut self) -> Lockstep {
        gangsched::checking::build_indexes(&mut self.state);
        self
    }

    /// The pod a pick names (see the [module documentation](super)).
    pub fn pick(&self, pick: u8) -> PodId {
        if pick < 128 && !self.popped.is_empty() {
            let k = usize::from(pick) % self.popped.len();
            return self.popped.keys().nth(k).expect("in range").clone();
        }
        pod_id(pick)
    }

    /// The pod object the queue holds for `id`, or the universe pod at priority 0.
    fn current_pod(&self, id: &PodId) -> Pod {
        match self.state.info(id) {
            Some(info) => info.pod().clone(),
            None => {
                let index = POD_NAMES.iter().position(|n| *n == id.as_str());
                universe_pod(
                    u8::try_from(index.expect("a universe pod")).expect("< 8"),
                    0,
                )
            }
        }
    }

    /// The record a pod is handed back with: as popped if in flight, else a fresh one.
    fn hand_back_info(&self, id: &PodId, bits: u8) -> QueuedPodInfo {
        let info = match self.popped.get(id) {
            Some(info) => info.clone(),
            None => QueuedPodInfo::new(self.current_pod(id), self.now),
        };
        rejectors(info, bits)
    }

    /// Whether I7 forbids parking `info` after its attempt: it has no rejector, or its
    /// attempt saw a wildcard or an event a rejector's hint says `Queue` (or fails) for.
    fn must_not_park(&self, info: &QueuedPodInfo) -> bool {
        if !info.has_rejectors() {
            return true;
        }
        let seen = self.seen.get(info.id()).map_or(&[][..], Vec::as_slice);
        seen.iter().any(|event| {
            event.is_wildcard()
                || info
                    .unschedulable_plugins()
                    .iter()
                    .chain(info.pending_plugins())
                    .any(|p| {
                        self.plugins.registered(p, event.kind())
                            && self.plugins.hint(p, info.pod(), event)
                                != Ok(QueueingHint::QueueSkip)
                    })
        })
    }

    /// I7 for pod `id` after it was handed back.
    fn parked_ok(&self, id: &PodId, must_not_park: bool) -> Result<(), String> {
        let parked = self.state.place(id) == Some(QueuePlace::Unschedulable)
            && self.state.info(id).is_some_and(|i| i.gated_by().is_none());
        if must_not_park && parked {
            return Err(format!(
                "I7: {id} parked in the unschedulable pool after its attempt saw {:?}",
                self.seen.get(id)
            ));
        }
        Ok(())
    }

    fn attempt_over(&mut self, id: &PodId) {
        self.popped.remove(id);
        self.seen.remove(id);
    }

    /// Applies `op` to both queues and checks everything (see the
    /// [module documentation](super)).
    pub fn step(&mut self, op: &Op) -> Result<(), String> {
        self.step_preferring(op, None)
    }

    /// Like [`step`](Self::step), but a pop takes `prefer` if the real queue says it ties at
    /// the head ([`QueueState::heads`]) — for a driver following another queue's tie order
    /// (the corpus differential follows kube-scheduler's heap).
    pub fn step_preferring(&mut self, op: &Op, prefer: Option<&PodId>) -> Result<(), String> {
        let now = self.now;
        let p = &self.plugins;
        match op {
            Op::Add { pod, priority: pr } => {
                let pod = universe_pod(*pod, *pr);
                let real = self.state.add(pod.clone(), now, p);
                let model = self.model.add(pod, now, p);
                same("add", real, model)?;
            }
            Op::Update { pod, priority: pr } => {
                let new = universe_pod(*pod, *pr);
                let old = self.current_pod(new.id());
                if self.seen.contains_key(new.id()) {
                    let event = ClusterEvent::UnscheduledPodUpdate {
                        old: old.clone(),
                        new: new.clone(),
                    };
                    self.seen.get_mut(new.id()).expect("in flight").push(event);
                }
                let real = self.state.update(old.clone(), new.clone(), now, p);
                let model = self.model.update(old, new, now, p);
                same("update", real, model)?;
            }
            Op::Delete { pod } => {
                let id = pod_id(*pod);
                same("delete", self.state.delete(&id), self.model.delete(&id))?;
            }
            Op::Pop => {
                let tied = prefer.filter(|p| self.state.heads().any(|h| h == *p));
                let (real, model) = match tied {
                    Some(p) => (self.state.pop_tied(p), self.model.pop_pod(p)),
                    None => (self.state.pop(), self.model.pop()),
                };
                match (&real, &model) {
                    (None, None) => {}
                    (Some(r), Some(m)) if m.info.matches(&r.info) && r.cycle == m.cycle => {
                        self.popped.insert(r.info.id().clone(), r.info.clone());
                        self.seen.insert(r.info.id().clone(), Vec::new());
                    }
                    _ => return Err(format!("pop: queue {real:?}, model {model:?}")),
                }
            }
            Op::Done { pick } => {
                let id = self.pick(*pick);
                same("done", self.state.done(&id), self.model.done(&id))?;
                self.attempt_over(&id);
            }
            Op::HandBack { pick, rejectors } => {
                let id = self.pick(*pick);
                let info = self.hand_back_info(&id, *rejectors);
                let must_not_park = self.popped.contains_key(&id) && self.must_not_park(&info);
                let model =
                    self.model
                        .add_unschedulable_if_not_present(ModelInfo::of(&info), now, p);
                let real = self.state.add_unschedulable_if_not_present(info, now, p);
                // I7 first: it is the queue's own property, whatever the model says.
                self.parked_ok(&id, must_not_park)?;
                same("hand back", real, model)?;
                self.attempt_over(&id);
            }
            Op::HandBackGang { members } => {
                let mut ids: Vec<PodId> = Vec::new();
                let mut infos = Vec::new();
                for &(pick, bits) in members {
                    let id = self.pick(pick);
                    infos.push(self.hand_back_info(&id, bits));
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
                // Only each pod's first listing counts as its member record.
                let must_not_park = ids.iter().any(|id| {
                    let first = infos.iter().find(|i| i.id() == id).expect("listed");
                    self.popped.contains_key(id) && self.must_not_park(first)
                });
                let model = self.model.add_gang_unschedulable(
                    infos.iter().map(ModelInfo::of).collect(),
                    now,
                    p,
                );
                let real = self.state.add_gang_unschedulable(infos, now, p);
                let handed_back = real.is_ok();
                if handed_back {
                    for id in &ids {
                        self.parked_ok(id, must_not_park)?;
                    }
                }
                same("gang hand back", real, model)?;
                if handed_back {
                    for id in &ids {
                        self.attempt_over(id);
                    }
                }
            }
            Op::Activate { pods } => {
                let ids: Vec<PodId> = pods.iter().map(|&i| pod_id(i)).collect();
                for id in &ids {
                    if let Some(seen) = self.seen.get_mut(id) {
                        seen.push(ClusterEvent::ForceActivate);
                    }
                }
                let real = self.state.activate(&ids, now, p);
                let model = self.model.activate(&ids, now, p);
                same("activate", real, model)?;
            }
            Op::MoveAll { event: e, exclude } => {
                let event = event(*e);
                if p.is_event_of_interest(event.kind()) {
                    for seen in self.seen.values_mut() {
                        seen.push(event.clone());
                    }
                }
                if self.lose_events {
                    return Ok(());
                }
                let excluded = exclude.map(pod_id);
                let keep_real = |info: &QueuedPodInfo| Some(info.id()) != excluded.as_ref();
                let keep_model = |info: &ModelInfo| Some(info.id()) != excluded.as_ref();
                let real_check: Option<&dyn Fn(&QueuedPodInfo) -> bool> =
                    excluded.as_ref().map(|_| &keep_real as _);
                let model_check: Option<&dyn Fn(&ModelInfo) -> bool> =
                    excluded.as_ref().map(|_| &keep_model as _);
                let real =
                    self.state
                        .move_all_to_active_or_backoff(event.clone(), real_check, now, p);
                let model = self
                    .model
                    .move_all_to_active_or_backoff(event, model_check, now, p);
                same("move all", real, model)?;
            }
            Op::FlushBackoff => {
                let real = self.state.flush_backoff_completed(now, p);
                let model = self.model.flush_backoff_completed(now, p);
                same("flush backoff", real, model)?;
            }
            Op::FlushLeftover => {
                // A flush that finds a stale pod is an event for the pods in flight.
                let max = self.state.config().max_in_unschedulable;
                let stale = self.state.pods().any(|(_, place, info)| {
                    place == QueuePlace::Unschedulable && now - info.parked_since() > max
                });
                if stale {
                    for seen in self.seen.values_mut() {
                        seen.push(ClusterEvent::UnschedulableTimeout);
                    }
                }
                let real = self.state.flush_unschedulable_leftover(now, p);
                let model = self.model.flush_unschedulable_leftover(now, p);
                same("flush leftover", real, model)?;
            }
            Op::Advance { step } => {
                self.now += STEPS[usize::from(*step) % STEPS.len()];
            }
            Op::Close => {
                self.state.close();
                self.model.close();
            }
        }
        self.state.check().map_err(|e| format!("check (I4): {e}"))?;
        self.model.agrees_with(&self.state)
    }
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, real: T, model: T) -> Result<(), String> {
    if real == model {
        Ok(())
    } else {
        Err(format!("{what}: queue {real:?}, model {model:?}"))
    }
}
