use std::time::Duration;

use crate::queue::QueueConfig;
use crate::Mode;

/// How a [`Scheduler`](super::Scheduler) behaves: kube-scheduler's defaults unless changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SchedulerConfig {
    /// Upstream's gang behaviour, or gangway's guarantees (the default).
    pub mode: Mode,
    /// Backoff and flush timing of the scheduling queue.
    pub queue: QueueConfig,
    /// How long a gang waits at Permit for its quorum (upstream: 5 minutes).
    pub permit_timeout: Duration,
    /// How often the backoff queue is flushed (upstream: every second).
    pub backoff_flush_interval: Duration,
    /// How often the unschedulable pool is checked for pods parked too long (upstream: 30 s).
    pub leftover_flush_interval: Duration,
    /// Binding workers when the scheduler runs its own threads (at least one).
    pub workers: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            mode: Mode::default(),
            queue: QueueConfig::default(),
            permit_timeout: Duration::from_secs(5 * 60),
            backoff_flush_interval: Duration::from_secs(1),
            leftover_flush_interval: Duration::from_secs(30),
            workers: 2,
        }
    }
}
