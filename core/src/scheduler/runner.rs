use crate::sync::thread::{self, JoinHandle};
use crate::sync::Mutex;
use crate::time::{Alarm, Clock, Deadlines};
use crate::{Time, TimerDriver};

use super::parts::Parts;
use super::steps;
use super::Scheduler;
use crate::queue::Popped;

/// A [`Scheduler`] running on its own threads: one scheduling loop, the configured number of
/// binding workers fed by the driver's job queue (no thread per waiting pod), and one timer
/// thread for permit deadlines and the queue's flushes. [`shutdown`](Self::shutdown) (or drop) stops and
/// joins them all.
#[must_use = "the scheduler's threads stop when this is dropped"]
pub struct RunningScheduler {
    scheduler: Scheduler,
    scheduling: Option<JoinHandle<()>>,
    workers: Vec<JoinHandle<()>>,
    timer: Option<TimerDriver>,
}

impl Scheduler {
    /// Starts the scheduling loop, `config.workers` binding workers and a timer thread, all
    /// reading time from `clock`. Events keep coming in through this `Scheduler` (or a clone).
    pub fn start<C>(&self, clock: C) -> RunningScheduler
    where
        C: Clock + Clone + 'static,
    {
        self.start_on(clock, OwnParts)
    }

    /// [`start`](Self::start), the scheduling and binding cycles run on the parts `run_on`
    /// gives (the scheduler's own; with the `checking` feature, a flaw planted around them,
    /// `checking::start_with_flaw`).
    pub(crate) fn start_on<C, R>(&self, clock: C, run_on: R) -> RunningScheduler
    where
        C: Clock + Clone + 'static,
        R: RunOn,
    {
        let scheduling = thread::spawn("gangway-scheduling", {
            let scheduler = self.clone();
            let clock = clock.clone();
            move || {
                while let Some(popped) = scheduler.inner.queue.pop() {
                    run_on.schedule(&scheduler, popped, clock.now());
                }
            }
        });
        let workers = (0..self.inner.config.workers.max(1))
            .map(|_| {
                let scheduler = self.clone();
                let clock = clock.clone();
                thread::spawn("gangway-binding", move || {
                    run_on.bind_jobs(&scheduler, &clock)
                })
            })
            .collect();
        let timers = Timers::new(self.clone(), clock.now());
        let timer = TimerDriver::spawn(timers, clock);
        RunningScheduler {
            scheduler: self.clone(),
            scheduling: Some(scheduling),
            workers,
            timer: Some(timer),
        }
    }
}

/// What a running scheduler's threads run their cycles on.
pub(crate) trait RunOn: Copy + Send + 'static {
    /// One scheduling cycle of `popped`.
    fn schedule(self, scheduler: &Scheduler, popped: Popped, now: Time);

    /// A binding worker: the driver's jobs, one binding cycle each, until it closes.
    fn bind_jobs<C: Clock>(self, scheduler: &Scheduler, clock: &C);
}

/// The scheduler's own parts.
#[derive(Clone, Copy)]
pub(crate) struct OwnParts;

impl RunOn for OwnParts {
    fn schedule(self, scheduler: &Scheduler, popped: Popped, now: Time) {
        scheduler.schedule(popped, now);
    }

    fn bind_jobs<C: Clock>(self, scheduler: &Scheduler, clock: &C) {
        bind_jobs(scheduler, &mut scheduler.parts(), clock);
    }
}

/// A binding worker's loop on `parts`.
pub(crate) fn bind_jobs<P: Parts, C: Clock>(scheduler: &Scheduler, parts: &mut P, clock: &C) {
    while let Some(job) = scheduler.inner.driver.wait_for_job() {
        scheduler.bind_job(parts, job, clock.now());
    }
}

impl RunningScheduler {
    /// The scheduler, to send it events.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// Stops everything and waits for it: the queue closes (the scheduling loop ends after its
    /// current cycle), pods still waiting at Permit are rejected and their binding cycles
    /// release them, then the workers and the timer stop. Every thread it started has
    /// returned when this does; events sent afterwards are refused.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let Some(scheduling) = self.scheduling.take() else {
            return;
        };
        self.scheduler.close();
        let _ = scheduling.join();
        // A cycle that was running when the queue closed may have registered a waiter.
        self.scheduler.close();
        if let Some(timer) = self.timer.take() {
            timer.shutdown();
        }
        self.scheduler.inner.driver.drain();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

impl Drop for RunningScheduler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The scheduler's timers for a [`TimerDriver`](crate::TimerDriver): permit deadlines when
/// they come, and the queue's flushes at upstream's intervals (backoff every second, leftover
/// every 30 s).
pub(super) struct Timers {
    pub(super) scheduler: Scheduler,
    /// When each periodic flush runs next.
    pub(super) flushes: Mutex<(Time, Time)>,
}

impl Timers {
    pub(super) fn new(scheduler: Scheduler, now: Time) -> Timers {
        let config = scheduler.inner.config;
        Timers {
            scheduler,
            flushes: Mutex::new((
                now + config.backoff_flush_interval,
                now + config.leftover_flush_interval,
            )),
        }
    }
}

impl Deadlines for Timers {
    fn expire(&self, now: Time) {
        let inner = &self.scheduler.inner;
        let mut parts = self.scheduler.parts();
        steps::expire_deadlines(&mut parts, now);
        let (backoff, leftover) = {
            let mut flushes = self.flushes.lock();
            let backoff = flushes.0 <= now;
            if backoff {
                flushes.0 = now + inner.config.backoff_flush_interval;
            }
            let leftover = flushes.1 <= now;
            if leftover {
                flushes.1 = now + inner.config.leftover_flush_interval;
            }
            (backoff, leftover)
        };
        if backoff {
            steps::flush_backoff(&mut parts, now);
        }
        if leftover {
            steps::flush_leftover(&mut parts, now);
        }
    }

    fn next_deadline(&self) -> Option<Time> {
        let (backoff, leftover) = *self.flushes.lock();
        [
            steps::next_permit_deadline(&mut self.scheduler.parts()),
            Some(backoff),
            Some(leftover),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn ring_on_earlier_deadline(&self, alarm: Alarm) {
        let inner = &self.scheduler.inner;
        Deadlines::ring_on_earlier_deadline(inner.gang.waiting(), alarm.clone());
        Deadlines::ring_on_earlier_deadline(&inner.gang, alarm);
    }
}
