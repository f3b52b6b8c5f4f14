use crate::sync::Mutex;
use crate::time::{Alarm, Deadlines};
use crate::Time;

use super::steps;
use super::Scheduler;

impl Scheduler {
    /// Applies everything that is due at `now`: permit deadlines (a gang attempt's in
    /// Hardened mode, each waiting pod's in Upstream), the backoff flush and the unschedulable
    /// leftover flush. Decisions it makes reach the binding cycles through their queue.
    /// For embedders driving the scheduler themselves; [`start`](Self::start) runs a timer
    /// thread that does this.
    pub fn tick(&self, now: Time) {
        let mut parts = self.parts();
        steps::expire_deadlines(&mut parts, now);
        steps::flush_backoff(&mut parts, now);
        steps::flush_leftover(&mut parts, now);
    }

    /// The earliest time at which [`tick`](Self::tick) has work: a permit deadline, a backoff
    /// expiry, or a pod parked in the unschedulable pool for longer than the queue allows.
    pub fn next_deadline(&self) -> Option<Time> {
        [
            steps::next_permit_deadline(&mut self.parts()),
            self.inner.queue.next_backoff_expiry(),
            self.inner.queue.next_leftover_flush(),
        ]
        .into_iter()
        .flatten()
        .min()
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
