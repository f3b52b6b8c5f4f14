//! Unit tests of where PreEnqueue runs around backoff: on the way out (older rules) or, with
//! pop from backoff (kube-scheduler 1.36's `SchedulerPopFromBackoffQ`), on the way in.

use std::time::Duration;

use super::state_tests::{plugins, pod, NODE};
use super::*;
use crate::{PodId, Time};

/// `name` (priority 1, so not gated) is added and popped; `during` runs during its attempt;
/// a bound pod's delete makes its rejection worth a retry; it is handed back rejected at 0.
fn fail_after_room_freed(
    config: QueueConfig,
    name: &str,
    during: impl FnOnce(&mut QueueState, &PluginSet),
) -> (QueueState, PluginSet) {
    let p = plugins();
    let mut q = QueueState::new(config);
    q.add(pod(name, 1), Time::ZERO, &p).unwrap();
    q.pop().expect("active");
    during(&mut q, &p);
    let freed = ClusterEvent::AssignedPodDelete(pod("x", 0));
    q.move_all_to_active_or_backoff(freed, None, Time::ZERO, &p);
    q.hand_back(&PodId::from(name), Some(NODE.into()), Time::ZERO, &p)
        .unwrap();
    q.check().unwrap();
    (q, p)
}

fn rules_136() -> QueueConfig {
    QueueConfig::DEFAULT
        .with_ordering_window(Some(Duration::from_secs(1)))
        .with_pop_from_backoff(true)
}

fn older_rules() -> QueueConfig {
    QueueConfig::DEFAULT
        .with_ordering_window(None)
        .with_pop_from_backoff(false)
}

/// Gated in flight (its update lowered its priority): with 1.36's rules PreEnqueue gates it
/// on its way into backoff (`moveToBackoffQ`); with the older ones it backs off and is gated
/// when the backoff ends.
#[test]
fn with_pop_from_backoff_pre_enqueue_gates_on_the_way_into_backoff() {
    let lower = |q: &mut QueueState, p: &PluginSet| {
        q.update(pod("gated-y", 1), pod("gated-y", 0), Time::ZERO, p);
    };
    let id = PodId::from("gated-y");
    let (q, _) = fail_after_room_freed(rules_136(), "gated-y", lower);
    assert_eq!(q.place(&id), Some(QueuePlace::Unschedulable));
    assert!(q.info(&id).unwrap().gated_by().is_some());
    let (mut q, p) = fail_after_room_freed(older_rules(), "gated-y", lower);
    assert_eq!(q.place(&id), Some(QueuePlace::Backoff(Time::from_secs(1))));
    q.flush_backoff_completed(Time::from_secs(2), &p);
    assert_eq!(q.place(&id), Some(QueuePlace::Unschedulable));
    assert!(q.info(&id).unwrap().gated_by().is_some());
}

/// Gated while backing off (an update lowered its priority): with 1.36's rules it leaves
/// backoff without PreEnqueue (`moveToActiveQ` with `movesFromBackoffQ`), by the flush and by
/// an activation alike; with the older ones the gate holds it.
#[test]
fn with_pop_from_backoff_a_pod_leaving_backoff_skips_pre_enqueue() {
    let id = PodId::from("gated-x");
    for (config, flushed_to_active) in [(rules_136(), true), (older_rules(), false)] {
        for activate in [false, true] {
            let (mut q, p) = fail_after_room_freed(config, "gated-x", |_, _| {});
            assert!(matches!(q.place(&id), Some(QueuePlace::Backoff(_))));
            q.update(
                pod("gated-x", 1),
                pod("gated-x", 0),
                Time::from_millis(500),
                &p,
            );
            assert!(matches!(q.place(&id), Some(QueuePlace::Backoff(_))));
            if activate {
                q.activate(std::slice::from_ref(&id), Time::from_millis(600), &p);
            } else {
                q.flush_backoff_completed(Time::from_secs(2), &p);
            }
            q.check().unwrap();
            let active = matches!(q.place(&id), Some(QueuePlace::Active(_)));
            assert_eq!(
                active, flushed_to_active,
                "{config:?}, activate: {activate}"
            );
        }
    }
}
