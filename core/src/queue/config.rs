use std::time::Duration;

use super::QueuedPodInfo;
use crate::Time;

/// The scheduling queue's timing, kube-scheduler's defaults unless changed: start from
/// [`QueueConfig::DEFAULT`] (or `default()`) and change what differs with the `with_*`
/// methods.
///
/// ```
/// use std::time::Duration;
/// use gangsched::QueueConfig;
///
/// const FAST: QueueConfig = QueueConfig::DEFAULT.with_initial_backoff(Duration::from_millis(5));
/// assert_eq!(FAST.max_backoff, Duration::from_secs(10));
/// ```
#[non_exhaustive]
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
    /// Whether a pop with an empty active queue takes the pod backing off for a rejection
    /// whose backoff ends first (ties in the active queue's order) — never one in the error
    /// backoff. kube-scheduler 1.36's `SchedulerPopFromBackoffQ`, which also brings the 1 s
    /// [`ordering_window`](Self::ordering_window). Off (the default): only the active queue
    /// pops, as before 1.33.
    pub pop_from_backoff: bool,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::DEFAULT
    }
}

impl QueueConfig {
    /// kube-scheduler's defaults: 1 s initial backoff, 10 s at most, 5 minutes in the
    /// unschedulable pool, no ordering window.
    pub const DEFAULT: QueueConfig = QueueConfig {
        initial_backoff: Duration::from_secs(1),
        max_backoff: Duration::from_secs(10),
        max_in_unschedulable: Duration::from_secs(5 * 60),
        ordering_window: None,
        pop_from_backoff: false,
    };

    /// This configuration with the first backoff `backoff`.
    pub const fn with_initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// This configuration with the longest backoff `backoff`.
    pub const fn with_max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// This configuration letting a pod sit `max` in the unschedulable pool before a flush.
    pub const fn with_max_in_unschedulable(mut self, max: Duration) -> Self {
        self.max_in_unschedulable = max;
        self
    }

    /// This configuration with the ordering window `window` (`None`: compare exactly).
    pub const fn with_ordering_window(mut self, window: Option<Duration>) -> Self {
        self.ordering_window = window;
        self
    }

    /// This configuration popping from the backoff queue when the active queue is empty, or
    /// not (see [`pop_from_backoff`](Self::pop_from_backoff)).
    pub const fn with_pop_from_backoff(mut self, pop: bool) -> Self {
        self.pop_from_backoff = pop;
        self
    }

    /// The backoff after `failures` counted failures
    /// ([`QueuedPodInfo::backoff_count`]): zero before the first, then the initial backoff
    /// doubled once per earlier failure, capped at the maximum.
    pub fn backoff_duration(&self, failures: u32) -> Duration {
        let Some(doublings) = failures.checked_sub(1) else {
            return Duration::ZERO;
        };
        let factor = 1u32.checked_shl(doublings).unwrap_or(u32::MAX);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }

    /// When `info`'s backoff ends: its last failure plus [`backoff_duration`](Self::backoff_duration),
    /// truncated to the ordering window if there is one.
    pub fn backoff_expiry(&self, info: &QueuedPodInfo) -> Time {
        self.backoff_clock().expiry(info)
    }

    /// The backoff timing in whole nanoseconds, for the queue's hot paths.
    pub(super) fn backoff_clock(&self) -> BackoffClock {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        BackoffClock {
            initial: nanos(self.initial_backoff),
            max: nanos(self.max_backoff),
            window: self.ordering_window.map(nanos),
            pre_enqueue_at_backoff: self.pop_from_backoff,
        }
    }

    /// Whether `info` is still backing off at `now`: its expiry is after `now` (with an ordering
    /// window: not before the truncated `now`).
    pub fn is_backing_off(&self, info: &QueuedPodInfo, now: Time) -> bool {
        self.backs_off_until(self.backoff_expiry(info), now)
    }

    /// Whether a pod whose backoff ends at `expiry` is still backing off at `now`.
    pub fn backs_off_until(&self, expiry: Time, now: Time) -> bool {
        self.backoff_clock().backs_off_until(expiry, now)
    }
}

/// [`QueueConfig`]'s backoff rules in whole nanoseconds (what [`Time`] holds), computed once:
/// a cluster event applies them to every pod it moves, and `Duration`'s seconds-and-nanos
/// arithmetic was a sixth of that walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct BackoffClock {
    initial: u64,
    max: u64,
    window: Option<u64>,
    /// With [`QueueConfig::pop_from_backoff`] (1.36's `SchedulerPopFromBackoffQ`), PreEnqueue
    /// runs when a pod enters backoff and not when it leaves (`moveToBackoffQ`;
    /// `moveToActiveQ` with `movesFromBackoffQ`); otherwise when it leaves.
    pub(super) pre_enqueue_at_backoff: bool,
}

impl BackoffClock {
    /// See [`QueueConfig::backoff_expiry`].
    pub(super) fn expiry(&self, info: &QueuedPodInfo) -> Time {
        let backoff = match info.backoff_count().checked_sub(1) {
            None => 0,
            Some(doublings) => self
                .initial
                .saturating_mul(1u64.checked_shl(doublings).unwrap_or(u64::MAX))
                .min(self.max),
        };
        self.align(Time::from_nanos(
            info.timestamp().as_nanos().saturating_add(backoff),
        ))
    }

    /// See [`QueueConfig::backs_off_until`].
    pub(super) fn backs_off_until(&self, expiry: Time, now: Time) -> bool {
        match self.window {
            None => expiry > now,
            Some(_) => expiry >= self.align(now),
        }
    }

    fn align(&self, t: Time) -> Time {
        match self.window {
            Some(w) if w != 0 => Time::from_nanos(t.as_nanos() / w * w),
            _ => t,
        }
    }
}
