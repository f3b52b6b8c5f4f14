//! A flaw planted around real parts ([`Flaw`]): the witness mechanism the loom and shuttle
//! models and the fuzz target share (one copy, here; the model checker's own parts answer
//! `Parts::planted` themselves); compiled only with the `checking` feature.

use crate::queue::{Popped, QueuePlugins, QueueState};
use crate::time::Clock;
use crate::{GangCycle, Mode, PermitPlugins, Pod, Status, Time};

use super::flaw::Flaw;
use super::parts::Parts;
use super::runner::{bind_jobs, RunOn};
use super::steps::{self, Placed};
use super::{BindError, CacheState, CycleOutcome, DriverState, Scheduler};

/// The scheduler's parts with `flaw` planted: [`Parts::planted`] answers yes for it, every
/// other call goes to `parts`. It holds no step gate (`Parts::unobserved` is not forwarded),
/// which only a `check()` running during a step would notice.
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
    fn gang_cycle(&self) -> crate::GangCycle {
        self.parts.gang_cycle()
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

/// A running scheduler's cycles on its own parts with the flaw planted.
impl RunOn for Flaw {
    fn schedule(self, scheduler: &Scheduler, popped: Popped, now: Time) {
        scheduler.schedule_planted(self, popped, now);
    }

    fn bind_jobs<C: Clock>(self, scheduler: &Scheduler, clock: &C) {
        let mut planted = Planted {
            parts: scheduler.parts(),
            flaw: self,
        };
        bind_jobs(scheduler, &mut planted, clock);
    }
}

impl Scheduler {
    /// One scheduling cycle of `popped` on the scheduler's parts with `flaw` planted. With
    /// [`Flaw::RecordsAfterPermit`] a Permit barrier's cycle records the assignment after
    /// Permit ([`steps::place_and_reserve_unrecorded`], then [`steps::record`]).
    pub(crate) fn schedule_planted(&self, flaw: Flaw, popped: Popped, now: Time) -> CycleOutcome {
        let mut planted = Planted {
            parts: self.parts(),
            flaw,
        };
        let pod = popped.info.pod().clone();
        let pod_group_cycle =
            self.config().gang_cycle == GangCycle::PodGroup && pod.group().is_some();
        if flaw != Flaw::RecordsAfterPermit || pod_group_cycle {
            return self.schedule_on(&mut planted, popped, now);
        }
        let p = &mut planted;
        let outcome = match steps::place_and_reserve_unrecorded(p, popped, now) {
            Err(outcome) => outcome,
            Ok(Placed::Unfit { pod, status }) => steps::hand_back_unfit(p, pod, status, now),
            Ok(Placed::Reserved { pod, node }) => {
                let outcome = steps::permit(p, pod.clone(), node.clone(), now);
                steps::record(p, &pod, node, now);
                outcome
            }
        };
        self.deliver_cycle_outcome(&outcome, &[pod]);
        outcome
    }
}
