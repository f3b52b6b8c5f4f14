//! Cases: pods handed back unschedulable, and the cluster events (with their queueing
//! hints and prechecks) that move them.

use super::fixtures::{ms, s, BAR, DEFAULT, FIT, L0, PENDING, SKIP, T0};
use super::table::{FIVE_PARKED, POPPED};
use super::vocabulary::At::{Active, Backoff, ErrorBackoff, Unschedulable};
use super::vocabulary::Step::{FlushBackoff, Is, Lengths, Order, Pop};
use super::vocabulary::{add, back, back_pending, event, Case, Ev, Pre, Step};

/// Unschedulable pods and the events that move them.
pub(crate) const UNSCHEDULABLE: &[Case] = &[
    Case {
        source: "TestPriorityQueue_AddUnschedulableIfNotPresent",
        name: "no event during the attempt: the pod parks in the unschedulable pool",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("up", 0, T0),
            Pop("up"),
            add("hpp", 1000, T0),
            back("up", &["plugin"], T0, Unschedulable),
            Pop("hpp"),
            Is("up", Unschedulable),
            Lengths(L0.with_unschedulable(1).with_in_flight(1)),
        ],
    },
    Case {
        source: "TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint",
        name: "Queue queues pod to activeQ (a pending plugin: no backoff)",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back_pending("pod1", &[], &[PENDING], T0, Unschedulable),
            event(Ev::NodeAdd("big"), T0, 1),
            Is("pod1", Active),
        ],
    },
    Case {
        source: "TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint",
        name: "Queue queues pod to backoffQ if Pod is backing off",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[FIT], T0, Unschedulable),
            event(Ev::NodeAdd("big"), T0, 1),
            Is("pod1", Backoff(s(1))),
        ],
    },
    Case {
        source: "TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint",
        name: "Queue queues pod to activeQ if Pod is not backing off (the event at exactly the expiry)",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[FIT], T0, Unschedulable),
            event(Ev::NodeAdd("big"), s(1), 1),
            Is("pod1", Active),
        ],
    },
    Case {
        source: "TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint",
        name: "Skip queues pod to unschedulablePods",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[FIT], T0, Unschedulable),
            event(Ev::NodeAdd("small"), s(5), 0),
            Is("pod1", Unschedulable),
        ],
    },
    Case {
        source: "Test_isPodWorthRequeuing",
        name: "Treat the event as Queue when QueueHintFn returns error",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[FIT], T0, Unschedulable),
            event(Ev::NodeAdd("broken"), ms(500), 1),
            Is("pod1", Backoff(s(1))),
        ],
    },
    Case {
        source: "Test_isPodWorthRequeuing",
        name: "return Queue when no queueing hint function is registered for the event (its verdict is QueueSkip)",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[BAR], T0, Unschedulable),
            event(Ev::NodeAdd("big"), s(5), 0),
            Is("pod1", Unschedulable),
        ],
    },
    Case {
        source: "Test_isPodWorthRequeuing",
        name: "Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[SKIP], T0, Unschedulable),
            // Fit and Pending would queue for a big node, but neither rejected the pod.
            event(Ev::NodeAdd("big"), s(5), 0),
            event(Ev::PodDeleted, s(5), 0),
            Is("pod1", Unschedulable),
        ],
    },
    Case {
        source: "Test_isPodWorthRequeuing",
        name: "interprets Queue from the Pending plugin as queueImmediately",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back_pending("pod1", &[FIT, SKIP], &[PENDING], T0, Unschedulable),
            event(Ev::PodDeleted, T0, 1),
            Is("pod1", Active),
        ],
    },
    Case {
        source: "Test_isPodWorthRequeuing",
        name: "interprets Queue from the Unschedulable plugin as queueAfterBackoff",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[SKIP, FIT], T0, Unschedulable),
            event(Ev::PodDeleted, T0, 1),
            Is("pod1", Backoff(s(1))),
        ],
    },
    Case {
        source: "Test_isPodWorthRequeuing",
        name: "return Queue when the event is wildcard",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[BAR], T0, Unschedulable),
            event(Ev::Timeout, T0, 1),
            Is("pod1", Backoff(s(1))),
        ],
    },
    Case {
        source: "(gangway)",
        name: "an event no plugin registered for is ignored",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[FIT, SKIP, BAR], T0, Unschedulable),
            event(Ev::NodeUpdate, s(5), 0),
            Is("pod1", Unschedulable),
        ],
    },
    Case {
        source: "TestPriorityQueue_MoveAllToActiveOrBackoffQueue",
        name: "an event moves the pods its hints queue; error failures back off apart",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("up", 0, T0),
            Pop("up"),
            add("hpp", 1000, T0),
            Pop("hpp"),
            back("up", &[FIT], T0, Unschedulable),
            back("hpp", &[FIT], T0, Unschedulable),
            // A failure with no rejecting plugin (an error) backs off.
            add("hpp1", 1000, T0),
            Pop("hpp1"),
            back("hpp1", &[], T0, ErrorBackoff(s(1))),
            // Rejected by a plugin with no hint for the event: stays.
            add("hpp2", 1000, T0),
            Pop("hpp2"),
            back("hpp2", &[BAR], T0, Unschedulable),
            event(Ev::NodeAdd("big"), T0, 2),
            Is("up", Backoff(s(1))),
            Is("hpp", Backoff(s(1))),
            Is("hpp2", Unschedulable),
            add("mpp", 500, T0),
            Lengths(L0.with_active(1).with_backoff(2).with_error_backoff(1).with_unschedulable(1)),
            Pop("mpp"),
            FlushBackoff(s(10), 3),
            Order(&["hpp", "hpp1", "up"]),
            Pop("hpp"),
            Pop("hpp1"),
            Pop("up"),
            back("up", &[FIT], s(10), Unschedulable),
            back("hpp", &[FIT], s(10), Unschedulable),
            back("hpp1", &[], s(10), ErrorBackoff(s(12))),
            Lengths(L0.with_error_backoff(1).with_unschedulable(3).with_in_flight(1)),
            FlushBackoff(s(20), 1),
            event(Ev::NodeAdd("big"), s(20), 2),
            Is("hpp2", Unschedulable),
            Lengths(L0.with_active(3).with_unschedulable(1).with_in_flight(1)),
        ],
    },
    Case {
        source: "TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks",
        name: "nil PreEnqueueCheck",
        config: DEFAULT,
        setup: FIVE_PARKED,
        steps: &[
            Step::Event(Ev::Timeout, Pre::All, T0, 5),
            FlushBackoff(s(20), 5),
            Lengths(L0.with_active(5)),
        ],
    },
    Case {
        source: "TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks",
        name: "move Pods with priority greater than 2",
        config: DEFAULT,
        setup: FIVE_PARKED,
        steps: &[
            Step::Event(Ev::Timeout, Pre::MinPriority(2), T0, 3),
            FlushBackoff(s(20), 3),
            Order(&["p4", "p3", "p2"]),
        ],
    },
    Case {
        source: "TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks",
        name: "move Pods with even priority and greater than 2",
        config: DEFAULT,
        setup: FIVE_PARKED,
        steps: &[
            Step::Event(Ev::Timeout, Pre::EvenAtLeast(2), T0, 2),
            FlushBackoff(s(20), 2),
            Order(&["p4", "p2"]),
        ],
    },
    Case {
        source: "TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks",
        name: "move Pods with even and negative priority",
        config: DEFAULT,
        setup: FIVE_PARKED,
        steps: &[
            Step::Event(Ev::Timeout, Pre::EvenNegative, T0, 0),
            FlushBackoff(s(20), 0),
            Lengths(L0.with_unschedulable(5)),
        ],
    },
    Case {
        source: "TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks",
        name: "preCheck isn't called if the event is not interested by any plugins",
        config: DEFAULT,
        setup: FIVE_PARKED,
        steps: &[Step::Event(Ev::NodeUpdate, Pre::Never, T0, 0)],
    },
];
