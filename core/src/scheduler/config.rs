use std::time::Duration;

use crate::queue::QueueConfig;
use crate::Mode;

/// How a [`Scheduler`](super::Scheduler) behaves: kube-scheduler's defaults unless changed —
/// start from `default()` and change what differs with the `with_*` methods.
///
/// ```
/// use std::time::Duration;
/// use gangsched::{Mode, SchedulerConfig};
///
/// let config = SchedulerConfig::default()
///     .with_mode(Mode::Upstream)
///     .with_permit_timeout(Duration::from_secs(60));
/// assert_eq!(config.workers, 2);
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SchedulerConfig {
    /// Upstream's gang behaviour, or gangway's guarantees (the default).
    pub mode: Mode,
    /// Backoff and flush timing of the scheduling queue.
    pub queue: QueueConfig,
    /// How long a gang waits at Permit for its quorum (upstream: 5 minutes); with the
    /// pod-group cycle (Hardened), how long an admitted gang's members may wait for their
    /// binding cycles before those not begun are released (H3).
    pub permit_timeout: Duration,
    /// How often the backoff queue is flushed (upstream: every second).
    pub backoff_flush_interval: Duration,
    /// How often the unschedulable pool is checked for pods parked too long (upstream: 30 s).
    pub leftover_flush_interval: Duration,
    /// Binding workers when the scheduler runs its own threads (at least one).
    pub workers: usize,
    /// How a gang's members are scheduled: one by one, meeting at the Permit barrier (the
    /// default), or together in one pod-group cycle (I9).
    pub gang_cycle: GangCycle,
}

/// How the members of a gang go through their scheduling cycles.
///
/// ```
/// use gangsched::{GangCycle, SchedulerConfig};
///
/// let config = SchedulerConfig::default().with_gang_cycle(GangCycle::PodGroup);
/// assert_eq!(config.gang_cycle, GangCycle::PodGroup);
/// assert_eq!(SchedulerConfig::default().gang_cycle, GangCycle::PermitBarrier);
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GangCycle {
    /// Each member has a scheduling cycle of its own, reserves its node and waits at Permit
    /// until its gang reaches quorum (kube-scheduler with `GenericWorkload` off, and the
    /// coscheduling plugins). Two gangs that each fit alone but not together can each hold
    /// part of the cluster until a timeout fires: the barrier breaks I9.
    #[default]
    PermitBarrier,
    /// Popping a member brings its gang's queueable unscheduled siblings with it; all are
    /// placed on one snapshot of the cache, each seeing the earlier ones, and only a gang that
    /// reaches quorum there is assumed, reserved and admitted — otherwise every member goes
    /// back with nothing reserved (kube-scheduler 1.36's pod-group cycle,
    /// `schedule_one_podgroup.go`). Keeps I9: no hold-and-wait.
    PodGroup,
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
            gang_cycle: GangCycle::PermitBarrier,
        }
    }
}

impl SchedulerConfig {
    /// This configuration in `mode`.
    pub const fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// This configuration with the queue's timing `queue`.
    pub const fn with_queue(mut self, queue: QueueConfig) -> Self {
        self.queue = queue;
        self
    }

    /// This configuration with a Permit wait of `timeout`.
    pub const fn with_permit_timeout(mut self, timeout: Duration) -> Self {
        self.permit_timeout = timeout;
        self
    }

    /// This configuration flushing the backoff queue every `interval`.
    pub const fn with_backoff_flush_interval(mut self, interval: Duration) -> Self {
        self.backoff_flush_interval = interval;
        self
    }

    /// This configuration checking the unschedulable pool every `interval`.
    pub const fn with_leftover_flush_interval(mut self, interval: Duration) -> Self {
        self.leftover_flush_interval = interval;
        self
    }

    /// This configuration with `workers` binding workers (at least one runs).
    pub const fn with_workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// This configuration scheduling gangs with `cycle`.
    pub const fn with_gang_cycle(mut self, cycle: GangCycle) -> Self {
        self.gang_cycle = cycle;
        self
    }
}
