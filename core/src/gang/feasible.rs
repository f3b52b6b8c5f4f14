//! The pod-group cycle's question after each member it places on its snapshot: can the gang
//! go ahead (kube-scheduler 1.36 asks the gang plugin's Permit on the snapshot; 1.37 names
//! the question `PlacementFeasible`). The answer is the gang plugin's own quorum rule
//! (`decide.rs`) over the snapshot's copy of the group, so the cycle decides as Permit would.

use super::decide::{quorum, GangRules, Unquorate};
use super::{GroupState, Permit, GANG_SCHEDULING};
use crate::{Pod, Status};

/// What the simulation of a pod-group cycle says after placing a member.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Feasibility {
    /// The placed members reach the gang's quorum (or the group is no gang): the cycle may
    /// commit them.
    Satisfied,
    /// Not yet: more members must be placed. The status is what the member reports if the
    /// cycle ends here (upstream: its Permit's `Wait` message, as unschedulable).
    NotYet(Status),
    /// The gang cannot go ahead in this cycle: stop placing (an error from the plugin as
    /// upstream; Hardened also stops once too few members are left to reach quorum).
    CannotBeSatisfied(Status),
}

/// The answer for `pod`, just placed on the snapshot whose copy of its group is `state` (the
/// placed members assumed there), with `left` members of the cycle still to place. Upstream
/// answers as its Permit does on the snapshot, and tries every member whatever the count;
/// Hardened stops as soon as the members left cannot make up the quorum (I9: nothing is
/// reserved for a gang that cannot be admitted, and no time is spent placing it).
pub fn placement_feasible(
    state: Option<&GroupState>,
    pod: &Pod,
    left: usize,
    rules: GangRules,
) -> Feasibility {
    match quorum(state, pod) {
        Err(Unquorate::Reject(status)) => Feasibility::CannotBeSatisfied(status),
        Err(Unquorate::NotAGang) | Ok((_, true)) => Feasibility::Satisfied,
        Ok((state, false)) => {
            let min = state.min_count().unwrap_or(0) as usize;
            let reachable = state.scheduled_pods_count() + left;
            if rules.hardened() && reachable < min {
                return Feasibility::CannotBeSatisfied(too_few(state, reachable, min));
            }
            Feasibility::NotYet(Status::unschedulable(
                Permit::<()>::gang_wait_status().message(),
            ))
        }
    }
}

/// Hardened: the gang's status when the members left cannot reach its quorum.
fn too_few(state: &GroupState, reachable: usize, min: usize) -> Status {
    Status::unschedulable(format!(
        "pod group {} can place at most {reachable} of its minCount {min} pods in this cycle",
        state.key()
    ))
    .with_plugin(GANG_SCHEDULING)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{Code, Mode, PodId};
    use crate::{GroupKey, PodGroup, Policy};

    fn gang(min_count: u32, members: usize) -> (GroupState, Vec<Pod>) {
        let mut state = GroupState::new(GroupKey::new("ml", "g"));
        let group = PodGroup::new("ml", "g", Policy::Gang { min_count }).unwrap();
        state.set_group(Some(group)).unwrap();
        let pods: Vec<Pod> = (0..members)
            .map(|i| Pod::new(format!("p{i}"), "ml", &format!("p{i}")).with_group("g"))
            .collect();
        for pod in &pods {
            state.add_pod(pod.clone(), false).unwrap();
        }
        (state, pods)
    }

    fn rules(mode: Mode) -> GangRules {
        GangRules::new(mode, Duration::from_secs(300))
    }

    #[test]
    fn the_quorum_placed_on_the_snapshot_is_satisfied() {
        let (mut state, pods) = gang(2, 3);
        state.assume(pods[0].id());
        let first = placement_feasible(Some(&state), &pods[0], 2, rules(Mode::Upstream));
        let Feasibility::NotYet(status) = first else {
            panic!("one of two is not a quorum: {first:?}");
        };
        assert_eq!(
            status.message(),
            "waiting for minCount pods from a gang to be scheduled, \
             one or more plugins asked to wait and no plugin rejected pod"
        );
        state.assume(pods[1].id());
        for mode in [Mode::Upstream, Mode::Hardened] {
            let second = placement_feasible(Some(&state), &pods[1], 1, rules(mode));
            assert_eq!(second, Feasibility::Satisfied);
        }
    }

    #[test]
    fn hardened_stops_when_the_members_left_cannot_reach_quorum() {
        let (mut state, pods) = gang(3, 3);
        state.assume(pods[0].id());
        // Two placed at most, of three needed: the second member did not fit, one is left.
        let upstream = placement_feasible(Some(&state), &pods[0], 1, rules(Mode::Upstream));
        assert!(matches!(upstream, Feasibility::NotYet(_)));
        let hardened = placement_feasible(Some(&state), &pods[0], 1, rules(Mode::Hardened));
        let Feasibility::CannotBeSatisfied(status) = hardened else {
            panic!("{hardened:?}");
        };
        assert_eq!(
            status.message(),
            "pod group ml/g can place at most 2 of its minCount 3 pods in this cycle"
        );
    }

    #[test]
    fn a_pod_without_its_group_state_cannot_be_satisfied_as_upstream_errs() {
        let pod = Pod::new(PodId::new("x"), "ml", "x").with_group("g");
        let answer = placement_feasible(None, &pod, 0, rules(Mode::Upstream));
        let Feasibility::CannotBeSatisfied(status) = answer else {
            panic!("{answer:?}");
        };
        assert_eq!(status.code(), Code::Error);
        assert_eq!(
            status.message(),
            "running Permit plugin \"GangScheduling\": pod group state not found for pod group ml/g"
        );
    }
}
