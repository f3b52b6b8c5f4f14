use std::fmt;

use crate::PodGroup;
use crate::{GroupKey, Pod};

/// The kind of a [`ClusterEvent`]: what plugins register interest in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum EventKind {
    /// A pod that is not yet bound was added.
    UnscheduledPodAdd,
    /// A pod that is not yet bound changed in a way that may matter to scheduling.
    UnscheduledPodUpdate,
    /// A bound pod was added (or a binding was observed).
    AssignedPodAdd,
    /// A bound pod was deleted, or a reservation was released: resources were freed.
    AssignedPodDelete,
    /// A node was added.
    NodeAdd,
    /// A node changed.
    NodeUpdate,
    /// A node was deleted (kube-scheduler announces it before its cache forgets the node;
    /// only a plugin registered for every event cares).
    NodeDelete,
    /// A PodGroup object was created.
    PodGroupAdd,
    /// A PodGroup object changed.
    PodGroupUpdate,
    /// Somebody asked for a pod to be tried again now (`activate`). Wildcard.
    ForceActivate,
    /// A pod sat in the unschedulable pool past the leftover timeout. Wildcard.
    UnschedulableTimeout,
    /// A pod's backoff ended. Wildcard.
    BackoffComplete,
}

impl EventKind {
    /// Every kind of event, in declaration order: what kube-scheduler registers a plugin
    /// without queueing hints for.
    pub const ALL: [EventKind; 12] = [
        EventKind::UnscheduledPodAdd,
        EventKind::UnscheduledPodUpdate,
        EventKind::AssignedPodAdd,
        EventKind::AssignedPodDelete,
        EventKind::NodeAdd,
        EventKind::NodeUpdate,
        EventKind::NodeDelete,
        EventKind::PodGroupAdd,
        EventKind::PodGroupUpdate,
        EventKind::ForceActivate,
        EventKind::UnschedulableTimeout,
        EventKind::BackoffComplete,
    ];

    /// Wildcard events concern every pod and every plugin: they requeue a pod (after its
    /// backoff) whatever the hints say, and move gated pods so their gate is checked again.
    pub fn is_wildcard(self) -> bool {
        matches!(
            self,
            EventKind::ForceActivate | EventKind::UnschedulableTimeout | EventKind::BackoffComplete
        )
    }
}

/// Something that happened in the cluster and may make a rejected pod schedulable. Carries the
/// objects involved, for queueing hints to look at.
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClusterEvent {
    /// See [`EventKind::UnscheduledPodAdd`].
    UnscheduledPodAdd(Pod),
    /// See [`EventKind::UnscheduledPodUpdate`].
    UnscheduledPodUpdate {
        /// Before.
        old: Pod,
        /// After.
        new: Pod,
    },
    /// See [`EventKind::AssignedPodAdd`].
    AssignedPodAdd(Pod),
    /// See [`EventKind::AssignedPodDelete`].
    AssignedPodDelete(Pod),
    /// See [`EventKind::NodeAdd`]; the node's name.
    NodeAdd(String),
    /// See [`EventKind::NodeUpdate`]; the node's name.
    NodeUpdate(String),
    /// See [`EventKind::NodeDelete`]; the node's name.
    NodeDelete(String),
    /// See [`EventKind::PodGroupAdd`].
    PodGroupAdd(PodGroup),
    /// See [`EventKind::PodGroupUpdate`].
    PodGroupUpdate {
        /// Before.
        old: PodGroup,
        /// After.
        new: PodGroup,
    },
    /// See [`EventKind::ForceActivate`].
    ForceActivate,
    /// See [`EventKind::UnschedulableTimeout`].
    UnschedulableTimeout,
    /// See [`EventKind::BackoffComplete`].
    BackoffComplete,
}

impl ClusterEvent {
    /// The event's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            ClusterEvent::UnscheduledPodAdd(_) => EventKind::UnscheduledPodAdd,
            ClusterEvent::UnscheduledPodUpdate { .. } => EventKind::UnscheduledPodUpdate,
            ClusterEvent::AssignedPodAdd(_) => EventKind::AssignedPodAdd,
            ClusterEvent::AssignedPodDelete(_) => EventKind::AssignedPodDelete,
            ClusterEvent::NodeAdd(_) => EventKind::NodeAdd,
            ClusterEvent::NodeUpdate(_) => EventKind::NodeUpdate,
            ClusterEvent::NodeDelete(_) => EventKind::NodeDelete,
            ClusterEvent::PodGroupAdd(_) => EventKind::PodGroupAdd,
            ClusterEvent::PodGroupUpdate { .. } => EventKind::PodGroupUpdate,
            ClusterEvent::ForceActivate => EventKind::ForceActivate,
            ClusterEvent::UnschedulableTimeout => EventKind::UnschedulableTimeout,
            ClusterEvent::BackoffComplete => EventKind::BackoffComplete,
        }
    }

    /// Whether the event is a wildcard ([`EventKind::is_wildcard`]).
    pub fn is_wildcard(&self) -> bool {
        self.kind().is_wildcard()
    }
}

/// Which pods a cluster event can concern: those for which some plugin's queueing hint may
/// answer `Queue` ([`QueuePlugins::event_scope`](super::QueuePlugins::event_scope)). The queue
/// visits only those, so a move costs what it concerns, not the pool's size (I7 is kept: no
/// pod a hint would queue is left out).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventScope {
    /// Any pod: the queue walks the whole unschedulable pool.
    Everyone,
    /// Only the pods of this pod group.
    Group(GroupKey),
    /// No pod: every hint answers `QueueSkip` (the event is still recorded for the pods in
    /// flight).
    Nobody,
}

impl fmt::Debug for ClusterEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterEvent::UnscheduledPodAdd(p)
            | ClusterEvent::AssignedPodAdd(p)
            | ClusterEvent::AssignedPodDelete(p) => write!(f, "{:?}({})", self.kind(), p.id()),
            ClusterEvent::UnscheduledPodUpdate { new, .. } => {
                write!(f, "{:?}({})", self.kind(), new.id())
            }
            ClusterEvent::NodeAdd(n)
            | ClusterEvent::NodeUpdate(n)
            | ClusterEvent::NodeDelete(n) => {
                write!(f, "{:?}({n})", self.kind())
            }
            ClusterEvent::PodGroupAdd(g) | ClusterEvent::PodGroupUpdate { new: g, .. } => {
                write!(f, "{:?}({})", self.kind(), g.key())
            }
            _ => write!(f, "{:?}", self.kind()),
        }
    }
}
