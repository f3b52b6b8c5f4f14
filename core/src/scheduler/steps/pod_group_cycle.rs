//! The pod-group cycle ([`GangCycle::PodGroup`](super::super::GangCycle::PodGroup),
//! kube-scheduler 1.36's `schedule_one_podgroup.go`), in the steps other threads can see
//! between:
//!
//! 1. [`gather`] — a popped gang member brings its group's queueable unscheduled siblings into
//!    flight with it (`PopSpecificPod`), ordered by priority, then first attempt;
//! 2. [`simulate`] — every member placed in order on one snapshot of the cache, each seeing
//!    the earlier ones' placements, and after each the gang's [`Feasibility`] asked; nothing
//!    real is reserved;
//! 3. [`commit`] — a feasible gang's placed members assumed, reserved and admitted; an
//!    infeasible one handed back whole, each member with its reason.
//!
//! No member of a gang holds a reservation outside one step unless its gang is admitted (I9):
//! Hardened commits and admits in one step; Upstream runs each placed member through its own
//! assume, Reserve and Permit back to back, as `prepareForBindingCycle` does, so the gang's
//! first members wait at Permit only until its last one passes in the same cycle.

use crate::gang::ops::{self, OthersOnSnapshot};
use crate::gang::parts::GangParts;
use crate::gang::{feasible, Feasibility, GANG_SCHEDULING};
use crate::queue::Popped;
use crate::sync::Arc;
use crate::telemetry::{self, ScheduleResult};
use crate::GroupKey;
use crate::{Code, Decision, Mode, PermitPlugins, PluginName, Pod, Status, Time};

#[cfg(feature = "checking")]
use super::super::flaw::Flaw;
use super::super::outcome::fit_error_on_one_node;
use super::super::parts::count;
use super::super::parts::Parts;
use super::super::tally::Counted;
use super::super::{CacheState, CycleOutcome, ResourceFit};
use super::admitted;
use super::cycle::{
    assume_reserve, dropped, hand_back_unfit, permit, record, requeue, unschedulable,
};
use super::member_gone;

/// A pod group's members in flight for one pod-group cycle, in the order they are placed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Gathered {
    /// The group.
    pub group: GroupKey,
    /// Its members, popped: priority first (highest first), then first attempt (earliest
    /// first); ties keep the pop order, the popped pod first.
    pub members: Vec<Popped>,
}

/// What the simulation found for one member.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Trial {
    /// Placed on `node` of the snapshot; `waiting` is its status if its gang is not feasible
    /// (upstream: its Permit's `Wait`).
    Placed {
        /// The node.
        node: Arc<str>,
        /// Why it goes back if the gang does not.
        waiting: Option<Status>,
    },
    /// No node of the snapshot took it, or a Permit plugin refused it there (Hardened): its
    /// status.
    Unfit(Status),
    /// The simulation stopped before it.
    NotTried,
}

/// The gang's verdict after the simulation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GroupVerdict {
    /// The placed members reach quorum: commit them.
    Feasible,
    /// Not in this cycle: every member goes back, with this status for those that have none
    /// of their own.
    Infeasible(Status),
    /// An error (a placement's, the gang plugin's): every member goes back in the error
    /// backoff.
    Error(Status),
}

/// A pod-group cycle's simulation: each member with what was found for it, and the verdict.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Simulation {
    /// The group.
    pub group: GroupKey,
    /// The members in placing order, each with its trial.
    pub members: Vec<(Popped, Trial)>,
    /// The verdict.
    pub verdict: GroupVerdict,
}

/// Upstream's group status when a gang is not feasible (`errPodGroupUnschedulable`).
pub const POD_GROUP_UNSCHEDULABLE: &str = "pod group is unschedulable";

/// The first step of a pod-group cycle for `popped`, a member of `group`: its queueable
/// unscheduled siblings leave the queue into flight with it, in one critical section, and all
/// are ordered for placing. `Err`: the group has no state (upstream's `podGroupInfoForPod`
/// error), and the pod is back in the error backoff.
pub fn gather<P: Parts>(
    p: &mut P,
    popped: Popped,
    group: GroupKey,
    now: Time,
) -> Result<Gathered, CycleOutcome> {
    let id = popped.info.id().clone();
    let unscheduled = p.gang().read_group(&group, |groups| {
        groups.get(&group).map(|s| s.unscheduled_pods())
    });
    let Some(unscheduled) = unscheduled else {
        count(p, Counted::Cycle);
        tracing::debug!(pod = %id, group = %group, "pod group state not found: error backoff");
        let status = Status::with_reason(
            Code::Error,
            format!(
                "error while retrieving pod group state: \
                 pod group state not found for pod group {group}"
            ),
        );
        return Err(unschedulable(p, &id, None, status, now));
    };
    let mut members = vec![popped];
    p.queue(|q, plugins| {
        for pod in unscheduled.iter().filter(|pod| *pod.id() != id) {
            members.extend(q.pop_specific(pod.id(), now, plugins));
        }
    });
    // Upstream sorts with sort.Slice, which is not stable; gangway keeps the pop order among
    // ties, so the popped pod goes first of its rank.
    members.sort_by_key(|m| {
        let info = &m.info;
        (
            std::cmp::Reverse(info.pod().priority()),
            info.initial_attempt(),
        )
    });
    Ok(Gathered { group, members })
}

/// The second step: every member placed in order on one snapshot of the cache (user code, no
/// lock held), each assumed there so the next sees it, and the gang's [`Feasibility`] asked
/// after each. The embedder's Permit plugins are asked about each placed member there, as
/// 1.36's `podGroupPodSchedulingAlgorithm` runs the Permit plugins on each assumed member: a
/// member they refuse is undone and does not count towards quorum. Upstream tries every member
/// and stops only at an error; Hardened also stops as soon as quorum is out of reach. Nothing
/// real changes.
pub fn simulate<P: Parts>(p: &mut P, gathered: Gathered) -> Simulation {
    let Gathered { group, members } = gathered;
    let mut snapshot: CacheState = p.read_cache(CacheState::clone);
    let mut state = p
        .gang()
        .read_group(&group, |groups| groups.get(&group).cloned());
    let rules = p.gang().rules();
    let others = p.permit_plugins();
    let mut verdict = GroupVerdict::Infeasible(Status::unschedulable(POD_GROUP_UNSCHEDULABLE));
    let mut stopped = false;
    let mut trials = Vec::with_capacity(members.len());
    let total = members.len();
    for (i, m) in members.into_iter().enumerate() {
        if stopped {
            trials.push((m, Trial::NotTried));
            continue;
        }
        count(p, Counted::Cycle);
        let pod = m.info.pod().clone();
        let left = total - i - 1;
        let (trial, others_wait) = try_member(p, &mut snapshot, &others, rules.hardened(), &pod);
        match &trial {
            // kube-scheduler's `schedulingAlgorithm` makes `ErrNoNodesAvailable` an
            // UnschedulableAndUnresolvable status: a rejection, the next member tried.
            Trial::Unfit(status)
                if status.code() == Code::Error && status.message() != ResourceFit::NO_NODES =>
            {
                verdict = GroupVerdict::Error(other_pod_failed(status));
                stopped = true;
            }
            Trial::Unfit(_) if rules.hardened() && verdict != GroupVerdict::Feasible => {
                // Hardened: quorum out of reach stops the simulation.
                let answer = feasible::placement_feasible(state.as_ref(), &pod, left, rules);
                if let Feasibility::CannotBeSatisfied(status) = answer {
                    verdict = stop(status);
                    stopped = true;
                }
            }
            Trial::Unfit(_) | Trial::NotTried => {}
            Trial::Placed { .. } => {
                if let Some(s) = state.as_mut() {
                    s.assume(pod.id());
                }
            }
        }
        let Trial::Placed { node, .. } = trial else {
            trials.push((m, trial));
            continue;
        };
        let waiting = match feasible::placement_feasible(state.as_ref(), &pod, left, rules) {
            // Upstream: another plugin's wait makes this member's Permit a wait, not the
            // success that makes the group feasible; a later member's may.
            Feasibility::Satisfied if others_wait.is_some() => others_wait,
            Feasibility::Satisfied => {
                verdict = GroupVerdict::Feasible;
                None
            }
            // The other plugins run after the gang's and the last wait is the status.
            Feasibility::NotYet(status) => others_wait.or(Some(status)),
            Feasibility::CannotBeSatisfied(status) => {
                verdict = stop(status.clone());
                stopped = true;
                Some(status)
            }
        };
        trials.push((m, Trial::Placed { node, waiting }));
    }
    Simulation {
        group,
        members: trials,
        verdict,
    }
}

/// One member on the snapshot: placed (user code), assumed there, and asked about by the
/// embedder's Permit plugins (user code). A refusal is undone on the snapshot; a wait one of
/// them asks (Upstream) comes back beside the trial.
fn try_member<P: Parts>(
    p: &mut P,
    snapshot: &mut CacheState,
    others: &PermitPlugins,
    hardened: bool,
    pod: &Pod,
) -> (Trial, Option<Status>) {
    let node: Arc<str> = match p.place_on(pod, snapshot) {
        Ok(node) => node.into(),
        Err(status) => return (Trial::Unfit(status), None),
    };
    if let Err(e) = snapshot.assume(pod, &node) {
        let status = Status::with_reason(Code::Error, e.to_string());
        return (Trial::Unfit(status), None);
    }
    let others_wait = match ops::others_on_snapshot(others, pod, &node, hardened) {
        OthersOnSnapshot::Allow => None,
        OthersOnSnapshot::Wait(status) => Some(status),
        OthersOnSnapshot::Refuse(status) => {
            snapshot.forget(pod.id());
            return (Trial::Unfit(permit_fit_error(status)), None);
        }
    };
    let trial = Trial::Placed {
        node,
        waiting: None,
    };
    (trial, others_wait)
}

/// A Permit refusal on the snapshot as 1.36's `podGroupPodSchedulingAlgorithm` reports it: a
/// FitError over the one node the member was assumed on ("0/1 nodes are available: 1 <why>."),
/// its plugin still the member's rejector; an error stays itself.
fn permit_fit_error(status: Status) -> Status {
    if !status.is_rejected() {
        return status;
    }
    let wrapped = Status::with_reason(status.code(), fit_error_on_one_node(&status));
    match status.plugin() {
        Some(plugin) => wrapped.with_plugin(plugin.clone()),
        None => wrapped,
    }
}

/// A stop: an error stays one; otherwise the gang is infeasible, and the members still to
/// try are not tried.
fn stop(status: Status) -> GroupVerdict {
    if status.code() == Code::Error {
        GroupVerdict::Error(other_pod_failed(&status))
    } else {
        GroupVerdict::Infeasible(status)
    }
}

/// Upstream's group status when one member's algorithm failed with an error.
fn other_pod_failed(status: &Status) -> Status {
    Status::with_reason(
        Code::Error,
        format!(
            "failed to schedule other pod from a pod group: {}",
            status.message()
        ),
    )
}

/// The last step: a feasible gang's placed members are assumed, reserved and admitted, and
/// its other members go back with their own statuses; an infeasible gang goes back whole with
/// nothing reserved. Returns the group's outcome, each member's inside it.
pub fn commit<P: Parts>(p: &mut P, sim: Simulation, now: Time) -> CycleOutcome {
    let group = sim.group.clone();
    let (status, members) = match (&sim.verdict, p.mode()) {
        (GroupVerdict::Feasible, Mode::Upstream) => {
            (Status::success(), commit_upstream(p, sim, now))
        }
        (GroupVerdict::Feasible, Mode::Hardened) => commit_hardened(p, sim, now),
        (GroupVerdict::Infeasible(status) | GroupVerdict::Error(status), _) => {
            (status.clone(), hand_back_group(p, sim, now))
        }
    };
    CycleOutcome::PodGroup {
        group,
        admitted: status.is_success(),
        status,
        members,
    }
}

/// Upstream: each placed member through `prepareForBindingCycle` in order — its assume,
/// Reserve and Permit (the gang's first members wait until the quorum member allows them) —
/// and each unplaced member back with its own status.
fn commit_upstream<P: Parts>(p: &mut P, sim: Simulation, now: Time) -> Vec<CycleOutcome> {
    let mut outcomes = Vec::with_capacity(sim.members.len());
    for (popped, trial) in sim.members {
        let pod = popped.info.pod().clone();
        let outcome = match trial {
            Trial::Placed { node, .. } => {
                let reserved = p.unobserved(|p| {
                    assume_reserve(p, &pod, &node, now)?;
                    record(p, &pod, node.clone(), now);
                    Ok(())
                });
                match reserved {
                    Err(outcome) => outcome,
                    Ok(()) => permit(p, pod, node, now),
                }
            }
            Trial::Unfit(status) => hand_back_unfit(p, pod, status, now),
            Trial::NotTried => {
                let status = Status::unschedulable(POD_GROUP_UNSCHEDULABLE);
                unschedulable(p, pod.id(), None, status, now)
            }
        };
        outcomes.push(outcome);
    }
    outcomes
}

/// Hardened: in one step, every placed member is assumed, reserved and recorded, and the gang
/// admitted if its quorum still holds on the real state; its binding is given its deadline
/// and its decisions go to the binding cycles. If anything changed since the snapshot — a node
/// gone, a member deleted, the quorum raised — every member is released in the same step and
/// the gang goes back whole.
fn commit_hardened<P: Parts>(p: &mut P, sim: Simulation, now: Time) -> (Status, Vec<CycleOutcome>) {
    let placed: Vec<(Pod, Arc<str>)> = sim
        .members
        .iter()
        .filter_map(|(m, t)| match t {
            Trial::Placed { node, .. } => Some((m.info.pod().clone(), node.clone())),
            _ => None,
        })
        .collect();
    let group = sim.group.clone();
    let deadline = now + p.gang().rules().timeout;
    let admitted: Result<(), Status> = p.unobserved(|p| {
        reserve_all(p, &group, &placed, now)?;
        // One deadline bounds the gang's binding (H3). Admitted and allowed in one critical
        // section, so a release (steps/admitted.rs) finds every member allowed or none; then
        // the quorum is asked again, since a member deleted (or the minimum raised) between
        // reserve_all's check and the admission found nothing admitted to release.
        p.driver(|d| {
            d.admit_group(
                group.clone(),
                placed.iter().map(|(pod, _)| pod.id().clone()),
                deadline,
            );
            for (pod, _) in &placed {
                d.decision_delivered(Decision::allowed(pod.clone()), false);
            }
        });
        admitted::release_if_short(
            p,
            &group,
            "a member left or its minCount rose as it was admitted",
        );
        Ok(())
    });
    if let Err(status) = admitted {
        let verdict = match status.code() {
            Code::Error => GroupVerdict::Error(status.clone()),
            _ => GroupVerdict::Infeasible(status.clone()),
        };
        let sim = Simulation { verdict, ..sim };
        return (status, hand_back_group(p, sim, now));
    }
    let mut outcomes = Vec::with_capacity(sim.members.len());
    for (popped, trial) in sim.members {
        let pod = popped.info.pod().clone();
        outcomes.push(match trial {
            Trial::Placed { node, .. } => CycleOutcome::Allowed {
                pod: pod.id().clone(),
                node: node.to_string(),
            },
            Trial::Unfit(status) => hand_back_unfit(p, pod, status, now),
            Trial::NotTried => unreachable_not_tried(p, &pod, now),
        });
    }
    // The members' `scheduled` attempts are counted as they bind.
    telemetry::pod_group_schedule_attempt(ScheduleResult::Scheduled);
    (Status::success(), outcomes)
}

/// A feasible simulation tries every member; were one left untried, it goes back as an error.
fn unreachable_not_tried<P: Parts>(p: &mut P, pod: &Pod, now: Time) -> CycleOutcome {
    let status = Status::unschedulable(POD_GROUP_UNSCHEDULABLE);
    unschedulable(p, pod.id(), None, status, now)
}

/// Hardened commit, one step: assume, reserve and record every placed member, then check the
/// gang's quorum on the real state. `Err`: why not, with everything undone.
fn reserve_all<P: Parts>(
    p: &mut P,
    group: &GroupKey,
    placed: &[(Pod, Arc<str>)],
    now: Time,
) -> Result<(), Status> {
    let mut done: Vec<&Pod> = Vec::with_capacity(placed.len());
    let mut failure = None;
    for (pod, node) in placed {
        if let Err(e) = p.cache(|c| c.assume(pod, node)) {
            tracing::debug!(pod = %pod.id(), group = %group, error = %e, "commit: assume failed");
            // An error, not a plugin's verdict (as the scheduling cycle's own assume): the
            // gang backs off as after an error, so no event has to wake it — the node that
            // left may be the only news (shuttle_step_races).
            failure = Some(Status::with_reason(Code::Error, e.to_string()));
            break;
        }
        if let Err(e) = ops::reserve(p.gang(), pod) {
            tracing::debug!(pod = %pod.id(), group = %group, error = %e, "commit: reserve failed");
            p.cache(|c| c.forget(pod.id()));
            // A member the snapshot placed that its group no longer holds unscheduled (deleted
            // as the cycle ran): the snapshot is stale, not the gang infeasible. An error, as
            // above: the gang backs off and is tried again. Rejected by the gang plugin, its
            // members parked, each waiting for an event a delete does not give — a member the
            // placement turned away for room its siblings took on the snapshot waited for the
            // leftover flush with that room free (found by the scheduler_events fuzz target's
            // judgement at rest).
            failure = Some(Status::with_reason(Code::Error, e.to_string()));
            break;
        }
        p.driver(|d| d.record(pod, node.clone(), now));
        done.push(pod);
    }
    if failure.is_none() && planted!(p, Flaw::CommitTrustsTheSnapshot) {
        return Ok(());
    }
    if failure.is_none() {
        let rules = p.gang().rules();
        let last = done.last().copied();
        let answer = last.map(|pod| {
            p.gang().read_group(group, |groups| {
                feasible::placement_feasible(groups.get(group), pod, 0, rules)
            })
        });
        match answer {
            Some(Feasibility::Satisfied) => return Ok(()),
            Some(Feasibility::NotYet(status) | Feasibility::CannotBeSatisfied(status)) => {
                tracing::debug!(group = %group, reason = status.message(), "commit: quorum lost since the snapshot");
                failure = Some(status)
            }
            None => failure = Some(Status::unschedulable(POD_GROUP_UNSCHEDULABLE)),
        }
    }
    for pod in done {
        p.driver(|d| d.finish(pod.id()));
        ops::unreserve(p.gang(), pod);
        p.cache(|c| c.forget(pod.id()));
    }
    Err(failure.unwrap_or_else(|| Status::unschedulable(POD_GROUP_UNSCHEDULABLE)))
}

/// A gang not admitted goes back whole, nothing reserved. Upstream: each member through the
/// failure handler — a placed member unschedulable with its Permit message and no rejecting
/// plugin (so the error backoff, as `errPodGroupUnschedulable` gives), an unplaced one with its
/// own status, every member with the error after an error. Hardened: together, with one
/// backoff (H2), a placed member rejected by the gang plugin.
fn hand_back_group<P: Parts>(p: &mut P, sim: Simulation, now: Time) -> Vec<CycleOutcome> {
    let error = match &sim.verdict {
        GroupVerdict::Error(status) => Some(status.clone()),
        _ => None,
    };
    let group_status = match &sim.verdict {
        GroupVerdict::Infeasible(status) | GroupVerdict::Error(status) => status.clone(),
        GroupVerdict::Feasible => Status::unschedulable(POD_GROUP_UNSCHEDULABLE),
    };
    let mut back: Vec<(Pod, Status, Option<PluginName>)> = Vec::with_capacity(sim.members.len());
    for (popped, trial) in sim.members {
        let pod = popped.info.pod().clone();
        let (status, rejector) = match (trial, &error) {
            // Its own error (kube-scheduler's `ErrNoNodesAvailable` included, which the failure
            // handler leaves with no rejecting plugin): the error backoff.
            (Trial::Unfit(status), _) if status.code() == Code::Error => (status, None),
            (_, Some(error)) => (error.clone(), None),
            (Trial::Placed { waiting, .. }, None) if p.mode() == Mode::Upstream => {
                // `NewStatus(Unschedulable, permitStatus.Message()).WithError(
                // errPodGroupUnschedulable)`: the error's text first in the message.
                let permit = waiting.map(|w| w.message()).unwrap_or_default();
                let status = Status::unschedulable(format!("{POD_GROUP_UNSCHEDULABLE}, {permit}"));
                (status, None)
            }
            (Trial::Placed { waiting, .. }, None) => {
                let status = waiting.unwrap_or_else(|| group_status.clone());
                (status, Some(GANG_SCHEDULING))
            }
            (Trial::Unfit(status), None) => {
                let rejector = status
                    .plugin()
                    .cloned()
                    .unwrap_or(ResourceFit::PLUGIN.into());
                (status, Some(rejector))
            }
            (Trial::NotTried, None) => {
                let rejector = (p.mode() == Mode::Hardened).then_some(GANG_SCHEDULING);
                (group_status.clone(), rejector)
            }
        };
        // Each member's failure is a pod's attempt (kube-scheduler's FailureHandler per pod),
        // the group's a pod group's attempt.
        telemetry::schedule_attempt(super::binding::attempt_result(&status));
        back.push((pod, status, rejector));
        count(p, Counted::Unschedulable);
    }
    telemetry::pod_group_schedule_attempt(if error.is_some() {
        ScheduleResult::Error
    } else {
        ScheduleResult::Unschedulable
    });
    tracing::debug!(
        group = %sim.group,
        members = back.len(),
        reason = group_status.message(),
        "pod group not admitted"
    );
    // Whether each member went back; one deleted while the cycle ran is gone (dropped).
    let went_back: Vec<bool> = if p.mode() == Mode::Hardened {
        let members: Vec<_> = back
            .iter()
            .map(|(pod, _, rejector)| (pod.id().clone(), rejector.clone()))
            .collect();
        // Every member is in flight until handed back. One deleted as the cycle ran may have
        // taken, on the snapshot, the room a sibling was turned away for: the members parked
        // are asked again in the same critical section (`member_gone.rs`).
        let group = &sim.group;
        let places = p.queue(|q, plugins| {
            let places = q.hand_back_gang(&members, now, plugins)?;
            if places.iter().any(Option::is_none) {
                member_gone::activate_parked_members(q, plugins, group, now);
            }
            Ok::<_, crate::queue::HandBackError>(places)
        });
        match places {
            Ok(places) => places.iter().map(Option::is_some).collect(),
            Err(_) => vec![true; back.len()],
        }
    } else {
        back.iter()
            .map(|(pod, _, rejector)| requeue(p, pod.id(), rejector.clone(), now))
            .collect()
    };
    back.into_iter()
        .zip(went_back)
        .map(|((pod, status, _), back)| match back {
            true => CycleOutcome::Unschedulable {
                pod: pod.id().clone(),
                status,
            },
            false => dropped(p, pod.id()),
        })
        .collect()
}
