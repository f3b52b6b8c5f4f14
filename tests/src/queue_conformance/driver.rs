//! The driver: runs a case, step by step, on the pure state or on the locked queue.

use gangsched::sync::atomic::{AtomicBool, Ordering};
use std::collections::BTreeMap;

use gangsched::queue::{PluginSet, Popped, QueueError, QueuePlace, QueueState};
use gangsched::sync::Arc;
use gangsched::{PodId, QueuedPodInfo, SchedulingQueue, Time};
use gangway_model::ops::queue::{apply, Precheck, PriorityRule, PureQueue, QueueOp, QueueOutcome};

use super::fidelity::FIDELITY;
use super::fixtures::{id, plugins, pod, T0};
use super::vocabulary::{At, Case, Pre, Step};

/// What a case runs on: the pure state with its plugins, or the locked queue.
enum Subject {
    Pure(Box<(QueueState, PluginSet)>),
    Lock(SchedulingQueue),
}

impl Subject {
    /// Applies `op` at `now` through the operation vocabulary.
    fn apply(&mut self, now: Time, op: &QueueOp) -> QueueOutcome<Popped> {
        let mut now = now;
        match self {
            Subject::Pure(pure) => {
                let (state, plugins) = &mut **pure;
                let mut target = PureQueue { state, plugins };
                apply(&mut target, &mut now, op)
            }
            Subject::Lock(queue) => apply(queue, &mut now, op),
        }
    }

    /// A copy of the queue's state.
    fn state(&self) -> QueueState {
        match self {
            Subject::Pure(pure) => pure.0.clone(),
            Subject::Lock(queue) => queue.snapshot(),
        }
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
    let mut queue = match under {
        Under::State => Subject::Pure(Box::new((QueueState::new(case.config), plugins))),
        Under::Lock => Subject::Lock(SchedulingQueue::new(case.config, Arc::new(plugins))),
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
                let QueueOutcome::Added(added) =
                    queue.apply(now, &QueueOp::Add(pod(name, priority)))
                else {
                    unreachable!("an add's outcome")
                };
                let became_active = added.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                assert_eq!(became_active, want == At::Active, "{ctx}");
                assert_eq!(at(&queue.state(), &id(name)), want, "{ctx}");
            }
            Step::AddAgain(name) => {
                let place = state.place(&id(name));
                match queue.apply(T0, &QueueOp::Add(pod(name, 0))) {
                    QueueOutcome::Added(Err(QueueError::AlreadyQueued { pod, place: p })) => {
                        assert_eq!(pod.id(), &id(name), "{ctx}");
                        assert_eq!(Some(p), place, "{ctx}");
                    }
                    other => panic!("{ctx}: want AlreadyQueued, got {other:?}"),
                }
                assert_eq!(queue.state(), state, "{ctx}: a refused add changes nothing");
            }
            Step::Pop(name) | Step::PopAttempt(name, _) => {
                let QueueOutcome::Popped(taken) = queue.apply(T0, &QueueOp::Pop { prefer: None })
                else {
                    unreachable!("a pop's outcome")
                };
                let p = taken.unwrap_or_else(|| panic!("{ctx}: nothing to pop"));
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
                let popped = queue.apply(T0, &QueueOp::Pop { prefer: None });
                assert!(
                    matches!(popped, QueueOutcome::Popped(None)),
                    "{ctx}: {popped:?}"
                );
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
                let QueueOutcome::HandedBack(back) = queue.apply(now, &QueueOp::HandBack(info))
                else {
                    unreachable!("a hand-back's outcome")
                };
                let place = back.unwrap_or_else(|e| panic!("{ctx}: {e}"));
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
                let done = queue.apply(T0, &QueueOp::Done(id(name)));
                assert_eq!(done, QueueOutcome::Done(true), "{ctx}: was in flight");
            }
            Step::Event(ev, pre, now, moved) => {
                let rule = match pre {
                    Pre::All => None,
                    Pre::MinPriority(min) => Some(PriorityRule::AtLeast(min)),
                    Pre::EvenAtLeast(min) => Some(PriorityRule::EvenAtLeast(min)),
                    Pre::EvenNegative => Some(PriorityRule::EvenNegative),
                    Pre::Never => Some(PriorityRule::Never),
                };
                let op = QueueOp::MoveAll {
                    event: ev.event(),
                    precheck: Precheck {
                        rule,
                        exclude: None,
                    },
                };
                let outcome = queue.apply(now, &op);
                assert_eq!(
                    outcome,
                    QueueOutcome::Moved { moved, asked: None },
                    "{ctx} (a precheck asked about a pod on an event of no interest names it)"
                );
            }
            Step::Activate(names, now, moved) => {
                let ids: Vec<PodId> = names.iter().map(|n| id(n)).collect();
                let outcome = queue.apply(now, &QueueOp::Activate(ids));
                assert_eq!(outcome, QueueOutcome::Activated(moved), "{ctx}");
            }
            Step::FlushBackoff(now, n) => {
                let outcome = queue.apply(now, &QueueOp::FlushBackoff);
                assert_eq!(outcome, QueueOutcome::Flushed(n), "{ctx}");
            }
            Step::FlushLeftover(now, n) => {
                let outcome = queue.apply(now, &QueueOp::FlushLeftover);
                assert_eq!(outcome, QueueOutcome::Flushed(n), "{ctx}");
            }
            Step::Update(name, priority, now, want) => {
                let old = state
                    .info(&id(name))
                    .map(|i| i.pod().clone())
                    .unwrap_or_else(|| pod(name, 0));
                let new = pod(name, priority);
                let op = QueueOp::Update {
                    old,
                    new: new.clone(),
                };
                let QueueOutcome::Updated(place) = queue.apply(now, &op) else {
                    unreachable!("an update's outcome")
                };
                let after = queue.state();
                assert_eq!(Some(place), after.place(&id(name)), "{ctx}: returned place");
                assert_eq!(at(&after, &id(name)), want, "{ctx}");
                if want != At::InFlight {
                    let kept = after.info(&id(name)).expect("known").pod();
                    assert_eq!(kept, &new, "{ctx}: the queue keeps the new object");
                }
            }
            Step::Delete(name, known) => {
                let outcome = queue.apply(T0, &QueueOp::Delete(id(name)));
                assert_eq!(outcome, QueueOutcome::Deleted(known), "{ctx}");
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
