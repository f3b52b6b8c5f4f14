//! The queue plugins of the model: the scheduler's own set (gang PreEnqueue and hints,
//! NodeResourcesFit's hints) over the model's `Groups` instead of the locked registry, through
//! the same pure functions (`gang_pre_enqueue`, `gang_hint`).

use gangway::gang::{gang_hint, gang_pre_enqueue, Groups, GANG_HINT_EVENTS, GANG_SCHEDULING};
use gangway::queue::{ClusterEvent, EventKind, Gate, QueuePlugins};
use gangway::scheduler::ResourceFit;
use gangway::{PluginName, Pod, QueueingHint};

const FIT_HINT_EVENTS: [EventKind; 2] = ResourceFit::HINT_EVENTS;

/// The scheduler's queue plugins over a model state's groups.
pub(super) struct ClusterPlugins<'a> {
    /// The groups PreEnqueue looks at.
    pub(super) groups: &'a Groups,
}

impl QueuePlugins for ClusterPlugins<'_> {
    fn pre_enqueue(&self, pod: &Pod) -> Result<(), Gate> {
        let status = gang_pre_enqueue(self.groups, pod);
        if status.is_success() {
            Ok(())
        } else {
            Err(Gate {
                plugin: GANG_SCHEDULING,
                status,
            })
        }
    }

    fn registered(&self, plugin: &PluginName, kind: EventKind) -> bool {
        (*plugin == GANG_SCHEDULING && GANG_HINT_EVENTS.contains(&kind))
            || (plugin.as_str() == ResourceFit::PLUGIN && FIT_HINT_EVENTS.contains(&kind))
    }

    fn is_event_of_interest(&self, kind: EventKind) -> bool {
        kind.is_wildcard() || GANG_HINT_EVENTS.contains(&kind) || FIT_HINT_EVENTS.contains(&kind)
    }

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
}
