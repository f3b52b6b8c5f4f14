//! Progress without timeouts: the property that sees delays (issue #43). The invariants I3–I9
//! ask what must never happen and, through I8, that something eventually happens — and two
//! timers make almost anything eventually happen: a permit deadline (5 minutes) rejects a
//! waiting gang and frees what it held, and the unschedulable pool's leftover flush (5
//! minutes) retries every pod parked there. A driver bug that only *delays* a pod — a wake-up
//! or an announcement that does not happen — is rescued by one of them and breaks no
//! invariant. This property asks that no rescue be needed: **a gang that fits binds before a
//! permit deadline or the leftover flush fires**.
//!
//! Precisely, in a state where nothing moves but those two timers ([`rescue_only`]:
//! no pod arrives, the scheduling thread holds nothing and has nothing to pop, no binding
//! cycle and no backoff is due, no embedder's plugin holds a pod; the cluster's own changes —
//! a delete, a min count changed — are not the scheduler's to wait for), no gang may
//! have room now for its quorum — its members not bound, placed one after another on the
//! nodes as they would be with every reservation of a pod waiting at Permit released
//! ([`gangs_with_room`]). Such a gang waits for a timer it should not need.
//!
//! The model fires a timer at any moment, however much work is left, so the property is judged
//! on paths on which no rescue has fired yet: what follows a timeout (a rejected gang parked
//! until an event or the flush) is the timeout's doing.
//!
//! Where it holds (docs/verification.md has the figures):
//!
//! - **Permit barrier, both modes** — only where gangs cannot hold each other off:
//!   upstream's barrier (and gangway's) holds a waiting member's reservation until its gang's
//!   quorum or deadline, so two gangs each holding part of what the other needs wait for a
//!   deadline (their hold-and-wait, I9). It holds when the cluster has room for more than
//!   every gang's min count less one (Σ (minᵢ − 1) < room), as on every preset; two gangs of
//!   two on a node for two with a failed bind (which interleaves them) are its witness.
//! - **pod-group cycle, Upstream** — on every preset.
//! - **pod-group cycle, Hardened** — where no bind fails. After a failed bind the failed
//!   member comes back alone and is handed back unschedulable by the gang plugin, its released
//!   siblings parked the same way, and the gang waits for the leftover flush though it fits: a
//!   finding of issue #43 (`timeliness_tests.rs` keeps it).
//!
//! `gangway simulate` and the shuttle suite ask the same of the running scheduler at
//! quiescence, with [`gangs_with_room`] on its real states.

use std::fmt;

use gangsched::checking::JobQueue;
use gangsched::gang::GroupState;
use gangsched::scheduler::CacheState;
use gangsched::{GroupKey, Pod, PodId};

use super::cluster::Cluster;
use super::protocol::{Action, GangProtocol};

/// Whether `action` is one of the two rescues — a permit deadline, the leftover flush — or a
/// change the cluster makes on its own (a delete, a min count changed, a bind or a Permit
/// plugin's rejection beside the step it fails), which the scheduler must not wait for.
fn rescue_or_cluster(action: &Action) -> bool {
    matches!(
        action,
        Action::Deadline
            | Action::FlushLeftover
            | Action::Delete(_)
            | Action::UpdateGroup { .. }
            | Action::BindFails(_)
            | Action::PermitRejected(_)
    )
}

/// Whether only a rescue (or the cluster) can move `s`: every enabled action is a permit
/// deadline, the leftover flush, a delete, a min count changed, or a bind or a Permit plugin
/// failing beside the step it fails. The cheap signs that the scheduler still has work are looked at
/// first (this runs on every state).
pub fn rescue_only(model: &GangProtocol, s: &Cluster) -> bool {
    if s.cycle.is_some()
        || !s.driver.jobs().is_empty()
        || s.queue.heads().next().is_some()
        || s.queue.next_backoff_expiry().is_some()
    {
        return false;
    }
    let mut actions = Vec::new();
    model.enabled(s, &mut actions);
    actions.iter().all(rescue_or_cluster)
}

/// Whether a rescue already fired on the path to `s` — a permit deadline passed or the
/// leftover flush ran — or a Permit plugin beside the gang's turned a pod away (the quota of
/// `--permit-rejections`, an embedder's denial): each spends its budget, which the state
/// keeps. The model lets a timer fire at any moment, however much work the scheduler still
/// has — a deadline may pass between two members' Permits of a gang that fits — and what
/// follows a timeout (the rejected gang parked until an event or the flush retries it, as
/// kube-scheduler parks a pod its Permit rejected) is the timeout's doing; what follows another
/// plugin's rejection is that plugin's (it names the events that help, or none and waits for
/// the flush). The property asks for progress *before* either.
fn rescued(model: &GangProtocol, s: &Cluster) -> bool {
    let config = &model.config;
    s.budget.timeouts < config.timeouts
        || s.budget.flushes < config.flushes
        || s.budget.permit_rejections < config.permit_rejections
        || s.budget.denials < model.plugins.denial_budget()
}

/// A gang with room for the members it still needs ([`gangs_with_room`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoomFor {
    /// The gang.
    pub gang: GroupKey,
    /// Its members bound.
    pub bound: usize,
    /// Its min count.
    pub min: usize,
    /// The members placed on the room, as many as it still needs.
    pub pods: Vec<PodId>,
}

impl fmt::Display for RoomFor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let RoomFor {
            gang,
            bound,
            min,
            pods,
        } = self;
        let shown: Vec<String> = pods.iter().take(3).map(PodId::to_string).collect();
        let more = if pods.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        write!(
            f,
            "gang {gang} ({bound} of min {min} bound) has room for {} more ({}{more}) but \
             waits for a permit deadline or the leftover flush",
            pods.len(),
            shown.join(", ")
        )
    }
}

/// The gangs of `groups` with room now on `cache` for the members they still need, once every
/// reservation of a pod not bound is released: each gang's members not bound, in name order,
/// placed one after another (`place` names a node for a pod on a cache, or none) until its
/// quorum (its min count less its bound members; at least one more once that is reached) is
/// placed. At rest the pods assumed but not bound are those waiting at Permit, whose
/// reservations only their gang's quorum or a deadline frees.
pub fn gangs_with_room<'g, F>(
    groups: impl IntoIterator<Item = &'g GroupState> + 'g,
    cache: &CacheState,
    place: F,
) -> impl Iterator<Item = RoomFor> + 'g
where
    F: Fn(&Pod, &CacheState) -> Option<String> + 'g,
{
    let mut room = cache.clone();
    let held: Vec<PodId> = room.assumed().cloned().collect();
    for id in &held {
        room.forget(id);
    }
    groups.into_iter().filter_map(move |g| {
        let min = g.min_count()? as usize;
        let bound = g.assigned().len();
        let need = min.saturating_sub(bound).max(1);
        let members: Vec<&Pod> = g
            .pods()
            .filter(|p| !g.assigned().contains(p.id()))
            .collect();
        if members.len() < need {
            return None;
        }
        let mut nodes = room.clone();
        let mut pods = Vec::new();
        for pod in members {
            if pods.len() == need {
                break;
            }
            if let Some(node) = place(pod, &nodes) {
                if nodes.assume(pod, &node).is_ok() {
                    pods.push(pod.id().clone());
                }
            }
        }
        (pods.len() == need).then(|| RoomFor {
            gang: g.key().clone(),
            bound,
            min,
            pods,
        })
    })
}

impl GangProtocol {
    /// Progress without timeouts on `s`: in a state only a rescue can move ([`rescue_only`]),
    /// a gang with room for its quorum ([`gangs_with_room`], the model's placement) is a gang
    /// that waits for a timer it should not need — judged on the paths on which no rescue has
    /// fired yet and no other Permit plugin turned a pod away (what follows is theirs). A
    /// state that already broke I3 or I6 ends its path ([`Cluster::broken`]), as does a
    /// Permit an embedder's plugin denies with no denial left.
    pub fn waits_for_a_timeout(&self, s: &Cluster) -> Option<String> {
        if s.broken() || self.permit_past_budget(s) || rescued(self, s) || !rescue_only(self, s) {
            return None;
        }
        let place = |pod: &Pod, cache: &CacheState| self.plugins.place(pod, cache).0.ok();
        let waiting: Vec<String> = s.waiting.iter().map(|w| w.pod().id().to_string()).collect();
        let mut found = gangs_with_room(s.groups.iter(), &s.cache, place);
        found.next().map(|found| {
            if waiting.is_empty() {
                found.to_string()
            } else {
                format!("{found}; {waiting:?} hold their reservations, waiting at Permit")
            }
        })
    }
}
