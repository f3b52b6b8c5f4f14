//! The seed corpus of `scheduler_events`, as readable inputs: each walks one path of the
//! driver, so the fuzzer starts from inputs that reach it. `fuzz/seeds/scheduler_events/<name>`
//! holds [`Input::encode`] of each (regenerate with `cargo test -- --ignored
//! write_scheduler_events_seeds`); every one is under 128 bytes (`.ci/fuzz`'s `-max_len`).

use gangsched::{GangCycle, Mode};

use super::input::{BindAnswer, Input, Op, Setup, Verdict};

mod races;
pub(super) use races::race_seeds;

fn setup(mode: Mode, cycle: GangCycle, permit_plugin: bool) -> Setup {
    Setup {
        mode,
        cycle,
        permit_plugin,
        node_index: false,
        queue_index: false,
    }
}

/// `setup` with the node index and the queue's indexes built from the start.
fn indexed(setup: Setup) -> Setup {
    Setup {
        node_index: true,
        queue_index: true,
        ..setup
    }
}

fn node(node: u8, cpus: u8) -> Op {
    Op::AddNode { node, cpus }
}

fn gang(group: u8, min: u8) -> Op {
    Op::AddGroup { group, min }
}

/// A member of `g{group}` requesting `half_cpus` × 500m.
fn member(pod: u8, group: u8, half_cpus: u8) -> Op {
    Op::AddPod {
        pod,
        group: Some(group),
        half_cpus,
        priority: 0,
    }
}

/// A member of `g{group}` requesting one CPU, at `priority`.
fn ranked(pod: u8, group: u8, priority: u8) -> Op {
    Op::AddPod {
        pod,
        group: Some(group),
        half_cpus: 2,
        priority,
    }
}

/// A pod of no group.
fn plain(pod: u8, half_cpus: u8) -> Op {
    Op::AddPod {
        pod,
        group: None,
        half_cpus,
        priority: 0,
    }
}

const SCHEDULE: Op = Op::Schedule {
    plugin: Verdict::Allow,
    split: false,
};

fn advance(step: u8) -> Op {
    Op::Advance { step }
}

fn bind(answer: BindAnswer) -> Op {
    Op::Bind {
        answer,
        split: false,
    }
}

/// The seeds, by file name: each walking one path of the driver, then the race seeds
/// (`race_seeds`, in `seeds/races.rs`).
pub fn seeds() -> Vec<(&'static str, Input)> {
    let mut seeds = paths();
    seeds.extend(race_seeds());
    seeds
}

/// The seeds that each walk one path of the driver, by file name.
fn paths() -> Vec<(&'static str, Input)> {
    use GangCycle::{PermitBarrier, PodGroup};
    use Mode::{Hardened, Upstream};
    let input = |setup, ops: Vec<Op>| Input { setup, ops };
    vec![
        (
            // Two members meet at the barrier and bind; the informer reports it.
            "gang-binds",
            input(
                setup(Hardened, PermitBarrier, false),
                vec![
                    node(0, 4),
                    gang(0, 2),
                    member(0, 0, 2),
                    member(1, 0, 2),
                    SCHEDULE,
                    SCHEDULE,
                    Op::BindAll,
                    Op::Observe,
                    Op::DeletePod { pod: 0 },
                ],
            ),
        ),
        (
            // A plain pod's bind fails, then panics; it backs off and binds on the third try.
            "bind-failure",
            input(
                setup(Upstream, PermitBarrier, false),
                vec![
                    node(0, 1),
                    plain(10, 2),
                    SCHEDULE,
                    bind(BindAnswer::Fail),
                    advance(5),
                    SCHEDULE,
                    bind(BindAnswer::Panic),
                    advance(6),
                    Op::Settle,
                ],
            ),
        ),
        (
            // A gang member's bind fails after its gang passed Permit (Hardened).
            "gang-bind-failure",
            input(
                setup(Hardened, PermitBarrier, false),
                vec![
                    node(0, 2),
                    gang(1, 2),
                    member(4, 1, 2),
                    member(5, 1, 2),
                    SCHEDULE,
                    SCHEDULE,
                    bind(BindAnswer::Fail),
                    Op::BindAll,
                    advance(7),
                    Op::Settle,
                ],
            ),
        ),
        (
            // A member waiting at the barrier is deleted: its reservation goes.
            "delete-while-waiting",
            input(
                setup(Hardened, PermitBarrier, false),
                vec![
                    node(0, 4),
                    gang(0, 3),
                    member(0, 0, 2),
                    member(1, 0, 2),
                    member(2, 0, 2),
                    SCHEDULE,
                    SCHEDULE,
                    Op::DeletePod { pod: 1 },
                    Op::BindAll,
                    advance(7),
                    Op::Settle,
                ],
            ),
        ),
        (
            // A pod allowed and then deleted before its binding cycle: the cycle frees its
            // room and announces it, and the pod parked for that room binds (I7 at rest;
            // kubernetes PR #134157, `DeleteAnnouncesNothing`).
            "delete-before-bind-frees-room",
            input(
                setup(Hardened, PermitBarrier, false),
                vec![
                    node(0, 1),
                    plain(0, 2),
                    plain(1, 2),
                    SCHEDULE,
                    SCHEDULE,
                    Op::DeletePod { pod: 0 },
                    Op::BindAll,
                ],
            ),
        ),
        (
            // Room for one of a gang of two: the first waits until the permit timeout.
            "permit-timeout",
            input(
                setup(Upstream, PermitBarrier, false),
                vec![
                    node(0, 1),
                    gang(0, 2),
                    member(0, 0, 2),
                    member(1, 0, 2),
                    SCHEDULE,
                    SCHEDULE,
                    advance(11),
                    advance(1),
                    Op::BindAll,
                    Op::Settle,
                ],
            ),
        ),
        (
            // The same in Hardened mode: the gang's one deadline.
            "gang-deadline",
            input(
                setup(Hardened, PermitBarrier, false),
                vec![
                    node(0, 1),
                    gang(0, 2),
                    member(0, 0, 2),
                    member(1, 0, 2),
                    SCHEDULE,
                    SCHEDULE,
                    advance(12),
                    Op::BindAll,
                    advance(14),
                    Op::Settle,
                ],
            ),
        ),
        (
            // The pod-group cycle places a gang of three on one snapshot and admits it.
            "pod-group-admits",
            input(
                indexed(setup(Hardened, PodGroup, false)),
                vec![
                    node(0, 2),
                    node(1, 2),
                    gang(2, 3),
                    member(8, 2, 2),
                    member(9, 2, 2),
                    member(7, 2, 2),
                    SCHEDULE,
                    Op::BindAll,
                    Op::Observe,
                ],
            ),
        ),
        (
            // A gang that cannot fit goes back whole, then fits once a node joins.
            "infeasible-group",
            input(
                setup(Hardened, PodGroup, false),
                vec![
                    node(0, 1),
                    gang(1, 3),
                    member(4, 1, 2),
                    member(5, 1, 2),
                    member(6, 1, 2),
                    SCHEDULE,
                    advance(7),
                    node(1, 4),
                    advance(7),
                    Op::Settle,
                ],
            ),
        ),
        (
            // An admitted gang whose member's bind fails: the rest is released (Hardened).
            "pod-group-bind-failure",
            input(
                setup(Hardened, PodGroup, false),
                vec![
                    node(0, 4),
                    gang(0, 3),
                    member(0, 0, 2),
                    member(1, 0, 2),
                    member(2, 0, 2),
                    SCHEDULE,
                    bind(BindAnswer::Fail),
                    Op::BindAll,
                    advance(8),
                    Op::Settle,
                ],
            ),
        ),
        (
            // Upstream's pod-group cycle: members wait until the quorum member passes.
            "upstream-pod-group",
            input(
                setup(Upstream, PodGroup, false),
                vec![
                    node(0, 4),
                    gang(2, 2),
                    member(8, 2, 2),
                    member(9, 2, 2),
                    SCHEDULE,
                    Op::BindAll,
                    Op::DeleteNode { node: 0 },
                    Op::DeletePod { pod: 9 },
                ],
            ),
        ),
        (
            // The scripted plugin holds a plain pod, then allows it; another it rejects; it
            // panics on a third.
            "plugin-wait-decide",
            input(
                setup(Hardened, PermitBarrier, true),
                vec![
                    node(0, 4),
                    plain(10, 1),
                    plain(11, 1),
                    Op::Schedule {
                        plugin: Verdict::Wait { timeout: 1 },
                        split: false,
                    },
                    Op::Schedule {
                        plugin: Verdict::Wait { timeout: 0 },
                        split: false,
                    },
                    Op::Decide {
                        pod: 10,
                        allow: true,
                    },
                    Op::Decide {
                        pod: 11,
                        allow: false,
                    },
                    Op::BindAll,
                    plain(9, 1),
                    Op::Schedule {
                        plugin: Verdict::Panic,
                        split: false,
                    },
                    advance(7),
                    Op::Settle,
                ],
            ),
        ),
        (
            // Upstream runs the gang plugin first: its quorum allows the sibling even though
            // the plugin then rejects the quorum member.
            "plugin-rejects-gang",
            input(
                setup(Upstream, PermitBarrier, true),
                vec![
                    node(0, 4),
                    gang(0, 2),
                    member(0, 0, 2),
                    member(1, 0, 2),
                    SCHEDULE,
                    Op::Schedule {
                        plugin: Verdict::Reject,
                        split: false,
                    },
                    Op::BindAll,
                    advance(6),
                    Op::Schedule {
                        plugin: Verdict::Error,
                        split: false,
                    },
                    Op::Settle,
                ],
            ),
        ),
        (
            // A gang gated for want of members and of its group, its min count lowered and
            // raised, its group deleted; a node resized and removed.
            "group-changes",
            input(
                setup(Hardened, PermitBarrier, false),
                vec![
                    member(0, 0, 1),
                    member(1, 0, 1),
                    gang(0, 3),
                    node(2, 1),
                    Op::UpdateGroup { group: 0, min: 2 },
                    SCHEDULE,
                    Op::UpdateGroup { group: 0, min: 4 },
                    Op::UpdateNode {
                        node: 2,
                        cpus: 4,
                        tainted: true,
                    },
                    SCHEDULE,
                    Op::DeleteGroup { group: 0 },
                    Op::UpdatePod {
                        pod: 0,
                        priority: 3,
                    },
                    Op::BindAll,
                    Op::DeleteNode { node: 2 },
                    advance(9),
                    Op::Settle,
                ],
            ),
        ),
        (
            // Two gangs that each fit alone but not together, through the barrier; one pod
            // deleted and added again is a new pod.
            "two-gangs-contend",
            input(
                indexed(setup(Hardened, PermitBarrier, false)),
                vec![
                    node(0, 2),
                    gang(0, 2),
                    gang(1, 2),
                    // Priorities 3, 2, 1, 0: the gangs' members alternate in the queue.
                    ranked(0, 0, 3),
                    ranked(4, 1, 2),
                    ranked(1, 0, 1),
                    ranked(5, 1, 0),
                    SCHEDULE,
                    SCHEDULE,
                    SCHEDULE,
                    SCHEDULE,
                    Op::DeletePod { pod: 5 },
                    ranked(5, 1, 0),
                    advance(12),
                    Op::Settle,
                    advance(13),
                    Op::Settle,
                ],
            ),
        ),
    ]
}
