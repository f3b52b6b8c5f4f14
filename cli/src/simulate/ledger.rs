//! What a simulation learns from the scheduler as it runs: when each pod reserved a node and
//! when it bound (from the cycles' [`CycleOutcome`]s and the [`PodOutcome`]s the scheduler
//! delivers), the reservation-seconds held by attempts that did not bind, and the completions
//! of pods that run for a while once bound.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use gangsched::scheduler::{CycleOutcome, PodOutcome};
use gangsched::{Cause, Clock, GroupKey, Pod, PodId, SystemClock, Time};

/// The simulation's record of reservations, binds and completions.
///
/// Fed from two sides: the driver loop tells it each cycle's outcome (a pod placed — allowed,
/// waiting or rejected at Permit — holds its node from now) and the scheduler's outcome sink
/// tells it how each attempt ended. A reservation that ends in anything but a bind is waste:
/// the node was held for a gang that did not run.
#[derive(Debug)]
pub struct Ledger {
    /// The virtual time the driver is at (unused on the wall clock).
    now: Time,
    /// On the wall clock, where times come from.
    clock: Option<SystemClock>,
    /// How long each pod runs once bound, for the pods that complete.
    run_for: HashMap<PodId, Duration>,
    /// Pods holding a node reservation that has not bound yet, since when.
    reserved_at: HashMap<PodId, Time>,
    /// When each pod bound.
    bound_at: HashMap<PodId, Time>,
    /// Reservation time held by attempts that ended without a bind.
    wasted: Duration,
    /// Whether reservations are followed (the driver sees each cycle: virtual time only).
    follows_reservations: bool,
    /// Completions due: (when, order of binding) → the pod to delete.
    completions: BTreeMap<(Time, u64), Pod>,
    /// Completions scheduled so far (ties in `completions` keep binding order).
    scheduled: u64,
    /// Pods that completed (deleted after running their time).
    completed: Vec<PodId>,
    /// Gangs a permit deadline rejected a member of: what follows is the timeout's doing
    /// (`rest.rs` does not judge their progress).
    timed_out: HashSet<GroupKey>,
}

impl Ledger {
    /// A ledger for a run in virtual time (`clock` `None`: the driver sets the time) or on
    /// the wall clock; `run_for`: the pods that complete and how long they run once bound.
    pub fn new(clock: Option<SystemClock>, run_for: HashMap<PodId, Duration>) -> Ledger {
        Ledger {
            now: Time::ZERO,
            follows_reservations: clock.is_none(),
            clock,
            run_for,
            reserved_at: HashMap::new(),
            bound_at: HashMap::new(),
            wasted: Duration::ZERO,
            completions: BTreeMap::new(),
            scheduled: 0,
            completed: Vec::new(),
            timed_out: HashSet::new(),
        }
    }

    fn now(&self) -> Time {
        self.clock.as_ref().map_or(self.now, |c| c.now())
    }

    /// The driver moved virtual time to `now`.
    pub fn set_now(&mut self, now: Time) {
        self.now = now;
    }

    /// A scheduling cycle ended with `outcome`: each pod it left holding a reservation (placed
    /// and allowed, waiting, or rejected and released later by its binding cycle) holds it
    /// from now.
    pub fn cycle(&mut self, outcome: &CycleOutcome) {
        if !self.follows_reservations {
            return;
        }
        match outcome {
            CycleOutcome::Allowed { pod, .. }
            | CycleOutcome::Waiting { pod, .. }
            | CycleOutcome::Rejected { pod, .. } => {
                let now = self.now();
                self.reserved_at.insert(pod.clone(), now);
            }
            CycleOutcome::PodGroup { members, .. } => {
                for member in members {
                    self.cycle(member);
                }
            }
            _ => {}
        }
    }

    /// An attempt ended with `outcome` (the scheduler's outcome sink): a bind keeps its
    /// reservation and, for a pod that runs a while, schedules its completion; anything else
    /// releases it, and the time it was held is waste.
    pub fn outcome(&mut self, outcome: &PodOutcome) {
        let now = self.now();
        let pod = outcome.pod();
        let held = self.reserved_at.remove(pod.id());
        if let PodOutcome::Rejected {
            cause: Cause::TimedOut,
            ..
        } = outcome
        {
            self.timed_out.extend(pod.group_key().cloned());
        }
        match outcome {
            PodOutcome::Bound { .. } => {
                self.bound_at.insert(pod.id().clone(), now);
                if let Some(run) = self.run_for.get(pod.id()) {
                    self.completions
                        .insert((now + *run, self.scheduled), pod.clone());
                    self.scheduled += 1;
                }
            }
            _ => {
                if let Some(since) = held {
                    self.wasted += now.saturating_duration_since(since);
                }
            }
        }
    }

    /// Whether a permit deadline rejected a member of `gang`.
    pub fn timed_out(&self, gang: &GroupKey) -> bool {
        self.timed_out.contains(gang)
    }

    /// When the next completion is due.
    pub fn next_completion(&self) -> Option<Time> {
        self.completions.keys().next().map(|(at, _)| *at)
    }

    /// The completions due by `now`, in order; each is counted completed.
    pub fn due(&mut self, now: Time) -> Vec<Pod> {
        let mut due = Vec::new();
        while let Some(entry) = self.completions.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let pod = entry.remove();
            self.completed.push(pod.id().clone());
            due.push(pod);
        }
        due
    }

    /// When `pod` bound, if it did.
    pub fn bound_at(&self, pod: &PodId) -> Option<Time> {
        self.bound_at.get(pod).copied()
    }

    /// The pods that completed (ran their time and were deleted), in completion order.
    pub fn completed(&self) -> &[PodId] {
        &self.completed
    }

    /// The reservation-seconds held by attempts that did not bind, counting the reservations
    /// still held at `end` by pods that have not bound; `None` on the wall clock, where the
    /// driver does not see the cycles.
    pub fn wasted_seconds(&self, end: Time) -> Option<f64> {
        if !self.follows_reservations {
            return None;
        }
        let still: Duration = self
            .reserved_at
            .values()
            .map(|since| end.saturating_duration_since(*since))
            .sum();
        Some((self.wasted + still).as_secs_f64())
    }
}
