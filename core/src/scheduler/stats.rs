/// What a [`Scheduler`](super::Scheduler) has done so far: counters for a summary or a
/// metrics exporter (the permit waits, for percentiles, are
/// [`Scheduler::permit_waits`](super::Scheduler::permit_waits)).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SchedulerStats {
    /// Scheduling cycles run (pods popped).
    pub cycles: u64,
    /// Cycles in which no node fit the pod.
    pub unschedulable: u64,
    /// Pods bound.
    pub bound: u64,
    /// Binder calls that failed.
    pub bind_failures: u64,
    /// Pods rejected at or while waiting at Permit (timeouts included).
    pub permit_rejections: u64,
    /// Of those, rejected because a permit deadline passed.
    pub permit_timeouts: u64,
    /// Pods deleted between their scheduling cycle and the end of their binding cycle.
    pub deleted_in_flight: u64,
    /// Cycles whose placement failed with an error (a panic included) rather than a verdict:
    /// the pod went back to the error backoff.
    pub placement_errors: u64,
    /// Panics caught in user code — the placement, the binder, the outcome sink — each
    /// treated as that call's error; the thread that called it lives on.
    pub plugin_panics: u64,
}
