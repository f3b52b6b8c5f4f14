//! The witness mechanism: a flaw planted in the scheduler's own steps
//! ([`gangsched::checking::Flaw`]), as `tests/tests/loom_pod_group.rs` plants one — a [`Parts`]
//! wrapper around the real scheduler's parts that answers `planted(flaw)`, every other call
//! forwarded. With a flaw, the harness runs the cluster events, the timers and the binding
//! cycles as `checking::steps::*` on this wrapper — the very functions `Scheduler::add_pod`,
//! `tick` and `run_binding_cycle` are made of — and the scheduling cycles through
//! `Scheduler::schedule_one` as always (the scheduler offers no seam to run a whole scheduling
//! cycle on other parts, so the flaws planted there cannot be planted here).
//!
//! Without a flaw (the normal target) none of this runs: the harness calls the scheduler's
//! public methods.

use gangsched::checking::{DriverState, Flaw, Parts};
use gangsched::queue::{QueuePlugins, QueueState};
use gangsched::scheduler::{BindError, CacheState};
use gangsched::{Mode, PermitPlugins, Pod, Status};

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
    PLANTABLE
        .iter()
        .map(|(flaw, _)| *flaw)
        .find(|flaw| format!("{flaw:?}") == name)
}

/// The scheduler's parts with `flaw` planted; every other call goes to the parts. It holds no
/// step gate (`Parts::unobserved` cannot be forwarded), which only a `check()` running during
/// a step would notice: the harness is single-threaded and checks between steps.
pub struct Planted<P> {
    /// The real parts.
    pub parts: P,
    /// The flaw.
    pub flaw: Flaw,
}

impl<P: Parts> Parts for Planted<P> {
    type Gang = P::Gang;
    type Jobs = P::Jobs;
    type Tally = P::Tally;

    fn mode(&self) -> Mode {
        self.parts.mode()
    }
    fn planted(&self, flaw: Flaw) -> bool {
        flaw == self.flaw
    }
    fn gang(&mut self) -> &mut P::Gang {
        self.parts.gang()
    }
    fn queue<R>(&mut self, f: impl FnOnce(&mut QueueState, &dyn QueuePlugins) -> R) -> R {
        self.parts.queue(f)
    }
    fn cache<R>(&mut self, f: impl FnOnce(&mut CacheState) -> R) -> R {
        self.parts.cache(f)
    }
    fn driver<R>(&mut self, f: impl FnOnce(&mut DriverState<P::Jobs, P::Tally>) -> R) -> R {
        self.parts.driver(f)
    }
    fn read_queue<R>(&self, f: impl FnOnce(&QueueState) -> R) -> R {
        self.parts.read_queue(f)
    }
    fn read_cache<R>(&self, f: impl FnOnce(&CacheState) -> R) -> R {
        self.parts.read_cache(f)
    }
    fn read_driver<R>(&self, f: impl FnOnce(&DriverState<P::Jobs, P::Tally>) -> R) -> R {
        self.parts.read_driver(f)
    }
    fn place(&mut self, pod: &Pod) -> Result<String, Status> {
        self.parts.place(pod)
    }
    fn place_on(&mut self, pod: &Pod, snapshot: &CacheState) -> Result<String, Status> {
        self.parts.place_on(pod, snapshot)
    }
    fn permit_plugins(&self) -> PermitPlugins {
        self.parts.permit_plugins()
    }
    fn bind(&mut self, pod: &Pod, node: &str) -> Result<(), BindError> {
        self.parts.bind(pod, node)
    }
}
