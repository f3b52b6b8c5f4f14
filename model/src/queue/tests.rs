use gangsched::queue::QueuePlace;
use gangsched::{ClusterEvent, Pod, QueueConfig, Time};

use super::{plugins, QueueModel, FIT};

fn pod(name: &str, priority: i32) -> Pod {
    Pod::new(name, "ns", name).with_priority(priority)
}

#[test]
fn backoff_doubles_and_caps_like_the_real_config() {
    let m = QueueModel::new(QueueConfig::default());
    let c = QueueConfig::default();
    for attempts in [0, 1, 2, 3, 4, 5, 31, 32, 33, 1000, u32::MAX] {
        assert_eq!(
            m.backoff(attempts),
            c.backoff_duration(attempts),
            "{attempts}"
        );
    }
}

#[test]
fn an_event_seen_in_flight_sends_the_pod_to_backoff() {
    let p = plugins();
    let mut m = QueueModel::new(QueueConfig::default());
    m.add(pod("a", 0), Time::ZERO, &p).unwrap();
    let popped = m.pop().unwrap();
    m.move_all_to_active_or_backoff(
        ClusterEvent::AssignedPodDelete(pod("x", 0)),
        None,
        Time::ZERO,
        &p,
    );
    let mut info = popped.info;
    info.unschedulable_plugins.insert(FIT.into());
    let place = m.add_unschedulable_if_not_present(info, Time::ZERO, &p);
    assert_eq!(place, Ok(Some(QueuePlace::Backoff(Time::from_secs(1)))));
    assert_eq!(m.lengths().in_flight, 0);
}

#[test]
fn gated_pods_wait_until_the_update_lifts_the_gate() {
    let p = plugins();
    let mut m = QueueModel::new(QueueConfig::default());
    assert_eq!(m.add(pod("gated-a", 0), Time::ZERO, &p), Ok(false));
    assert_eq!(m.lengths().gated, 1);
    let place = m.update(pod("gated-a", 0), pod("gated-a", 3), Time::ZERO, &p);
    assert!(matches!(place, QueuePlace::Active(_)));
    assert_eq!(m.lengths().gated, 0);
}
