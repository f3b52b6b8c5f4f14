//! Cases: events that arrive while a pod is in flight, and where the pod goes when it is
//! handed back.

use super::fixtures::{s, DEFAULT, FIT, L0, PENDING, SKIP, T0};
use super::table::POPPED;
use super::vocabulary::At::{Active, Backoff, ErrorBackoff, Unschedulable};
use super::vocabulary::Step::{Lengths, Pop, PopNone};
use super::vocabulary::{add, back, back_pending, event, Case, Ev};

/// Events during an attempt (in-flight pods).
pub(crate) const IN_FLIGHT: &[Case] = &[
    Case {
        source: "Test_InFlightPods",
        name: "events before popping Pod are ignored when Pod is enqueued back to queue",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("targetpod", 0, T0),
            event(Ev::Timeout, T0, 0),
            Pop("targetpod"),
            event(Ev::PodDeleted, T0, 0),
            back("targetpod", &[SKIP], T0, Unschedulable),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "pod is enqueued to backoff if no failed plugin",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            event(Ev::PodDeleted, T0, 0),
            back("pod1", &[], T0, ErrorBackoff(s(1))),
            Lengths(L0.with_error_backoff(1)),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            // Skip has no hint for NodeAdd.
            event(Ev::NodeAdd("big"), T0, 0),
            back("pod1", &[SKIP], T0, Unschedulable),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it returns Skip",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            event(Ev::PodDeleted, T0, 0),
            back("pod1", &[SKIP], T0, Unschedulable),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            event(Ev::PodDeleted, T0, 0),
            back_pending("pod1", &[FIT, SKIP], &[PENDING], T0, Active),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            event(Ev::PodDeleted, T0, 0),
            back("pod1", &[FIT, SKIP], T0, Backoff(s(1))),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "pod is enqueued to activeQ because the pending plugin has a hint fn and it returns Queue for a concurrent event that was received while some other pod was in flight",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("pod1", 0, T0),
            add("pod2", 0, s(1)),
            Pop("pod1"),
            event(Ev::NodeAdd("small"), s(2), 0),
            Pop("pod2"),
            event(Ev::PodDeleted, s(2), 0),
            back("pod1", &[], s(2), ErrorBackoff(s(3))),
            back_pending("pod2", &[FIT, SKIP], &[PENDING], s(2), Active),
            Lengths(L0.with_active(1).with_error_backoff(1)),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "Pod, registered in inFlightPods, is enqueued back to backoffQ",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("pod1", 0, T0),
            add("pod2", 0, s(1)),
            event(Ev::NodeAdd("big"), s(2), 0),
            Pop("pod1"),
            event(Ev::PodDeleted, s(2), 0),
            Pop("pod2"),
            event(Ev::NodeAdd("big"), s(2), 0),
            back("pod1", &[], s(2), ErrorBackoff(s(3))),
            Lengths(L0.with_error_backoff(1).with_in_flight(1)),
        ],
    },
    Case {
        source: "Test_InFlightPods",
        name: "One intermediate Pod registered in inFlightPods is enqueued back (adapted: each pod sees only the events of its own attempt)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("pod1", 0, T0),
            add("pod2", 0, s(1)),
            add("pod3", 0, s(2)),
            Pop("pod1"),
            event(Ev::NodeAdd("big"), s(3), 0),
            Pop("pod2"),
            event(Ev::PodDeleted, s(3), 0),
            Pop("pod3"),
            back("pod2", &[FIT], s(3), Backoff(s(4))),
            Lengths(L0.with_backoff(1).with_in_flight(2)),
            // pod1 saw both events, but Skip queues for neither.
            back("pod1", &[SKIP], s(3), Unschedulable),
            // pod3 was popped after both events.
            back("pod3", &[FIT], s(3), Unschedulable),
            Lengths(L0.with_backoff(1).with_unschedulable(2)),
        ],
    },
    Case {
        source: "TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff",
        name: "pods in flight when the move request came back off; the pod popped after it parks",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("pod0", 0, T0),
            add("pod1", 1, T0),
            add("pod2", 2, T0),
            add("pod3", 3, T0),
            Pop("pod3"),
            Pop("pod2"),
            Pop("pod1"),
            event(Ev::Timeout, T0, 0),
            Pop("pod0"),
            back("pod1", &["plugin"], T0, Backoff(s(1))),
            back("pod2", &["plugin"], T0, Backoff(s(1))),
            back("pod3", &["plugin"], T0, Backoff(s(1))),
            back("pod0", &["plugin"], T0, Unschedulable),
        ],
    },
    Case {
        source: "TestPriorityQueue_Pop",
        name: "Pop pod only from activeQ when PopFromBackoffQ is disabled",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("hpp", 1000, T0),
            add("hpp2", 1000, T0),
            add("up", 0, T0),
            Pop("hpp"),
            Pop("hpp2"),
            Pop("up"),
            event(Ev::PodDeleted, T0, 0),
            back("hpp", &[FIT], T0, Backoff(s(1))),
            back("hpp2", &[], T0, ErrorBackoff(s(1))),
            back("up", &[SKIP], T0, Unschedulable),
            add("mpp", 500, T0),
            Pop("mpp"),
            PopNone,
        ],
    },
];
