//! The scheduler's [`Parts`]: each call takes its component's lock (or shards) for the one
//! critical section it is, and the driver state's lock wakes the binding workers when jobs
//! arrive. The waiting map's decisions come in through [`DriverSink`], after every other lock
//! is released (H5).

use crate::gang::plugin::LockedGang;
use crate::queue::{QueuePlugins, QueueState};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use crate::{Code, Decision, DecisionSink, Mode, PermitPlugins, Pod, Status};

use super::jobs::{FifoJobs, Job, JobQueue};
use super::parts::Parts;
use super::scheduler::Inner;
use super::tally::{Counted, SchedulerTally, Tally as _};
use super::{BindError, CacheState, DriverState};
use crate::panic_message::panic_message;

/// The driver state behind its lock, and the condition variable binding workers wait on.
#[derive(Default)]
pub(crate) struct Driver {
    state: Mutex<DriverState>,
    work: Condvar,
}

impl Driver {
    /// One critical section on the state; wakes workers for the jobs it added.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut DriverState) -> R) -> R {
        let mut state = self.state.lock();
        let before = state.jobs().len();
        let result = f(&mut state);
        let added = state.jobs().len().saturating_sub(before);
        drop(state);
        match added {
            0 => {}
            1 => self.work.notify_one(),
            _ => self.work.notify_all(),
        }
        result
    }

    /// A copy of the state, for checkers.
    pub(crate) fn snapshot(&self) -> DriverState {
        self.state.lock().clone()
    }

    /// The state, read.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&DriverState) -> R) -> R {
        f(&self.state.lock())
    }

    /// Blocks until a job is there and takes it, in order; `None` once the workers are told
    /// to drain and no job is left.
    pub(crate) fn wait_for_job(&self) -> Option<Job> {
        let mut state: MutexGuard<'_, DriverState> = self.state.lock();
        loop {
            if let Some(job) = state.next_job() {
                return Some(job);
            }
            if state.is_draining() {
                return None;
            }
            self.work.wait(&mut state);
        }
    }

    /// Workers finish the jobs they have and stop.
    pub(crate) fn drain(&self) {
        self.state.lock().drain();
        self.work.notify_all();
    }
}

/// Held shared by each step that moves a pod between components in several critical sections
/// (`Parts::unobserved`) and exclusively by `Scheduler::check`, which so sees no step half
/// done. Taken before every other lock; never held across user code.
#[derive(Default)]
pub(crate) struct StepGate(RwLock<()>);

impl StepGate {
    /// A step that `check` must not see half done runs while this is held.
    pub(crate) fn step(&self) -> RwLockReadGuard<'_, ()> {
        self.0.read()
    }

    /// No such step runs while this is held.
    pub(crate) fn quiet(&self) -> RwLockWriteGuard<'_, ()> {
        self.0.write()
    }

    /// Whether a step holds the gate right now (for the checkers' probe).
    #[cfg(test)]
    pub(crate) fn is_held(&self) -> bool {
        self.0.try_write().is_none()
    }
}

/// The waiting map's sink: each decision joins the driver's jobs, its rejection marked
/// (`DriverState::decision_delivered`); a step's decisions together, in one critical section.
pub(crate) struct DriverSink(pub(crate) Arc<Driver>);

impl DecisionSink for DriverSink {
    fn deliver(&self, decision: Decision) {
        self.0.with(|d| d.decision_delivered(decision, true));
    }

    fn deliver_all(&self, decisions: Vec<Decision>) {
        self.0.with(|d| {
            for decision in decisions {
                d.decision_delivered(decision, true);
            }
        });
    }
}

/// The scheduler's components as [`Parts`].
pub(crate) struct SchedulerParts<'a> {
    inner: &'a Inner,
    gang: LockedGang<'a>,
}

impl<'a> SchedulerParts<'a> {
    pub(crate) fn new(inner: &'a Inner) -> SchedulerParts<'a> {
        SchedulerParts {
            inner,
            gang: inner.gang.parts(),
        }
    }
}

impl SchedulerParts<'_> {
    /// The placement panicked: counted, and an error status naming it.
    fn placement_panicked(&self, panic: &(dyn std::any::Any + Send)) -> Result<String, Status> {
        let message = panic_message(panic);
        self.inner.caught_panic("placement", &message);
        let status = Status::with_reason(Code::Error, format!("placement panicked: {message}"));
        Err(status.with_plugin(PLACEMENT))
    }
}

impl<'a> Parts for SchedulerParts<'a> {
    type Gang = LockedGang<'a>;
    type Jobs = FifoJobs;
    type Tally = SchedulerTally;

    fn mode(&self) -> Mode {
        self.inner.config.mode
    }

    fn gang_cycle(&self) -> crate::GangCycle {
        self.inner.config.gang_cycle
    }

    fn unobserved<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let inner = self.inner;
        let _step = inner.step_gate.step();
        f(self)
    }

    fn gang(&mut self) -> &mut LockedGang<'a> {
        &mut self.gang
    }

    fn queue<R>(&mut self, f: impl FnOnce(&mut QueueState, &dyn QueuePlugins) -> R) -> R {
        self.inner.queue.critical_section(f)
    }

    fn cache<R>(&mut self, f: impl FnOnce(&mut CacheState) -> R) -> R {
        self.inner.cache.with_mut(f)
    }

    fn driver<R>(&mut self, f: impl FnOnce(&mut DriverState) -> R) -> R {
        self.inner.driver.with(f)
    }

    fn read_queue<R>(&self, f: impl FnOnce(&QueueState) -> R) -> R {
        self.inner.queue.read(f)
    }

    fn read_cache<R>(&self, f: impl FnOnce(&CacheState) -> R) -> R {
        self.inner.cache.with(f)
    }

    fn read_driver<R>(&self, f: impl FnOnce(&DriverState) -> R) -> R {
        self.inner.driver.read(f)
    }

    fn place(&mut self, pod: &Pod) -> Result<String, Status> {
        let placement = &self.inner.placement;
        let placed = self
            .inner
            .cache
            .with(|cache| catch_unwind(AssertUnwindSafe(|| placement.place(pod, cache))));
        placed.unwrap_or_else(|panic| self.placement_panicked(&*panic))
    }

    fn place_on(&mut self, pod: &Pod, snapshot: &CacheState) -> Result<String, Status> {
        let placement = &self.inner.placement;
        catch_unwind(AssertUnwindSafe(|| placement.place(pod, snapshot)))
            .unwrap_or_else(|panic| self.placement_panicked(&*panic))
    }

    fn permit_plugins(&self) -> PermitPlugins {
        self.inner.permit_plugins.clone()
    }

    fn bind(&mut self, pod: &Pod, node: &str) -> Result<(), BindError> {
        let binder = &self.inner.binder;
        catch_unwind(AssertUnwindSafe(|| binder.bind(pod, node))).unwrap_or_else(|panic| {
            let message = panic_message(&*panic);
            self.inner.caught_panic("binder", &message);
            Err(BindError::Panicked(message))
        })
    }
}

/// The plugin named in the status of a placement that panicked.
pub(crate) const PLACEMENT: &str = "Placement";

impl Inner {
    /// Counts a panic caught in user code (`what`) and says so.
    pub(crate) fn caught_panic(&self, what: &str, message: &str) {
        tracing::warn!(
            plugin = what,
            panic = message,
            "caught a panic in user code"
        );
        self.driver
            .with(|d| d.tally_mut().count(Counted::PluginPanic));
    }
}
