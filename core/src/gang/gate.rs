//! The gang plugin's queue side — PreEnqueue and the queueing hints — as pure functions over
//! [`Groups`], so the plugin (under its registry shard's lock) and the model checker (on its own
//! states) run the same code. Which queue events reach the hints is the scheduler's plugin
//! set's business (`scheduler/plugins.rs`): the gang knows nothing of the queue.

use super::{GangEvent, Groups};

use crate::{Code, Pod, QueueingHint, Status};
use crate::{GroupKey, Policy};

/// PreEnqueue over `groups`: success for pods without a group and for Basic groups;
/// `UnschedulableAndUnresolvable` while the PodGroup object is missing or a gang has fewer than
/// `min_count` members (upstream's messages, word for word). Keeps I8's gate honest: a gang is
/// held back only while it cannot be complete.
pub fn gang_pre_enqueue(groups: &Groups, pod: &Pod) -> Status {
    let Some(key) = GroupKey::of(pod) else {
        return Status::success();
    };
    let state = groups.get(&key);
    let Some(group) = state.and_then(|s| s.group()) else {
        return Status::with_reason(
            Code::UnschedulableAndUnresolvable,
            format!(
                "waiting for pods's pod group {:?} to appear in scheduling queue",
                key.name()
            ),
        );
    };
    match group.policy() {
        Policy::Basic => Status::success(),
        Policy::Gang { min_count } => {
            let members = state.map_or(0, |s| s.all_pods_count());
            if members < min_count as usize {
                Status::with_reason(
                    Code::UnschedulableAndUnresolvable,
                    "waiting for minCount pods from a gang to appear in scheduling queue",
                )
            } else {
                Status::success()
            }
        }
    }
}

/// The gang plugin's queueing hint for `pod`, rejected or gated by it, after `event`: `Queue`
/// when a sibling was added, when its PodGroup appeared, or when its gang's min count was
/// lowered; `QueueSkip` otherwise (I7: the events that can help a gang are never skipped).
pub fn gang_queueing_hint(pod: &Pod, event: GangEvent<'_>) -> QueueingHint {
    // Compared in place: this runs for every gated pod on every pod add.
    let Some(group) = pod.group() else {
        return QueueingHint::QueueSkip;
    };
    let names_it = |key: &GroupKey| key.namespace() == pod.namespace() && key.name() == group;
    let queue = match event {
        GangEvent::PodAdded(other) => {
            other.group() == Some(group) && other.namespace() == pod.namespace()
        }
        GangEvent::GroupAdded(g) => names_it(g.key()),
        GangEvent::GroupUpdated { old, new } => {
            names_it(new.key())
                && matches!((old.min_count(), new.min_count()), (Some(o), Some(n)) if n < o)
        }
    };
    if queue {
        QueueingHint::Queue
    } else {
        QueueingHint::QueueSkip
    }
}
