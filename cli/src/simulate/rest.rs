//! The run at rest: each moment the virtual-time driver has nothing left to do but wait for a
//! timer that rescues — a permit deadline or the leftover flush — with no backoff pending,
//! and at the end. There it asks what the model checker asks of every state, on the
//! scheduler's own states (`gangway_check::at_rest`): I5 (the groups' partition, the nodes'
//! accounting, and the two agreeing), I7 (no pod parked for room a node has), and progress
//! without timeouts — no gang with room for its quorum waits for that timer, which only a
//! delay (a wake-up or an announcement that did not happen) or gangs holding each other off
//! at the Permit barrier make it do.

use std::collections::BTreeMap;

use gangsched::scheduler::{ResourceFit, Scheduler};
use gangsched::{GangCycle, GroupKey, PodId, Time};
use gangway_check::at_rest as judge_at_rest;

/// What the rests found.
#[derive(Debug, Default)]
pub(super) struct Rests {
    /// I5 and I7 broken at a rest, each distinct finding once, with the first time it was
    /// seen.
    pub violations: Vec<String>,
    /// The pods of gangs with room that waited for a timer, with the first rest that saw
    /// each (in simulated seconds) and what it saw.
    pub waited: BTreeMap<PodId, (f64, String)>,
}

impl Rests {
    /// Checks `scheduler` at rest at `now`, its gangs scheduled by `gang_cycle`
    /// (`gangway_check::at_rest`, with the simulation's placement, `ResourceFit`).
    /// `timed_out` says which gangs a permit deadline rejected a member of (not judged for
    /// progress from then on: `gangway_check::at_rest`).
    pub fn check(
        &mut self,
        scheduler: &Scheduler,
        gang_cycle: GangCycle,
        now: Time,
        timed_out: impl Fn(&GroupKey) -> bool,
    ) {
        let at = now.as_nanos() as f64 / 1e9;
        let found = judge_at_rest(
            &scheduler.gang().registry().snapshot(),
            &scheduler.cache().snapshot(),
            &scheduler.queue().snapshot(),
            gang_cycle == GangCycle::PodGroup,
            &ResourceFit,
            ResourceFit::PLUGIN,
            timed_out,
        );
        for finding in found.violations {
            if !self.violations.iter().any(|v| v.ends_with(&finding)) {
                self.violations
                    .push(format!("at {at:.1} s, at rest: {finding}"));
            }
        }
        for room in found.waiting_for_a_timer {
            let seen = format!("at {at:.1} s: {room}");
            for pod in room.pods.iter().cloned() {
                self.waited.entry(pod).or_insert((at, seen.clone()));
            }
        }
    }
}

/// Whether the driver is at rest at this moment: nothing pending in the backoff queue, and
/// the next thing due (`timer`, the scheduler's next deadline) is a timer that rescues — not
/// a workload event or completion (`workload`) — or nothing is due at all.
pub(super) fn at_rest(backoff: Option<Time>, timer: Option<Time>, workload: Option<Time>) -> bool {
    match (backoff, timer, workload) {
        (Some(_), _, _) => false,
        (None, Some(timer), Some(workload)) => timer < workload,
        (None, _, None) => true,
        (None, None, Some(_)) => false,
    }
}
