//! The siblings a gang member's Permit activates.

use super::{Groups, MemberPlace};

use crate::GroupKey;
use crate::{Pod, PodId};

/// The unscheduled siblings a Permit outcome asks the queue to activate (upstream's gang
/// plugin activates its gang's unscheduled members whenever one of them waits, so they are
/// tried soon). It names the gang, not the pods: listing them at every Permit cost a gang of
/// *n* members *n*²/2 pod copies — a gang of 100,000 took 420 s to set up (issue #23). They are
/// listed when the activation is carried out, as the registry has them then: by the scheduler
/// against its queue, which visits only the members not already active
/// ([`QueueState::group_members_not_active`](crate::queue::QueueState::group_members_not_active))
/// and, once it has found members in flight past Reserve, skips them until one of the gang's
/// members becomes unscheduled again (so a Permit barrier's *k*-th member does not look at the
/// *k* − 1 waiting before it), or by [`pods`](Activation::pods).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Activation(Option<GroupKey>);

impl Activation {
    /// Nobody to activate.
    pub const NONE: Activation = Activation(None);

    /// The unscheduled members of group `key`, if it has `unscheduled` of them; otherwise
    /// [`NONE`](Activation::NONE).
    pub(crate) fn of_group(key: &GroupKey, unscheduled: usize) -> Activation {
        Activation((unscheduled > 0).then(|| key.clone()))
    }

    /// Whether nobody is to be activated (the gang had no unscheduled member).
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The group whose unscheduled members are activated.
    pub fn group(&self) -> Option<&GroupKey> {
        self.0.as_ref()
    }

    /// Whether pod `id` is one of the members activated, as `groups` has them now.
    pub fn includes(&self, groups: &Groups, id: &PodId) -> bool {
        self.0
            .as_ref()
            .and_then(|key| groups.get(key))
            .is_some_and(|state| state.place_of(id) == Some(MemberPlace::Unscheduled))
    }

    /// The members activated, in pod id order, as `groups` has them now: the group's
    /// unscheduled members (right after the Permit, the list upstream's plugin activates).
    pub fn pods(&self, groups: &Groups) -> Vec<Pod> {
        self.0
            .as_ref()
            .and_then(|key| groups.get(key))
            .map_or_else(Vec::new, |state| state.unscheduled_pods())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gang with no unscheduled member activates nobody, one with some names its group
    /// (`Activation::of_group`, `is_empty`, `group`: the mutants of 2026-12-07's gang/ run that
    /// made `is_empty` a constant or counted zero members as some went unnoticed).
    #[test]
    fn an_activation_names_its_group_only_if_a_member_is_unscheduled() {
        let key = GroupKey::new("ml", "g");
        assert!(Activation::NONE.is_empty());
        assert_eq!(Activation::NONE.group(), None);
        let none = Activation::of_group(&key, 0);
        assert!(none.is_empty());
        assert_eq!(none, Activation::NONE);
        let some = Activation::of_group(&key, 1);
        assert!(!some.is_empty());
        assert_eq!(some.group(), Some(&key));
    }
}
