//! The driver: runs a case, step by step, on the pure state or on the locked queue.

use gangsched::sync::atomic::{AtomicBool, Ordering};
use std::collections::BTreeMap;

use gangsched::queue::{PluginSet, Popped, QueueError, QueuePlace, QueueState};
use gangsched::sync::Arc;
use gangsched::{ClusterEvent, Pod, PodId, QueuedPodInfo, SchedulingQueue, Time};

use super::fidelity::FIDELITY;
use super::fixtures::{id, plugins, pod, T0};
use super::vocabulary::{At, Case, Pre, Step};

/// The operations a case drives, on the pure state or on the locked queue.
trait Queue {
    fn add(&mut self, pod: Pod, now: Time) -> Result<bool, QueueError>;
    fn pop(&mut self) -> Option<Popped>;
    fn back(&mut self, info: QueuedPodInfo, now: Time) -> Result<Option<QueuePlace>, QueueError>;
    fn done(&mut self, id: &PodId) -> bool;
    fn move_all(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
    ) -> usize;
    fn activate(&mut self, ids: &[PodId], now: Time) -> usize;
    fn flush_backoff(&mut self, now: Time) -> usize;
    fn flush_leftover(&mut self, now: Time) -> usize;
    fn update(&mut self, old: Pod, new: Pod, now: Time) -> QueuePlace;
    fn delete(&mut self, id: &PodId) -> bool;
    fn state(&self) -> QueueState;
}

/// The pure [`QueueState`] with its plugins.
struct Pure {
    q: QueueState,
    plugins: PluginSet,
}

impl Queue for Pure {
    fn add(&mut self, pod: Pod, now: Time) -> Result<bool, QueueError> {
        self.q.add(pod, now, &self.plugins)
    }
    fn pop(&mut self) -> Option<Popped> {
        self.q.pop()
    }
    fn back(&mut self, info: QueuedPodInfo, now: Time) -> Result<Option<QueuePlace>, QueueError> {
        self.q
            .add_unschedulable_if_not_present(info, now, &self.plugins)
    }
    fn done(&mut self, id: &PodId) -> bool {
        self.q.done(id)
    }
    fn move_all(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
    ) -> usize {
        self.q
            .move_all_to_active_or_backoff(event, precheck, now, &self.plugins)
    }
    fn activate(&mut self, ids: &[PodId], now: Time) -> usize {
        self.q.activate(ids, now, &self.plugins)
    }
    fn flush_backoff(&mut self, now: Time) -> usize {
        self.q.flush_backoff_completed(now, &self.plugins)
    }
    fn flush_leftover(&mut self, now: Time) -> usize {
        self.q.flush_unschedulable_leftover(now, &self.plugins)
    }
    fn update(&mut self, old: Pod, new: Pod, now: Time) -> QueuePlace {
        self.q.update(old, new, now, &self.plugins)
    }
    fn delete(&mut self, id: &PodId) -> bool {
        self.q.delete(id)
    }
    fn state(&self) -> QueueState {
        self.q.clone()
    }
}

impl Queue for SchedulingQueue {
    fn add(&mut self, pod: Pod, now: Time) -> Result<bool, QueueError> {
        SchedulingQueue::add(self, pod, now)
    }
    fn pop(&mut self) -> Option<Popped> {
        self.try_pop()
    }
    fn back(&mut self, info: QueuedPodInfo, now: Time) -> Result<Option<QueuePlace>, QueueError> {
        self.add_unschedulable_if_not_present(info, now)
    }
    fn done(&mut self, id: &PodId) -> bool {
        SchedulingQueue::done(self, id)
    }
    fn move_all(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
    ) -> usize {
        self.move_all_to_active_or_backoff(event, precheck, now)
    }
    fn activate(&mut self, ids: &[PodId], now: Time) -> usize {
        SchedulingQueue::activate(self, ids, now)
    }
    fn flush_backoff(&mut self, now: Time) -> usize {
        self.flush_backoff_completed(now)
    }
    fn flush_leftover(&mut self, now: Time) -> usize {
        self.flush_unschedulable_leftover(now)
    }
    fn update(&mut self, old: Pod, new: Pod, now: Time) -> QueuePlace {
        SchedulingQueue::update(self, old, new, now)
    }
    fn delete(&mut self, id: &PodId) -> bool {
        SchedulingQueue::delete(self, id)
    }
    fn state(&self) -> QueueState {
        self.snapshot()
    }
}

/// What a case runs on.
#[derive(Clone, Copy, Debug)]
pub enum Under {
    /// The pure [`QueueState`].
    State,
    /// The [`SchedulingQueue`] wrapper.
    Lock,
}

/// Where `id` is, as the table says it.
fn at(state: &QueueState, id: &PodId) -> At {
    let gated = state.info(id).is_some_and(|i| i.gated_by().is_some());
    match state.place(id) {
        None => At::Gone,
        Some(QueuePlace::Active(_)) => At::Active,
        Some(QueuePlace::Backoff(t)) => At::Backoff(t),
        Some(QueuePlace::ErrorBackoff(t)) => At::ErrorBackoff(t),
        Some(QueuePlace::Unschedulable) if gated => At::Gated,
        Some(QueuePlace::Unschedulable) => At::Unschedulable,
        Some(QueuePlace::InFlight) => At::InFlight,
    }
}

/// Runs `case` (its setup, then its steps) on `under`, checking each step's result or
/// expectation and `QueueState::check()` after every step; panics at the first mismatch,
/// naming the case, the step and its index.
pub fn run(case: &Case, under: Under) {
    let open = Arc::new(AtomicBool::new(false));
    let plugins = plugins(open.clone());
    let mut queue: Box<dyn Queue> = match under {
        Under::State => Box::new(Pure {
            q: QueueState::new(case.config),
            plugins,
        }),
        Under::Lock => Box::new(SchedulingQueue::new(case.config, Arc::new(plugins))),
    };
    // The popped pods' records, until they are handed back.
    let mut popped: BTreeMap<&str, QueuedPodInfo> = BTreeMap::new();
    for (i, step) in case.setup.iter().chain(case.steps).enumerate() {
        let ctx = format!(
            "{} / {:?} [{under:?}], step {i}: {step:?}",
            case.source, case.name
        );
        let state = queue.state();
        match *step {
            Step::Add(name, priority, now, want) => {
                let became_active = queue
                    .add(pod(name, priority), now)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                assert_eq!(became_active, want == At::Active, "{ctx}");
                assert_eq!(at(&queue.state(), &id(name)), want, "{ctx}");
            }
            Step::AddAgain(name) => {
                let place = state.place(&id(name));
                match queue.add(pod(name, 0), T0) {
                    Err(QueueError::AlreadyQueued { pod, place: p }) => {
                        assert_eq!(pod.id(), &id(name), "{ctx}");
                        assert_eq!(Some(p), place, "{ctx}");
                    }
                    other => panic!("{ctx}: want AlreadyQueued, got {other:?}"),
                }
                assert_eq!(queue.state(), state, "{ctx}: a refused add changes nothing");
            }
            Step::Pop(name) | Step::PopAttempt(name, _) => {
                let p = queue
                    .pop()
                    .unwrap_or_else(|| panic!("{ctx}: nothing to pop"));
                assert_eq!(p.info.id(), &id(name), "{ctx}: popped");
                assert_eq!(p.cycle, state.scheduling_cycle() + 1, "{ctx}: cycle");
                if let Step::PopAttempt(_, n) = *step {
                    assert_eq!(p.info.attempts(), n, "{ctx}: attempts");
                }
                assert!(
                    p.info.unschedulable_plugins().is_empty()
                        && p.info.pending_plugins().is_empty(),
                    "{ctx}: last attempt's rejectors are cleared"
                );
                popped.insert(name, p.info);
                assert_eq!(at(&queue.state(), &id(name)), At::InFlight, "{ctx}");
            }
            Step::PopNone => {
                assert_eq!(queue.pop().map(|p| p.info.id().clone()), None, "{ctx}");
            }
            Step::FirstActivated(name, t) => {
                let info = popped
                    .get(name)
                    .unwrap_or_else(|| panic!("{ctx}: not popped"));
                assert_eq!(info.initial_attempt(), Some(t), "{ctx}");
            }
            Step::Back {
                pod: name,
                rejected,
                pending,
                at: now,
                want,
            } => {
                let mut info = popped
                    .remove(name)
                    .unwrap_or_else(|| panic!("{ctx}: not popped"));
                for &plugin in rejected {
                    info = info.rejected_by(plugin);
                }
                for &plugin in pending {
                    info = info.pending_on(plugin);
                }
                let place = queue
                    .back(info, now)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let after = queue.state();
                assert_eq!(
                    place.is_none(),
                    want == At::Gone,
                    "{ctx}: returned {place:?}"
                );
                assert_eq!(place, after.place(&id(name)), "{ctx}: returned place");
                assert_eq!(at(&after, &id(name)), want, "{ctx}");
            }
            Step::Done(name) => {
                popped.remove(name);
                assert!(queue.done(&id(name)), "{ctx}: was in flight");
            }
            Step::Event(ev, pre, now, moved) => {
                let priority = |i: &QueuedPodInfo| i.pod().priority();
                let keep: Box<dyn Fn(&QueuedPodInfo) -> bool> = match pre {
                    Pre::All => Box::new(|_: &QueuedPodInfo| true),
                    Pre::MinPriority(min) => Box::new(move |i: &QueuedPodInfo| priority(i) >= min),
                    Pre::EvenAtLeast(min) => Box::new(move |i: &QueuedPodInfo| {
                        priority(i) % 2 == 0 && priority(i) >= min
                    }),
                    Pre::EvenNegative => {
                        Box::new(move |i: &QueuedPodInfo| priority(i) % 2 == 0 && priority(i) < 0)
                    }
                    Pre::Never => Box::new(|i: &QueuedPodInfo| -> bool {
                        panic!("precheck called for {} on an event of no interest", i.id())
                    }),
                };
                let precheck = match pre {
                    Pre::All => None,
                    _ => Some(&*keep),
                };
                assert_eq!(queue.move_all(ev.event(), precheck, now), moved, "{ctx}");
            }
            Step::Activate(names, now, moved) => {
                let ids: Vec<PodId> = names.iter().map(|n| id(n)).collect();
                assert_eq!(queue.activate(&ids, now), moved, "{ctx}");
            }
            Step::FlushBackoff(now, n) => {
                assert_eq!(queue.flush_backoff(now), n, "{ctx}");
            }
            Step::FlushLeftover(now, n) => {
                assert_eq!(queue.flush_leftover(now), n, "{ctx}");
            }
            Step::Update(name, priority, now, want) => {
                let old = state
                    .info(&id(name))
                    .map(|i| i.pod().clone())
                    .unwrap_or_else(|| pod(name, 0));
                let new = pod(name, priority);
                let place = queue.update(old, new.clone(), now);
                let after = queue.state();
                assert_eq!(Some(place), after.place(&id(name)), "{ctx}: returned place");
                assert_eq!(at(&after, &id(name)), want, "{ctx}");
                if want != At::InFlight {
                    let kept = after.info(&id(name)).expect("known").pod();
                    assert_eq!(kept, &new, "{ctx}: the queue keeps the new object");
                }
            }
            Step::Delete(name, known) => {
                assert_eq!(queue.delete(&id(name)), known, "{ctx}");
            }
            Step::Gate(value) => open.store(value, Ordering::SeqCst),
            Step::Is(name, want) => {
                assert_eq!(at(&state, &id(name)), want, "{ctx}");
            }
            Step::Order(names) => {
                let order: Vec<&str> = state.active_order().map(|i| i.as_str()).collect();
                assert_eq!(order, names, "{ctx}");
            }
            Step::Lengths(want) => {
                assert_eq!(state.lengths(), want, "{ctx}");
            }
        }
        queue
            .state()
            .check()
            .unwrap_or_else(|e| panic!("{ctx}: check: {e}"));
    }
}

/// Runs the [`FIDELITY`](super::FIDELITY) case whose name starts with `prefix`, on both.
pub fn run_fidelity(prefix: &str) {
    let case = FIDELITY
        .iter()
        .find(|c| c.name.starts_with(prefix))
        .expect("a fidelity case");
    run(case, Under::State);
    run(case, Under::Lock);
}
