//! What a running gangway tells its operators: `tracing` spans and events, and metrics through
//! the [`metrics`](https://docs.rs/metrics) facade, under the names kube-scheduler operators
//! already chart.
//!
//! Neither costs anything to speak of when nobody listens: a `tracing` callsite with no
//! subscriber interested is one relaxed load and a branch, and with no metrics recorder
//! installed every update goes to the facade's no-op recorder. Install a subscriber (for
//! example `tracing_subscriber::fmt`) or a recorder (for example
//! `metrics_exporter_prometheus`) in your binary to see them; call [`describe_metrics`] once
//! after installing a recorder to give each metric its help text and unit.
//!
//! # Tracing
//!
//! Spans (level `DEBUG`), entered on the thread that runs the cycle:
//!
//! | span | fields | around |
//! |---|---|---|
//! | `scheduling_cycle` | `pod`, `gang`, `node` (once placed) | pop to Permit: placement, assume, reserve, Permit |
//! | `binding_cycle` | `pod`, `gang`, `node` | a Permit decision to bound, or released and requeued |
//!
//! Events, each told once every gangway lock is released (H5):
//!
//! | message | level | fields | from |
//! |---|---|---|---|
//! | `permit: allowed` / `waiting` / `rejected` | `DEBUG` | `pod`, `gang`, `plugin`, `reason` | the gang plugin's Permit |
//! | `waiting pod: allowed` / `rejected` | `DEBUG` | `pod`, `gang`, `plugin`, `reason` | the waiting map, as it delivers a decision |
//! | `gang: quorum, members allowed together` | `INFO` | `gang`, `members` (the pods this Permit let through: itself and the siblings still waiting) | Permit at quorum |
//! | `gang: attempt timed out` / `attempt failed` | `INFO` | `gang`, `reason` | the attempt's deadline; a member deleted, unreserved or gone |
//! | `queue: moved to active or backoff` | `DEBUG` | `event`, `moved` | a cluster event that moved pods (`TRACE` when none moved) |
//! | `queue: siblings activated`, `backoff completed`, `unschedulable leftover flushed` | `DEBUG` | a count | the queue's other moves |
//! | `no node fits`, `assume failed`, `reserve failed`, `bound`, `bind failed` | `DEBUG` | `pod`, … | the scheduler's cycles |
//!
//! # Metrics
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | [`PENDING_PODS`] | gauge | `queue`: `active`, `backoff`, `unschedulable`, `gated` | pods in each part of the scheduling queue, after every queue operation |
//! | [`PERMIT_WAIT_DURATION`] | histogram (seconds) | `result`: the decision's code, `Success`, `Unschedulable`, `Error`, … | how long a pod waited at Permit, measured by its binding cycle |
//! | [`SCHEDULE_ATTEMPTS`] | counter | `result`: `scheduled`, `unschedulable`, `error` | scheduling attempts by result, as kube-scheduler counts them: `scheduled` once the pod is bound |
//! | [`PODGROUP_SCHEDULE_ATTEMPTS`] | counter | `result`: `scheduled`, `unschedulable`, `error` | pod-group cycles by result (the gang admitted or not); each member's attempt is in [`SCHEDULE_ATTEMPTS`] too |
//! | [`BINDING_ATTEMPTS`] | counter | `result`: `bound`, `rejected`, `error`, `deleted` | binding cycles by result |
//! | [`GANG_ATTEMPTS`] | counter | `outcome`: `admitted`, `timed_out`, `failed` | gang attempts decided as a whole: quorum reached, the attempt's deadline passed, or a member lost (Hardened) |

use std::time::Duration;

use metrics::{Key, Label, Metadata};

use crate::Code;

/// Gauge: pods in the scheduling queue, by `queue` (`active`, `backoff`, `unschedulable`,
/// `gated`): kube-scheduler's `scheduler_pending_pods`.
pub const PENDING_PODS: &str = "scheduler_pending_pods";

/// Histogram, seconds: how long a pod waited at Permit, by `result` (the decision's status
/// code): kube-scheduler's `scheduler_permit_wait_duration_seconds`.
pub const PERMIT_WAIT_DURATION: &str = "scheduler_permit_wait_duration_seconds";

/// Counter: scheduling attempts by `result` (`scheduled`, `unschedulable`, `error`):
/// kube-scheduler's `scheduler_schedule_attempts_total`.
pub const SCHEDULE_ATTEMPTS: &str = "scheduler_schedule_attempts_total";

/// Counter: pod-group cycles by `result` (`scheduled`: the gang admitted, `unschedulable`,
/// `error`): kube-scheduler's `scheduler_podgroup_schedule_attempts_total`. Each member's own
/// attempt is counted in [`SCHEDULE_ATTEMPTS`] as well, as upstream's failure handler does.
pub const PODGROUP_SCHEDULE_ATTEMPTS: &str = "scheduler_podgroup_schedule_attempts_total";

/// Counter: binding cycles by `result` (`bound`, `rejected`, `error`, `deleted`).
pub const BINDING_ATTEMPTS: &str = "scheduler_binding_attempts_total";

/// Counter: gang attempts decided as a whole, by `outcome` (`admitted`, `timed_out`,
/// `failed`).
pub const GANG_ATTEMPTS: &str = "scheduler_gang_attempts_total";

/// Gives every metric above its help text and unit in the installed recorder. Call it once,
/// after installing the recorder; without one it does nothing.
pub fn describe_metrics() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_gauge!(PENDING_PODS, "Pods in the scheduling queue, by queue.");
    describe_histogram!(
        PERMIT_WAIT_DURATION,
        Unit::Seconds,
        "Duration of waiting on permit, by the decision's code."
    );
    describe_counter!(SCHEDULE_ATTEMPTS, "Scheduling attempts, by result.");
    describe_counter!(
        PODGROUP_SCHEDULE_ATTEMPTS,
        "Pod-group scheduling cycles, by result."
    );
    describe_counter!(BINDING_ATTEMPTS, "Binding cycles, by result.");
    describe_counter!(
        GANG_ATTEMPTS,
        "Gang attempts decided as a whole, by outcome."
    );
}

/// A metric key with one label, built at compile time: recording through it allocates
/// nothing and, with no recorder installed, costs a few loads.
macro_rules! key {
    ($name:expr, $label:literal => $value:literal) => {{
        static LABELS: [Label; 1] = [Label::from_static_parts($label, $value)];
        static KEY: Key = Key::from_static_parts($name, &LABELS);
        &KEY
    }};
}

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

fn gauge(key: &'static Key) -> metrics::Gauge {
    metrics::with_recorder(|r| r.register_gauge(key, &METADATA))
}

fn counter(key: &'static Key) -> metrics::Counter {
    metrics::with_recorder(|r| r.register_counter(key, &METADATA))
}

/// Publishes the queue's lengths ([`PENDING_PODS`]): `active`, `backoff` (both backoff heaps),
/// `unschedulable` (the gated pods left out: they have their own label) and `gated`.
pub(crate) fn pending_pods(active: usize, backoff: usize, unschedulable: usize, gated: usize) {
    gauge(key!(PENDING_PODS, "queue" => "active")).set(active as f64);
    gauge(key!(PENDING_PODS, "queue" => "backoff")).set(backoff as f64);
    gauge(key!(PENDING_PODS, "queue" => "unschedulable")).set(unschedulable as f64);
    gauge(key!(PENDING_PODS, "queue" => "gated")).set(gated as f64);
}

/// A pod that waited at Permit got its decision after `waited` ([`PERMIT_WAIT_DURATION`],
/// labelled with the decision's code as kube-scheduler spells it).
pub(crate) fn permit_waited(waited: Duration, code: Code) {
    let key = match code {
        Code::Success => key!(PERMIT_WAIT_DURATION, "result" => "Success"),
        Code::Error => key!(PERMIT_WAIT_DURATION, "result" => "Error"),
        Code::Unschedulable => key!(PERMIT_WAIT_DURATION, "result" => "Unschedulable"),
        Code::UnschedulableAndUnresolvable => {
            key!(PERMIT_WAIT_DURATION, "result" => "UnschedulableAndUnresolvable")
        }
        Code::Wait => key!(PERMIT_WAIT_DURATION, "result" => "Wait"),
        Code::Skip => key!(PERMIT_WAIT_DURATION, "result" => "Skip"),
        Code::Pending => key!(PERMIT_WAIT_DURATION, "result" => "Pending"),
    };
    metrics::with_recorder(|r| r.register_histogram(key, &METADATA)).record(waited.as_secs_f64());
}

/// How a scheduling attempt ended ([`SCHEDULE_ATTEMPTS`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScheduleResult {
    /// Bound.
    Scheduled,
    /// No room, a plugin's rejection, a Permit rejection.
    Unschedulable,
    /// An internal error or a failed bind.
    Error,
}

pub(crate) fn schedule_attempt(result: ScheduleResult) {
    let key = match result {
        ScheduleResult::Scheduled => key!(SCHEDULE_ATTEMPTS, "result" => "scheduled"),
        ScheduleResult::Unschedulable => key!(SCHEDULE_ATTEMPTS, "result" => "unschedulable"),
        ScheduleResult::Error => key!(SCHEDULE_ATTEMPTS, "result" => "error"),
    };
    counter(key).increment(1);
}

pub(crate) fn pod_group_schedule_attempt(result: ScheduleResult) {
    let key = match result {
        ScheduleResult::Scheduled => key!(PODGROUP_SCHEDULE_ATTEMPTS, "result" => "scheduled"),
        ScheduleResult::Unschedulable => {
            key!(PODGROUP_SCHEDULE_ATTEMPTS, "result" => "unschedulable")
        }
        ScheduleResult::Error => key!(PODGROUP_SCHEDULE_ATTEMPTS, "result" => "error"),
    };
    counter(key).increment(1);
}

/// How a binding cycle ended ([`BINDING_ATTEMPTS`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum BindingResult {
    /// The binder bound the pod.
    Bound,
    /// Permit rejected it: released and requeued.
    Rejected,
    /// The binder failed: released and requeued.
    Error,
    /// Deleted meanwhile.
    Deleted,
}

pub(crate) fn binding_attempt(result: BindingResult) {
    let key = match result {
        BindingResult::Bound => key!(BINDING_ATTEMPTS, "result" => "bound"),
        BindingResult::Rejected => key!(BINDING_ATTEMPTS, "result" => "rejected"),
        BindingResult::Error => key!(BINDING_ATTEMPTS, "result" => "error"),
        BindingResult::Deleted => key!(BINDING_ATTEMPTS, "result" => "deleted"),
    };
    counter(key).increment(1);
}

/// How a gang attempt was decided as a whole ([`GANG_ATTEMPTS`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum GangOutcome {
    /// Quorum released the waiting members together.
    Admitted,
    /// The attempt's deadline passed (Hardened).
    TimedOut,
    /// A waiting member was deleted or unreserved, or was no longer waiting at quorum
    /// (Hardened).
    Failed,
}

pub(crate) fn gang_attempt(outcome: GangOutcome) {
    let key = match outcome {
        GangOutcome::Admitted => key!(GANG_ATTEMPTS, "outcome" => "admitted"),
        GangOutcome::TimedOut => key!(GANG_ATTEMPTS, "outcome" => "timed_out"),
        GangOutcome::Failed => key!(GANG_ATTEMPTS, "outcome" => "failed"),
    };
    counter(key).increment(1);
}

#[cfg(test)]
mod tests {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use super::PENDING_PODS;
    use crate::queue::QueueLengths;

    /// The pending-pods gauge as kube-scheduler labels it: both backoff heaps summed under
    /// `backoff`, the gated pods apart from the unschedulable. (Found missing by mutation
    /// testing, issue #43: the sum turned a product went unnoticed, the e2e test's heaps being
    /// empty.)
    #[test]
    fn the_pending_pods_gauge_sums_both_backoffs_and_sets_the_gated_apart() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        let lengths = QueueLengths {
            active: 1,
            backoff: 2,
            error_backoff: 3,
            unschedulable: 7,
            gated: 4,
            in_flight: 9,
        };
        metrics::with_local_recorder(&recorder, || lengths.publish());
        let mut gauges: Vec<(String, f64)> = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .filter(|(ck, ..)| ck.key().name() == PENDING_PODS)
            .map(|(ck, _, _, value)| {
                let queue = ck
                    .key()
                    .labels()
                    .next()
                    .expect("a label")
                    .value()
                    .to_owned();
                let DebugValue::Gauge(v) = value else {
                    panic!("{PENDING_PODS} is a gauge: {value:?}");
                };
                (queue, v.into_inner())
            })
            .collect();
        gauges.sort_by(|a, b| a.0.cmp(&b.0));
        let expected = [
            ("active", 1.0),
            ("backoff", 5.0),
            ("gated", 4.0),
            ("unschedulable", 3.0),
        ];
        let expected: Vec<(String, f64)> =
            expected.iter().map(|(q, v)| (q.to_string(), *v)).collect();
        assert_eq!(gauges, expected);
    }

    /// Each of a run's outcomes lands in its metric under kube-scheduler's name and label, and
    /// `describe_metrics` gives them their help text and unit. (Issue #43: every one of these
    /// calls could be dropped unnoticed by the unit tier.)
    #[test]
    fn each_outcome_is_counted_under_its_name_and_label_with_its_description() {
        use std::time::Duration;

        use metrics::Unit;

        use super::*;
        use crate::Code;

        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, || {
            describe_metrics();
            permit_waited(Duration::from_millis(1500), Code::Wait);
            schedule_attempt(ScheduleResult::Scheduled);
            schedule_attempt(ScheduleResult::Scheduled);
            pod_group_schedule_attempt(ScheduleResult::Unschedulable);
            binding_attempt(BindingResult::Deleted);
            gang_attempt(GangOutcome::TimedOut);
        });
        let mut seen: Vec<(String, String, Option<Unit>, bool, String)> = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(ck, unit, description, value)| {
                let key = ck.key();
                let label = key
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect::<Vec<_>>()
                    .join(",");
                let value = match value {
                    DebugValue::Counter(n) => format!("counter {n}"),
                    DebugValue::Gauge(v) => format!("gauge {}", v.into_inner()),
                    DebugValue::Histogram(vs) => format!(
                        "histogram {:?}",
                        vs.iter().map(|v| v.into_inner()).collect::<Vec<_>>()
                    ),
                };
                (
                    key.name().to_owned(),
                    label,
                    unit,
                    description.is_some(),
                    value,
                )
            })
            .collect();
        seen.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let expected = [
            (BINDING_ATTEMPTS, "result=deleted", None, "counter 1"),
            (GANG_ATTEMPTS, "outcome=timed_out", None, "counter 1"),
            (
                PERMIT_WAIT_DURATION,
                "result=Wait",
                Some(Unit::Seconds),
                "histogram [1.5]",
            ),
            (
                PODGROUP_SCHEDULE_ATTEMPTS,
                "result=unschedulable",
                None,
                "counter 1",
            ),
            (SCHEDULE_ATTEMPTS, "result=scheduled", None, "counter 2"),
        ];
        let expected: Vec<(String, String, Option<Unit>, bool, String)> = expected
            .into_iter()
            .map(|(name, label, unit, value)| {
                (
                    name.to_owned(),
                    label.to_owned(),
                    unit,
                    true,
                    value.to_owned(),
                )
            })
            .collect();
        assert_eq!(seen, expected);
    }
}
