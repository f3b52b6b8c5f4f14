//! The table's vocabulary: where a pod is, the events, the prechecks, the steps, the case.

use gangsched::queue::QueueLengths;
use gangsched::{ClusterEvent, PodGroup, Policy, QueueConfig, Time};

use super::fixtures::{pod, NS};

/// Where a pod is: [`QueuePlace`](gangsched::queue::QueuePlace) without the sort key, with
/// gated pods told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// In the active queue.
    Active,
    /// Backing off until this time.
    Backoff(Time),
    /// Backing off after an error, until this time.
    ErrorBackoff(Time),
    /// In the unschedulable pool, not gated.
    Unschedulable,
    /// In the unschedulable pool, gated by a PreEnqueue plugin.
    Gated,
    /// Popped, its attempt not yet handed back.
    InFlight,
    /// Unknown to the queue (deleted, or never added).
    Gone,
}

/// A cluster event.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    /// A node with this name was added (`Fit` and `Pending` registered).
    NodeAdd(&'static str),
    /// A node changed (nobody registered).
    NodeUpdate,
    /// A bound pod was deleted: resources freed (`Fit`, `Skip` and `Pending` registered).
    PodDeleted,
    /// A PodGroup was created (`Gate` registered).
    GroupAdded,
    /// The wildcard `UnschedulableTimeout`.
    Timeout,
}

impl Ev {
    /// The [`ClusterEvent`] this stands for.
    pub fn event(self) -> ClusterEvent {
        match self {
            Ev::NodeAdd(name) => ClusterEvent::NodeAdd(name.into()),
            Ev::NodeUpdate => ClusterEvent::NodeUpdate("node1".into()),
            Ev::PodDeleted => ClusterEvent::AssignedPodDelete(pod("bound-elsewhere", 0)),
            Ev::GroupAdded => {
                ClusterEvent::PodGroupAdd(PodGroup::new(NS, "pg", Policy::Basic).expect("valid"))
            }
            Ev::Timeout => ClusterEvent::UnschedulableTimeout,
        }
    }
}

/// `move_all_to_active_or_backoff`'s precheck.
#[derive(Clone, Copy, Debug)]
pub enum Pre {
    /// None: every unschedulable pod is a candidate.
    All,
    /// Pods whose priority is at least this.
    MinPriority(i32),
    /// Pods whose priority is even and at least this.
    EvenAtLeast(i32),
    /// Pods whose priority is even and negative.
    EvenNegative,
    /// Must not be called at all.
    Never,
}

/// One step of a case: an operation at a time, with what it must return, or an expectation.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// `add(pod(name, priority), at)`: succeeds, and the pod is then `want` (`Active` or
    /// `Gated`).
    Add(&'static str, i32, Time, At),
    /// `add` of a pod the queue already knows fails with `AlreadyQueued`.
    AddAgain(&'static str),
    /// `pop` (non-blocking) returns this pod.
    Pop(&'static str),
    /// `pop` returns this pod, on its n-th attempt.
    PopAttempt(&'static str, u32),
    /// `pop` finds nothing active.
    PopNone,
    /// The popped pod's first activation time (`initial_attempt`).
    FirstActivated(&'static str, Time),
    /// `add_unschedulable_if_not_present` of the popped pod, rejected by `rejected` and
    /// pending on `pending` (both empty: it failed with an error), at `at`; it goes to `want`
    /// (`Gone`: deleted while in flight).
    Back {
        /// The pod, popped earlier in the case.
        pod: &'static str,
        /// The plugins that rejected it.
        rejected: &'static [&'static str],
        /// The plugins it is pending on.
        pending: &'static [&'static str],
        /// When it is handed back.
        at: Time,
        /// Where it must go.
        want: At,
    },
    /// `done` of a popped pod (bound).
    Done(&'static str),
    /// `move_all_to_active_or_backoff(event, precheck, at)` moves `moved` pods.
    Event(Ev, Pre, Time, usize),
    /// `activate(pods, at)` moves `moved` pods.
    Activate(&'static [&'static str], Time, usize),
    /// `flush_backoff_completed(at)` takes `n` pods out of backoff.
    FlushBackoff(Time, usize),
    /// `flush_unschedulable_leftover(at)` moves `n` pods.
    FlushLeftover(Time, usize),
    /// `update(old, pod(name, priority), at)`: the pod is then `want`.
    Update(&'static str, i32, Time, At),
    /// `delete(pod)` returns `known`.
    Delete(&'static str, bool),
    /// Opens (`true`) or closes `Gate`'s switch.
    Gate(bool),
    /// The pod is `want`.
    Is(&'static str, At),
    /// The active queue in pop order.
    Order(&'static [&'static str]),
    /// `lengths()`.
    Lengths(QueueLengths),
}

/// One case: the upstream test it comes from, its sub-test, the configuration, the steps.
pub struct Case {
    /// The upstream test function, or "(gangway)".
    pub source: &'static str,
    /// The upstream sub-test name (or what the case shows).
    pub name: &'static str,
    /// The queue's configuration.
    pub config: QueueConfig,
    /// Shared preparation, run before `steps`.
    pub setup: &'static [Step],
    /// The case's own steps, run after `setup`.
    pub steps: &'static [Step],
}

// Short constructors for the table.

pub(crate) const fn back(
    pod: &'static str,
    rejected: &'static [&'static str],
    at: Time,
    want: At,
) -> Step {
    Step::Back {
        pod,
        rejected,
        pending: &[],
        at,
        want,
    }
}

pub(crate) const fn back_pending(
    pod: &'static str,
    rejected: &'static [&'static str],
    pending: &'static [&'static str],
    at: Time,
    want: At,
) -> Step {
    Step::Back {
        pod,
        rejected,
        pending,
        at,
        want,
    }
}

pub(crate) const fn event(ev: Ev, at: Time, moved: usize) -> Step {
    Step::Event(ev, Pre::All, at, moved)
}

pub(crate) const fn add(pod: &'static str, priority: i32, at: Time) -> Step {
    Step::Add(pod, priority, at, At::Active)
}
