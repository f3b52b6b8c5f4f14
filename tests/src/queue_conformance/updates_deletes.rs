//! Cases: `update` (in every place a pod can be) and `delete`.

use super::fixtures::{ms, ns, s, BAR, DEFAULT, FIT, L0, SKIP, T0};
use super::table::{MPP_BACKING_OFF, MPP_PARKED};
use super::vocabulary::At::{Active, Backoff, ErrorBackoff, Gated, Gone, InFlight, Unschedulable};
use super::vocabulary::Step::{
    Delete, Done, FlushBackoff, FlushLeftover, Is, Lengths, Order, Pop, Update,
};
use super::vocabulary::{add, back, event, Case, Ev, Step};

/// Update.
pub(crate) const UPDATES: &[Case] = &[
    Case {
        source: "TestPriorityQueue_Update",
        name: "Update pod that didn't exist in the queue",
        config: DEFAULT,
        setup: &[],
        steps: &[Update("mpp", 500, T0, Active), Pop("mpp")],
    },
    Case {
        source: "TestPriorityQueue_Update",
        name: "When updating a pod that is already in activeQ, the pod should remain in activeQ (and is re-sorted by its new priority)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("a", 0, T0),
            add("b", 0, ns(1)),
            Order(&["a", "b"]),
            Update("b", 10, ms(1), Active),
            Order(&["b", "a"]),
            Update("a", 20, ms(2), Active),
            Order(&["a", "b"]),
            Lengths(L0.with_active(2)),
        ],
    },
    Case {
        source: "TestPriorityQueue_Update",
        name: "When updating a pod that is in backoff queue and is still backing off, it will be updated in backoff queue",
        config: DEFAULT,
        setup: MPP_BACKING_OFF,
        steps: &[Update("mpp", 500, ms(500), Backoff(s(1)))],
    },
    Case {
        source: "TestPriorityQueue_Update",
        name: "when updating a pod in unschedulablePods, if its backoff timer has not yet expired, it moves to backoffQ",
        config: DEFAULT,
        setup: MPP_PARKED,
        steps: &[Update("mpp", 500, ms(500), Backoff(s(1)))],
    },
    Case {
        source: "TestPriorityQueue_Update",
        name: "when updating a pod in unschedulablePods, if its backoff timer has expired, it moves to activeQ",
        config: DEFAULT,
        setup: MPP_PARKED,
        steps: &[Update("mpp", 500, s(10), Active)],
    },
    Case {
        source: "TestPriorityQueue_Update",
        name: "when updating a pod in unschedulablePods, if the scheduling hint returns QueueSkip, it remains in unschedulablePods",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("mpp", 500, T0),
            Pop("mpp"),
            back("mpp", &[SKIP], T0, Unschedulable),
            Update("mpp", 500, s(10), Unschedulable),
        ],
    },
    Case {
        source: "TestPriorityQueue_Update",
        name: "when updating a pod which is in flightPods, the pod will not be added to any queue",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("mpp", 500, T0),
            Pop("mpp"),
            Update("mpp", 500, T0, InFlight),
            Lengths(L0.with_in_flight(1)),
        ],
    },
    Case {
        source: "TestPriorityQueue_UpdateWhenInflight",
        name: "an update during the attempt that may help sends the pod to backoff",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("test-pod", 0, T0),
            Pop("test-pod"),
            Update("test-pod", 0, T0, InFlight),
            back("test-pod", &[FIT], T0, Backoff(s(1))),
        ],
    },
];

/// Delete.
pub(crate) const DELETES: &[Case] = &[
    Case {
        source: "TestPriorityQueue_Delete",
        name: "delete takes queued pods out",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Update("hpp", 1000, T0, Active),
            add("up", 0, T0),
            Delete("hpp", true),
            Is("up", Active),
            Is("hpp", Gone),
            Delete("up", true),
            Lengths(L0),
        ],
    },
    Case {
        source: "(gangway)",
        name: "a pod deleted in flight does not come back; an unknown pod's delete is a no-op",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("a", 0, T0),
            add("b", 0, ns(1)),
            Pop("a"),
            Pop("b"),
            Delete("a", true),
            Is("a", InFlight),
            event(Ev::PodDeleted, ns(1), 0),
            back("a", &[FIT], ns(1), Gone),
            Is("a", Gone),
            Delete("a", false),
            // b is deleted in flight and then bound: gone as well.
            Delete("b", true),
            Done("b"),
            Is("b", Gone),
            Delete("nobody", false),
            Lengths(L0),
        ],
    },
    Case {
        source: "(gangway)",
        name: "delete takes pods out of every part of the queue",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("a", 0, T0),
            add("b", 0, ns(1)),
            add("c", 0, ns(2)),
            Step::Add("gated-d", 0, ns(3), Gated),
            Pop("a"),
            Pop("b"),
            event(Ev::PodDeleted, ns(3), 0),
            // Bar has no hint for the event: a parks; Fit's says it may help: b backs off.
            back("a", &[BAR], ns(3), Unschedulable),
            back("b", &[FIT], ns(3), Backoff(ns(1_000_000_003))),
            Pop("c"),
            back("c", &[], ns(3), ErrorBackoff(ns(1_000_000_003))),
            Lengths(
                L0.with_backoff(1)
                    .with_error_backoff(1)
                    .with_unschedulable(2)
                    .with_gated(1),
            ),
            Delete("a", true),
            Delete("b", true),
            Delete("c", true),
            Delete("gated-d", true),
            Lengths(L0),
            FlushBackoff(s(10), 0),
            FlushLeftover(s(1000), 0),
            Lengths(L0),
        ],
    },
];
