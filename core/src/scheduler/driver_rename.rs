//! Renaming the driver's state and a scheduling cycle's pod, for symmetry reduction and the
//! checker's per-thread copies ([`crate::symmetry`]).

use super::driver_state::{Assignment, DriverState};
use super::jobs::{AnyOrderJobs, Job};
use super::steps::Placed;
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

/// Every assignment and job under its pod's image; the tally and flags kept.
impl<J: super::jobs::JobQueue + Renamed, T: Tally> Renamed for DriverState<J, T> {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> DriverState<J, T> {
        self.map_parts(|assigned| assigned.renamed(r), |jobs| jobs.renamed(r))
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
