//! Deliberately broken decision latches. Each keeps the real latch's outward behaviour but
//! makes one classic mistake; the loom models must find it (see the `witness_*` tests).

use std::time::Duration;

use gangsched::sync::channel::{self, Receiver, RecvError, Sender};
use gangsched::sync::{Condvar, Mutex};
use gangsched::waiting::timeout_message;
use gangsched::{Decision, Pod, Status, Time};

use crate::DecisionPoint;

/// The mistake a [`BrokenLatch`] makes.
pub trait Flaw: Send + Sync + 'static {
    /// Decides with `step` (which returns the decision, or `None` for "not now").
    fn decide(latch: &BrokenLatch<Self>, step: impl FnOnce(&mut Inner) -> Option<Status>) -> bool
    where
        Self: Sized;
}

/// Wakes waiters *before* the decision is stored: a waiter that checks in between sleeps
/// forever (a lost wake-up, I2).
#[derive(Debug)]
pub struct NotifyBeforeStore;

/// Checks "not yet decided" in one critical section and stores the decision in another: two
/// racing calls both decide (a double decision, I1/H4).
#[derive(Debug)]
pub struct CheckThenStoreSeparately;

/// The latch's state.
#[derive(Debug)]
pub struct Inner {
    pending: Vec<(&'static str, Duration)>,
    decision: Option<Status>,
}

/// A latch with the flaw `F`.
#[derive(Debug)]
pub struct BrokenLatch<F> {
    state: Mutex<Inner>,
    decided: Condvar,
    tx: Sender<Decision>,
    rx: Receiver<Decision>,
    pod: Pod,
    flaw: std::marker::PhantomData<F>,
}

impl<F> BrokenLatch<F> {
    fn deliver(&self, status: Status) {
        let cause = if status.is_success() {
            gangsched::Cause::Allowed
        } else {
            gangsched::Cause::Rejected
        };
        let _ = self.tx.send(Decision::new(self.pod.clone(), status, cause));
    }
}

impl Flaw for NotifyBeforeStore {
    fn decide(latch: &BrokenLatch<Self>, step: impl FnOnce(&mut Inner) -> Option<Status>) -> bool {
        latch.decided.notify_all(); // the mistake: nothing is stored yet
        let mut state = latch.state.lock();
        if state.decision.is_some() {
            return false;
        }
        let Some(status) = step(&mut state) else {
            return false;
        };
        state.decision = Some(status.clone());
        drop(state);
        latch.deliver(status);
        true
    }
}

impl Flaw for CheckThenStoreSeparately {
    fn decide(latch: &BrokenLatch<Self>, step: impl FnOnce(&mut Inner) -> Option<Status>) -> bool {
        let status = {
            let mut state = latch.state.lock();
            if state.decision.is_some() {
                return false;
            }
            step(&mut state)
        };
        let Some(status) = status else {
            return false;
        };
        // The mistake: another caller may have decided since the check above.
        let mut state = latch.state.lock();
        state.decision = Some(status.clone());
        latch.decided.notify_all();
        drop(state);
        latch.deliver(status);
        true
    }
}

impl<F: Flaw> DecisionPoint for BrokenLatch<F> {
    fn waiting_for(plugins: &[(&'static str, Duration)]) -> Self {
        let (tx, rx) = channel::unbounded();
        BrokenLatch {
            state: Mutex::new(Inner {
                pending: plugins.to_vec(),
                decision: None,
            }),
            decided: Condvar::new(),
            tx,
            rx,
            pod: Pod::new("p", "ns", "p-0"),
            flaw: std::marker::PhantomData,
        }
    }

    fn allow(&self, plugin: &'static str) -> bool {
        F::decide(self, |s| {
            s.pending.retain(|(p, _)| *p != plugin);
            s.pending.is_empty().then(Status::success)
        })
    }

    fn reject(&self, plugin: &'static str, message: &str) -> bool {
        F::decide(self, |_| {
            Some(Status::unschedulable(message).with_plugin(plugin))
        })
    }

    fn remove(&self) -> bool {
        F::decide(self, |_| Some(Status::unschedulable("removed")))
    }

    fn expire(&self, now: Time) -> Option<Status> {
        let mut timed_out = None;
        let decided = F::decide(self, |s| {
            let &(plugin, wait) = s.pending.iter().min_by_key(|(_, wait)| *wait)?;
            let status = (Time::ZERO + wait <= now).then(|| {
                Status::unschedulable(timeout_message(wait, &plugin.into())).with_plugin(plugin)
            })?;
            timed_out = Some(status.clone());
            Some(status)
        });
        timed_out.filter(|_| decided)
    }

    fn wait(&self) -> Status {
        let mut state = self.state.lock();
        loop {
            if let Some(status) = &state.decision {
                return status.clone();
            }
            self.decided.wait(&mut state);
        }
    }

    fn decision(&self) -> Option<Status> {
        self.state.lock().decision.clone()
    }

    fn registered(&self) -> bool {
        self.state.lock().decision.is_none()
    }

    fn next_delivery(&self) -> Result<Decision, RecvError> {
        self.rx.recv()
    }

    fn try_delivery(&self) -> Option<Decision> {
        self.rx.try_recv()
    }
}

/// A waiting map that iterates the way upstream's `IterateOverWaitingPods` does: the
/// callback runs while the map's lock is held, so a callback that decides a pod (which takes
/// the same lock) deadlocks (H5).
#[derive(Debug, Default)]
pub struct IterateUnderLock {
    /// `Some(decision)` once decided; `None` while the one pod waits.
    decision: Mutex<Option<Status>>,
}

impl IterateUnderLock {
    /// Decides the pod with `status`; `true` if this call decided.
    pub fn decide(&self, status: Status) -> bool {
        let mut decision = self.decision.lock();
        if decision.is_some() {
            return false;
        }
        *decision = Some(status);
        true
    }

    /// Calls `f` on each waiting pod with the lock held — the mistake.
    pub fn for_each(&self, mut f: impl FnMut(&Self)) {
        let decision = self.decision.lock();
        if decision.is_none() {
            f(self);
        }
        drop(decision);
    }
}

/// The mistake a [`BrokenQueue`] makes when it wakes blocked poppers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueFlaw {
    /// `move_all_to_active_or_backoff` and `activate` make pods active without waking anyone
    /// (only `add` notifies): a popper blocked on an empty queue sleeps through the move.
    NoWakeOnMove,
    /// `pop` checks for an active pod, releases the lock, then sleeps in a second critical
    /// section: a pod added in between is never noticed.
    SleepAfterUnlock,
}

/// A blocking scheduling queue over the real [`QueueState`](gangsched::queue::QueueState) that
/// makes one wake-up mistake; the loom queue models must find it.
pub struct BrokenQueue {
    flaw: QueueFlaw,
    state: Mutex<gangsched::queue::QueueState>,
    active: Condvar,
    plugins: gangsched::queue::PluginSet,
}

impl BrokenQueue {
    /// An empty queue with `flaw`, consulting `plugins`.
    pub fn new(flaw: QueueFlaw, plugins: gangsched::queue::PluginSet) -> BrokenQueue {
        BrokenQueue {
            flaw,
            state: Mutex::new(gangsched::queue::QueueState::new(Default::default())),
            active: Condvar::new(),
            plugins,
        }
    }

    /// Runs `f` on the state; wakes poppers unless the flaw forgets to (`is_move`).
    pub fn with_state<R>(
        &self,
        is_move: bool,
        f: impl FnOnce(&mut gangsched::queue::QueueState, &gangsched::queue::PluginSet) -> R,
    ) -> R {
        let result = f(&mut self.state.lock(), &self.plugins);
        if !(is_move && self.flaw == QueueFlaw::NoWakeOnMove) {
            self.active.notify_all();
        }
        result
    }

    /// Blocks until a pod is active (or the queue is closed) and pops it.
    pub fn pop(&self) -> Option<gangsched::PodId> {
        loop {
            {
                let mut state = self.state.lock();
                if let Some(popped) = state.pop() {
                    return Some(popped.info.id().clone());
                }
                if state.is_closed() {
                    return None;
                }
                if self.flaw == QueueFlaw::NoWakeOnMove {
                    self.active.wait(&mut state);
                    continue;
                }
            }
            // SleepAfterUnlock: the check above and this wait are two critical sections.
            let mut state = self.state.lock();
            self.active.wait(&mut state);
        }
    }
}

impl std::fmt::Debug for BrokenQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokenQueue")
            .field("flaw", &self.flaw)
            .finish()
    }
}
