use std::fmt;

use super::{ClusterEvent, EventKind, EventScope, QueuedPodInfo};
use crate::sync::Arc;
use crate::{PluginName, Pod, QueueingHint, Status, Time};

/// The order of the active queue: smaller keys pop first (kube-scheduler's QueueSort).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SortKey {
    /// Compared first.
    pub rank: i64,
    /// Compared second.
    pub time: Time,
}

impl SortKey {
    /// Upstream's PrioritySort: higher priority first, then earlier timestamp.
    pub fn priority(info: &QueuedPodInfo) -> SortKey {
        SortKey {
            rank: -i64::from(info.pod().priority()),
            time: info.timestamp(),
        }
    }
}

/// Why a PreEnqueue plugin keeps a pod out of the active queue.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Gate {
    /// The plugin that gates the pod.
    pub plugin: PluginName,
    /// Its verdict.
    pub status: Status,
}

/// The plugins the queue consults: PreEnqueue gates, queueing hints and the queue order.
///
/// They run under the queue's lock, as in kube-scheduler: they must be quick and must not call
/// back into the queue. (gangway's own gang plugin takes only its group's registry shard lock.)
pub trait QueuePlugins: Send + Sync {
    /// Runs the PreEnqueue plugins in order; the first that rejects gates the pod.
    fn pre_enqueue(&self, pod: &Pod) -> Result<(), Gate>;

    /// Whether `plugin` registered a queueing hint for events of `kind`.
    fn registered(&self, plugin: &PluginName, kind: EventKind) -> bool;

    /// Whether any plugin registered for `kind` (wildcards always count).
    fn is_event_of_interest(&self, kind: EventKind) -> bool;

    /// `plugin`'s hint for `pod` after `event`; an error is treated as `Queue`. A plugin that
    /// registered no hint for the event's kind says `QueueSkip` (the queue then asks nothing
    /// more: one call per rejector per pod, the hot path of a cluster event).
    fn hint(
        &self,
        plugin: &PluginName,
        pod: &Pod,
        event: &ClusterEvent,
    ) -> Result<QueueingHint, String>;

    /// The active queue's order; PrioritySort unless overridden.
    fn sort_key(&self, info: &QueuedPodInfo) -> SortKey {
        SortKey::priority(info)
    }

    /// Which pods `event` can concern. The default, [`EventScope::Everyone`], has the queue
    /// walk its whole unschedulable pool; a narrower scope is a promise that every hint
    /// registered for the event answers `Ok(QueueSkip)` for every pod outside it, and lets the
    /// queue visit only the pods inside (I7 holds either way). Asked for non-wildcard events
    /// only.
    fn event_scope(&self, _event: &ClusterEvent) -> EventScope {
        EventScope::Everyone
    }

    /// Whether [`pre_enqueue`](Self::pre_enqueue) answers alike for every pod of one group at
    /// a given moment — it reads nothing of a grouped pod but its group key, and changes
    /// nothing. Then a move within one group asks it once for the group's gated pods instead
    /// of once per pod: while it still gates them with the same plugin, they stay as they are
    /// and are not visited. Default `false`.
    fn gates_by_group(&self) -> bool {
        false
    }
}

/// No gates, no hints, PrioritySort.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoPlugins;

impl QueuePlugins for NoPlugins {
    fn pre_enqueue(&self, _pod: &Pod) -> Result<(), Gate> {
        Ok(())
    }

    fn registered(&self, _plugin: &PluginName, _kind: EventKind) -> bool {
        false
    }

    fn is_event_of_interest(&self, kind: EventKind) -> bool {
        kind.is_wildcard()
    }

    fn hint(
        &self,
        _plugin: &PluginName,
        _pod: &Pod,
        _event: &ClusterEvent,
    ) -> Result<QueueingHint, String> {
        Ok(QueueingHint::QueueSkip)
    }
}

type PreEnqueueFn = dyn Fn(&Pod) -> Status + Send + Sync;
type HintFn = dyn Fn(&Pod, &ClusterEvent) -> Result<QueueingHint, String> + Send + Sync;

/// A set of PreEnqueue plugins and queueing hints built from closures, in registration order.
#[derive(Clone, Default)]
pub struct PluginSet {
    pre_enqueue: Vec<(PluginName, Arc<PreEnqueueFn>)>,
    hints: Vec<(PluginName, EventKind, Arc<HintFn>)>,
}

impl PluginSet {
    /// No plugins.
    pub fn new() -> PluginSet {
        PluginSet::default()
    }

    /// Adds a PreEnqueue plugin: a non-success status gates the pod.
    pub fn with_pre_enqueue(
        mut self,
        plugin: impl Into<PluginName>,
        f: impl Fn(&Pod) -> Status + Send + Sync + 'static,
    ) -> PluginSet {
        self.pre_enqueue.push((plugin.into(), Arc::new(f)));
        self
    }

    /// Registers `plugin`'s queueing hint for events of `kind`.
    pub fn with_hint(
        mut self,
        plugin: impl Into<PluginName>,
        kind: EventKind,
        f: impl Fn(&Pod, &ClusterEvent) -> Result<QueueingHint, String> + Send + Sync + 'static,
    ) -> PluginSet {
        self.hints.push((plugin.into(), kind, Arc::new(f)));
        self
    }
}

impl QueuePlugins for PluginSet {
    fn pre_enqueue(&self, pod: &Pod) -> Result<(), Gate> {
        for (plugin, f) in &self.pre_enqueue {
            let status = f(pod);
            if !status.is_success() {
                return Err(Gate {
                    plugin: plugin.clone(),
                    status,
                });
            }
        }
        Ok(())
    }

    fn registered(&self, plugin: &PluginName, kind: EventKind) -> bool {
        self.hints.iter().any(|(p, k, _)| *k == kind && p == plugin)
    }

    fn is_event_of_interest(&self, kind: EventKind) -> bool {
        kind.is_wildcard() || self.hints.iter().any(|(_, k, _)| *k == kind)
    }

    fn hint(
        &self,
        plugin: &PluginName,
        pod: &Pod,
        event: &ClusterEvent,
    ) -> Result<QueueingHint, String> {
        let kind = event.kind();
        for (_, _, f) in self
            .hints
            .iter()
            .filter(|(p, k, _)| *k == kind && p == plugin)
        {
            if f(pod, event)? == QueueingHint::Queue {
                return Ok(QueueingHint::Queue);
            }
        }
        Ok(QueueingHint::QueueSkip)
    }
}

impl fmt::Debug for PluginSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginSet")
            .field(
                "pre_enqueue",
                &self.pre_enqueue.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            )
            .field(
                "hints",
                &self
                    .hints
                    .iter()
                    .map(|(p, k, _)| (p, k))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::state_tests::{plugins, NODE};
    use super::*;

    /// What each plugin registered for, and so which events can move a pod: a hint
    /// registers its own plugin for its own kind only; wildcards concern every queue.
    #[test]
    fn a_plugin_is_registered_for_the_kinds_of_its_hints_only() {
        let p = plugins();
        let gate = PluginName::from("Gate");
        let node = PluginName::from(NODE);
        assert!(p.registered(&gate, EventKind::UnscheduledPodUpdate));
        assert!(!p.registered(&gate, EventKind::NodeAdd), "NODE's kind");
        assert!(
            !p.registered(&node, EventKind::UnscheduledPodUpdate),
            "Gate's kind"
        );
        assert!(!p.registered(&gate, EventKind::NodeDelete), "no one's");
        assert!(p.is_event_of_interest(EventKind::NodeAdd));
        assert!(!p.is_event_of_interest(EventKind::NodeDelete));
        assert!(p.is_event_of_interest(EventKind::UnschedulableTimeout));
        assert!(!NoPlugins.registered(&gate, EventKind::NodeAdd));
        assert!(!NoPlugins.is_event_of_interest(EventKind::NodeAdd));
        assert!(NoPlugins.is_event_of_interest(EventKind::ForceActivate));
    }

    /// A plugin set promises nothing about its PreEnqueue closures, so it does not let a
    /// scoped move ask one member for its whole group (the trait's default).
    #[test]
    fn only_a_plugin_set_that_says_so_gates_by_group() {
        assert!(!plugins().gates_by_group());
        assert!(!NoPlugins.gates_by_group());
    }
}
