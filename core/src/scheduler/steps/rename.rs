//! Renaming a scheduling cycle's pod and a pod-group cycle's simulation, for symmetry
//! reduction and the checker's per-thread copies ([`crate::symmetry`]).

use super::{Placed, Simulation, Trial};
use crate::symmetry::{Relabel, Renamed};

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
