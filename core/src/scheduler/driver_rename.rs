//! Renaming the driver's state, for symmetry reduction and the checker's per-thread copies
//! ([`crate::symmetry`]).

use super::driver_state::{AdmittedGroup, Assignment, DriverState};
use super::jobs::{AnyOrderJobs, Job};
use super::tally::Tally;
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
