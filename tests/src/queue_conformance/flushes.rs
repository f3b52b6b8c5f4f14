//! Cases: the unschedulable leftover flush (`flush_unschedulable_leftover`).

use std::time::Duration;

use gangsched::Time;

use super::fixtures::{s, DEFAULT, FIT, T0, WITH_139162};
use super::vocabulary::At::{Active, Gated, Unschedulable};
use super::vocabulary::Step::{
    FirstActivated, FlushLeftover, Gate, Is, Order, Pop, PopAttempt, Update,
};
use super::vocabulary::{add, back, Case, Step};

/// The unschedulable leftover flush.
pub(crate) const FLUSHES: &[Case] = &[
    Case {
        source: "TestHighPriorityFlushUnschedulablePodsLeftover",
        name: "pods left in the unschedulable pool are retried, by priority",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("test-highpod", 1000, T0),
            Pop("test-highpod"),
            add("test-midpod", 100, T0),
            Pop("test-midpod"),
            back("test-highpod", &[FIT], T0, Unschedulable),
            back("test-midpod", &[FIT], T0, Unschedulable),
            FlushLeftover(s(301), 2),
            Pop("test-highpod"),
            Pop("test-midpod"),
        ],
    },
    Case {
        source: "TestPerPodSchedulingMetrics",
        name: "pod is created and scheduled after 1 attempt",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("test-pod", 0, T0),
            PopAttempt("test-pod", 1),
            FirstActivated("test-pod", T0),
        ],
    },
    Case {
        source: "TestPerPodSchedulingMetrics",
        name: "pod is created and scheduled after 2 attempts (the flush at exactly 5 min does not move it, 1 ns later does)",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("test-pod", 0, T0),
            Pop("test-pod"),
            back("test-pod", &["plugin"], T0, Unschedulable),
            FlushLeftover(s(300), 0),
            FlushLeftover(Time::from_nanos(300_000_000_001), 1),
            PopAttempt("test-pod", 2),
            FirstActivated("test-pod", T0),
        ],
    },
    Case {
        source: "TestPerPodSchedulingMetrics",
        name: "pod is created and scheduled after 2 attempts but before the second pop, call update",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("test-pod", 0, T0),
            Pop("test-pod"),
            back("test-pod", &["plugin"], T0, Unschedulable),
            FlushLeftover(Time::from_nanos(300_000_000_001), 1),
            Update("test-pod", 0, s(301), Active),
            PopAttempt("test-pod", 2),
            FirstActivated("test-pod", T0),
        ],
    },
    Case {
        source: "TestPerPodSchedulingMetrics",
        name: "A gated pod is created and scheduled after lifting gate",
        config: DEFAULT,
        setup: &[],
        steps: &[
            Step::Add("gated-test-pod", 0, T0, Gated),
            Update("gated-test-pod", 1, s(60), Active),
            PopAttempt("gated-test-pod", 1),
            FirstActivated("gated-test-pod", s(60)),
        ],
    },
    Case {
        source: "TestPriorityQueue_initPodMaxInUnschedulablePodsDuration",
        name: "New priority queue by the default value of podMaxInUnschedulablePodsDuration",
        config: DEFAULT,
        setup: &[],
        steps: &[
            add("tp-1", 0, T0),
            add("tp-2", 0, T0),
            Pop("tp-1"),
            Pop("tp-2"),
            back("tp-2", &[FIT], T0, Unschedulable),
            back("tp-1", &[FIT], s(1), Unschedulable),
            FlushLeftover(s(32), 0),
            FlushLeftover(s(302), 2),
            Order(&["tp-2", "tp-1"]),
        ],
    },
    Case {
        source: "TestPriorityQueue_initPodMaxInUnschedulablePodsDuration",
        name: "New priority queue by user-defined value of podMaxInUnschedulablePodsDuration",
        config: DEFAULT.with_max_in_unschedulable(Duration::from_secs(30)),
        setup: &[],
        steps: &[
            add("tp-1", 0, T0),
            add("tp-2", 0, T0),
            Pop("tp-1"),
            Pop("tp-2"),
            back("tp-2", &[FIT], T0, Unschedulable),
            back("tp-1", &[FIT], s(1), Unschedulable),
            FlushLeftover(s(32), 2),
            Order(&["tp-2", "tp-1"]),
        ],
    },
    Case {
        source: "kubernetes#139331",
        name: "a gated pod flushed and still gated waits another 5 min, not 30 s, before the next flush",
        config: WITH_139162,
        setup: &[],
        steps: &[
            Step::Add("gated-a", 0, T0, Gated),
            FlushLeftover(s(301), 0),
            Is("gated-a", Gated),
            Gate(true),
            FlushLeftover(s(331), 0),
            Is("gated-a", Gated),
            FlushLeftover(s(601), 0),
            Is("gated-a", Gated),
            FlushLeftover(Time::from_nanos(601_000_000_001), 1),
            Is("gated-a", Active),
        ],
    },
];
