//! The harness behind the `scheduler_events` fuzz target: the real [`gangsched::Scheduler`]
//! in virtual time — one scheduling cycle, one binding cycle, one timer instant at a time, as
//! `gangway simulate` and `gangway differential` drive it — through arbitrary cluster events:
//! pods (gang members of three PodGroups, and plain pods) added, updated and deleted, groups
//! added, changed and deleted, nodes added, changed and deleted, binds that fail or panic,
//! a Permit plugin's answers (allow, wait, reject, error, panic) and its later decisions, the
//! informer's reports of bindings, and time (the backoffs, the flushes, the permit timeout).
//! Both modes and both gang cycles, chosen by the input's first byte ([`input`]). A scheduling
//! or binding cycle may be *split*: run step by step, with the input's next op, a cluster
//! event, landing between its first step and its last — the races a threaded scheduler runs
//! into (issue #43; `harness/split.rs`).
//!
//! After every step it runs the scheduler's own checks and simple accounting of every pod
//! ([`harness`] lists them); at the end it runs time on and shuts the scheduler down, and
//! nothing may be left waiting or reserved. Nothing here decides anything the scheduler
//! decides: no checker keeps a copy of its rules.
//!
//! `GANGWAY_FUZZ_FLAW=<flaw>` (read once, by [`init`]) plants one of [`PLANTABLE`] in the
//! scheduler's own steps, for a witness that the checks find it ([`planted`]); unset, the
//! target is the scheduler's public API alone.

pub mod harness;
pub mod input;
pub mod planted;
mod seeds;
#[cfg(test)]
mod tests;

use gangsched::checking::Flaw;
use gangsched::sync::atomic::{AtomicBool, Ordering};

use crate::plantable::FlawChoice;

pub use harness::{run, run_judging_every_cycle, trace, Failure, INJECTED_PANIC};
pub use input::{BindAnswer, Input, Op, Setup, Verdict, MAX_OPS};
pub use planted::{flaw_named, PLANTABLE};
pub use seeds::seeds;

pub use crate::plantable::FLAW_VAR;

/// The flaw the target plants ([`init`] reads it).
static FLAW: FlawChoice = FlawChoice::new();

/// The fuzz target's one-time set-up: lets the input's injected panics unwind
/// ([`quiet_injected_panics`]) and reads [`FLAW_VAR`]. Panics on a name that is not a
/// plantable flaw, listing those that are.
pub fn init() {
    quiet_injected_panics();
    FLAW.read("scheduler_events", PLANTABLE.iter().map(|(f, _)| *f));
}

/// The flaw [`init`] read, if any.
pub fn planted_flaw() -> Option<Flaw> {
    FLAW.get(PLANTABLE.iter().map(|(f, _)| *f))
}

/// The fuzz target's body: runs `input` (with the flaw [`init`] read); panics — a finding —
/// at the first failed check.
pub fn scheduler_events(input: &Input) {
    if let Err(failure) = run(input, planted_flaw()) {
        panic!("{failure}");
    }
}

/// libFuzzer's panic hook aborts the process at once, before the scheduler's `catch_unwind`
/// can catch the binder's or plugin's panic that an input injects. This wraps the hook in
/// place: a panic whose payload is [`INJECTED_PANIC`] unwinds quietly; any other goes to the
/// hook as before (a finding). Installed once per process.
pub fn quiet_injected_panics() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() == Some(&INJECTED_PANIC) {
            return;
        }
        previous(info);
    }));
}
