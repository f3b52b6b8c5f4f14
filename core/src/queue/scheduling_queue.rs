use std::fmt;

#[cfg(feature = "checking")]
use super::flaw::QueueFlaw;
use super::{
    ClusterEvent, Popped, QueueConfig, QueueError, QueueLengths, QueuePlace, QueuePlugins,
    QueueState, QueuedPodInfo,
};
use crate::sync::{Arc, Condvar, Mutex, MutexGuard};
use crate::{Pod, PodId, Time};

/// The scheduling queue: a [`QueueState`] behind one lock, with a `pop` that blocks until a pod
/// is active or the queue is closed. Every operation that can make a pod active wakes the
/// blocked poppers (I2 for the queue). Time is passed in; no method reads a clock. Clones share
/// the queue.
///
/// The [`QueuePlugins`] run under the queue's lock, as in kube-scheduler: they must not call
/// back into the queue.
#[derive(Clone)]
pub struct SchedulingQueue {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<QueueState>,
    active: Condvar,
    plugins: Arc<dyn QueuePlugins>,
    /// A witness's planted bug in the wake-ups.
    #[cfg(feature = "checking")]
    flaw: Option<QueueFlaw>,
}

impl SchedulingQueue {
    /// An empty queue consulting `plugins`.
    pub fn new(config: QueueConfig, plugins: Arc<dyn QueuePlugins>) -> SchedulingQueue {
        SchedulingQueue {
            shared: Arc::new(Shared {
                state: Mutex::new(QueueState::new(config)),
                active: Condvar::new(),
                plugins,
                #[cfg(feature = "checking")]
                flaw: None,
            }),
        }
    }

    /// An empty queue with `flaw` planted in its wake-ups (`checking::scheduling_queue_with_flaw`).
    #[cfg(feature = "checking")]
    pub(crate) fn with_flaw(
        config: QueueConfig,
        plugins: Arc<dyn QueuePlugins>,
        flaw: QueueFlaw,
    ) -> SchedulingQueue {
        SchedulingQueue {
            shared: Arc::new(Shared {
                state: Mutex::new(QueueState::new(config)),
                active: Condvar::new(),
                plugins,
                flaw: Some(flaw),
            }),
        }
    }

    /// Whether `flaw` is planted in this queue's wake-ups (see `planted!`).
    #[cfg(feature = "checking")]
    fn planted(&self, flaw: QueueFlaw) -> bool {
        self.shared.flaw == Some(flaw)
    }

    /// See [`QueueState::add`]; wakes a blocked `pop` if the pod became active.
    pub fn add(&self, pod: Pod, now: Time) -> Result<bool, QueueError> {
        self.critical_section(|state, plugins| state.add(pod, now, plugins))
    }

    /// See [`QueueState::update`].
    pub fn update(&self, old: Pod, new: Pod, now: Time) -> QueuePlace {
        self.critical_section(|state, plugins| state.update(old, new, now, plugins))
    }

    /// See [`QueueState::delete`].
    pub fn delete(&self, id: &PodId) -> bool {
        self.critical_section(|state, _| state.delete(id))
    }

    /// Blocks until a pod is active and pops it; `None` once the queue is closed and empty.
    pub fn pop(&self) -> Option<Popped> {
        let mut state = self.lock();
        loop {
            if let Some(popped) = state.pop() {
                let lengths = state.lengths();
                drop(state);
                lengths.publish();
                return Some(popped);
            }
            if state.is_closed() {
                return None;
            }
            if planted!(self, QueueFlaw::ChecksThenSleeps) {
                drop(state);
                state = self.lock();
            }
            self.shared.active.wait(&mut state);
        }
    }

    /// Pops a pod if one is active, without blocking.
    pub fn try_pop(&self) -> Option<Popped> {
        self.critical_section(|state, _| state.pop())
    }

    /// See [`QueueState::done`].
    pub fn done(&self, id: &PodId) -> bool {
        self.critical_section(|state, _| state.done(id))
    }

    /// See [`QueueState::add_unschedulable_if_not_present`].
    pub fn add_unschedulable_if_not_present(
        &self,
        info: QueuedPodInfo,
        now: Time,
    ) -> Result<Option<QueuePlace>, QueueError> {
        let hand_back = |state: &mut QueueState, plugins: &dyn QueuePlugins| {
            state.add_unschedulable_if_not_present(info, now, plugins)
        };
        if planted!(self, QueueFlaw::HandBackWakesNobody) {
            let mut state = self.lock();
            return hand_back(&mut state, &*self.shared.plugins);
        }
        self.critical_section(hand_back)
    }

    /// See [`QueueState::add_gang_unschedulable`].
    pub fn add_gang_unschedulable(
        &self,
        members: Vec<QueuedPodInfo>,
        now: Time,
    ) -> Result<Vec<Option<QueuePlace>>, QueueError> {
        self.critical_section(|state, plugins| state.add_gang_unschedulable(members, now, plugins))
    }

    /// See [`QueueState::activate`].
    pub fn activate(&self, ids: &[PodId], now: Time) -> usize {
        let activated = self.critical_section(|state, plugins| state.activate(ids, now, plugins));
        if activated > 0 {
            tracing::debug!(activated, "queue: siblings activated");
        }
        activated
    }

    /// See [`QueueState::move_all_to_active_or_backoff`].
    pub fn move_all_to_active_or_backoff(
        &self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
    ) -> usize {
        let kind = event.kind();
        let moved = self.critical_section(|state, plugins| {
            state.move_all_to_active_or_backoff(event, precheck, now, plugins)
        });
        if moved > 0 {
            tracing::debug!(event = ?kind, moved, "queue: moved to active or backoff");
        } else {
            tracing::trace!(event = ?kind, "queue: nothing to move");
        }
        moved
    }

    /// See [`QueueState::flush_backoff_completed`].
    pub fn flush_backoff_completed(&self, now: Time) -> usize {
        let moved =
            self.critical_section(|state, plugins| state.flush_backoff_completed(now, plugins));
        if moved > 0 {
            tracing::debug!(moved, "queue: backoff completed");
        }
        moved
    }

    /// See [`QueueState::flush_unschedulable_leftover`].
    pub fn flush_unschedulable_leftover(&self, now: Time) -> usize {
        let moved = self
            .critical_section(|state, plugins| state.flush_unschedulable_leftover(now, plugins));
        if moved > 0 {
            tracing::debug!(moved, "queue: unschedulable leftover flushed");
        }
        moved
    }

    /// Closes the queue and wakes every blocked `pop`.
    pub fn close(&self) {
        self.lock().close();
        self.shared.active.notify_all();
    }

    /// Runs `f` on the state under the lock, changing nothing.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&QueueState) -> R) -> R {
        f(&self.lock())
    }

    /// Where pod `id` is.
    pub fn place(&self, id: &PodId) -> Option<QueuePlace> {
        self.lock().place(id)
    }

    /// See [`QueueState::next_backoff_expiry`].
    pub fn next_backoff_expiry(&self) -> Option<Time> {
        self.lock().next_backoff_expiry()
    }

    /// See [`QueueState::next_leftover_flush`].
    pub fn next_leftover_flush(&self) -> Option<Time> {
        self.lock().next_leftover_flush()
    }

    /// How many pods are in each part.
    pub fn lengths(&self) -> QueueLengths {
        self.lock().lengths()
    }

    /// A copy of the pure state, for checkers.
    pub fn snapshot(&self) -> QueueState {
        self.lock().clone()
    }

    /// Runs `f` under the lock, wakes the poppers if the active queue grew, and publishes the
    /// queue's lengths ([`telemetry::PENDING_PODS`]) once the lock is released: one critical
    /// section of the queue, as the driver's steps take it.
    pub(crate) fn critical_section<R>(
        &self,
        f: impl FnOnce(&mut QueueState, &dyn QueuePlugins) -> R,
    ) -> R {
        let mut state = self.lock();
        // What a blocked pop could take grew: the active queue, or (1.36's pop from backoff)
        // the pods backing off for a rejection.
        let before = state.poppable_len();
        let result = f(&mut state, &*self.shared.plugins);
        let grew = state.poppable_len() > before;
        let lengths = state.lengths();
        drop(state);
        if planted!(self, QueueFlaw::WakesOneOnlyWhenEmpty) {
            if grew && before == 0 {
                self.shared.active.notify_one();
            }
        } else if grew {
            self.shared.active.notify_all();
        }
        lengths.publish();
        result
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.shared.state.lock()
    }
}

impl fmt::Debug for SchedulingQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchedulingQueue")
            .field("lengths", &self.lengths())
            .finish()
    }
}
