//! Renaming the driver's state and a scheduling cycle's pod, for symmetry reduction and the
//! checker's per-thread copies ([`crate::symmetry`]).

use super::driver_state::{AdmittedGroup, Assignment, DriverState};
use super::jobs::{AnyOrderJobs, Job};
use super::steps::{InCycle, Placed, Simulation, Trial};
use super::tally::Tally;
use crate::queue::Popped;
use crate::symmetry::{Relabel, Renamed};
use crate::Decision;

/// The decision's pod renamed; its status (free text) and cause kept.
impl Renamed for Job {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Job {
        Job {
            decision: Decision::new(
                r.pod(&self.decision.pod),
                self.decision.status.clone(),
                self.decision.cause,
            ),
            waited: self.waited,
        }
    }
}

/// Every job under its pod's image.
impl Renamed for AnyOrderJobs {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> AnyOrderJobs {
        AnyOrderJobs::from_map(
            self.iter()
                .map(|(id, job)| (r.id(id), job.renamed(r)))
                .collect(),
        )
    }
}

/// The pod and the node renamed; the stamp and the marks kept.
impl<S: Copy> Renamed for Assignment<S> {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Assignment<S> {
        Assignment {
            pod: r.pod(&self.pod),
            node: r.node(&self.node),
            since: self.since,
            deleted: self.deleted,
            rejected: self.rejected,
            claimed: self.claimed,
        }
    }
}

/// Every assignment, admitted gang and job under its pods' (and group's) images; the tally and
/// flags kept.
impl<J: super::jobs::JobQueue + Renamed, T: Tally> Renamed for DriverState<J, T> {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> DriverState<J, T> {
        self.map_parts(
            |assigned| assigned.renamed(r),
            |admitted| {
                admitted
                    .iter()
                    .map(|(key, g)| {
                        let g = AdmittedGroup {
                            deadline: g.deadline,
                            unclaimed: g.unclaimed.iter().map(|id| r.id(id)).collect(),
                        };
                        (r.group_key(key), g)
                    })
                    .collect()
            },
            |jobs| jobs.renamed(r),
        )
    }
}

/// The pod (and node) renamed; a placement's status (free text) kept.
impl Renamed for Placed {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Placed {
        match self {
            Placed::Reserved { pod, node } => Placed::Reserved {
                pod: r.pod(pod),
                node: r.node(node),
            },
            Placed::Unfit { pod, status } => Placed::Unfit {
                pod: r.pod(pod),
                status: status.clone(),
            },
            Placed::Permitted { pod, node } => Placed::Permitted {
                pod: r.pod(pod),
                node: r.node(node),
            },
        }
    }
}

/// The pod's record renamed; the cycle number kept.
impl Renamed for Popped {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Popped {
        Popped {
            info: self.info.renamed(r),
            cycle: self.cycle,
        }
    }
}

/// The node renamed; statuses (free text) kept.
impl Renamed for Trial {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Trial {
        match self {
            Trial::Placed { node, waiting } => Trial::Placed {
                node: r.node(node),
                waiting: waiting.clone(),
            },
            other => other.clone(),
        }
    }
}

/// Every member and its trial renamed, the group key relabeled; the verdict (free text) kept.
impl Renamed for Simulation {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Simulation {
        Simulation {
            group: r.group_key(&self.group),
            members: self
                .members
                .iter()
                .map(|(m, t)| (m.renamed(r), t.renamed(r)))
                .collect(),
            verdict: self.verdict.clone(),
        }
    }
}

/// The pod or the group's simulation renamed.
impl Renamed for InCycle {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> InCycle {
        match self {
            InCycle::Pod(placed) => InCycle::Pod(placed.renamed(r)),
            InCycle::Group(sim) => InCycle::Group(sim.renamed(r)),
        }
    }
}
