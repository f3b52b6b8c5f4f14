//! Unit tests of [`QueueState::check`] itself: the checkers rely on it to find a queue whose
//! slot bookkeeping is broken, so each of its conditions is shown a queue that breaks it alone.
//! (Found missing by mutation testing, issue #43: the count check's `||` turned `&&` went
//! through every test that only ever shows it a sound queue.)

use super::state_tests::{checked, plugins, pod};
use super::{QueueConfig, QueuePlace, QueueState, QueuedPodInfo};
use crate::Time;

fn two_pods() -> QueueState {
    let p = plugins();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("a", 0), Time::ZERO, &p).unwrap();
    q.add(pod("b", 0), Time::ZERO, &p).unwrap();
    checked(&q);
    q
}

/// A slot neither used nor free (leaked): only the free-list's count is wrong.
#[test]
fn the_check_finds_a_leaked_slot() {
    let mut q = two_pods();
    q.slots.push(None);
    q.places.push(QueuePlace::Unschedulable);
    let found = q.check().expect_err("a slot neither used nor free");
    assert!(found.contains("slots free of 3"), "{found}");
}

/// A place recorded for no slot: only the places' count is wrong.
#[test]
fn the_check_finds_a_place_without_a_slot() {
    let mut q = two_pods();
    q.places.push(QueuePlace::Unschedulable);
    let found = q.check().expect_err("a place for no slot");
    assert!(found.contains("2 slots used, 2 pods known"), "{found}");
}

/// A record in a slot no pod is filed under (an orphan): only the count of pods known is
/// wrong.
#[test]
fn the_check_finds_a_record_no_pod_is_filed_under() {
    let mut q = two_pods();
    q.slots
        .push(Some(QueuedPodInfo::new(pod("orphan", 0), Time::ZERO)));
    q.places.push(QueuePlace::Unschedulable);
    let found = q.check().expect_err("a record no pod is filed under");
    assert!(found.contains("3 slots used, 2 pods known"), "{found}");
}
