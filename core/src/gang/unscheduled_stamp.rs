//! The stamp of a group's unscheduled members: what lets the queue skip, in a Permit's
//! activation, the gang members in flight it has already found past Reserve (issue #23,
//! `queue/activation_candidates.rs`).

use std::fmt;

/// A value no other group state and no earlier version of this one has had, taken afresh
/// whenever a member becomes unscheduled (joins the group unscheduled, or is forgotten): so
/// while a group's stamp is the one a cache was taken at, every member that was not
/// unscheduled then is still not. The queue relies on it to skip, when a Permit activates the
/// gang's unscheduled members, the members in flight it has already found past Reserve
/// (issue #23). Not part of the group's state: equality and hashing ignore it, `Debug` hides
/// it.
#[derive(Clone, Copy)]
pub(super) struct UnscheduledStamp(u64);

impl UnscheduledStamp {
    pub(super) fn fresh() -> UnscheduledStamp {
        UnscheduledStamp(crate::sync::fresh_stamp())
    }

    pub(super) fn get(self) -> u64 {
        self.0
    }
}

impl Default for UnscheduledStamp {
    fn default() -> UnscheduledStamp {
        UnscheduledStamp::fresh()
    }
}

impl PartialEq for UnscheduledStamp {
    fn eq(&self, _: &UnscheduledStamp) -> bool {
        true
    }
}

impl Eq for UnscheduledStamp {}

impl std::hash::Hash for UnscheduledStamp {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl fmt::Debug for UnscheduledStamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}

#[cfg(test)]
mod tests {
    use crate::gang::GroupState;
    use crate::Pod;
    use crate::{GroupKey, PodGroup};

    fn member(i: usize) -> Pod {
        Pod::new(format!("p{i}"), "ml", &format!("p{i}")).with_group("g")
    }

    /// Every move of a member into unscheduled — joining unscheduled, forgotten, forgotten
    /// again after rejoining — takes a stamp the group never had; moves out of unscheduled
    /// and refused moves keep it. The group's equality ignores it.
    #[test]
    fn every_move_into_unscheduled_takes_a_fresh_stamp() {
        let mut g = GroupState::new(GroupKey::new("ml", "g"));
        g.set_group(Some(PodGroup::gang("ml", "g", 2).unwrap()))
            .unwrap();
        let mut seen = vec![g.unscheduled_stamp()];
        let mut fresh = |g: &GroupState, what: &str| {
            let stamp = g.unscheduled_stamp();
            assert!(!seen.contains(&stamp), "{what}: stamp {stamp} reused");
            seen.push(stamp);
        };
        g.add_pod(member(0), false).unwrap();
        fresh(&g, "joined unscheduled");
        g.add_pod(member(1), false).unwrap();
        fresh(&g, "another joined unscheduled");
        let before = g.clone();
        let stamp = g.unscheduled_stamp();
        assert!(g.assume(member(0).id()));
        assert_eq!(g.unscheduled_stamp(), stamp, "assumed: out of unscheduled");
        assert!(!g.forget(member(1).id()), "not assumed: refused");
        assert_eq!(g.unscheduled_stamp(), stamp, "a refused move keeps it");
        assert!(g.forget(member(0).id()));
        fresh(&g, "forgotten");
        assert_eq!(g, before, "equality ignores the stamp");
        assert!(g.assume(member(0).id()));
        g.delete_pod(member(0).id()).unwrap();
        g.add_pod(member(0), false).unwrap();
        fresh(&g, "deleted while assumed, joined again");
        g.add_pod(member(2), true).unwrap();
        assert_eq!(g.unscheduled_stamp(), *seen.last().unwrap(), "joined bound");
        g.check().unwrap();
    }
}
