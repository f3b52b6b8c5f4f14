use crate::sync::Mutex;
use crate::time::{Alarm, Deadlines};
use crate::{GroupKey, PodId, Time};

use super::steps;
use super::Scheduler;

impl Scheduler {
    /// Applies everything that is due at `now`: permit deadlines (a gang attempt's in
    /// Hardened mode, each waiting pod's in Upstream), the backoff flush and the unschedulable
    /// leftover flush. Decisions it makes reach the binding cycles through their queue.
    /// For embedders driving the scheduler themselves; [`start`](Self::start) runs a timer
    /// thread that does this. Returns what it did: the pods and gang attempts that timed out
    /// (their [`PodOutcome::Rejected`](super::PodOutcome::Rejected) follows from their binding
    /// cycles) and how many pods the flushes moved.
    pub fn tick(&self, now: Time) -> Tick {
        let mut parts = self.parts();
        let (timed_out_pods, timed_out_gangs) = steps::expire_deadlines(&mut parts, now);
        Tick {
            timed_out_pods,
            timed_out_gangs,
            backoff_completed: steps::flush_backoff(&mut parts, now),
            leftover_flushed: steps::flush_leftover(&mut parts, now),
        }
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

/// What one [`Scheduler::tick`] did.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    /// Waiting pods whose own permit deadline passed (Upstream's timer per pod): rejected,
    /// [`Cause::TimedOut`](crate::Cause::TimedOut).
    pub timed_out_pods: Vec<PodId>,
    /// Gangs whose attempt's deadline passed (Hardened): every waiting member rejected
    /// together, timed out — or, admitted by the pod-group cycle, whose binding deadline
    /// passed: every member whose binding cycle had not begun released, timed out (H3).
    pub timed_out_gangs: Vec<GroupKey>,
    /// Pods whose backoff had ended, moved to the active queue.
    pub backoff_completed: usize,
    /// Pods parked unschedulable for longer than the queue allows, retried.
    pub leftover_flushed: usize,
}

impl Tick {
    /// Whether it did nothing.
    pub fn is_empty(&self) -> bool {
        *self == Tick::default()
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
