//! The driver: both queues stepped by one op at a time, every check made after each.

use std::collections::BTreeMap;

use gangsched::queue::{PluginSet, QueuePlace, QueuePlugins, QueueState};
use gangsched::{ClusterEvent, Pod, PodId, QueueConfig, QueuedPodInfo, QueueingHint, Time};

use super::ops::tables;
use super::{event, pod_id, rejectors, universe_pod, Op, POD_NAMES, STEPS};
use crate::ops::queue::{self as queue_ops, Precheck, PureQueue, QueueOp, QueueOutcome};
#[cfg(doc)]
use crate::queue::plugins;
use crate::queue::QueueModel;

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
        let queue_op = self.translate(op, prefer);
        // What the lockstep's own checks need before the queues move.
        let must_not_park = match &queue_op {
            QueueOp::HandBack(info) => {
                self.popped.contains_key(info.id()) && self.must_not_park(info)
            }
            // Only each pod's first listing counts as its member record.
            QueueOp::HandBackGang(infos) => infos.iter().enumerate().any(|(i, info)| {
                let first = infos.iter().position(|other| other.id() == info.id()) == Some(i);
                first && self.popped.contains_key(info.id()) && self.must_not_park(info)
            }),
            _ => false,
        };
        self.see_before(&queue_op);
        if self.lose_events && matches!(queue_op, QueueOp::MoveAll { .. }) {
            return Ok(());
        }
        let (mut real_now, mut model_now) = (self.now, self.now);
        let mut target = PureQueue {
            state: &mut self.state,
            plugins: &self.plugins,
        };
        let real = queue_ops::apply(&mut target, &mut real_now, &queue_op);
        let model = self
            .model
            .apply(&queue_op, &mut model_now, &self.plugins)
            .expect("the lockstep sends only what the model models");
        self.now = real_now;
        let what = queue_op.name();
        match (real, model) {
            (QueueOutcome::Popped(real), QueueOutcome::Popped(model)) => match (&real, &model) {
                (None, None) => {}
                (Some(r), Some(m)) if m.info.matches(&r.info) && r.cycle == m.cycle => {
                    self.popped.insert(r.info.id().clone(), r.info.clone());
                    self.seen.insert(r.info.id().clone(), Vec::new());
                }
                _ => return Err(format!("pop: queue {real:?}, model {model:?}")),
            },
            (real, model) => {
                let (real, model) = (real.map_popped(drop), model.map_popped(drop));
                match &queue_op {
                    QueueOp::HandBack(info) => {
                        // I7 first: it is the queue's own property, whatever the model says.
                        self.parked_ok(info.id(), must_not_park)?;
                        same(what, real, model)?;
                        self.attempt_over(info.id());
                    }
                    QueueOp::HandBackGang(infos) => {
                        let handed_back = matches!(real, QueueOutcome::GangHandedBack(Ok(_)));
                        let ids = distinct_ids(infos);
                        if handed_back {
                            for id in &ids {
                                self.parked_ok(id, must_not_park)?;
                            }
                        }
                        same(what, real, model)?;
                        if handed_back {
                            for id in &ids {
                                self.attempt_over(id);
                            }
                        }
                    }
                    QueueOp::Done(id) => {
                        same(what, real, model)?;
                        self.attempt_over(id);
                    }
                    _ => same(what, real, model)?,
                }
            }
        }
        self.state.check().map_err(|e| format!("check (I4): {e}"))?;
        self.model.agrees_with(&self.state)
    }

    /// `op` in the operation vocabulary, its picks and indexes resolved.
    fn translate(&self, op: &Op, prefer: Option<&PodId>) -> QueueOp {
        match op {
            Op::Add { pod, priority } => QueueOp::Add(universe_pod(*pod, *priority)),
            Op::Update { pod, priority } => {
                let new = universe_pod(*pod, *priority);
                QueueOp::Update {
                    old: self.current_pod(new.id()),
                    new,
                }
            }
            Op::Delete { pod } => QueueOp::Delete(pod_id(*pod)),
            Op::Pop => QueueOp::Pop {
                prefer: prefer
                    .filter(|p| self.state.heads().any(|h| h == *p))
                    .cloned(),
            },
            Op::Done { pick } => QueueOp::Done(self.pick(*pick)),
            Op::HandBack { pick, rejectors } => {
                let id = self.pick(*pick);
                QueueOp::HandBack(self.hand_back_info(&id, *rejectors))
            }
            Op::HandBackGang { members } => QueueOp::HandBackGang(
                members
                    .iter()
                    .map(|&(pick, bits)| self.hand_back_info(&self.pick(pick), bits))
                    .collect(),
            ),
            Op::Activate { pods } => QueueOp::Activate(pods.iter().map(|&i| pod_id(i)).collect()),
            Op::MoveAll { event: e, exclude } => QueueOp::MoveAll {
                event: event(*e),
                precheck: Precheck {
                    rule: None,
                    exclude: exclude.map(pod_id),
                },
            },
            Op::FlushBackoff => QueueOp::FlushBackoff,
            Op::FlushLeftover => QueueOp::FlushLeftover,
            Op::Advance { step } => QueueOp::Advance(STEPS[usize::from(*step) % STEPS.len()]),
            Op::Close => QueueOp::Close,
        }
    }

    /// The events the attempts in flight see from `op`, logged before the queues move (I7).
    fn see_before(&mut self, op: &QueueOp) {
        let now = self.now;
        match op {
            QueueOp::Update { old, new } => {
                if let Some(seen) = self.seen.get_mut(new.id()) {
                    seen.push(ClusterEvent::UnscheduledPodUpdate {
                        old: old.clone(),
                        new: new.clone(),
                    });
                }
            }
            QueueOp::Activate(ids) => {
                for id in ids {
                    if let Some(seen) = self.seen.get_mut(id) {
                        seen.push(ClusterEvent::ForceActivate);
                    }
                }
            }
            QueueOp::MoveAll { event, .. } if self.plugins.is_event_of_interest(event.kind()) => {
                for seen in self.seen.values_mut() {
                    seen.push(event.clone());
                }
            }
            QueueOp::FlushLeftover => {
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
            }
            _ => {}
        }
    }
}

/// The pods of `infos`, each once, in the order first listed.
fn distinct_ids(infos: &[QueuedPodInfo]) -> Vec<PodId> {
    let mut ids: Vec<PodId> = Vec::new();
    for info in infos {
        if !ids.contains(info.id()) {
            ids.push(info.id().clone());
        }
    }
    ids
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, real: T, model: T) -> Result<(), String> {
    if real == model {
        Ok(())
    } else {
        Err(format!("{what}: queue {real:?}, model {model:?}"))
    }
}
