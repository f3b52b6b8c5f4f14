//! The seed corpus of `queue_moves`.

use super::{Input, Op, Setup};

/// The seed corpus, as readable inputs: each walks one rule of the queue so the fuzzer starts
/// from inputs that already reach it — most with kube-scheduler 1.36's defaults, one per rule
/// the setup byte turns on. Each encodes to at most 128 bytes (`.ci/fuzz` runs with
/// `-max_len=128`; longer seeds would be cut). `fuzz/seeds/queue_moves/<name>` holds
/// [`encode`](super::encode) of each (regenerate with `cargo test -- --ignored write_queue_moves_seeds`).
pub fn seeds() -> Vec<(&'static str, Input)> {
    let input = |setup: u8, ops: Vec<Op>| Input {
        setup: Setup(setup),
        ops,
    };
    let mut seeds: Vec<(&'static str, Input)> = default_seeds()
        .into_iter()
        .map(|(name, ops)| (name, input(0, ops)))
        .collect();
    seeds.extend(
        setup_seeds()
            .into_iter()
            .map(|(name, setup, ops)| (name, input(setup, ops))),
    );
    seeds
}

/// One seed per rule of [`Setup`]: the rule's own path, which the defaults never take.
fn setup_seeds() -> Vec<(&'static str, u8, Vec<Op>)> {
    use Op::*;
    let add = |pod| Add { pod, priority: 0 };
    vec![
        (
            // With SchedulerPopFromBackoffQ off PreEnqueue runs as a pod leaves backoff:
            // gated6, lowered to priority 0 while it backs off, is gated on its way out — not
            // at its expiry, 1 s, where v1.36.3 still holds it (`!boTime.Before(now)`; the
            // corpus differential found gangway letting it go), but a nanosecond later.
            "pop-from-backoff-off-gate-as-backoff-ends",
            Setup::POP_FROM_BACKOFF_OFF,
            vec![
                Add {
                    pod: 6,
                    priority: 1,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 0,
                },
                Update {
                    pod: 6,
                    priority: 0,
                },
                Advance { step: 4 },
                FlushBackoff,
                Advance { step: 1 },
                FlushBackoff,
                Pop,
            ],
        ),
        (
            // Popping from backoff with exact comparisons: a backoff ending exactly now has
            // ended, and the flush takes it (in the 1 s window it still backs off).
            "exact-backoff-end",
            Setup::EXACT,
            vec![
                add(0),
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                MoveAll {
                    event: 0,
                    exclude: None,
                },
                Advance { step: 4 },
                FlushBackoff,
                Pop,
            ],
        ),
        (
            // The gang gates' rule: p5, a group's member, backs off after a rejection instead
            // of waiting for an event; p0 waits.
            "group-member-backs-off",
            Setup::GROUP_MEMBERS_BACK_OFF,
            vec![
                add(5),
                add(0),
                Pop,
                Pop,
                HandBack {
                    pick: 1,
                    rejectors: 1,
                },
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                Advance { step: 4 },
                FlushBackoff,
                Pop,
                MoveAll {
                    event: 0,
                    exclude: None,
                },
            ],
        ),
        (
            // kubernetes#139162: the leftover flush moves gated6; still gated, it waits
            // another full period (its flush time, not its timestamp).
            "wildcard-moves-gated",
            Setup::WILDCARDS_MOVE_GATED | Setup::SHORT_TIMING,
            vec![
                add(6),
                add(0),
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 4,
                },
                Advance { step: 7 },
                Advance { step: 1 },
                FlushLeftover,
                Advance { step: 7 },
                FlushLeftover,
                Advance { step: 1 },
                FlushLeftover,
                Update {
                    pod: 6,
                    priority: 1,
                },
                Pop,
            ],
        ),
        (
            // In-flight updates replayed for their own pod only: p0, rejected by the gate's
            // plugin, does not hear p1's update lifting a priority.
            "own-in-flight-events",
            Setup::OWN_IN_FLIGHT_EVENTS,
            vec![
                add(0),
                add(1),
                Pop,
                Pop,
                Update {
                    pod: 1,
                    priority: 1,
                },
                HandBack {
                    pick: 0,
                    rejectors: 8,
                },
                HandBack {
                    pick: 0,
                    rejectors: 8,
                },
                Pop,
            ],
        ),
        (
            // p0 fails three times alone (activated out of its error backoff each time),
            // then a fourth with p1 as a gang of two: its backoff, 4 s, is capped at
            // 2 s × √2 (1.37's rule for a group), not at 2 s — compared exactly, as the 1 s
            // window would truncate both to 2 s.
            "gang-backoff-scales",
            Setup::GROUP_BACKOFF_SCALES | Setup::SHORT_TIMING | Setup::EXACT,
            {
                let mut ops = vec![add(0)];
                for _ in 0..3 {
                    ops.extend([
                        Pop,
                        HandBack {
                            pick: 0,
                            rejectors: 0,
                        },
                        Activate { pods: vec![0] },
                    ]);
                }
                ops.extend([
                    add(1),
                    Pop,
                    Pop,
                    HandBackGang {
                        members: vec![(0, 0), (1, 0)],
                    },
                    Advance { step: 5 },
                    FlushBackoff,
                ]);
                ops
            },
        ),
    ]
}

/// The seeds with kube-scheduler 1.36's defaults (setup byte 0).
fn default_seeds() -> Vec<(&'static str, Vec<Op>)> {
    use Op::*;
    // Event indexes (lockstep::event): 0 resources freed, 2 hint fails, 3 big node added,
    // 7 node ready (Claims, pending), 9 pod group added, 10 not of interest, 12 update lifting
    // the gate, 14/15/16 wildcards. Rejector bits: 1 Fit, 2 Claims pending, 4 Silent, 8 Gate.
    vec![
        (
            "event-in-flight",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Add {
                    pod: 1,
                    priority: 0,
                },
                Pop,
                MoveAll {
                    event: 0,
                    exclude: None,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                Advance { step: 4 },
                FlushBackoff,
            ],
        ),
        (
            "pending-immediately",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Pop,
                MoveAll {
                    event: 7,
                    exclude: None,
                },
                HandBack {
                    pick: 0,
                    rejectors: 3,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 2,
                },
                MoveAll {
                    event: 9,
                    exclude: None,
                },
            ],
        ),
        (
            "gang-one-backoff",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Add {
                    pod: 1,
                    priority: 1,
                },
                Add {
                    pod: 2,
                    priority: 3,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 0,
                },
                Advance { step: 4 },
                FlushBackoff,
                Pop,
                Pop,
                Pop,
                MoveAll {
                    event: 3,
                    exclude: None,
                },
                HandBackGang {
                    members: vec![(0, 1), (1, 4), (2, 1)],
                },
                Advance { step: 5 },
                FlushBackoff,
            ],
        ),
        (
            "gated-leftover",
            vec![
                Add {
                    pod: 6,
                    priority: 0,
                },
                Add {
                    pod: 7,
                    priority: 2,
                },
                MoveAll {
                    event: 0,
                    exclude: None,
                },
                MoveAll {
                    event: 12,
                    exclude: Some(7),
                },
                Advance { step: 9 },
                FlushLeftover,
                Advance { step: 7 },
                FlushLeftover,
                Update {
                    pod: 6,
                    priority: 1,
                },
                Pop,
            ],
        ),
        (
            "delete-in-flight",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Pop,
                Delete { pod: 0 },
                Update {
                    pod: 0,
                    priority: 3,
                },
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                Add {
                    pod: 0,
                    priority: 0,
                },
                Pop,
                Done { pick: 0 },
                Delete { pod: 0 },
            ],
        ),
        (
            "error-backoff-activate",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Add {
                    pod: 1,
                    priority: 0,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 0,
                },
                Activate { pods: vec![0, 1] },
                Pop,
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                MoveAll {
                    event: 2,
                    exclude: None,
                },
                HandBack {
                    pick: 0,
                    rejectors: 4,
                },
                Advance { step: 6 },
                FlushBackoff,
                FlushLeftover,
            ],
        ),
        (
            "update-in-flight",
            vec![
                Add {
                    pod: 6,
                    priority: 1,
                },
                Pop,
                Update {
                    pod: 6,
                    priority: 3,
                },
                Activate { pods: vec![6] },
                HandBack {
                    pick: 0,
                    rejectors: 8,
                },
                Update {
                    pod: 6,
                    priority: 0,
                },
                Advance { step: 8 },
                Advance { step: 9 },
                FlushLeftover,
            ],
        ),
        (
            "mixed",
            vec![
                Add {
                    pod: 0,
                    priority: 1,
                },
                Add {
                    pod: 1,
                    priority: 3,
                },
                Add {
                    pod: 2,
                    priority: 2,
                },
                Add {
                    pod: 7,
                    priority: 0,
                },
                Pop,
                Pop,
                Advance { step: 1 },
                MoveAll {
                    event: 6,
                    exclude: Some(1),
                },
                Activate { pods: vec![1, 7] },
                HandBackGang {
                    members: vec![(0, 1), (1, 17)],
                },
                Pop,
                MoveAll {
                    event: 10,
                    exclude: None,
                },
                MoveAll {
                    event: 14,
                    exclude: None,
                },
                HandBack {
                    pick: 0,
                    rejectors: 4,
                },
                Advance { step: 10 },
                FlushLeftover,
                FlushBackoff,
                Close,
                Done { pick: 0 },
            ],
        ),
        (
            // p5 names a pod group: deleted while queued and while in flight, then added
            // again, it joins the group afresh each time (the corpus differential's runner
            // once kept the deleted member in its group).
            "group-member-deleted-readded",
            vec![
                Add {
                    pod: 5,
                    priority: 0,
                },
                Delete { pod: 5 },
                Add {
                    pod: 5,
                    priority: 0,
                },
                Pop,
                Delete { pod: 5 },
                Done { pick: 0 },
                Add {
                    pod: 5,
                    priority: 1,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                MoveAll {
                    event: 0,
                    exclude: None,
                },
            ],
        ),
    ]
}
