//! Cases: `activate`.

use super::fixtures::{ms, ns, s, DEFAULT, FIT, L0, T0};
use super::table::{MPP_BACKING_OFF, MPP_PARKED, POPPED};
use super::vocabulary::At::{Active, Backoff, ErrorBackoff, Gated, Gone, InFlight, Unschedulable};
use super::vocabulary::Step::{Activate, FlushBackoff, Gate, Is, Lengths, Pop};
use super::vocabulary::{add, back, event, Case, Ev};

/// Activate.
pub(crate) const ACTIVATE: &[Case] = &[
    Case {
        source: "TestPriorityQueue_Activate",
        name: "pod already in activeQ",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("hpp", 1000, T0),
            Activate(&["hpp"], T0, 0),
            Lengths(L0.with_active(1)),
        ],
    },
    Case {
        source: "TestPriorityQueue_Activate",
        name: "pod not in unschedulablePods/backoffQ",
        config: DEFAULT,
        setup: &[],
        steps: &[Activate(&["hpp"], T0, 0), Is("hpp", Gone), Lengths(L0)],
    },
    Case {
        source: "TestPriorityQueue_Activate",
        name: "[QHint] pod not in unschedulablePods/backoffQ but in-flight: honoured when it comes back",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("hpp", 1000, T0),
            Pop("hpp"),
            Activate(&["hpp"], T0, 0),
            Is("hpp", InFlight),
            back("hpp", &[FIT], T0, Backoff(s(1))),
        ],
    },
    Case {
        source: "TestPriorityQueue_Activate",
        name: "[QHint] pod not in unschedulablePods/backoffQ and not in-flight (another pod is)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("mpp", 500, T0),
            Pop("mpp"),
            Activate(&["hpp"], T0, 0),
            // The activation named another pod: it does not count for mpp.
            back("mpp", &[FIT], T0, Unschedulable),
            Is("hpp", Gone),
        ],
    },
    Case {
        source: "TestPriorityQueue_Activate",
        name: "pod in unschedulablePods",
        config: DEFAULT,
        setup: MPP_PARKED,
        steps: &[Activate(&["mpp", "unknown"], T0, 1), Is("mpp", Active)],
    },
    Case {
        source: "TestPriorityQueue_Activate",
        name: "pod in backoffQ",
        config: DEFAULT,
        setup: MPP_BACKING_OFF,
        steps: &[Activate(&["mpp"], ms(1), 1), Is("mpp", Active)],
    },
    Case {
        source: "(gangway)",
        name: "activate of a pod in the error backoff",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[], T0, ErrorBackoff(s(1))),
            Activate(&["pod1"], ms(1), 1),
            Is("pod1", Active),
        ],
    },
    Case {
        source: "TestPriorityQueue_moveToActiveQ",
        name: "preEnqueue plugin registered, pod failed one preEnqueue plugin when activated from unschedulablePods",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Gate(true),
            add("gated-a", 0, T0),
            Pop("gated-a"),
            back("gated-a", &[FIT], T0, Unschedulable),
            Gate(false),
            Activate(&["gated-a"], T0, 0),
            Is("gated-a", Gated),
            Lengths(L0.with_unschedulable(1).with_gated(1)),
        ],
    },
    Case {
        source: "TestPriorityQueue_moveToActiveQ",
        name: "preEnqueue plugin registered, preEnqueue rejects the pod, even if it is after backoff (and when activated from backoff)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Gate(true),
            add("gated-a", 0, T0),
            add("gated-b", 0, ns(1)),
            Pop("gated-a"),
            Pop("gated-b"),
            event(Ev::PodDeleted, ns(1), 0),
            back("gated-a", &[FIT], ns(1), Backoff(ns(1_000_000_001))),
            back("gated-b", &[FIT], ns(1), Backoff(ns(1_000_000_001))),
            Gate(false),
            Activate(&["gated-b"], ms(1), 0),
            Is("gated-b", Gated),
            FlushBackoff(ns(1_000_000_001), 1),
            Is("gated-a", Gated),
            Lengths(L0.with_unschedulable(2).with_gated(2)),
        ],
    },
];
