use std::time::Duration;

use super::QueuedPodInfo;
use crate::Time;

/// The scheduling queue's timing, kube-scheduler's defaults unless changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueConfig {
    /// The first backoff after a failure (upstream `podInitialBackoffSeconds`, 1 s).
    pub initial_backoff: Duration,
    /// The longest backoff (upstream `podMaxBackoffSeconds`, 10 s).
    pub max_backoff: Duration,
    /// How long a pod may sit in the unschedulable pool before a flush retries it (5 min).
    pub max_in_unschedulable: Duration,
    /// The ordering window of newer releases: backoff expiries and `now` are truncated to it
    /// before comparing. `None` (the default) compares exactly.
    pub ordering_window: Option<Duration>,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(10),
            max_in_unschedulable: Duration::from_secs(5 * 60),
            ordering_window: None,
        }
    }
}

impl QueueConfig {
    /// The backoff after `attempts` attempts: zero before the first, then the initial backoff
    /// doubled once per earlier attempt, capped at the maximum.
    pub fn backoff_duration(&self, attempts: u32) -> Duration {
        if attempts == 0 {
            return Duration::ZERO;
        }
        let mut d = self.initial_backoff;
        for _ in 1..attempts {
            if d >= self.max_backoff {
                break;
            }
            d = d.saturating_mul(2);
        }
        d.min(self.max_backoff)
    }

    /// When `info`'s backoff ends: its last failure plus [`backoff_duration`](Self::backoff_duration),
    /// truncated to the ordering window if there is one.
    pub fn backoff_expiry(&self, info: &QueuedPodInfo) -> Time {
        self.align(info.timestamp() + self.backoff_duration(info.attempts()))
    }

    /// Whether `info` is still backing off at `now`: its expiry is after `now` (with an ordering
    /// window: not before the truncated `now`).
    pub fn is_backing_off(&self, info: &QueuedPodInfo, now: Time) -> bool {
        self.backs_off_until(self.backoff_expiry(info), now)
    }

    /// Whether a pod whose backoff ends at `expiry` is still backing off at `now`.
    pub fn backs_off_until(&self, expiry: Time, now: Time) -> bool {
        match self.ordering_window {
            None => expiry > now,
            Some(_) => expiry >= self.align(now),
        }
    }

    fn align(&self, t: Time) -> Time {
        match self.ordering_window {
            Some(w) if !w.is_zero() => {
                let w = w.as_nanos().min(u128::from(u64::MAX)) as u64;
                Time::from_nanos(t.as_nanos() / w * w)
            }
            _ => t,
        }
    }
}
