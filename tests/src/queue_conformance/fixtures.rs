//! The fixtures every case shares: the plugin set, pods, times, the default configuration.

use std::sync::atomic::{AtomicBool, Ordering};

use gangsched::queue::{EventKind, PluginSet, QueueLengths};
use gangsched::sync::Arc;
use gangsched::{ClusterEvent, Code, Pod, PodId, QueueConfig, QueueingHint, Status, Time};

pub(crate) const NS: &str = "ns";

/// Answers `Queue` (for `NodeAdd`: only for the node "big"; an error for "broken").
pub(crate) const FIT: &str = "Fit";
/// Answers `QueueSkip` to every event it registered.
pub(crate) const SKIP: &str = "Skip";
/// A plugin the pod is pending on: its `Queue` means "retry now".
pub(crate) const PENDING: &str = "Pending";
/// Registered no hint at all.
pub(crate) const BAR: &str = "Bar";
/// The PreEnqueue gate.
pub(crate) const GATE: &str = "Gate";

/// The fixed plugin set; `open` is `Gate`'s switch (closed at the start of every case).
pub(crate) fn plugins(open: Arc<AtomicBool>) -> PluginSet {
    let queue = |_: &Pod, _: &ClusterEvent| Ok(QueueingHint::Queue);
    let skip = |_: &Pod, _: &ClusterEvent| Ok(QueueingHint::QueueSkip);
    PluginSet::new()
        .with_pre_enqueue(GATE, move |p: &Pod| {
            if p.name().starts_with("gated-") && !open.load(Ordering::SeqCst) && p.priority() <= 0 {
                Status::with_reason(Code::UnschedulableAndUnresolvable, "gated")
            } else {
                Status::success()
            }
        })
        .with_hint(FIT, EventKind::NodeAdd, |_, e| match e {
            ClusterEvent::NodeAdd(n) if n == "big" => Ok(QueueingHint::Queue),
            ClusterEvent::NodeAdd(n) if n == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(FIT, EventKind::AssignedPodDelete, queue)
        .with_hint(FIT, EventKind::UnscheduledPodUpdate, queue)
        .with_hint(SKIP, EventKind::AssignedPodDelete, skip)
        .with_hint(SKIP, EventKind::UnscheduledPodUpdate, skip)
        .with_hint(PENDING, EventKind::NodeAdd, queue)
        .with_hint(PENDING, EventKind::AssignedPodDelete, queue)
        .with_hint(GATE, EventKind::UnscheduledPodUpdate, queue)
        .with_hint(GATE, EventKind::PodGroupAdd, queue)
}

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
