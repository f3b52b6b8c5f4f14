//! The gang plugin's operations on a PodGroup object — created, changed, deleted — written once
//! over [`GangParts`] like the rest of `ops.rs`, which re-exports them. In Hardened mode a
//! change that makes a group a gang takes out of its quorum every member the group let wait
//! for another plugin while it was no gang (I3).

#[cfg(feature = "checking")]
use super::flaw::GangFlaw;
use super::parts::{Batch, GangParts};
use super::{GroupUpdateError, Groups};
use crate::{Cause, PodId};
use crate::{GroupKey, PodGroup};

/// A PodGroup object was created.
pub fn group_added<G: GangParts>(g: &mut G, group: PodGroup) -> Result<(), GroupUpdateError> {
    let key = group.key().clone();
    let conversion = Conversion::of(g);
    g.write_group(&key, |groups, waiting| {
        groups.add_group(group)?;
        conversion.apply(groups, waiting, &key);
        Ok(())
    })
}

/// A PodGroup object changed; returns the old one.
pub fn group_updated<G: GangParts>(
    g: &mut G,
    group: PodGroup,
) -> Result<PodGroup, GroupUpdateError> {
    let key = group.key().clone();
    let conversion = Conversion::of(g);
    g.write_group(&key, |groups, waiting| {
        let old = groups.update_group(group)?;
        conversion.apply(groups, waiting, &key);
        Ok(old)
    })
}

/// A PodGroup object was deleted.
pub fn group_deleted<G: GangParts>(g: &mut G, key: &GroupKey) -> Option<PodGroup> {
    g.write_group(key, |groups, _| groups.delete_group(key))
}

/// Why a member waiting for another plugin is rejected when its group becomes a gang.
pub const BECAME_A_GANG: &str =
    "its pod group became a gang while it waited at permit for another plugin";

/// What a created or changed PodGroup object does to members that waited outside a gang,
/// decided before the group's lock is taken.
#[derive(Clone, Copy)]
struct Conversion {
    hardened: bool,
    /// [`GangFlaw::ConversionForgetsOnlyWaiters`] is planted (a witness).
    #[cfg(feature = "checking")]
    only_waiters: bool,
}

impl Conversion {
    fn of<G: GangParts>(g: &G) -> Conversion {
        Conversion {
            hardened: g.rules().hardened(),
            #[cfg(feature = "checking")]
            only_waiters: g.planted(GangFlaw::ConversionForgetsOnlyWaiters),
        }
    }

    /// Hardened: a gang's members wait at Permit only in their gang's attempt (H1). A member a
    /// group that was no gang let wait for another plugin
    /// ([`GroupState::wait_for_others`](super::GroupState::wait_for_others)) is assumed, so
    /// once its group is a gang (updated, or deleted and created again) the quorum would count
    /// it — and a sibling's Permit pass alone while that plugin may still reject it (I3; found
    /// by the `scheduler_events` fuzz target). In the same critical section:
    /// - one still waiting is rejected ([`BECAME_A_GANG`]); its binding cycle hands it back to
    ///   retry as a gang member;
    /// - one whose wait is over stops counting too: the gang cannot tell an allowance from a
    ///   rejection — its timer's, or the embedder's through the waiting map — whose release is
    ///   still to come (I3; the fuzz target's fourth find). One that was allowed counts again
    ///   as soon as its bind is observed.
    ///
    /// Each stops counting towards quorum there and then, as a member another plugin rejects
    /// does. Upstream keeps them waiting and counted, as 1.36 does.
    fn apply<R>(self, groups: &mut Groups, waiting: &mut Batch<'_, R>, key: &GroupKey) {
        let Some(state) = groups.get(key).filter(|_| self.hardened) else {
            return;
        };
        if state.group().and_then(|g| g.min_count()).is_none() {
            return;
        }
        let mut outside: Vec<PodId> = state.waited_for_others().cloned().collect();
        if outside.is_empty() {
            return;
        }
        #[cfg(feature = "checking")]
        let only_waiters = self.only_waiters;
        #[cfg(not(feature = "checking"))]
        let only_waiters = false;
        if only_waiters {
            // The flaw: a member whose wait is over keeps counting.
            outside = waiting.reject_those_waiting(&outside, BECAME_A_GANG, Cause::Rejected);
        } else {
            waiting.reject_all(&outside, BECAME_A_GANG, Cause::Rejected);
        }
        groups.change(key, |state| {
            for id in &outside {
                state.forget(id);
            }
        });
    }
}
