//! The witness mechanism: a flaw planted in the scheduler's own steps
//! ([`gangsched::checking::Flaw`]), as `tests/tests/loom_pod_group.rs` plants one — a [`Parts`]
//! wrapper around the real scheduler's parts that answers `planted(flaw)`, every other call
//! forwarded. The harness runs the cluster events, the timers and the binding cycles as the
//! driver's operations (`gangway_model::ops::scheduler`), whose `apply` calls the very steps
//! `Scheduler::add_pod`, `tick` and `run_binding_cycle` are made of: on the scheduler's own
//! parts, or — with a flaw — on this wrapper. The scheduling cycles run through
//! `Scheduler::schedule_one` as always (the scheduler offers no seam to run a whole scheduling
//! cycle on other parts, so the flaws planted there are not in [`PLANTABLE`]), except a split
//! one, whose steps run as the driver's operations too (`harness/split.rs`).

use gangsched::checking::Flaw;
pub use gangsched::checking::Planted;

/// The flaws this harness can plant (those in the event, timer and binding steps), by the name
/// `GANGWAY_FUZZ_FLAW` gives them (their `Debug` names), and the invariant each breaks.
pub const PLANTABLE: [(Flaw, &str); 8] = [
    (Flaw::ArrivalSkipsMoveEvent, "I8"),
    (Flaw::BindFailureKeepsNodeReservation, "I5/I6"),
    (Flaw::BindFailureLosesPod, "I4"),
    (Flaw::ReleaseKeepsNodeReservation, "I5/I6"),
    (Flaw::ReleaseAnnouncesNothing, "I7"),
    (Flaw::DeleteAnnouncesNothing, "I7"),
    (Flaw::RejectedNotRequeued, "I4"),
    (Flaw::ShortGangKeepsBinding, "I9"),
];

/// The plantable flaw named `name` (its `Debug` name), if there is one.
pub fn flaw_named(name: &str) -> Option<Flaw> {
    crate::plantable::flaw_named(PLANTABLE.iter().map(|(flaw, _)| *flaw), name)
}
