//! What [`Scheduler::check`](super::Scheduler::check) verifies, as pure functions over the
//! components' states, and the typed [`Violation`] it reports.

use std::fmt;

#[cfg(feature = "checking")]
use crate::queue::QueuePlace;
use crate::queue::QueueState;

use super::jobs::JobQueue;
use super::tally::Tally;
use super::{CacheState, DriverState};
use crate::gang::GroupState;
use crate::GroupKey;
use crate::PodId;

/// An invariant of the contract (docs/guarantees.md).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// Single decision: a waiting pod is decided exactly once.
    I1,
    /// No lost wake-up.
    I2,
    /// Gang atomicity (Hardened).
    I3,
    /// Conservation: each known pod is in exactly one place.
    I4,
    /// Accounting: group partition and node reservations add up.
    I5,
    /// No leaked reservation.
    I6,
    /// No lost event.
    I7,
    /// Progress: no stuck gang.
    I8,
    /// No hold-and-wait (pod-group cycle).
    I9,
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A broken invariant: which one, and what was found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{invariant}: {detail}")]
pub struct Violation {
    /// The invariant.
    pub invariant: Invariant,
    /// What breaks it.
    pub detail: String,
}

impl Violation {
    /// `invariant` broken as `detail` says.
    pub fn new(invariant: Invariant, detail: impl Into<String>) -> Violation {
        Violation {
            invariant,
            detail: detail.into(),
        }
    }
}

/// The checks of [`Scheduler::check`](super::Scheduler::check): the cache's accounting (I5),
/// the queue's places (I4), the driver's jobs naming pods in binding (I4), and every assumed
/// pod in a binding cycle (I6).
pub fn check<J: JobQueue, T: Tally>(
    cache: &CacheState,
    queue: &QueueState,
    driver: &DriverState<J, T>,
) -> Result<(), Violation> {
    cache
        .check()
        .map_err(|e| Violation::new(Invariant::I5, e))?;
    queue
        .check()
        .map_err(|e| Violation::new(Invariant::I4, e))?;
    driver
        .check()
        .map_err(|e| Violation::new(Invariant::I4, e))?;
    let leaked = leaked(cache, driver);
    if !leaked.is_empty() {
        let detail = format!("assumed without a binding cycle: {leaked:?}");
        return Err(Violation::new(Invariant::I6, detail));
    }
    Ok(())
}

/// Pods assumed on a node with no binding cycle to end their reservation (I6: none).
pub fn leaked<J: JobQueue, T: Tally>(cache: &CacheState, driver: &DriverState<J, T>) -> Vec<PodId> {
    cache
        .assumed()
        .filter(|id| driver.assignment(id).is_none())
        .cloned()
        .collect()
}

#[cfg(feature = "checking")]
/// I7 at rest: the pods `queue` parks in its unschedulable pool for want of room — turned away
/// by the placement (`placement` says which plugins are its: [`ResourceFit`](super::ResourceFit)'s
/// by default), no gate holding them — that `fits` says have room now. Every release of room
/// is announced (and room released during a pod's attempt is replayed when it comes back), so
/// once the scheduler has nothing left to do none is: each would be a lost event. `fits` is
/// the caller's notion of room: a node for the pod, or — with the pod-group cycle, which
/// places a gang member only beside its quorum — room for its gang.
pub fn parked_for_room<'q>(
    queue: &'q QueueState,
    placement: impl Fn(&crate::PluginName) -> bool + 'q,
    fits: impl Fn(&crate::Pod) -> bool + 'q,
) -> impl Iterator<Item = &'q PodId> + 'q {
    queue.pods().filter_map(move |(id, place, info)| {
        let parked = place == QueuePlace::Unschedulable && info.gated_by().is_none();
        let for_room = info.unschedulable_plugins().iter().any(&placement);
        (parked && for_room && fits(info.pod())).then_some(id)
    })
}

#[cfg(feature = "checking")]
/// [`parked_for_room`] as a check, with a node's room for the pod as `fits`
/// ([`ResourceFit`](super::ResourceFit) on `cache`): `Err` names the pods (I7).
pub fn check_nothing_parked_for_room(
    queue: &QueueState,
    cache: &CacheState,
) -> Result<(), Violation> {
    use super::Placement;
    let by_resource_fit =
        |plugin: &crate::PluginName| plugin.as_str() == super::ResourceFit::PLUGIN;
    let parked: Vec<&PodId> = parked_for_room(queue, by_resource_fit, |pod| {
        super::ResourceFit.place(pod, cache).is_ok()
    })
    .collect();
    if parked.is_empty() {
        return Ok(());
    }
    let detail = format!("parked as unschedulable though a node has room: {parked:?}");
    Err(Violation::new(Invariant::I7, detail))
}

/// I9, no hold-and-wait: of `waiting_for_gang` — the pods waiting at Permit for the gang
/// plugin, their gang's attempt not admitted — those holding a node reservation (in binding).
/// With the pod-group cycle none, outside one scheduling step; with the Permit barrier every
/// waiting member, which is how two gangs that each fit alone deadlock until a timeout.
pub fn held_and_waiting<'a, J: JobQueue, T: Tally>(
    driver: &DriverState<J, T>,
    waiting_for_gang: impl IntoIterator<Item = &'a PodId>,
) -> Vec<PodId> {
    waiting_for_gang
        .into_iter()
        .filter(|id| driver.assignment(id).is_some())
        .cloned()
        .collect()
}

/// [`held_and_waiting`] as a check: `Err` names the holders (I9).
pub fn check_no_hold_and_wait<'a, J: JobQueue, T: Tally>(
    driver: &DriverState<J, T>,
    waiting_for_gang: impl IntoIterator<Item = &'a PodId>,
) -> Result<(), Violation> {
    let held = held_and_waiting(driver, waiting_for_gang);
    if held.is_empty() {
        return Ok(());
    }
    let detail = format!("reservations held while waiting for their gang: {held:?}");
    Err(Violation::new(Invariant::I9, detail))
}

/// I9 while an admitted gang binds (Hardened pod-group cycle): the gangs the pod-group cycle
/// admitted that have fewer members scheduled than their minimum (`state_of` gives each
/// group's state) and still a member allowed and waiting for its binding cycle — a
/// reservation held for an attempt that can no longer complete. None outside one step: a
/// failed bind, a delete or a raised minimum that leaves the gang short releases those
/// members in the same step.
pub fn short_gangs_binding<'g, J: JobQueue, T: Tally>(
    driver: &DriverState<J, T>,
    state_of: impl Fn(&GroupKey) -> Option<&'g GroupState>,
) -> Vec<GroupKey> {
    driver
        .admitted_groups()
        .filter(|(key, admitted)| {
            let waiting_to_bind = admitted.unclaimed.iter().any(|id| {
                driver
                    .assignment(id)
                    .is_some_and(|a| !a.claimed && !a.deleted && !a.rejected)
            });
            let short = state_of(key).is_some_and(|state| state.short_of_quorum().is_some());
            waiting_to_bind && short
        })
        .map(|(key, _)| key.clone())
        .collect()
}

/// [`short_gangs_binding`] as a check: `Err` names the gangs (I9).
pub fn check_no_short_gang_binding<'g, J: JobQueue, T: Tally>(
    driver: &DriverState<J, T>,
    state_of: impl Fn(&GroupKey) -> Option<&'g GroupState>,
) -> Result<(), Violation> {
    let short = short_gangs_binding(driver, state_of);
    if short.is_empty() {
        return Ok(());
    }
    let detail = format!("admitted gangs short of quorum still binding: {short:?}");
    Err(Violation::new(Invariant::I9, detail))
}

#[cfg(all(test, feature = "checking"))]
mod tests {
    use super::*;
    use crate::gang::Groups;
    use crate::queue::QueueConfig;
    use crate::scheduler::{Node, SchedulerPlugins};
    use crate::{Pod, Resources, Time};

    /// A queue with `name` parked as unschedulable, rejected by `plugin`.
    fn parked(name: &str, plugin: &'static str) -> QueueState {
        let groups = Groups::default();
        let plugins = SchedulerPlugins::new(&groups);
        let mut queue = QueueState::new(QueueConfig::default());
        let pod = Pod::new(name, "ns", name).with_requests(Resources::new(1000, 1000));
        queue.add(pod, Time::ZERO, &plugins).unwrap();
        let popped = queue.pop().expect("the pod");
        queue
            .add_unschedulable_if_not_present(popped.info.rejected_by(plugin), Time::ZERO, &plugins)
            .unwrap();
        queue
    }

    /// I7 at rest is about the placement's rejections alone: a pod NodeResourcesFit turned
    /// away that a node has room for now is reported, one another plugin rejected is not
    /// (found missing by mutation testing, issue #43: the plugin's `==` turned `!=` went
    /// through the unit, integration and model tiers).
    #[test]
    fn i7_at_rest_reports_a_pod_the_placement_parked_that_fits_now() {
        let mut cache = CacheState::new();
        cache
            .add_node(Node::new("n", Resources::new(4000, 4000)))
            .unwrap();
        let by_placement = parked("p", crate::scheduler::ResourceFit::PLUGIN);
        let violation = check_nothing_parked_for_room(&by_placement, &cache)
            .expect_err("parked for room that is there");
        assert_eq!(violation.invariant, Invariant::I7);
        let by_another = parked("p", "MyPermit");
        assert_eq!(check_nothing_parked_for_room(&by_another, &cache), Ok(()));
        let full = CacheState::new();
        assert_eq!(check_nothing_parked_for_room(&by_placement, &full), Ok(()));
    }
}
