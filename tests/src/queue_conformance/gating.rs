//! Cases: PreEnqueue gating — gated adds, the events and updates that lift a gate.

use gangway::queue::QueueLengths;

use super::fixtures::{ms, s, DEFAULT, FIT, L0, T0};
use super::vocabulary::At::{Active, Backoff, Gated, Unschedulable};
use super::vocabulary::Step::{Activate, FlushBackoff, Gate, Is, Lengths, Pop, Update};
use super::vocabulary::{add, back, event, Case, Ev, Step};

/// PreEnqueue gating.
pub(crate) const GATING: &[Case] = &[
    Case {
        source: "TestPriorityQueue_moveToActiveQ",
        name: "no plugins registered / pod passed all preEnqueue plugins / pod name not in allowlists (and an update that does not lift the gate)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("p", 0, T0),
            Step::Add("gated-p", 0, T0, Gated),
            Lengths(QueueLengths {
                active: 1,
                unschedulable: 1,
                gated: 1,
                ..L0
            }),
            Update("gated-p", 0, s(1), Gated),
            Lengths(QueueLengths {
                active: 1,
                unschedulable: 1,
                gated: 1,
                ..L0
            }),
        ],
    },
    Case {
        source: "Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate",
        name: "gated on creation, ungated by the update that lifts the gate",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Step::Add("gated-pod", 0, T0, Gated),
            Update("gated-pod", 5, s(1), Active),
            Pop("gated-pod"),
            Lengths(QueueLengths {
                in_flight: 1,
                ..L0
            }),
        ],
    },
    Case {
        source: "TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint",
        name: "QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Step::Add("gated-a", 0, T0, Gated),
            Gate(true),
            // Fit's and Pending's events: the gate did not register them.
            event(Ev::NodeAdd("big"), s(1), 0),
            event(Ev::PodDeleted, s(1), 0),
            Is("gated-a", Gated),
        ],
    },
    Case {
        source: "(gangway)",
        name: "a gated pod moves for its gate's event only once the gate lets it through",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Step::Add("gated-a", 0, T0, Gated),
            event(Ev::GroupAdded, s(1), 0),
            Is("gated-a", Gated),
            Lengths(QueueLengths {
                unschedulable: 1,
                gated: 1,
                ..L0
            }),
            Gate(true),
            event(Ev::GroupAdded, s(2), 1),
            Is("gated-a", Active),
            Lengths(QueueLengths { active: 1, ..L0 }),
        ],
    },
    Case {
        source: "kubernetes#139162",
        name: "a wildcard event moves a gated pod whatever its gate registered",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Step::Add("gated-a", 0, T0, Gated),
            event(Ev::Timeout, s(1), 0),
            Is("gated-a", Gated),
            Gate(true),
            event(Ev::Timeout, s(2), 1),
            Is("gated-a", Active),
        ],
    },
    Case {
        source: "TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint",
        name: "QueueHintFunction is called when Pod is gated by the plugin that is interested in the event (to backoff, gate checked again at its end)",
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
            event(Ev::GroupAdded, ms(500), 1),
            Is("gated-x", Backoff(s(1))),
            Lengths(QueueLengths { backoff: 1, ..L0 }),
            FlushBackoff(s(1), 1),
            Is("gated-x", Gated),
            Gate(true),
            event(Ev::GroupAdded, s(2), 1),
            Is("gated-x", Active),
        ],
    },
    Case {
        source: "TestPendingPodsMetric",
        name: "Gated metric should be 0 when Ungated -> Gated -> Ungated transition, when popFromBackoffQ is disabled",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Gate(true),
            add("gated-x", 0, T0),
            Pop("gated-x"),
            back("gated-x", &[FIT], T0, Unschedulable),
            Gate(false),
            Update("gated-x", 0, s(3), Gated),
            Lengths(QueueLengths {
                unschedulable: 1,
                gated: 1,
                ..L0
            }),
            Gate(true),
            Update("gated-x", 0, s(4), Active),
            Lengths(QueueLengths { active: 1, ..L0 }),
        ],
    },
    Case {
        source: "TestPendingPodsMetric",
        name: "Gated metric should be 0 when Ungated -> Gated -> Ungated (BackoffQ) transition (gangway: PreEnqueue runs when backoff ends)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Gate(true),
            add("gated-x", 0, T0),
            Pop("gated-x"),
            back("gated-x", &[FIT], T0, Unschedulable),
            Gate(false),
            Update("gated-x", 0, ms(100), Backoff(s(1))),
            Lengths(QueueLengths { backoff: 1, ..L0 }),
            Gate(true),
            Update("gated-x", 0, ms(200), Backoff(s(1))),
            FlushBackoff(s(1), 1),
            Is("gated-x", Active),
            Lengths(QueueLengths { active: 1, ..L0 }),
        ],
    },
];
