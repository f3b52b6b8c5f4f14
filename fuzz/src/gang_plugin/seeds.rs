//! The seed corpus of `gang_plugin`, as readable op lists (written to
//! `fuzz/seeds/gang_plugin/` by the ignored test `write_gang_plugin_seeds`). Each walks one path
//! of the gang plugin and fits `.ci/fuzz`'s `-max_len=128`.

use gangsched::gang::DEFAULT_PERMIT_TIMEOUT;

use gangsched::Mode;
use gangsched::Policy;
use gangway_model::gang::lockstep::Op;

use super::{Input, Setup};

/// Two groups of `ppg` pods in blocks (`p0`.. in `g0`, then `g1`).
fn blocks(mode: Mode, ppg: usize, deferring: bool) -> Setup {
    Setup {
        mode,
        groups: 2,
        pods_per_group: ppg,
        blocks: true,
        deferring,
    }
}

const fn gang(min_count: u32) -> Policy {
    Policy::Gang { min_count }
}

const fn add(pod: usize) -> Op {
    Op::AddPod { pod, bound: false }
}

const fn group(group: usize, policy: Policy) -> Op {
    Op::AddGroup { group, policy }
}

/// The seeds, by name.
pub fn seeds() -> Vec<(&'static str, Input)> {
    use Mode::{Hardened, Upstream};
    use Op::*;
    let seed = |setup, ops: &[Op]| Input {
        setup,
        ops: ops.to_vec(),
    };
    vec![
        (
            // A gang of two reaches quorum: both allowed together, both bound.
            "gang-binds",
            seed(
                blocks(Hardened, 2, false),
                &[
                    group(0, gang(2)),
                    add(0),
                    add(1),
                    Schedule { pick: 0 },
                    Schedule { pick: 0 },
                    Bind { pick: 0 },
                    Bind { pick: 0 },
                ],
            ),
        ),
        (
            // A waiting member is preempted; its sibling at quorum finds it gone and fails
            // the attempt (H1) — the path `QuorumAllowsOneByOne` breaks.
            "preempted-member-fails-the-attempt",
            seed(
                blocks(Hardened, 2, false),
                &[
                    group(0, gang(2)),
                    add(0),
                    add(1),
                    Schedule { pick: 0 },
                    Preempt { pick: 0 },
                    Schedule { pick: 0 },
                    Unreserve { pick: 0 },
                    Schedule { pick: 0 },
                    Schedule { pick: 0 },
                ],
            ),
        ),
        (
            // Upstream's partial gang: a member times out, its sibling counts it and passes
            // alone (I3 is not asked of Upstream; the model agrees).
            "upstream-partial-gang",
            seed(
                blocks(Upstream, 2, false),
                &[
                    group(0, gang(2)),
                    add(0),
                    add(1),
                    Schedule { pick: 0 },
                    Expire(DEFAULT_PERMIT_TIMEOUT),
                    Schedule { pick: 0 },
                    Bind { pick: 0 },
                    Unreserve { pick: 0 },
                ],
            ),
        ),
        (
            // A gang of three: two wait, the attempt times out as a whole (H3).
            "attempt-times-out",
            seed(
                blocks(Hardened, 3, false),
                &[
                    group(0, gang(3)),
                    add(0),
                    add(1),
                    add(2),
                    Schedule { pick: 0 },
                    Schedule { pick: 0 },
                    Tick(DEFAULT_PERMIT_TIMEOUT),
                    Expire(gangway_model::gang::lockstep::DURATIONS[0]),
                    Unreserve { pick: 0 },
                    Unreserve { pick: 0 },
                    Schedule { pick: 2 },
                ],
            ),
        ),
        (
            // prop_gang's `regression_permit_rejection_lent_to_quorum`, in blocks: Permit
            // rejects a Basic member whose group was deleted; the group comes back a gang of
            // two before the late unreserve.
            "permit-rejection-unreserved-late",
            seed(
                blocks(Hardened, 2, true),
                &[
                    add(0),
                    group(0, Policy::Basic),
                    add(1),
                    Reserve { pick: 0 },
                    DeleteGroup { group: 0 },
                    Permit,
                    group(0, gang(2)),
                    Schedule { pick: 0 },
                    Unreserve { pick: 0 },
                    Schedule { pick: 0 },
                ],
            ),
        ),
        (
            // The group changes under a waiting member: its min count raised, then lowered
            // to reach quorum; then deleted and created again.
            "group-changes",
            seed(
                blocks(Hardened, 3, false),
                &[
                    group(0, gang(2)),
                    add(0),
                    add(1),
                    add(2),
                    Schedule { pick: 0 },
                    Op::UpdateGroup {
                        group: 0,
                        policy: gang(3),
                    },
                    Schedule { pick: 0 },
                    Op::UpdateGroup {
                        group: 0,
                        policy: gang(1),
                    },
                    DeleteGroup { group: 0 },
                    group(0, gang(2)),
                    Schedule { pick: 0 },
                ],
            ),
        ),
        (
            // Members bound by another binder and deleted while they wait; one arrives bound.
            "bound-elsewhere-and-deleted",
            seed(
                blocks(Hardened, 4, false),
                &[
                    group(0, gang(3)),
                    Op::AddPod {
                        pod: 0,
                        bound: true,
                    },
                    add(1),
                    add(2),
                    add(3),
                    Schedule { pick: 0 },
                    BindElsewhere { pick: 1 },
                    Schedule { pick: 0 },
                    Delete { pod: 3 },
                    Schedule { pick: 0 },
                    AbortCycle,
                ],
            ),
        ),
        (
            // Three groups interleaved, two gangs contending, Upstream with late unreserves:
            // a cycle aborted, a deletion and a timeout mid-attempt.
            "upstream-two-gangs",
            seed(
                Setup {
                    mode: Upstream,
                    groups: 3,
                    pods_per_group: 2,
                    blocks: false,
                    deferring: true,
                },
                &[
                    group(0, gang(2)),
                    group(1, gang(2)),
                    add(0),
                    add(1),
                    add(3),
                    add(4),
                    Reserve { pick: 0 },
                    AbortCycle,
                    Schedule { pick: 0 },
                    Schedule { pick: 1 },
                    Delete { pod: 0 },
                    Expire(DEFAULT_PERMIT_TIMEOUT),
                    Schedule { pick: 0 },
                    Bind { pick: 0 },
                ],
            ),
        ),
    ]
}
