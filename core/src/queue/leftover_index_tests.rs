//! Unit tests of the [leftover index](super): the stale pods and the oldest it answers with,
//! and its check shown a broken index. (Found missing by mutation testing, issue #43: the index
//! is built from 64 pods or by the checkers' seam, and no unit test did either.)

use std::time::Duration;

use super::super::state_tests::{checked, fail_unschedulable, plugins, pod, slot_of};
use super::super::{QueueConfig, QueueState};
use super::LeftoverIndex;
use crate::Time;

/// `gated-d` gated since 0 s; `a`, `b`, `c` rejected at 10 s, 60 s and 150 s. The indexes
/// built.
fn parked_at_four_times() -> QueueState {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    assert!(!q.add(pod("gated-d", 0), Time::ZERO, &p).unwrap());
    for (name, at) in [("a", 10), ("b", 60), ("c", 150)] {
        q.add(pod(name, 1), Time::from_secs(at), &p).unwrap();
        fail_unschedulable(&mut q, name, Time::from_secs(at), &p);
    }
    q.build_indexes();
    checked(&q);
    q
}

fn index(q: &QueueState) -> &LeftoverIndex {
    q.leftover.as_deref().expect("built")
}

/// Stale is parked longer than the bound, gated pods included, in slot order: at 160 s with
/// 100 s, `gated-d` and `a`, not `b` (exactly 100 s) nor `c`.
#[test]
fn stale_is_parked_longer_than_the_bound() {
    let q = parked_at_four_times();
    let mut expected = vec![slot_of(&q, "gated-d"), slot_of(&q, "a")];
    expected.sort_unstable();
    let max = Duration::from_secs(100);
    assert_eq!(index(&q).stale(Time::from_secs(160), max), expected);
    assert!(index(&q).stale(Time::from_secs(100), max).is_empty());
    let all = index(&q).stale(Time::from_secs(1000), max);
    assert_eq!(all.len(), 4);
}

/// The oldest is the longest parked, the gated counted only if asked.
#[test]
fn the_oldest_counts_the_gated_only_if_asked() {
    let q = parked_at_four_times();
    assert_eq!(index(&q).oldest(false), Some(Time::from_secs(10)));
    assert_eq!(index(&q).oldest(true), Some(Time::ZERO));
    assert_eq!(LeftoverIndex::default().oldest(true), None);
}

/// The check finds a pod lost, a pod filed at another time, and a slot filed that is not in
/// the pool.
#[test]
fn the_check_finds_a_pod_lost_misdated_or_not_pooled() {
    let q = parked_at_four_times();
    let check = |index: &LeftoverIndex| index.check(&q.pool, &q.slots);
    let b = slot_of(&q, "b");

    let mut lost = index(&q).clone();
    lost.remove_filed(b, Time::from_secs(60), false);
    let found = check(&lost).expect_err("a pod lost");
    assert!(
        found.contains("pooled pod b is not in the leftover index"),
        "{found}"
    );

    let mut misdated = index(&q).clone();
    misdated.remove_filed(b, Time::from_secs(60), false);
    misdated.open.insert((Time::from_secs(61), b));
    let found = check(&misdated).expect_err("a pod misdated");
    assert!(
        found.contains("pooled pod b is not in the leftover index"),
        "{found}"
    );

    let mut extra = index(&q).clone();
    extra.open.insert((Time::ZERO, 99));
    let found = check(&extra).expect_err("a slot not pooled");
    assert!(found.contains("files 5 slots, the pool holds 4"), "{found}");
}
