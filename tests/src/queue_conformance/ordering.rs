//! Cases: the order of `add` and `pop`, and adds of a pod the queue already knows.

use super::fixtures::{s, DEFAULT, FIT, L0, T0};
use super::vocabulary::At::{Backoff, Unschedulable};
use super::vocabulary::Step::{AddAgain, FlushBackoff, Lengths, Order, Pop, PopNone};
use super::vocabulary::{add, back, event, Case, Ev};

/// Add, pop order.
pub(crate) const ORDERING: &[Case] = &[
    Case {
        source: "TestPriorityQueue_Add",
        name: "pops by priority",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("mpp", 500, T0),
            add("up", 0, T0),
            add("hpp", 1000, T0),
            Order(&["hpp", "mpp", "up"]),
            Pop("hpp"),
            Pop("mpp"),
            Pop("up"),
            PopNone,
            Lengths(L0.with_in_flight(3)),
        ],
    },
    Case {
        source: "TestPriorityQueue_AddWithReversePriorityLessFunc",
        name: "the higher priority added last pops first",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("mpp", 500, T0),
            add("hpp", 1000, T0),
            Pop("hpp"),
            Pop("mpp"),
        ],
    },
    Case {
        source: "TestPodTimestamp",
        name: "add two pod to activeQ and sort them by the timestamp",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("tp-2", 0, s(1)),
            add("tp-1", 0, T0),
            Order(&["tp-1", "tp-2"]),
        ],
    },
    Case {
        source: "TestPodTimestamp",
        name: "add two pod to unschedulablePods then move them to activeQ and sort them by the timestamp",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("tp-1", 0, T0),
            add("tp-2", 0, T0),
            Pop("tp-1"),
            Pop("tp-2"),
            back("tp-2", &[FIT], s(1), Unschedulable),
            back("tp-1", &[FIT], T0, Unschedulable),
            event(Ev::Timeout, s(4), 2),
            Order(&["tp-1", "tp-2"]),
        ],
    },
    Case {
        source: "TestPodTimestamp",
        name: "add one pod to BackoffQ and move it to activeQ",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("tp-1", 0, T0),
            Pop("tp-1"),
            event(Ev::PodDeleted, T0, 0),
            back("tp-1", &[FIT], T0, Backoff(s(1))),
            add("tp-2", 0, s(1)),
            FlushBackoff(s(3), 1),
            event(Ev::Timeout, s(3), 0),
            Order(&["tp-1", "tp-2"]),
        ],
    },
    Case {
        source: "(gangway)",
        name: "a pod the queue knows (queued or in flight) cannot be added again",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("a", 0, T0),
            AddAgain("a"),
            Pop("a"),
            AddAgain("a"),
            back("a", &[FIT], T0, Unschedulable),
            AddAgain("a"),
            Lengths(L0.with_unschedulable(1)),
        ],
    },
];
