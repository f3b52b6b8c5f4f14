//! Cases: backoff — its length, its boundary, the error backoff, and the ordering window.

use std::time::Duration;

use gangsched::Time;

use super::fixtures::{ms, ns, s, DEFAULT, FIT, T0};
use super::table::POPPED;
use super::vocabulary::At::{Active, Backoff, ErrorBackoff, Unschedulable};
use super::vocabulary::Step::{FlushBackoff, Is, Order, Pop, PopAttempt};
use super::vocabulary::{add, back, event, Case, Ev};

/// Backoff.
pub(crate) const BACKOFF: &[Case] = &[
    Case {
        source: "TestBackOffFlow",
        name: "backoff 1, 2, 4, 8, 10, 10, 10 s; a flush 1 ns early keeps it, at the expiry moves it",
        config: DEFAULT,
        setup: &[add("test-pod", 0, T0)],
        steps: &[
            PopAttempt("test-pod", 1),
            back("test-pod", &[FIT], T0, Unschedulable),
            event(Ev::Timeout, T0, 1),
            Is("test-pod", Backoff(s(1))),
            FlushBackoff(ns(999_999_999), 0),
            FlushBackoff(s(1), 1),
            PopAttempt("test-pod", 2),
            back("test-pod", &[FIT], s(1), Unschedulable),
            event(Ev::Timeout, s(1), 1),
            Is("test-pod", Backoff(s(3))),
            FlushBackoff(ns(2_999_999_999), 0),
            FlushBackoff(s(3), 1),
            PopAttempt("test-pod", 3),
            back("test-pod", &[FIT], s(3), Unschedulable),
            event(Ev::Timeout, s(3), 1),
            Is("test-pod", Backoff(s(7))),
            FlushBackoff(ns(6_999_999_999), 0),
            FlushBackoff(s(7), 1),
            PopAttempt("test-pod", 4),
            back("test-pod", &[FIT], s(7), Unschedulable),
            event(Ev::Timeout, s(7), 1),
            Is("test-pod", Backoff(s(15))),
            FlushBackoff(ns(14_999_999_999), 0),
            FlushBackoff(s(15), 1),
            PopAttempt("test-pod", 5),
            back("test-pod", &[FIT], s(15), Unschedulable),
            event(Ev::Timeout, s(15), 1),
            Is("test-pod", Backoff(s(25))),
            FlushBackoff(ns(24_999_999_999), 0),
            FlushBackoff(s(25), 1),
            PopAttempt("test-pod", 6),
            back("test-pod", &[FIT], s(25), Unschedulable),
            event(Ev::Timeout, s(25), 1),
            Is("test-pod", Backoff(s(35))),
            FlushBackoff(ns(34_999_999_999), 0),
            FlushBackoff(s(35), 1),
            PopAttempt("test-pod", 7),
            back("test-pod", &[FIT], s(35), Unschedulable),
            event(Ev::Timeout, s(35), 1),
            Is("test-pod", Backoff(s(45))),
            FlushBackoff(ns(44_999_999_999), 0),
            FlushBackoff(s(45), 1),
            Is("test-pod", Active),
        ],
    },
    Case {
        source: "(gangway)",
        name: "error failures back off apart, are not moved by events, and leave at their expiry",
        config: DEFAULT,
        setup: POPPED,
        steps: &[
            back("pod1", &[], T0, ErrorBackoff(s(1))),
            event(Ev::PodDeleted, T0, 0),
            event(Ev::Timeout, ms(500), 0),
            Is("pod1", ErrorBackoff(s(1))),
            FlushBackoff(ns(999_999_999), 0),
            FlushBackoff(s(1), 1),
            Is("pod1", Active),
        ],
    },
    Case {
        source: "(gangway)",
        name: "ordering window of 1 s: the expiry is truncated, and an expiry equal to the truncated now still backs off",
        config: DEFAULT.with_ordering_window(Some(Duration::from_secs(1))),
        setup: POPPED,
        steps: &[
            event(Ev::PodDeleted, T0, 0),
            back("pod1", &[FIT], ms(1_300), Backoff(s(2))),
            FlushBackoff(ms(2_999), 0),
            FlushBackoff(s(3), 1),
        ],
    },
    Case {
        source: "TestHighPriorityBackoff",
        name: "an unschedulable high-priority pod backs off and does not block the others",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("test-midpod", 100, T0),
            add("test-highpod", 1000, T0),
            Pop("test-highpod"),
            back("test-highpod", &[FIT], T0, Unschedulable),
            event(Ev::Timeout, T0, 1),
            Is("test-highpod", Backoff(s(1))),
            Pop("test-midpod"),
        ],
    },
    Case {
        source: "TestRecentlyTriedPodsGoBack",
        name: "a pod tried and moved back goes behind the pods of its priority",
        config: DEFAULT,
        setup: &[],
        steps: &[
            // Upstream adds the five at one time and checks only that tp-0 pops last; the
            // order of ties is the heap's, so the others are added 1 ns apart.
            add("tp-0", 1000, T0),
            add("tp-1", 1000, ns(1)),
            add("tp-2", 1000, ns(2)),
            add("tp-3", 1000, ns(3)),
            add("tp-4", 1000, ns(4)),
            Pop("tp-0"),
            back("tp-0", &[FIT], ns(1_000), Unschedulable),
            event(Ev::Timeout, Time::from_nanos(10_000_001_000), 1),
            Order(&["tp-1", "tp-2", "tp-3", "tp-4", "tp-0"]),
            Pop("tp-1"),
            Pop("tp-2"),
            Pop("tp-3"),
            Pop("tp-4"),
            Pop("tp-0"),
        ],
    },
    Case {
        source: "TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod",
        name: "a pod failing again goes behind a newer pod of its priority",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("tp001", 1000, T0),
            Pop("tp001"),
            back("tp001", &[FIT], T0, Unschedulable),
            event(Ev::Timeout, s(2), 1),
            PopAttempt("tp001", 2),
            add("tp002", 1000, s(2)),
            back("tp001", &[FIT], Time::from_nanos(2_000_000_001), Unschedulable),
            event(Ev::Timeout, s(5), 1),
            Order(&["tp002", "tp001"]),
        ],
    },
];
