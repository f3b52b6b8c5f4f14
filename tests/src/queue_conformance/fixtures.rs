//! The fixtures every case shares: the plugin set, pods, times, the default configuration.

use gangsched::queue::QueueLengths;
use gangsched::{Pod, PodId, QueueConfig, Time};

pub(crate) const NS: &str = "ns";

// The fixed plugin set (closed switch at the start of every case) and its plugins' names are
// the differential's conformance profile, so the table and its traces share one definition.
pub(crate) use gangway_cli::differential::profile::{
    conformance_plugins as plugins, BAR, FIT, PENDING, SKIP,
};

pub(crate) fn pod(name: &str, priority: i32) -> Pod {
    Pod::new(name, NS, name).with_priority(priority)
}

pub(crate) fn id(name: &str) -> PodId {
    PodId::from(name)
}

/// The table's configuration: kube-scheduler's timing, with the queue rules of the tests the
/// cases were ported from — only the active queue pops and backoffs compare exactly
/// (`SchedulerPopFromBackoffQ` off); a case that needs 1.36's rules says so.
pub const DEFAULT: QueueConfig = QueueConfig::BEFORE_1_33;

/// [`DEFAULT`] with kubernetes#139162 (a wildcard event moves a gated pod whatever its gate
/// registered), which is not in v1.36.3: the cases that port it turn it on
/// (`QueueConfig::wildcards_move_gated`).
pub const WITH_139162: QueueConfig = DEFAULT.with_wildcards_move_gated(true);

pub(crate) const fn s(secs: u64) -> Time {
    Time::from_secs(secs)
}

pub(crate) const fn ms(millis: u64) -> Time {
    Time::from_millis(millis)
}

pub(crate) const fn ns(nanos: u64) -> Time {
    Time::from_nanos(nanos)
}

pub(crate) const T0: Time = Time::ZERO;

/// No pod anywhere; cases write `L0.with_active(1)`.
pub(crate) const L0: QueueLengths = QueueLengths::EMPTY;
