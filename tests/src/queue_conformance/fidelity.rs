//! The fidelity cases: upstream behaviour gangway once diverged from, one `#[test]` each.

use super::fixtures::{ms, s, DEFAULT, FIT, T0};
use super::vocabulary::At::{Active, Backoff, Gated, Unschedulable};
use super::vocabulary::Step::{Activate, FlushLeftover, Gate, Is, Order, Pop};
use super::vocabulary::{add, back, event, Case, Ev, Step};

/// Upstream behaviour the core once did not reproduce, found by these cases and fixed by the
/// commit "Queue: leftover flush keeps the queue timestamp and is an event for pods in
/// flight"; each is run by its own `fidelity_*` test (see [`run_fidelity`]), and each passes.
///
/// [`run_fidelity`]: super::run_fidelity
pub const FIDELITY: &[Case] = &[
    // Upstream's flush never changes a pod's `Timestamp`: #139331 added a separate
    // `FlushTimestamp` for the 5-minute clock. gangway's `flush_unschedulable_leftover` used
    // to set the timestamp of a pod that stays gated to `now`, and the timestamp is also the
    // pod's place among pods of its priority (PrioritySort) and the base of its backoff; it
    // now keeps a separate flush time (`QueuedPodInfo::parked_since`).
    Case {
        source: "kubernetes#139331 + TestPodTimestamp",
        name: "a leftover flush keeps a gated pod's queue timestamp (pop order)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Step::Add("gated-a", 0, T0, Gated),
            add("b", 0, s(100)),
            FlushLeftover(s(301), 0),
            Is("gated-a", Gated),
            Gate(true),
            event(Ev::GroupAdded, s(400), 1),
            // gated-a entered the queue at 0, b at 100 s.
            Order(&["gated-a", "b"]),
        ],
    },
    Case {
        source:
            "kubernetes#139331 + TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint",
        name: "a leftover flush keeps a gated pod's queue timestamp (backoff base)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Gate(true),
            add("gated-x", 0, T0),
            Pop("gated-x"),
            back("gated-x", &[FIT], T0, Unschedulable),
            Gate(false),
            Activate(&["gated-x"], T0, 0),
            Is("gated-x", Gated),
            FlushLeftover(s(301), 0),
            Is("gated-x", Gated),
            Gate(true),
            // Failed at 0 after one attempt: its backoff ended at 1 s.
            event(Ev::GroupAdded, ms(301_500), 1),
            Is("gated-x", Active),
        ],
    },
    // Upstream's flushUnschedulablePodsLeftover hands the pods it found to
    // movePodsToActiveOrBackoffQueue, which records the event (the wildcard
    // UnschedulableTimeout) for the pods in flight (`addEventIfAnyInFlight`); a pod rejected
    // in that attempt then backs off instead of parking. gangway's
    // `flush_unschedulable_leftover` used to record nothing; it now records the event.
    Case {
        source: "Test_InFlightPods + scheduling_queue.go movePodsToActiveOrBackoffQueue",
        name: "a leftover flush that moves pods is an event for the pods in flight",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("a", 0, T0),
            Pop("a"),
            back("a", &[FIT], T0, Unschedulable),
            add("b", 0, s(400)),
            Pop("b"),
            FlushLeftover(s(400), 1),
            back("b", &[FIT], s(400), Backoff(s(401))),
        ],
    },
];
