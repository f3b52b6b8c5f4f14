//! A gang's one backoff (Hardened, H2) with kube-scheduler 1.37's cap for a pod group:
//! `max_backoff` × √(members handed back) with
//! [`QueueConfig::group_backoff_scales_with_size`], `max_backoff` without.

use std::time::Duration;

use super::state_tests::{id, plugins, pod, NODE};
use super::*;
use crate::{PodId, Time};

/// A gang of `size` handed back `failures` times in a row at time zero, each time after an
/// event that may help (so it backs off); the places of the last hand-back.
fn handed_back(config: QueueConfig, size: usize, failures: usize) -> Vec<Option<QueuePlace>> {
    let p = plugins();
    let mut q = QueueState::new(config.with_ordering_window(None));
    let names: Vec<String> = (0..size).map(|i| format!("g{i}")).collect();
    for name in &names {
        q.add(pod(name, 0), Time::ZERO, &p).unwrap();
    }
    let ids: Vec<PodId> = names.iter().map(|n| id(n)).collect();
    let mut places = Vec::new();
    for _ in 0..failures {
        q.activate(&ids, Time::ZERO, &p);
        let members: Vec<_> = (0..size)
            .map(|_| q.pop().unwrap().info.rejected_by(NODE))
            .collect();
        let freed = ClusterEvent::AssignedPodDelete(pod("x", 0));
        q.move_all_to_active_or_backoff(freed, None, Time::ZERO, &p);
        places = q.add_gang_unschedulable(members, Time::ZERO, &p).unwrap();
        q.check().unwrap();
    }
    places
}

fn backoff(secs: f64) -> Vec<Option<QueuePlace>> {
    let at = Time::ZERO + Duration::from_secs_f64(secs);
    vec![Some(QueuePlace::Backoff(at)); 4]
}

#[test]
fn a_gang_of_four_backs_off_up_to_twice_the_max_with_the_group_rule() {
    let scaled = QueueConfig::DEFAULT.with_group_backoff_scales_with_size(true);
    // 1, 2, 4, 8, 16, 32 s uncapped: the sixth failure reaches 10 s × √4 = 20 s.
    assert_eq!(handed_back(scaled, 4, 4), backoff(8.0), "under both caps");
    assert_eq!(handed_back(scaled, 4, 6), backoff(20.0));
    assert_eq!(
        handed_back(QueueConfig::DEFAULT, 4, 6),
        backoff(10.0),
        "1.36: the max"
    );
}

#[test]
fn the_group_rule_leaves_a_gang_of_one_at_the_max() {
    let scaled = QueueConfig::DEFAULT.with_group_backoff_scales_with_size(true);
    let at = Time::from_secs(10);
    assert_eq!(handed_back(scaled, 1, 6), [Some(QueuePlace::Backoff(at))]);
}

#[test]
fn the_cap_is_upstreams_float_product_in_whole_nanoseconds() {
    // 10 s × √3 = 17.320508075… s, as time.Duration(float64(max) * math.Sqrt(3)) truncates.
    let scaled = QueueConfig::DEFAULT.with_group_backoff_scales_with_size(true);
    let places = handed_back(scaled, 3, 6);
    let at = Time::from_nanos((10e9_f64 * 3f64.sqrt()) as u64);
    assert_eq!(places, vec![Some(QueuePlace::Backoff(at)); 3]);
}
