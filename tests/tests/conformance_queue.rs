#![cfg(not(loom))]
//! Conformance: kube-scheduler's scheduling-queue unit tests, re-expressed as one table of
//! cases run by one driver, against [`QueueState`](gangsched::queue::QueueState) (the pure
//! queue) and again, with the same expectations, against
//! [`SchedulingQueue`](gangsched::SchedulingQueue) (the same behind its lock). Three more tests
//! run the blocking `pop` on real threads. The table (one module per theme), the driver and
//! the blocking-pop bodies live in the harness library,
//! [`gangway_tests::queue_conformance`]; this file keeps the `#[test]` entry points.
//!
//! Each [`Case`](gangway_tests::queue_conformance::Case) names the upstream test it comes
//! from in `source` ("(gangway)" when it has no upstream counterpart) and the upstream
//! sub-test in `name`; it is a list of [`Step`](gangway_tests::queue_conformance::Step)s,
//! each an operation at an explicit time with what it must return, or an expectation on the
//! queue (where a pod is, the active queue's pop order, the lengths). After every step the
//! driver runs `QueueState::check()` (I4: each pod in exactly one place, indexes consistent).
//!
//! Ported from `pkg/scheduler/backend/queue/scheduling_queue_test.go`: `TestPriorityQueue_Add`,
//! `TestPriorityQueue_AddWithReversePriorityLessFunc`, `Test_InFlightPods`,
//! `TestPriorityQueue_AddUnschedulableIfNotPresent`,
//! `TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff`, `TestPriorityQueue_Pop` (and
//! `tryPop`), `TestPriorityQueue_Update`, `TestPriorityQueue_UpdateWhenInflight`,
//! `TestPriorityQueue_Delete`, `TestPriorityQueue_Activate`, `TestPriorityQueue_moveToActiveQ`,
//! `TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint`,
//! `TestPriorityQueue_MoveAllToActiveOrBackoffQueue`, `TestSchedulingQueue_Close`,
//! `TestRecentlyTriedPodsGoBack`, `TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod`,
//! `TestHighPriorityBackoff`, `TestHighPriorityFlushUnschedulablePodsLeftover`,
//! `TestPriorityQueue_initPodMaxInUnschedulablePodsDuration`, `TestPodTimestamp`,
//! `TestPendingPodsMetric` (its gated transitions, as lengths), `TestPerPodSchedulingMetrics`,
//! `TestBackOffFlow`, `TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks`,
//! `Test_isPodWorthRequeuing`, `Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate`; and
//! the flush of gated pods fixed by kubernetes#139331 (`FlushTimestamp`) and the wildcard
//! bypass of the gate filter of kubernetes#139162.
//!
//! Adaptations:
//!
//! - Pods are gangway [`Pod`](gangsched::Pod)s in namespace `ns` whose uid is their name; the
//!   upstream fixtures keep their names and priorities (`hpp` 1000, `mpp` 500, `up` 0,
//!   `test-midpod` 100). Time is data: upstream's fake-clock steps become the explicit time of
//!   each step.
//! - Upstream puts `QueuedPodInfo`s straight into its internal queues (`unschedulablePods.
//!   addOrUpdate`, `backoffQ.add`, `activeQ.add`). gangway has no such back door: the same
//!   states are reached through `add` → `pop` → `add_unschedulable_if_not_present`, with or
//!   without an event during the attempt. An upstream pod "with `UnschedulableCount++`" is a
//!   pod that was popped once (one attempt: 1 s of backoff).
//! - One fixed plugin set serves every case (see `plugins` in
//!   `src/queue_conformance/fixtures.rs`): `Fit` answers `Queue` (upstream's `fooPlugin` /
//!   `queuePlugin` with `queueHintReturnQueue`; for `NodeAdd` it queues only for the node
//!   "big", skips other nodes and fails for "broken"), `Skip` answers `QueueSkip`
//!   (`queueHintReturnSkip`), `Pending` is a plugin the pod waits on (upstream's
//!   `PendingPlugins`), `Bar` registered no hint (`barPlugin`), and `Gate` is a PreEnqueue
//!   plugin (upstream's `preEnqueuePlugin` / `SchedulingGates`) holding pods named `gated-*`
//!   while its switch is closed and their priority is not above 0, with hints for pod updates
//!   and PodGroup adds. Nobody registered `NodeUpdate`. Upstream's `nodeAdd` and `pvAdd`
//!   become `NodeAdd`; `EventAssignedPodAdd` becomes `AssignedPodDelete` ("resources freed");
//!   `EventUnschedulableTimeout` stays the wildcard `UnschedulableTimeout`; `pvUpdate` (which
//!   nobody registered) becomes `NodeUpdate`.
//! - Queueing hints are on (1.36's default); cases for hints off, for `PopFromBackoffQ` on
//!   and for the nominator and metrics are left out. The table runs
//!   `QueueConfig::BEFORE_1_33` (gangway's default is 1.36's: pop from backoff and the 1 s
//!   ordering window, measured against the real queue by `gangway differential`), so the
//!   ordering window is off unless a case configures it. A pod backs off while its expiry is *after* `now` (upstream's
//!   `boTime.After(now)` before KEP-5142), so a flush at exactly the expiry moves it;
//!   upstream master with the window disabled keeps such a pod one flush longer, and its tests
//!   step a full second past the expiry. The `(gangway)` backoff cases pin the boundary to the
//!   nanosecond.
//! - gangway refuses to `add` a pod that is in flight (`AlreadyQueued`); upstream re-adds it
//!   (`TestPriorityQueue_MoveAllToActiveOrBackoffQueue` ends with 4 active pods upstream, 3
//!   here). Upstream's heap order for equal keys depends on insertion; gangway breaks ties by
//!   pod id, and cases that relied on insertion order use distinct times.
//! - `lengths().unschedulable` counts gated pods too (upstream's metric counts them apart, as
//!   `gated`; both have a `gated` count).
//! - A popped pod's rejectors are cleared by `pop` and set by the scheduler in the info it
//!   hands back (`rejected_by`, `pending_on`); upstream master keeps them after `Pop` for
//!   logging (`TestPop`), which is not ported.
//! - `TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff` uses 4 pods instead of 10.
//!
//! Three cases found upstream behaviour the core did not reproduce (a leftover flush reset a
//! gated pod's queue timestamp, and was not an event for the pods in flight); the commit
//! "Queue: leftover flush keeps the queue timestamp and is an event for pods in flight" fixed
//! the core, and they pass. They are kept apart in
//! [`FIDELITY`](gangway_tests::queue_conformance::FIDELITY), one `#[test]` each
//! (`fidelity_*`); see their comments in `src/queue_conformance/fidelity.rs`.
//!
//! Source:
//!   - kubernetes/kubernetes, `pkg/scheduler/backend/queue/scheduling_queue_test.go` (a
//!     recent master, commit `00cd67b7`); `backoff_queue.go` and `scheduling_queue.go` for
//!     the behaviour the fidelity cases expect.
//!
//! Copyright & License:
//!   - Copyright 2017 The Kubernetes Authors
//!   - Apache License, Version 2.0
//!   - http://www.apache.org/licenses/LICENSE-2.0

use gangsched::QueueConfig;
use gangway_tests::queue_conformance::{self as qc, cases, run, run_fidelity, Under, DEFAULT};

/// The table keeps the rules of the upstream tests it was ported from (pop from backoff off);
/// gangway's default is 1.36's, with those rules on — the same timing either way.
#[test]
fn the_table_config_is_upstream_timing_before_pop_from_backoff() {
    assert_eq!(DEFAULT, QueueConfig::BEFORE_1_33);
    assert_eq!(
        QueueConfig::default()
            .with_ordering_window(None)
            .with_pop_from_backoff(false),
        DEFAULT
    );
}

#[test]
fn scheduling_queue_cases_on_queue_state() {
    for case in cases() {
        run(case, Under::State);
    }
}

#[test]
fn scheduling_queue_cases_on_scheduling_queue() {
    for case in cases() {
        run(case, Under::Lock);
    }
}

#[test]
fn fidelity_leftover_flush_keeps_timestamp_pop_order() {
    run_fidelity("a leftover flush keeps a gated pod's queue timestamp (pop order)");
}

#[test]
fn fidelity_leftover_flush_keeps_timestamp_backoff() {
    run_fidelity("a leftover flush keeps a gated pod's queue timestamp (backoff base)");
}

#[test]
fn fidelity_leftover_flush_is_an_event_for_pods_in_flight() {
    run_fidelity("a leftover flush that moves pods");
}

// ---------------------------------------------------------------------------------------------
// The blocking pop, on real threads
// ---------------------------------------------------------------------------------------------

/// `TestPriorityQueue_Pop` (`tryPop`): a pop on an empty queue blocks until a pod is added.
#[test]
fn pop_blocks_until_add() {
    qc::pop_blocks_until_add();
}

/// `TestSchedulingQueue_Close`: close wakes a blocked pop, which returns `None`; a closed
/// queue still hands out the pods already active, then `None`.
#[test]
fn close_wakes_a_blocked_pop() {
    qc::close_wakes_a_blocked_pop();
}

/// (gangway) Every operation that makes a pod active wakes a blocked pop (I2 for the queue):
/// an event, an activation, the end of a backoff, an update that lifts a gate, a pod handed
/// back pending on a plugin an event during its attempt concerned.
#[test]
fn every_way_into_the_active_queue_wakes_a_blocked_pop() {
    qc::every_way_into_the_active_queue_wakes_a_blocked_pop();
}
