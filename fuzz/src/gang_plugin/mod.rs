//! The harness behind the `gang_plugin` fuzz target: the real gang plugin
//! ([`gangsched::gang::GangScheduling`]) in lockstep with the reference model
//! [`gangway_model::gang::GangModel`], through the existing lockstep driver
//! [`gangway_model::gang::lockstep`] — the one `tests/tests/prop_gang.rs` runs under
//! proptest. Nothing here decides or checks anything the driver does not: the input picks the
//! driver's setup and its ops ([`input`]), the driver runs them, then settles.
//!
//! What is checked is the driver's, per mode, as `prop_gang` asks it: after every op the real
//! plugin equals the model (each result, every pod's PreEnqueue, every group's object, members,
//! unscheduled / assumed / assigned and attempt, every waiting pod and its deadline, the
//! decisions delivered), `Groups::check()` and `WaitingState::check()` (I5), the driver's
//! bookkeeping of each pod's place (I4), and in Hardened I3 (gang atomicity); at the end the
//! settling's I6 (nothing left assumed, no attempt left). Upstream breaks I3 by design (the
//! partial gang), so I3 is asked of Hardened only.
//!
//! `GANGWAY_FUZZ_FLAW=<flaw>` (read once, by [`init`]) plants one of [`PLANTABLE`] in the
//! plugin's own operations (`Lockstep::planting`), for a witness that the checks find it.

pub mod input;
mod seeds;
#[cfg(test)]
mod tests;

use gangsched::checking::GangFlaw;
use gangsched::Mode;
use gangway_model::gang::lockstep::{run_ops, Failure, Lockstep};

pub use input::{Input, Setup, MAX_OPS};
pub use seeds::seeds;

pub use crate::plantable::FLAW_VAR;

/// The flaws this target can plant, by the name `GANGWAY_FUZZ_FLAW` gives them (their `Debug`
/// names), with what the failed check says: the lockstep's comparison it fails first, and the
/// invariants the flaw breaks.
pub const PLANTABLE: [(GangFlaw, &str, &str); 1] = [(
    GangFlaw::QuorumAllowsOneByOne,
    "permit",
    "H1/I3: Permit agrees with the model",
)];

/// The flaw the target plants ([`init`] reads it).
static FLAW: crate::plantable::FlawChoice = crate::plantable::FlawChoice::new();

/// The plantable flaw named `name` (its `Debug` name), if there is one.
pub fn flaw_named(name: &str) -> Option<GangFlaw> {
    crate::plantable::flaw_named(PLANTABLE.iter().map(|(f, ..)| *f), name)
}

/// The fuzz target's one-time set-up: reads [`FLAW_VAR`]. Panics on a name that is not a
/// plantable flaw, listing those that are.
pub fn init() {
    FLAW.read("gang_plugin", PLANTABLE.iter().map(|(f, ..)| *f));
}

/// The flaw [`init`] read, if any.
pub fn planted_flaw() -> Option<GangFlaw> {
    FLAW.get(PLANTABLE.iter().map(|(f, ..)| *f))
}

/// The lockstep `input.setup` describes: the mode, the groups, which group each pod names,
/// I3 checked in Hardened only (as `prop_gang` checks it), Permit rejections unreserved late
/// if asked, and `flaw` planted if any.
pub fn lockstep(setup: &Setup, flaw: Option<GangFlaw>) -> Lockstep {
    let check_i3 = setup.mode == Mode::Hardened;
    let mut lockstep = Lockstep::new(setup.mode, setup.groups, &setup.pod_groups(), check_i3);
    if setup.deferring {
        lockstep = lockstep.deferring_permit_rejections();
    }
    if let Some(flaw) = flaw {
        lockstep = lockstep.planting(flaw);
    }
    lockstep
}

/// Runs `input` — its first [`MAX_OPS`] ops, then the settling — on the lockstep its setup
/// describes, with `flaw` planted if any: the first failed check, with the trace, or `Ok`.
pub fn run(input: &Input, flaw: Option<GangFlaw>) -> Result<(), Failure> {
    let ops = &input.ops[..input.ops.len().min(MAX_OPS)];
    run_ops(lockstep(&input.setup, flaw), ops)
}

/// The fuzz target's body: runs `input` (with the flaw [`init`] read); panics — a finding —
/// at the first failed check.
pub fn gang_plugin(input: &Input) {
    if let Err(failure) = run(input, planted_flaw()) {
        panic!("{:?}: {failure}", input.setup);
    }
}
