//! Renaming the gang states' pods, for symmetry reduction ([`crate::symmetry`]).

use super::group_state::Member;
use super::{GangAttempt, GroupState, Groups};
use crate::symmetry::{relabel_pod_group, Relabel, Renamed};

/// The attempt with its waiting members renamed; its deadline and failure reason kept.
impl Renamed for GangAttempt {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> GangAttempt {
        GangAttempt {
            deadline: self.deadline,
            waiting: self.waiting.renamed(renaming),
            failure: self.failure.clone(),
        }
    }
}

/// The member's pod renamed; its place and mark kept.
impl Renamed for Member {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> Member {
        Member {
            pod: Renamed::renamed(&self.pod, renaming),
            placement: self.placement,
            waited_for_others: self.waited_for_others,
        }
    }
}

/// The group with every member renamed in its pods, its partition (I5) and its attempt.
impl Renamed for GroupState {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> GroupState {
        GroupState {
            key: renaming.group_key(&self.key),
            group: self.group.as_ref().map(|g| relabel_pod_group(g, renaming)),
            members: self.members.renamed(renaming),
            counts: self.counts,
            attempt: self.attempt.renamed(renaming),
        }
    }
}

/// Every group renamed; the groups keep their keys (copied by a relabeling that copies keys),
/// and so do the live attempts' deadlines in the index.
impl Renamed for Groups {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> Groups {
        Groups {
            states: self
                .states
                .iter()
                .map(|(key, state)| (renaming.group_key(key), state.renamed(renaming)))
                .collect(),
            deadlines: self
                .deadlines
                .iter()
                .map(|(deadline, key)| (*deadline, renaming.group_key(key)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::symmetry::PodRenaming;
    use crate::PodGroup;
    use crate::{Pod, PodId, Time};

    fn pods() -> Vec<Pod> {
        (0..3)
            .map(|i| Pod::new(format!("a-{i}"), "ns", &format!("a-{i}")).with_group("a"))
            .collect()
    }

    /// A rotation a-0 → a-1 → a-2 → a-0.
    fn rotation(pods: &[Pod]) -> PodRenaming {
        let n = pods.len();
        PodRenaming::new((0..n).map(|i| (pods[i].id().clone(), pods[(i + 1) % n].clone()))).unwrap()
    }

    /// Every kind of member (unscheduled, assumed, assigned, waiting in a failed attempt),
    /// built from `order`: the same steps on renamed pods must give the renamed state.
    fn groups_after_steps(order: &[Pod]) -> Groups {
        let mut groups = Groups::new();
        groups
            .add_group(PodGroup::gang("ns", "a", 3).unwrap())
            .unwrap();
        for pod in order {
            groups.add_pod(pod.clone(), false).unwrap();
        }
        groups.assume(&order[0]).unwrap();
        groups.assume(&order[1]).unwrap();
        let timeout = Duration::from_secs(300);
        groups.change_of(&order[0], |s| {
            s.wait_in_attempt(order[0].id(), Time::ZERO, timeout)
        });
        groups.bind_observed(&order[1]);
        groups
    }

    #[test]
    fn renaming_commutes_with_every_transition() {
        let pods = pods();
        let g = rotation(&pods);
        let images: Vec<Pod> = pods.iter().map(|p| g.pod(p)).collect();
        let renamed = groups_after_steps(&pods).renamed(&g);
        assert_eq!(renamed, groups_after_steps(&images));
        renamed.check().unwrap();
        let state = renamed
            .get(&crate::GroupKey::of(&pods[0]).unwrap())
            .unwrap();
        assert_eq!(
            state.attempt().unwrap().waiting(),
            &[PodId::from("a-1")].into()
        );
    }

    #[test]
    fn renaming_back_and_identity_change_nothing() {
        let pods = pods();
        let g = rotation(&pods);
        let back = PodRenaming::new(pods.iter().map(|p| (g.id(p.id()), p.clone()))).unwrap();
        let groups = groups_after_steps(&pods);
        assert_ne!(groups.renamed(&g), groups);
        assert_eq!(groups.renamed(&g).renamed(&back), groups);
        assert_eq!(groups.renamed(&PodRenaming::identity()), groups);
    }
}
