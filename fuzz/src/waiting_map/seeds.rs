//! The seed corpus, as readable op lists: each walks one path of the sharded map, so the
//! fuzzer starts from inputs that already reach it. Each encodes to at most 128 bytes
//! (`.ci/fuzz` runs with `-max_len=128`). `fuzz/seeds/waiting_map/<name>` holds
//! [`encode`](super::encode) of each (regenerate with `cargo test -- --ignored
//! write_waiting_map_seeds`).
//!
//! Indexes: plugins 0 `A`, 1 `B`, 2 `C`; a wait index is that many 2m30s steps (6 and more:
//! the 15m cap); clock steps 0 none, 1 1ns, 2 2m30s less 1ns, 3 2m30s, 4 5m, 5 15m; causes
//! 0 preempted, 1 gang failed, 2 shut down.

use super::{How, Op, TicketChoice};

fn add(pod: u8, waits: &[(u8, u8)]) -> Op {
    Op::Add {
        pod,
        waits: waits.to_vec(),
    }
}

fn allow(pod: u8, ticket: TicketChoice, plugin: u8) -> Op {
    Op::Allow {
        pod,
        ticket,
        plugin,
    }
}

fn reject(pod: u8, ticket: TicketChoice, how: How) -> Op {
    Op::Reject {
        pod,
        ticket,
        plugin: 1,
        msg: 0,
        how,
    }
}

fn allow_all(pods: &[u8], plugin: u8, deferred: bool) -> Op {
    Op::AllowAll {
        pods: pods.to_vec(),
        plugin,
        deferred,
    }
}

fn reject_all(pods: &[u8], cause: u8, deferred: bool) -> Op {
    Op::RejectAll {
        pods: pods.to_vec(),
        plugin: 0,
        msg: 1,
        cause,
        deferred,
    }
}

fn expire(step: u8) -> Op {
    Op::Expire { step }
}

/// The seeds, by name.
pub fn seeds() -> Vec<(&'static str, Vec<Op>)> {
    use TicketChoice::{Any, Latest, Past};
    vec![
        (
            // Two plugins: the first allow moves the pod's earliest deadline (re-indexed), the
            // second allows it, a third finds it gone.
            "two-plugins-allowed",
            vec![
                add(0, &[(0, 2), (1, 4)]),
                allow(0, Any, 0),
                Op::Query { pod: 0 },
                allow(0, Latest, 1),
                allow(0, Any, 0),
            ],
        ),
        (
            // No plugin, a plugin twice, then one that waits, and the same pod again.
            "add-errors",
            vec![
                add(1, &[]),
                add(1, &[(0, 1), (0, 2)]),
                add(1, &[(1, 1)]),
                add(1, &[(2, 1)]),
            ],
        ),
        (
            // Expiries exactly at a deadline, one nanosecond after a step's worth, and by the
            // cap (a 20m wait cut to 15m).
            "expire-at-deadlines",
            vec![
                add(0, &[(0, 1)]),
                add(1, &[(1, 2)]),
                add(2, &[(2, 8)]),
                expire(3),
                Op::Advance { step: 2 },
                expire(1),
                expire(5),
            ],
        ),
        (
            // Three pods in three shards due at the same instant: decided in pod order.
            "deadline-tie-across-shards",
            vec![
                add(3, &[(1, 2)]),
                add(0, &[(0, 2)]),
                add(5, &[(2, 2)]),
                Op::Advance { step: 3 },
                expire(3),
            ],
        ),
        (
            // A stale registration decides nothing, through its handle or `reject_for`; the
            // latest one does.
            "stale-tickets",
            vec![
                add(2, &[(0, 1)]),
                reject(2, Any, How::Reject),
                add(2, &[(0, 1)]),
                allow(2, Past(0), 0),
                reject(2, Past(0), How::For(2)),
                allow(2, Latest, 0),
            ],
        ),
        (
            // A preemption through a handle, a delete, and a delete of a pod gone.
            "preempt-and-remove",
            vec![
                add(3, &[(0, 2)]),
                add(4, &[(1, 2), (2, 3)]),
                reject(3, Latest, How::Preempt),
                reject(4, Any, How::Remove),
                reject(4, Any, How::Remove),
            ],
        ),
        (
            // A gang's allow: refused whole for a pod not waiting, then (deferred) two allowed
            // and one still pending, which later times out.
            "allow-all-gang",
            vec![
                add(0, &[(0, 4)]),
                add(1, &[(0, 4)]),
                add(2, &[(0, 4), (1, 2)]),
                allow_all(&[0, 1, 5], 0, false),
                allow_all(&[0, 1, 2, 0], 0, true),
                expire(4),
            ],
        ),
        (
            // A gang rejected as two deferred batches delivered together, a repeat included;
            // then a batch that finds nobody.
            "reject-all-deferred",
            vec![
                add(0, &[(0, 3)]),
                add(1, &[(0, 3)]),
                add(2, &[(0, 3)]),
                add(4, &[(0, 3)]),
                reject_all(&[0, 1, 2, 4, 1], 1, true),
                reject_all(&[0], 2, false),
            ],
        ),
        (
            // Two waits cut to the cap tie: the first registered names the timeout; added
            // again with no wait, it is due at once.
            "cap-tie-and-zero-wait",
            vec![
                add(5, &[(0, 7), (1, 6)]),
                expire(5),
                add(5, &[(1, 0)]),
                expire(0),
            ],
        ),
        (
            // An untimed pod (its plugin owns the timeout, as the Hardened gang's) beside a
            // timed one: expiries pass it over, even past the cap; it is refused again while
            // waiting, then rejected with the gang and added again.
            "untimed-never-expires",
            vec![
                Op::AddUntimed { pod: 2, plugin: 0 },
                add(3, &[(0, 1)]),
                expire(5),
                expire(5),
                Op::AddUntimed { pod: 2, plugin: 1 },
                Op::Query { pod: 2 },
                reject_all(&[2, 3], 1, false),
                Op::AddUntimed { pod: 2, plugin: 0 },
                allow(2, Latest, 0),
            ],
        ),
        (
            "mixed",
            vec![
                add(0, &[(0, 2), (2, 1)]),
                add(1, &[(0, 2)]),
                allow(0, Any, 2),
                reject(1, Latest, How::For(0)),
                add(1, &[(1, 3)]),
                Op::Advance { step: 4 },
                allow_all(&[0, 1], 0, false),
                expire(3),
            ],
        ),
    ]
}
