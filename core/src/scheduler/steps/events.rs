//! Cluster events, in upstream's order — the group registry, then the cache, then the queue —
//! each followed by the move-all it announces. A bound pod's arrival is the one exception: the
//! cache first, where its node is found (`bound_pod_added`).

use crate::gang::ops;
use crate::gang::parts::GangParts;
use crate::queue::ClusterEvent;
use crate::{GangCycle, GroupKey, Mode, Pod, PodGroup, PodId, Time};

#[cfg(feature = "checking")]
use super::super::flaw::Flaw;
use super::super::jobs::JobQueue;
use super::super::parts::Parts;
use super::super::{
    AddGroupError, AddNodeError, AddPodError, DeleteGroupError, DeletePodError, Node, PodPhase,
    RemoveNodeError, UpdateGroupError, UpdateNodeError, UpdatePodError,
};
use super::admitted;
use super::member_gone;

/// A cluster event through the queue's move-all, skipping the pods `precheck` refuses; returns
/// how many pods moved.
pub fn announce<P: Parts>(
    p: &mut P,
    event: ClusterEvent,
    precheck: Option<&dyn Fn(&crate::QueuedPodInfo) -> bool>,
    now: Time,
) -> usize {
    let kind = event.kind();
    let moved = p
        .queue(|queue, plugins| queue.move_all_to_active_or_backoff(event, precheck, now, plugins));
    if moved > 0 {
        tracing::debug!(event = ?kind, moved, "queue: moved to active or backoff");
    } else {
        tracing::trace!(event = ?kind, "queue: nothing to move");
    }
    moved
}

/// A pod was created (or first seen). Unbound: the group registry learns it, then the queue
/// (gated by PreEnqueue if its gang is incomplete), and its gated siblings are asked again.
/// Bound (it names a node): the cache reserves its resources and the registry counts it
/// assigned, in one step the scheduler's check never sees half done. Refused before anything
/// changes.
pub fn pod_added<P: Parts>(p: &mut P, pod: Pod, now: Time) -> Result<(), AddPodError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(AddPodError::ShutDown(pod));
    }
    let known = p.read_queue(|q| q.place(pod.id()).is_some())
        || p.read_cache(|c| c.phase(pod.id()).is_some());
    if known {
        return Err(AddPodError::AlreadyKnown(pod));
    }
    if pod.node().is_some() {
        return p.unobserved(|p| bound_pod_added(p, pod, now));
    }
    ops::pod_added(p.gang(), pod.clone(), false)?;
    p.queue(|q, plugins| q.add(pod.clone(), now, plugins))?;
    if !planted!(p, Flaw::ArrivalSkipsMoveEvent) {
        announce(p, ClusterEvent::UnscheduledPodAdd(pod), None, now);
    }
    Ok(())
}

/// [`pod_added`] for a pod that names a node: the cache takes it first, in the one critical
/// section that also finds its node and that the pod is new there — a node the informer deletes concurrently is either gone
/// before (the pod refused, nothing changed) or after (the pod on it, as on any node that
/// leaves). Checked in a read and added in a second section, a delete in between panicked the
/// informer's thread with the registry already counting the pod (shuttle_step_races,
/// `a_bound_pod_arrives_as_its_node_leaves`). Then the registry: a refusal there undoes the
/// cache's add (and announces the room it held a moment, I7).
fn bound_pod_added<P: Parts>(p: &mut P, pod: Pod, now: Time) -> Result<(), AddPodError> {
    // New to the cache, in the same section: an undo below removes only what this call added.
    let added = p.cache(|c| match c.phase(pod.id()) {
        Some(_) => Ok(false),
        None => c.add_bound(&pod).map(|()| true),
    });
    match added {
        Ok(true) => {}
        Ok(false) => return Err(AddPodError::AlreadyKnown(pod)),
        Err(e) => {
            tracing::debug!(pod = %pod.id(), error = %e, "bound pod refused: its node is unknown");
            let node = pod.node().unwrap_or_default().to_owned();
            return Err(AddPodError::UnknownNode { pod, node });
        }
    }
    if let Err(e) = ops::pod_added(p.gang(), pod.clone(), true) {
        tracing::debug!(pod = %pod.id(), error = %e, "bound pod refused by its group, undone");
        p.cache(|c| c.remove_pod(pod.id()));
        announce(p, ClusterEvent::AssignedPodDelete(pod), None, now);
        return Err(e.into());
    }
    announce(p, ClusterEvent::AssignedPodAdd(pod), None, now);
    Ok(())
}

/// A pod's object changed. Newly naming a node: the binding is observed (the cache and
/// registry count it bound, the queue forgets it) and announced. Otherwise the registry and
/// the queue see the new object.
pub fn pod_updated<P: Parts>(
    p: &mut P,
    old: Pod,
    new: Pod,
    now: Time,
) -> Result<(), UpdatePodError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(UpdatePodError::ShutDown(new));
    }
    if let (Some(node), None) = (new.node(), old.node()) {
        // The node found and the pod added in one critical section (see `bound_pod_added`).
        if let Err(e) = p.cache(|c| c.add_bound(&new)) {
            tracing::debug!(pod = %new.id(), error = %e, "binding observed on an unknown node, refused");
            let node = node.to_owned();
            return Err(UpdatePodError::UnknownNode { pod: new, node });
        }
        ops::pod_bound(p.gang(), &new);
        if p.read_queue(|q| q.place(new.id()).is_some()) {
            p.queue(|q, _| q.delete(new.id()));
        }
        announce(p, ClusterEvent::AssignedPodAdd(new), None, now);
        return Ok(());
    }
    ops::pod_updated(p.gang(), new.clone());
    if new.node().is_none() && p.read_queue(|q| q.place(new.id()).is_some()) {
        p.queue(|q, plugins| q.update(old, new, now, plugins));
    }
    Ok(())
}

/// A pod was deleted. It leaves its group (Hardened: a waiting gang attempt fails whole, H1)
/// and the queue. A pod in binding is marked deleted and its waiting entry, if any, removed, so
/// that its binding cycle releases the reservation and does not bring it back (I6); a bound
/// pod's resources are freed and announced at once. `Ok(false)`: the pod was unknown (no-op).
pub fn pod_deleted<P: Parts>(p: &mut P, pod: &Pod, now: Time) -> Result<bool, DeletePodError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(DeletePodError::ShutDown);
    }
    // The member leaves its group and, if that leaves a gang admitted by the pod-group cycle
    // short of quorum, the gang's members still waiting to bind are released (Hardened), in
    // one step no check sees half done.
    p.unobserved(|p| {
        let known = remove_pod(p, pod, now);
        if let Some(group) = pod.group_key() {
            let why = format!("{} was deleted", pod.full_name());
            admitted::release_if_short(p, group, &why);
        }
        Ok(known)
    })
}

/// [`pod_deleted`]'s removal from the group, the queue, the driver and the cache.
fn remove_pod<P: Parts>(p: &mut P, pod: &Pod, now: Time) -> bool {
    let id = pod.id();
    let member = ops::pod_deleted(p.gang(), pod).is_some();
    // Each change below is looked for first: a no-op leaves the part as it was. Hardened
    // pod-group cycle: a member leaving unscheduled asks its parked siblings again, in the
    // same critical section (`member_gone.rs`).
    let reask = member && p.mode() == Mode::Hardened && p.gang_cycle() == GangCycle::PodGroup;
    let queued = p.read_queue(|q| q.place(id).is_some())
        && p.queue(|q, plugins| {
            let deleted = q.delete(id);
            if let Some(key) = pod.group_key().filter(|_| deleted && reask) {
                member_gone::activate_parked_members(q, plugins, key, now);
            }
            deleted
        });
    let in_binding =
        p.read_driver(|d| d.assignment(id).is_some()) && p.driver(|d| d.mark_deleted(id));
    if in_binding {
        // Observed bound before its binding cycle ended (its binding seen by the informer:
        // another scheduler's, or an earlier run's), it is no longer assumed, and its binding
        // cycle frees only an assumed pod: its room is freed and announced here, in both modes,
        // as kube-scheduler's delete removes a pod its cache holds confirmed (found by
        // triaging the steps' mutants: the cycle found nothing to forget, and the room was
        // held for ever).
        if p.read_cache(|c| c.phase(id) == Some(PodPhase::Bound))
            && p.cache(|c| c.remove_pod(id)).is_some()
        {
            tracing::debug!(pod = %id, "deleted in binding, observed bound: room freed");
            announce(p, ClusterEvent::AssignedPodDelete(pod.clone()), None, now);
        }
        // Its binding cycle (running, or started by its Permit decision) cleans up; make sure
        // a decision comes if it is still waiting (upstream's `RejectWaitingPod`).
        // (A planted DeleteLeavesPodWaiting leaves it waiting, its room held, as the bug did.)
        let waited = planted!(p, Flaw::DeleteLeavesPodWaiting) || p.gang().remove_waiting(id);
        // Upstream, a pod not waiting at Permit has its room freed now and announced, as
        // kube-scheduler's handleAssumedPodDeletion forgets a deleted assumed pod that is not
        // in its waiting map: one whose binding cycle is under way (past Permit, its bind may
        // take long), or one whose scheduling cycle has not reached Permit yet (no decision,
        // not waiting) — whose Permit may still make it wait, without its room, as upstream's
        // does (found by the scheduler_events fuzz target's split cycles: it held its room
        // until its timeout). The cycle's end then frees and announces nothing more. Hardened
        // keeps the room until the cycle ends, so the cache and the driver release it in one
        // step (its Permit rejects a member deleted before it).
        if p.mode() == Mode::Upstream && !waited {
            let (claimed, decided) = p.read_driver(|d| {
                let claimed = d.assignment(id).is_some_and(|a| a.claimed);
                (claimed, d.jobs().jobs().any(|j| j.decision.pod.id() == id))
            });
            if (claimed || !decided) && p.cache(|c| c.forget(id)).is_some() {
                tracing::debug!(pod = %id, claimed, "deleted while assumed, not waiting: room freed");
                announce(p, ClusterEvent::AssignedPodDelete(pod.clone()), None, now);
            }
        }
        return true;
    }
    let removed = if p.read_cache(|c| c.phase(id).is_some()) {
        p.cache(|c| c.remove_pod(id))
    } else {
        None
    };
    if removed.is_some() {
        announce(p, ClusterEvent::AssignedPodDelete(pod.clone()), None, now);
    }
    member || queued || removed.is_some()
}

/// A PodGroup object was created; its gated members are asked again.
pub fn group_added<P: Parts>(p: &mut P, group: PodGroup, now: Time) -> Result<(), AddGroupError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(AddGroupError::ShutDown(group));
    }
    // A PodGroup deleted and created again with a higher minimum leaves a gang the pod-group
    // cycle admitted under the old one short of quorum while it binds: released (Hardened) in
    // the same step, as a raised minimum is (found by the scheduler_events fuzz target).
    let key = group.key().clone();
    p.unobserved(|p| {
        ops::group_added(p.gang(), group.clone())?;
        admitted::release_if_short(
            p,
            &key,
            "its PodGroup was created again with a higher minCount",
        );
        Ok::<_, AddGroupError>(())
    })?;
    announce(p, ClusterEvent::PodGroupAdd(group), None, now);
    Ok(())
}

/// A PodGroup object changed (e.g. its min count): the registry first, then the event through
/// the queue's move-all. Nothing re-runs Permit: members waiting under the old count wait for
/// the next member's Permit or their deadline.
pub fn group_updated<P: Parts>(
    p: &mut P,
    group: PodGroup,
    now: Time,
) -> Result<(), UpdateGroupError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(UpdateGroupError::ShutDown(group));
    }
    // A raised minimum can leave a gang admitted by the pod-group cycle short of quorum while
    // it binds: its members still waiting to bind are released (Hardened), in the same step.
    let key = group.key().clone();
    let old = p.unobserved(|p| {
        let old = ops::group_updated(p.gang(), group.clone())?;
        admitted::release_if_short(p, &key, "its minCount was raised");
        Ok::<_, UpdateGroupError>(old)
    })?;
    announce(
        p,
        ClusterEvent::PodGroupUpdate { old, new: group },
        None,
        now,
    );
    Ok(())
}

/// A PodGroup object was deleted; `Ok(false)` if it did not exist. Its members stay, gated
/// until it comes back.
pub fn group_deleted<P: Parts>(p: &mut P, key: &GroupKey) -> Result<bool, DeleteGroupError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(DeleteGroupError::ShutDown(key.clone()));
    }
    Ok(ops::group_deleted(p.gang(), key).is_some())
}

/// A node joined: pods that found no room are asked again.
pub fn node_added<P: Parts>(p: &mut P, node: Node, now: Time) -> Result<(), AddNodeError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(AddNodeError::ShutDown(node));
    }
    let name = node.name().to_owned();
    p.cache(|c| c.add_node(node))?;
    announce(p, ClusterEvent::NodeAdd(name.as_str().into()), None, now);
    Ok(())
}

/// A node changed (its capacity, labels or taints; cordoned or uncordoned): the cache takes
/// the new node, keeping its pods, and — if anything changed — the update is announced, so
/// pods that found no room, no matching node or only untolerated taints are asked again (I7).
/// `Ok(false)`: nothing changed (an informer's resync).
pub fn node_updated<P: Parts>(p: &mut P, node: Node, now: Time) -> Result<bool, UpdateNodeError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(UpdateNodeError::ShutDown(node));
    }
    let name = node.name().to_owned();
    let changed = p.cache(|c| c.update_node(node))?;
    if changed {
        announce(p, ClusterEvent::NodeUpdate(name.as_str().into()), None, now);
    }
    Ok(changed)
}

/// A node left (see [`CacheState::remove_node`](super::super::CacheState::remove_node)): the
/// pods on it are returned and stay in the cache until their own deletes come; `NodeDelete`
/// is announced.
pub fn node_deleted<P: Parts>(
    p: &mut P,
    name: &str,
    now: Time,
) -> Result<Vec<PodId>, RemoveNodeError> {
    if p.read_driver(|d| d.is_shut_down()) {
        return Err(RemoveNodeError::ShutDown(name.to_owned()));
    }
    let on_it = p.cache(|c| c.remove_node(name))?;
    // Announced as kube-scheduler's deleteNodeFromCache does (before its cache forgets the
    // node; no pod can be placed there either way).
    announce(p, ClusterEvent::NodeDelete(name.to_owned()), None, now);
    Ok(on_it)
}
