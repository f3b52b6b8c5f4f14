//! The race seeds (issue #43): a cluster event between two steps of a cycle — a split
//! [`Op::Schedule`] or [`Op::Bind`] with the event next — each in both modes.

use super::*;

/// A scheduling cycle split around the next op (the plugin, if any, answering `plugin`).
fn split_schedule(plugin: Verdict) -> Op {
    Op::Schedule {
        plugin,
        split: true,
    }
}

/// A binding cycle split around the next op, the binder answering `answer`.
fn split_bind(answer: BindAnswer) -> Op {
    Op::Bind {
        answer,
        split: true,
    }
}

/// The cluster events the race seeds land inside a cycle, by name: on `g0`, and on the pod
/// and node slot `slot` (the pod the cycle is about, and its node).
fn race_event(event: &str, slot: u8) -> Op {
    match event {
        "member-deleted" => Op::DeletePod { pod: slot },
        "group-deleted" => Op::DeleteGroup { group: 0 },
        "node-deleted" => Op::DeleteNode { node: slot },
        "min-raised" => Op::UpdateGroup { group: 0, min: 3 },
        other => panic!("no race event {other}"),
    }
}

/// `g0` (`Gang { min 2 }`) and its members `p0` and `p1`, one CPU each — and, for the race
/// that raises its min to 3, `p2`, which finds no room: a min above the gang's members is
/// refused, so the raised min is one the gang has members for but cannot place.
fn race_gang(event: &str) -> Vec<Op> {
    let mut ops = vec![gang(0, 2), member(0, 0, 2), member(1, 0, 2)];
    if event == "min-raised" {
        ops.push(member(2, 0, 2));
    }
    ops
}

/// A race between the steps of a Permit barrier cycle: `p0` waits at Permit on `n0`; the cycle
/// of `p1` (its quorum), placed on `n1`, is split around `event`, between its `Schedule` and
/// its `Permit` (the scripted plugin, if it answers other than allow, runs too); then
/// everything binds or times out.
fn permit_race(mode: Mode, event: &str, plugin: Verdict) -> Input {
    let mut ops = vec![node(0, 1)];
    ops.extend(race_gang(event));
    ops.extend([
        SCHEDULE,
        node(1, 1),
        split_schedule(plugin),
        race_event(event, 1),
        Op::BindAll,
        advance(12),
        Op::Settle,
    ]);
    let with_plugin = plugin != Verdict::Allow;
    Input {
        setup: setup(mode, GangCycle::PermitBarrier, with_plugin),
        ops,
    }
}

/// A race between the steps of a pod-group cycle: `g0`'s members are placed on `n0` and `n1`
/// of the snapshot, then `event` comes between the `ScheduleGroup` and the `Commit`; then
/// everything binds or times out.
fn commit_race(mode: Mode, event: &str) -> Input {
    let mut ops = vec![node(0, 1), node(1, 1)];
    ops.extend(race_gang(event));
    ops.extend([
        split_schedule(Verdict::Allow),
        race_event(event, 1),
        Op::BindAll,
        advance(12),
        Op::Settle,
    ]);
    Input {
        setup: setup(mode, GangCycle::PodGroup, false),
        ops,
    }
}

/// A race between the steps of a binding cycle: `g0`'s members pass (Hardened: admitted by
/// the pod-group cycle; Upstream: through the barrier) on `n0` and `n1`; the binding cycle of
/// `p0` (the first decision) is split around `event` — on `p0` and `n0` — between its begin
/// and its bind, the binder answering `answer`; `p1`'s has not begun.
fn binding_race(mode: Mode, event: &str, answer: BindAnswer) -> Input {
    let cycle = match mode {
        Mode::Hardened => GangCycle::PodGroup,
        Mode::Upstream => GangCycle::PermitBarrier,
    };
    let mut ops = vec![node(0, 1), node(1, 1)];
    ops.extend(race_gang(event));
    ops.extend([
        SCHEDULE,
        SCHEDULE,
        split_bind(answer),
        race_event(event, 0),
        Op::BindAll,
        advance(12),
        Op::Settle,
    ]);
    Input {
        setup: setup(mode, cycle, false),
        ops,
    }
}

/// The race seeds (issue #43), by file name: cluster events between the steps of a cycle, in
/// both modes — `race-permit-*` between a Permit barrier cycle's `Schedule` and `Permit`,
/// `race-commit-*` between a pod-group cycle's `ScheduleGroup` and `Commit`, `race-bind-*`
/// between a binding cycle's begin and its end.
pub(in super::super) fn race_seeds() -> Vec<(&'static str, Input)> {
    use BindAnswer::{Fail, Ok};
    use Mode::{Hardened, Upstream};
    use Verdict::{Allow, Reject};
    vec![
        (
            "race-permit-member-deleted-hardened",
            permit_race(Hardened, "member-deleted", Allow),
        ),
        // The scripted plugin rejects the deleted member: Upstream releases it in its own
        // cycle (the gang alone lets it wait: `race-permit-member-deleted-gang-upstream`).
        (
            "race-permit-member-deleted-upstream",
            permit_race(Upstream, "member-deleted", Reject),
        ),
        (
            "race-permit-group-deleted-hardened",
            permit_race(Hardened, "group-deleted", Allow),
        ),
        (
            "race-permit-group-deleted-upstream",
            permit_race(Upstream, "group-deleted", Allow),
        ),
        (
            "race-permit-node-deleted-hardened",
            permit_race(Hardened, "node-deleted", Allow),
        ),
        (
            "race-permit-node-deleted-upstream",
            permit_race(Upstream, "node-deleted", Allow),
        ),
        (
            "race-permit-min-raised-hardened",
            permit_race(Hardened, "min-raised", Allow),
        ),
        (
            "race-permit-min-raised-upstream",
            permit_race(Upstream, "min-raised", Allow),
        ),
        (
            "race-commit-node-deleted-hardened",
            commit_race(Hardened, "node-deleted"),
        ),
        (
            "race-commit-node-deleted-upstream",
            commit_race(Upstream, "node-deleted"),
        ),
        (
            "race-commit-min-raised-hardened",
            commit_race(Hardened, "min-raised"),
        ),
        (
            "race-commit-min-raised-upstream",
            commit_race(Upstream, "min-raised"),
        ),
        (
            "race-commit-group-deleted-hardened",
            commit_race(Hardened, "group-deleted"),
        ),
        (
            "race-commit-group-deleted-upstream",
            commit_race(Upstream, "group-deleted"),
        ),
        (
            "race-bind-deleted-ok-hardened",
            binding_race(Hardened, "member-deleted", Ok),
        ),
        (
            "race-bind-deleted-ok-upstream",
            binding_race(Upstream, "member-deleted", Ok),
        ),
        (
            "race-bind-deleted-fail-hardened",
            binding_race(Hardened, "member-deleted", Fail),
        ),
        (
            "race-bind-deleted-fail-upstream",
            binding_race(Upstream, "member-deleted", Fail),
        ),
        (
            "race-bind-node-deleted-hardened",
            binding_race(Hardened, "node-deleted", Ok),
        ),
        (
            "race-bind-node-deleted-upstream",
            binding_race(Upstream, "node-deleted", Ok),
        ),
        (
            "race-bind-min-raised-hardened",
            binding_race(Hardened, "min-raised", Ok),
        ),
        // A member deleted while its gang's pod-group cycle runs: the commit's reserve finds
        // it gone, and it is dropped, not handed back (a finding of these seeds, fixed).
        (
            "race-commit-member-deleted-hardened",
            commit_race(Hardened, "member-deleted"),
        ),
        (
            "race-commit-member-deleted-upstream",
            commit_race(Upstream, "member-deleted"),
        ),
        // The gang alone: the member deleted before its Permit waits there, as upstream's
        // does, its room freed by the delete (a finding of these seeds, fixed).
        (
            "race-permit-member-deleted-gang-upstream",
            permit_race(Upstream, "member-deleted", Allow),
        ),
        ("race-unfit-deleted-hardened", unfit_race(Hardened)),
        ("race-unfit-deleted-upstream", unfit_race(Upstream)),
    ]
}

/// A pod of its own that no node has room for, its scheduling cycle split around its delete:
/// the cycle's hand-back finds it gone (dropped, not "back in the queue").
fn unfit_race(mode: Mode) -> Input {
    Input {
        setup: setup(mode, GangCycle::PermitBarrier, false),
        ops: vec![
            node(0, 1),
            plain(10, 4),
            split_schedule(Verdict::Allow),
            Op::DeletePod { pod: 10 },
            Op::Settle,
        ],
    }
}
