//! The table: the setups its cases share, and its groups (one module per theme) in order.

use super::activate::ACTIVATE;
use super::backoff::BACKOFF;
use super::fixtures::{s, FIT, L0, T0};
use super::flushes::FLUSHES;
use super::gating::GATING;
use super::in_flight::IN_FLIGHT;
use super::ordering::ORDERING;
use super::unschedulable::UNSCHEDULABLE;
use super::updates_deletes::{DELETES, UPDATES};
use super::vocabulary::At::{Backoff, Unschedulable};
use super::vocabulary::Step::{Lengths, Pop};
use super::vocabulary::{add, back, event, Case, Ev, Step};

/// Five pods p0..p4 of priority 0..4, each tried once and parked in the unschedulable pool
/// at 0 (`TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks`).
pub(crate) const FIVE_PARKED: &[Step] = &[
    add("p0", 0, T0),
    add("p1", 1, T0),
    add("p2", 2, T0),
    add("p3", 3, T0),
    add("p4", 4, T0),
    Pop("p4"),
    back("p4", &[FIT], T0, Unschedulable),
    Pop("p3"),
    back("p3", &[FIT], T0, Unschedulable),
    Pop("p2"),
    back("p2", &[FIT], T0, Unschedulable),
    Pop("p1"),
    back("p1", &[FIT], T0, Unschedulable),
    Pop("p0"),
    back("p0", &[FIT], T0, Unschedulable),
    Lengths(L0.with_unschedulable(5)),
];

/// `pod1` added and popped at 0, no event during its attempt.
pub(crate) const POPPED: &[Step] = &[add("pod1", 0, T0), Pop("pod1")];

/// `mpp` tried once at 0 and parked in the unschedulable pool by `Fit`.
pub(crate) const MPP_PARKED: &[Step] = &[
    add("mpp", 500, T0),
    Pop("mpp"),
    back("mpp", &[FIT], T0, Unschedulable),
];

/// `mpp` tried once at 0, resources freed during the attempt: backing off until 1 s.
pub(crate) const MPP_BACKING_OFF: &[Step] = &[
    add("mpp", 500, T0),
    Pop("mpp"),
    event(Ev::PodDeleted, T0, 0),
    back("mpp", &[FIT], T0, Backoff(s(1))),
];

/// The table's groups, in the order they run.
const GROUPS: &[&[Case]] = &[
    ORDERING,
    UPDATES,
    UNSCHEDULABLE,
    IN_FLIGHT,
    BACKOFF,
    ACTIVATE,
    GATING,
    FLUSHES,
    DELETES,
];

/// Every case of the table (not the [`FIDELITY`](super::FIDELITY) cases), group after group.
pub fn cases() -> impl Iterator<Item = &'static Case> {
    GROUPS.iter().flat_map(|group| group.iter())
}
