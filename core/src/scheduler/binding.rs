use crate::Time;

use super::steps;
use super::Scheduler;

impl Scheduler {
    /// Runs the binding cycle of every pod whose Permit decision has arrived, on this thread,
    /// in the order the decisions came, without blocking; returns how many ran. For embedders
    /// that drive the scheduler themselves (and for `gangway simulate`'s virtual time);
    /// [`start`](Self::start)'s workers do this on their own threads.
    pub fn run_binding_cycles(&self, now: Time) -> usize {
        let mut ran = 0;
        let mut parts = self.parts();
        while let Some(job) = self.inner.driver.with(|d| d.next_job()) {
            steps::binding_cycle(&mut parts, job, now);
            ran += 1;
        }
        ran
    }
}
