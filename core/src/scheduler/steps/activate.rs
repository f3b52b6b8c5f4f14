//! A Permit's activation of its gang's unscheduled members, carried out against the queue:
//! the queue lists the group's pods it could move (`activation_candidates.rs`), the registry
//! says which are unscheduled, and the queue activates those — in pod id order, the order of
//! the gang's unscheduled members. What the registry found past Reserve among the candidates in
//! flight goes back to the queue, so that the next activation of the gang looks only at what
//! changed: in a Permit barrier, the members waiting before it (issue #23).

use crate::gang::parts::GangParts;
use crate::gang::{Activation, GroupState, MemberPlace};
use crate::{GroupKey, PodId, Time};

#[cfg(feature = "checking")]
use super::super::flaw::Flaw;
use super::super::parts::Parts;

/// Activates the members of `key` that `activation` names, as the registry has them now;
/// returns how many moved to the active queue.
pub fn activate_siblings<P: Parts>(
    p: &mut P,
    key: &GroupKey,
    activation: &Activation,
    now: Time,
) -> usize {
    let stamp_of =
        |groups: &crate::gang::Groups| groups.get(key).map(GroupState::unscheduled_stamp);
    // A group the registry does not hold has no unscheduled member to activate.
    let Some(stamp) = p.gang().read_group(key, stamp_of) else {
        tracing::debug!(group = %key, "activation: group not in the registry");
        return 0;
    };
    let candidates = p.queue(|q, _| q.activation_candidates(key, stamp));
    let (siblings, past_reserve, current) = p.gang().read_group(key, |groups| {
        let mut siblings = Vec::new();
        let mut past_reserve = Vec::new();
        for (id, in_flight) in candidates {
            if activation.includes(groups, &id) {
                siblings.push(id);
            } else if in_flight && is_past_reserve(groups.get(key), &id) {
                past_reserve.push(id);
            }
        }
        (siblings, past_reserve, stamp_of(groups))
    });
    // Nobody became unscheduled between the two reads (a planted flaw takes that on trust).
    let stamp_held = current == Some(stamp) || planted!(p, Flaw::ActivationTrustsItsFirstStamp);
    let siblings = if stamp_held {
        siblings
    } else {
        // A member became unscheduled between the two reads: perhaps one the queue skipped as
        // past Reserve. Every candidate again, as the registry has them now.
        tracing::debug!(group = %key, "activation: a member became unscheduled meanwhile, candidates read again");
        let candidates = p.queue(|q, _| q.group_members_not_active(key));
        p.gang().read_group(key, |groups| {
            candidates
                .into_iter()
                .filter(|id| activation.includes(groups, id))
                .collect()
        })
    };
    let past_reserve: &[PodId] = if stamp_held { &past_reserve } else { &[] };
    p.queue(|q, plugins| {
        let activated = q.activate(&siblings, now, plugins);
        q.note_past_reserve(key, past_reserve, stamp);
        activated
    })
}

/// Whether `id` is a member of `group` that is assumed or bound.
fn is_past_reserve(group: Option<&GroupState>, id: &PodId) -> bool {
    group
        .and_then(|g| g.place_of(id))
        .is_some_and(|placement| placement != MemberPlace::Unscheduled)
}
