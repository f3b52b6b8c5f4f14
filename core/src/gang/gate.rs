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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PodGroup;

    fn gated() -> Pod {
        Pod::new("g-0", "ml", "g-0").with_group("g")
    }

    fn hint(event: GangEvent<'_>) -> QueueingHint {
        gang_queueing_hint(&gated(), event)
    }

    /// The hint wakes a gated member for its own group's events only: a sibling (same group,
    /// same namespace), its PodGroup appearing, its minimum lowered — never for a same-named
    /// group in another namespace, another group, or a minimum raised (I7 for the first, no
    /// spurious wake-up for the rest; the gang/ mutants of 2026-12-07 that widened or
    /// inverted each comparison went unnoticed by the unit tier).
    #[test]
    fn the_hint_queues_a_member_for_its_own_group_s_events_only() {
        let sibling = Pod::new("g-1", "ml", "g-1").with_group("g");
        let namesake = Pod::new("x", "other", "x").with_group("g");
        let stranger = Pod::new("y", "ml", "y").with_group("h");
        assert_eq!(hint(GangEvent::PodAdded(&sibling)), QueueingHint::Queue);
        assert_eq!(
            hint(GangEvent::PodAdded(&namesake)),
            QueueingHint::QueueSkip
        );
        assert_eq!(
            hint(GangEvent::PodAdded(&stranger)),
            QueueingHint::QueueSkip
        );
        let own = |min| PodGroup::gang("ml", "g", min).unwrap();
        let elsewhere = PodGroup::gang("other", "g", 2).unwrap();
        let other = PodGroup::gang("ml", "h", 2).unwrap();
        assert_eq!(hint(GangEvent::GroupAdded(&own(2))), QueueingHint::Queue);
        assert_eq!(
            hint(GangEvent::GroupAdded(&elsewhere)),
            QueueingHint::QueueSkip
        );
        assert_eq!(hint(GangEvent::GroupAdded(&other)), QueueingHint::QueueSkip);
        let updated = |old: &PodGroup, new: &PodGroup| hint(GangEvent::GroupUpdated { old, new });
        assert_eq!(updated(&own(3), &own(2)), QueueingHint::Queue, "lowered");
        assert_eq!(updated(&own(2), &own(3)), QueueingHint::QueueSkip, "raised");
        assert_eq!(
            updated(&own(2), &own(2)),
            QueueingHint::QueueSkip,
            "unchanged"
        );
        let lowered_elsewhere = PodGroup::gang("other", "g", 1).unwrap();
        assert_eq!(
            updated(&elsewhere, &lowered_elsewhere),
            QueueingHint::QueueSkip,
            "another namespace's group lowered"
        );
    }
}
