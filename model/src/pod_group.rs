//! A reference model of one pod-group cycle (`GangCycle::PodGroup`) for gangs whose members
//! are all alike: what the cycle must admit, counted in slots rather than computed by placing.
//!
//! Members of one gang ask for the same resources, so any order of placing them fits the same
//! number: each node takes `free / size` of them whatever went where before, and the cycle can
//! place at most the sum of that over the nodes (and no more than the members it gathered).
//! The gang is admitted exactly when the members already scheduled plus those placed reach its
//! minimum; then every placed member is admitted and nothing else changes; otherwise nothing is
//! reserved. Hardened stops placing as soon as the quorum is out of reach, Upstream places
//! every member: the verdict and the count are the same.
//!
//! The real cycle places member by member on a snapshot, asks the gang's quorum after each,
//! and commits in a separate step; `tests/prop_pod_group_model.rs` runs it beside this model on
//! generated clusters and compares the verdict, the members admitted and the nodes' room.

/// A cluster and a gang, in slots: what the reference needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleCase {
    /// Each node's free room, in slots, before the cycle.
    pub free: Vec<u64>,
    /// Slots each member of the gang asks for (at least one).
    pub size: u64,
    /// Members the cycle gathers (unscheduled, queued).
    pub gathered: usize,
    /// Members already scheduled (bound) before the cycle.
    pub scheduled: usize,
    /// The gang's minimum.
    pub min_count: usize,
}

/// What the reference says one cycle does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleVerdict {
    /// Whether the gang is admitted.
    pub admitted: bool,
    /// Members admitted (reserved and passed to their binding cycles): every member placed
    /// when admitted, none otherwise.
    pub admitted_members: usize,
    /// Slots left free on the cluster after the cycle's commit.
    pub free_after: u64,
}

/// The reference's verdict for `case` (see the module docs).
pub fn cycle(case: &CycleCase) -> CycleVerdict {
    let size = case.size.max(1);
    let fits: u64 = case.free.iter().map(|free| free / size).sum();
    let placed = case
        .gathered
        .min(usize::try_from(fits).unwrap_or(usize::MAX));
    let admitted = case.scheduled + placed >= case.min_count && placed > 0;
    let admitted_members = if admitted { placed } else { 0 };
    let free: u64 = case.free.iter().sum();
    CycleVerdict {
        admitted,
        admitted_members,
        free_after: free - admitted_members as u64 * size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(free: &[u64], size: u64, gathered: usize, scheduled: usize, min: usize) -> CycleCase {
        CycleCase {
            free: free.to_vec(),
            size,
            gathered,
            scheduled,
            min_count: min,
        }
    }

    #[test]
    fn a_gang_that_fits_is_admitted_whole() {
        let v = cycle(&case(&[2, 2], 1, 3, 0, 3));
        assert_eq!((v.admitted, v.admitted_members, v.free_after), (true, 3, 1));
    }

    #[test]
    fn room_split_across_nodes_counts_per_node() {
        // Two members of two slots on nodes of three free slots each: one per node.
        let v = cycle(&case(&[3, 3], 2, 3, 0, 3));
        assert_eq!((v.admitted, v.admitted_members), (false, 0));
        assert_eq!(v.free_after, 6, "nothing reserved");
    }

    #[test]
    fn bound_members_count_towards_the_minimum() {
        let v = cycle(&case(&[1], 1, 2, 2, 3));
        assert_eq!((v.admitted, v.admitted_members), (true, 1));
    }

    #[test]
    fn more_members_than_the_minimum_are_all_admitted_where_they_fit() {
        let v = cycle(&case(&[4], 1, 6, 0, 3));
        assert_eq!((v.admitted, v.admitted_members, v.free_after), (true, 4, 0));
    }
}
