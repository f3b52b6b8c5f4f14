//! The plugin profiles a trace can choose (its `config` op): the queueing hints and PreEnqueue
//! plugins gangway's queue runs, the same as `upstream/cmd/queuetrace/profile.go` (and
//! `lockstep.go`) registers on kube-scheduler's.

use gangsched::sync::atomic::{AtomicBool, Ordering};

use gangsched::queue::{EventKind, PluginSet};
use gangsched::sync::Arc;
use gangsched::{ClusterEvent, Code, Pod, QueueingHint, Status};

/// Answers `Queue` (for `NodeAdd`: only for the node "big"; an error for "broken").
pub const FIT: &str = "Fit";
/// Answers `QueueSkip` to every event it registered.
pub const SKIP: &str = "Skip";
/// A plugin the pod is pending on: its `Queue` means "retry now".
pub const PENDING: &str = "Pending";
/// Registered no hint at all.
pub const BAR: &str = "Bar";
/// The PreEnqueue gate.
pub const GATE: &str = "Gate";

/// Which plugins a trace's queue runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// gangway's scheduler's plugin set (`SchedulerPlugins`): NodeResourcesFit's `Queue` on
    /// `NodeAdd`, `NodeUpdate` and `AssignedPodDelete`.
    Default,
    /// The queue conformance table's fixture set ([`conformance_plugins`]).
    Conformance,
    /// The queue lockstep driver's set, the one the `queue_moves` fuzz target and
    /// `prop_queue` run (`gangway_model::queue::plugins`), for the fuzz corpus as traces.
    Lockstep,
}

impl Profile {
    /// The profile a trace names (`None`: the default).
    pub fn named(name: Option<&str>) -> Result<Profile, String> {
        match name {
            None | Some("default") => Ok(Profile::Default),
            Some("conformance") => Ok(Profile::Conformance),
            Some("lockstep") => Ok(Profile::Lockstep),
            Some(other) => Err(format!("unknown profile {other:?}")),
        }
    }
}

/// The conformance table's plugin set; `open` is `Gate`'s switch (closed at the start of
/// every case). `Gate` holds pods named `gated-*` whose priority is not above 0 while its
/// switch is closed, and listens to pod updates and PodGroup adds.
pub fn conformance_plugins(open: Arc<AtomicBool>) -> PluginSet {
    let queue = |_: &Pod, _: &ClusterEvent| Ok(QueueingHint::Queue);
    let skip = |_: &Pod, _: &ClusterEvent| Ok(QueueingHint::QueueSkip);
    PluginSet::new()
        .with_pre_enqueue(GATE, move |p: &Pod| {
            if p.name().starts_with("gated-") && !open.load(Ordering::SeqCst) && p.priority() <= 0 {
                Status::with_reason(Code::UnschedulableAndUnresolvable, "gated")
            } else {
                Status::success()
            }
        })
        .with_hint(FIT, EventKind::NodeAdd, |_, e| match e {
            ClusterEvent::NodeAdd(n) if n == "big" => Ok(QueueingHint::Queue),
            ClusterEvent::NodeAdd(n) if n == "broken" => Err("hint failed".into()),
            _ => Ok(QueueingHint::QueueSkip),
        })
        .with_hint(FIT, EventKind::AssignedPodDelete, queue)
        .with_hint(FIT, EventKind::UnscheduledPodUpdate, queue)
        .with_hint(SKIP, EventKind::AssignedPodDelete, skip)
        .with_hint(SKIP, EventKind::UnscheduledPodUpdate, skip)
        .with_hint(PENDING, EventKind::NodeAdd, queue)
        .with_hint(PENDING, EventKind::AssignedPodDelete, queue)
        .with_hint(GATE, EventKind::UnscheduledPodUpdate, queue)
        .with_hint(GATE, EventKind::PodGroupAdd, queue)
}
