//! A flaw planted around real parts: the witness mechanism the loom models and the fuzz
//! target share (one copy, here).

use crate::queue::{QueuePlugins, QueueState};
use crate::{Mode, PermitPlugins, Pod, Status};

use super::parts::{Flaw, Parts};
use super::{BindError, CacheState, DriverState};

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
