//! The scheduler's queue plugins, as one set that the scheduler and the model checker both
//! run: the gang plugin's PreEnqueue gate and queueing hints, and NodeResourcesFit's hints.
//! Only where the groups are read from differs — the registry's shards under their locks, or
//! a model's own [`Groups`].

use crate::gang::{
    gang_pre_enqueue, gang_queueing_hint, GangEvent, GroupRegistry, Groups, GANG_SCHEDULING,
};

use crate::queue::{ClusterEvent, EventKind, EventScope, Gate, QueuePlugins};
use crate::sync::Arc;
use crate::GroupKey;
use crate::{PluginName, Pod, QueueingHint};

use super::ResourceFit;

/// The cluster events the gang plugin registers queueing hints for: a pod added (unscheduled
/// or assigned), a PodGroup added or updated.
pub const GANG_HINT_EVENTS: [EventKind; 4] = [
    EventKind::UnscheduledPodAdd,
    EventKind::AssignedPodAdd,
    EventKind::PodGroupAdd,
    EventKind::PodGroupUpdate,
];

/// Where the plugins read a pod's group from.
pub trait ReadGroups: Send + Sync {
    /// Runs `read` on the groups held with group `key`'s.
    fn read_group<R>(&self, key: &GroupKey, read: impl FnOnce(&Groups) -> R) -> R;
}

/// The registry: the group's shard, read-locked (lock order: the queue, then the shard).
impl ReadGroups for GroupRegistry {
    fn read_group<R>(&self, key: &GroupKey, read: impl FnOnce(&Groups) -> R) -> R {
        read(&self.read_key(key))
    }
}

/// A model's groups, as they are.
impl ReadGroups for &Groups {
    fn read_group<R>(&self, _: &GroupKey, read: impl FnOnce(&Groups) -> R) -> R {
        read(self)
    }
}

/// The scheduler's queue plugins over the groups `G` reads (see the module docs). PrioritySort
/// orders the active queue.
#[derive(Clone, Debug)]
pub struct SchedulerPlugins<G> {
    groups: G,
    /// Plugins that registered no queueing hints (the embedder's Permit plugins): as
    /// kube-scheduler treats a plugin without `EnqueueExtensions`, every event may make a pod
    /// they rejected schedulable.
    unhinted: Arc<[PluginName]>,
    /// The events after which a pod the placement turned away may fit
    /// ([`Placement::requeue_on`](super::Placement::requeue_on)).
    placement_events: &'static [EventKind],
}

impl<G: ReadGroups> SchedulerPlugins<G> {
    /// The plugins reading the groups from `groups`.
    pub fn new(groups: G) -> SchedulerPlugins<G> {
        SchedulerPlugins {
            groups,
            unhinted: Arc::new([]),
            placement_events: &ResourceFit::HINT_EVENTS,
        }
    }

    /// These plugins, with a placement that retries the pods it turned away on `events`
    /// ([`Placement::requeue_on`](super::Placement::requeue_on); [`ResourceFit`]'s by
    /// default).
    pub fn with_placement_events(mut self, events: &'static [EventKind]) -> SchedulerPlugins<G> {
        self.placement_events = events;
        self
    }

    /// These plugins, with `plugins` — which register no queueing hints — interested in every
    /// event and answering `Queue` to each, as kube-scheduler registers a plugin that does not
    /// implement `EnqueueExtensions` for all events (`fillEventToPluginMap`). A pod one of
    /// them rejected is retried on the next event, not only at the leftover flush.
    pub fn with_unhinted<'a>(
        mut self,
        plugins: impl IntoIterator<Item = &'a PluginName>,
    ) -> SchedulerPlugins<G> {
        self.unhinted = plugins.into_iter().cloned().collect();
        self
    }
}

impl<G: ReadGroups> QueuePlugins for SchedulerPlugins<G> {
    /// The gang's gate: a gang waits in the unschedulable pool until it can be complete (I8).
    fn pre_enqueue(&self, pod: &Pod) -> Result<(), Gate> {
        let Some(key) = pod.group_key() else {
            return Ok(());
        };
        let status = self
            .groups
            .read_group(key, |groups| gang_pre_enqueue(groups, pod));
        if status.is_success() {
            Ok(())
        } else {
            Err(Gate {
                plugin: GANG_SCHEDULING,
                status,
            })
        }
    }

    /// The gang plugin for its events, a Permit plugin for every event, and any other plugin —
    /// one the placement named in its status — for the placement's events.
    fn registered(&self, plugin: &PluginName, kind: EventKind) -> bool {
        if *plugin == GANG_SCHEDULING {
            GANG_HINT_EVENTS.contains(&kind)
        } else {
            self.unhinted.contains(plugin) || self.placement_events.contains(&kind)
        }
    }

    fn is_event_of_interest(&self, kind: EventKind) -> bool {
        kind.is_wildcard()
            || !self.unhinted.is_empty()
            || GANG_HINT_EVENTS.contains(&kind)
            || self.placement_events.contains(&kind)
    }

    /// The gang's hint (a sibling added, its group appearing or lowering its min count); the
    /// placement's, which queues a pod that fit nowhere on the events it declared — for
    /// [`ResourceFit`], any that frees room or adds a node (I7); and `Queue` from a plugin
    /// without hints, for every event.
    fn hint(
        &self,
        plugin: &PluginName,
        pod: &Pod,
        event: &ClusterEvent,
    ) -> Result<QueueingHint, String> {
        if !self.registered(plugin, event.kind()) {
            return Ok(QueueingHint::QueueSkip);
        }
        Ok(if *plugin == GANG_SCHEDULING {
            gang_hint(pod, event)
        } else {
            QueueingHint::Queue
        })
    }

    /// A pod added concerns only its group's pods, a PodGroup added or updated only its own:
    /// the gang plugin is the only one registered for those events, and its hint skips every
    /// other pod. Everyone for other events, and for every event once a plugin without hints
    /// is in the set.
    fn event_scope(&self, event: &ClusterEvent) -> EventScope {
        if !self.unhinted.is_empty() || self.placement_events.contains(&event.kind()) {
            return EventScope::Everyone;
        }
        match gang_event(event) {
            Some(GangEvent::PodAdded(pod)) => pod
                .group_key()
                .map_or(EventScope::Nobody, |key| EventScope::Group(key.clone())),
            Some(GangEvent::GroupAdded(group)) => EventScope::Group(group.key().clone()),
            Some(GangEvent::GroupUpdated { new, .. }) => EventScope::Group(new.key().clone()),
            None => EventScope::Everyone,
        }
    }

    /// The gang's gate reads only the pod's group (I8's gate is a group's, not a pod's).
    fn gates_by_group(&self) -> bool {
        true
    }
}

/// [`gang_queueing_hint`] for a queue event: `QueueSkip` for events the gang plugin has no
/// hint for.
pub fn gang_hint(pod: &Pod, event: &ClusterEvent) -> QueueingHint {
    gang_event(event).map_or(QueueingHint::QueueSkip, |e| gang_queueing_hint(pod, e))
}

/// The gang plugin's view of a queue event: `None` for events it has no hint for.
fn gang_event(event: &ClusterEvent) -> Option<GangEvent<'_>> {
    match event {
        ClusterEvent::UnscheduledPodAdd(p) | ClusterEvent::AssignedPodAdd(p) => {
            Some(GangEvent::PodAdded(p))
        }
        ClusterEvent::PodGroupAdd(g) => Some(GangEvent::GroupAdded(g)),
        ClusterEvent::PodGroupUpdate { old, new } => Some(GangEvent::GroupUpdated { old, new }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which events the queue is to look at: the wildcards always (they concern every pod,
    /// whatever the hints say), the gang's and the placement's own, and every event once a
    /// plugin without hints is registered. (Found missing by mutation testing, issue #43: the
    /// wildcards' `||` turned `&&` made them of interest only beside a plugin without hints.)
    #[test]
    fn the_events_of_interest_are_the_wildcards_the_hinted_and_all_for_an_unhinted_plugin() {
        let groups = Groups::default();
        let plugins = SchedulerPlugins::new(&groups).with_placement_events(&[]);
        for wildcard in [
            EventKind::ForceActivate,
            EventKind::UnschedulableTimeout,
            EventKind::BackoffComplete,
        ] {
            assert!(plugins.is_event_of_interest(wildcard), "{wildcard:?}");
        }
        for kind in GANG_HINT_EVENTS {
            assert!(plugins.is_event_of_interest(kind), "{kind:?}");
        }
        assert!(!plugins.is_event_of_interest(EventKind::NodeAdd));
        let placed = SchedulerPlugins::new(&groups).with_placement_events(&[EventKind::NodeAdd]);
        assert!(placed.is_event_of_interest(EventKind::NodeAdd));
        assert!(!placed.is_event_of_interest(EventKind::NodeDelete));
        let permit = PluginName::from("MyPermit");
        let unhinted = SchedulerPlugins::new(&groups)
            .with_placement_events(&[])
            .with_unhinted([&permit]);
        assert!(unhinted.is_event_of_interest(EventKind::NodeDelete));
    }
}
