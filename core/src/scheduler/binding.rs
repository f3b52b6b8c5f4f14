use crate::Time;

use super::Scheduler;

impl Scheduler {
    /// Runs the binding cycle of every pod whose Permit decision has arrived, on this thread,
    /// in the order the decisions came, without blocking; returns how many ran. For embedders
    /// that drive the scheduler themselves (and for `gangway simulate`'s virtual time);
    /// [`start`](Self::start)'s workers do this on their own threads.
    pub fn run_binding_cycles(&self, now: Time) -> usize {
        let mut ran = 0;
        while self.run_binding_cycle(now) {
            ran += 1;
        }
        ran
    }

    /// Runs the binding cycle of the oldest decision waiting for one, if there is one, on this
    /// thread; `false` if none was waiting. [`run_binding_cycles`](Self::run_binding_cycles)
    /// one at a time, for embedders that interleave them with other work.
    pub fn run_binding_cycle(&self, now: Time) -> bool {
        let Some(job) = self.inner.driver.with(|d| d.next_job()) else {
            return false;
        };
        self.bind_job(&mut self.parts(), job, now);
        true
    }
}
