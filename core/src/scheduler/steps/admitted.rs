//! Hardened: a gang the pod-group cycle admitted, while its members bind. Its admission was
//! all or nothing (I9), and its binding keeps that: one deadline bounds it (H3), and a gang
//! that can no longer reach its quorum — a member's bind failed, a member was deleted, its
//! minimum was raised — releases the members whose binding has not begun, so no reservation
//! is held for a gang that cannot complete this attempt. The members already bound stay bound
//! (they count towards the next attempt's quorum); a bind under way is the binder's to end.
//!
//! A release replaces each such member's allowed decision by a rejection ([`Cause::GangFailed`]
//! for a gang left short, [`Cause::TimedOut`] for the deadline), so the first of their binding
//! cycles hands them back together with one backoff (H2) and each gets its
//! [`PodOutcome::Rejected`](super::super::PodOutcome::Rejected). Their group stops counting
//! them at once (unreserved), so no pod-group cycle in between admits the gang's next attempt
//! on members about to leave; their nodes are freed by those binding cycles.

use crate::gang::ops;
use crate::gang::parts::GangParts;
use crate::gang::GANG_SCHEDULING;
use crate::GroupKey;
use crate::{Cause, Pod, Status, Time};

#[cfg(feature = "checking")]
use super::super::flaw::Flaw;
use super::super::parts::Parts;

/// Hardened: if `group`, admitted and binding, can no longer reach its quorum — `why` says
/// what happened — its members whose binding has not begun are released (see the module
/// docs). Returns them. Call it in the same unobserved step as the change that left the gang
/// short.
pub(super) fn release_if_short<P: Parts>(p: &mut P, group: &GroupKey, why: &str) -> Vec<Pod> {
    // Only Hardened's pod-group commit admits a gang (`pod_group_cycle.rs`): no mode to ask.
    if !p.read_driver(|d| d.is_admitted(group)) {
        return Vec::new();
    }
    let short = p
        .gang()
        .read_group(group, |groups| groups.get(group)?.short_of_quorum());
    let Some(min) = short else {
        return Vec::new();
    };
    if planted!(p, Flaw::ShortGangKeepsBinding) {
        return Vec::new();
    }
    let status = Status::unschedulable(format!(
        "pod group {group} can no longer reach its minCount {min}: {why}"
    ))
    .with_plugin(GANG_SCHEDULING);
    let released = release(p, group, &status, Cause::GangFailed);
    if released.is_empty() {
        return released;
    }
    tracing::debug!(group = %group, released = released.len(), why, "admitted gang short of quorum");
    released
}

/// The admitted gangs whose binding deadline has passed at `now` release their members whose
/// binding has not begun (see the module docs). Returns those gangs.
pub(super) fn expire_binding_deadlines<P: Parts>(p: &mut P, now: Time) -> Vec<GroupKey> {
    let due = p.read_driver(|d| d.binding_deadlines_due(now));
    for group in &due {
        let status = Status::unschedulable(format!(
            "pod group {group} did not bind within its deadline"
        ))
        .with_plugin(GANG_SCHEDULING);
        let released = p.unobserved(|p| release(p, group, &status, Cause::TimedOut));
        tracing::debug!(group = %group, released = released.len(), "admitted gang's binding deadline passed");
    }
    due
}

/// `group`'s members waiting to bind get `status` for `cause` instead, and their group stops
/// counting them (see the module docs). A commit of the gang's next attempt running meanwhile
/// may have counted them before they were unreserved and admitted itself — its own quorum
/// check after the admission saw them still counted — so the quorum is asked once more here.
/// (With nothing released the question finds the gang no longer admitted: the release ended
/// its admission.)
fn release<P: Parts>(p: &mut P, group: &GroupKey, status: &Status, cause: Cause) -> Vec<Pod> {
    let mut released = p.driver(|d| d.release_admitted(group, status, cause));
    for pod in &released {
        ops::unreserve(p.gang(), pod);
    }
    if !planted!(p, Flaw::ReleaseSkipsQuorumRecheck) {
        let why = "it was admitted counting members being released";
        released.extend(release_if_short(p, group, why));
    }
    released
}
