//! The fixed plugin set the tests and the fuzzer give both the real queue and the model.

use gangsched::queue::PluginSet;
use gangsched::{ClusterEvent, Code, Pod, QueueingHint, Status};

/// The PreEnqueue plugin of [`plugins`]: it gates pods whose name starts with `gated` while
/// their priority is 0 or less. Its hint on `UnscheduledPodUpdate` says `Queue` when the update
/// raises the priority above 0.
pub const GATE: &str = "Gate";
/// A NodeResourcesFit-like plugin of [`plugins`], usually an unschedulable rejector. Hints:
/// `AssignedPodDelete(pod)` → `QueueSkip` for a pod named `small`, an error for one named
/// `broken`, otherwise `Queue`; `NodeAdd(name)` and `NodeUpdate(name)` → `Queue` for `big`, an
/// error for `broken` (`NodeAdd` only), otherwise `QueueSkip`.
pub const FIT: &str = "NodeResourcesFit";
/// A DynamicResources-like plugin of [`plugins`], usually a *pending* rejector (`pending_on`).
/// Hints: `NodeUpdate(name)` → `Queue` for `ready`, an error for `broken`, otherwise `QueueSkip`;
/// `PodGroupAdd` → `Queue`.
pub const CLAIMS: &str = "DynamicResources";
/// A plugin of [`plugins`] that registered no hint: only wildcard events requeue the pods it
/// rejected.
pub const SILENT: &str = "Silent";

/// The fixed plugin set shared by the real queue and the model in tests: see [`GATE`], [`FIT`],
/// [`CLAIMS`] and [`SILENT`]. Events of kinds `UnscheduledPodAdd`, `AssignedPodAdd` and
/// `PodGroupUpdate` interest no plugin.
pub fn plugins() -> PluginSet {
    use gangsched::queue::EventKind;
    PluginSet::new()
        .with_pre_enqueue(GATE, |p: &Pod| {
            if p.name().starts_with("gated") && p.priority() <= 0 {
                Status::with_reason(Code::UnschedulableAndUnresolvable, "gated")
            } else {
                Status::success()
            }
        })
        .with_hint(GATE, EventKind::UnscheduledPodUpdate, |_, e| match e {
            ClusterEvent::UnscheduledPodUpdate { new, .. } if new.priority() > 0 => {
                Ok(QueueingHint::Queue)
            }
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(FIT, EventKind::AssignedPodDelete, |_, e| match e {
            ClusterEvent::AssignedPodDelete(p) if p.name() == "small" => {
                Ok(QueueingHint::QueueSkip)
            }
            ClusterEvent::AssignedPodDelete(p) if p.name() == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::Queue),
        })
        .with_hint(FIT, EventKind::NodeAdd, |_, e| match e {
            ClusterEvent::NodeAdd(n) if n == "big" => Ok(QueueingHint::Queue),
            ClusterEvent::NodeAdd(n) if n == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(FIT, EventKind::NodeUpdate, |_, e| match e {
            ClusterEvent::NodeUpdate(n) if n == "big" => Ok(QueueingHint::Queue),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(CLAIMS, EventKind::NodeUpdate, |_, e| match e {
            ClusterEvent::NodeUpdate(n) if n == "ready" => Ok(QueueingHint::Queue),
            ClusterEvent::NodeUpdate(n) if n == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(CLAIMS, EventKind::PodGroupAdd, |_, _| {
            Ok(QueueingHint::Queue)
        })
}
