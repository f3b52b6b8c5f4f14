//! gangsched — the library of the gangway project: the concurrency core of Kubernetes gang
//! scheduling, checked race-free.
//!
//! A gang is a group of pods that must run together or not at all. kube-scheduler parks each
//! member at its Permit step until enough members are placed, then lets them all go. gangway
//! implements that barrier — the waiting-pod map, the gang state machine and the scheduling
//! queue — as a library whose every lock, wake-up and timeout race is explored exhaustively with
//! [loom](https://docs.rs/loom), and whose invariants ([below](#guarantees-and-their-checkers))
//! each have a checker and a witness that the checker finds their violation.
//!
//! The sections build up from one waiting pod to a whole [`Scheduler`]. Two longer programs
//! print what happens step by step: `cargo run -p gangsched --example permit_barrier` (the
//! barrier alone, a quorum and a timeout) and `--example embed_scheduler` (a scheduler with a
//! binder that fails).
//!
//! # Parking pods at Permit
//!
//! A pod whose Permit plugin says `Wait` is added to the [`WaitingPods`] map with one deadline
//! per plugin. Something else decides it: a sibling allows it, a plugin rejects it, the pod is
//! deleted, or its deadline passes. The first decision wins and is reported exactly once.
//!
//! ```
//! use std::time::Duration;
//! use gangsched::{Pod, Time, WaitingPods};
//!
//! let waiting = WaitingPods::new();
//! let gang_wait = || [("GangScheduling".into(), Duration::from_secs(300))];
//!
//! // Two members of a gang of three passed Permit with `Wait`.
//! let a = waiting.add(Pod::new("a", "ml", "trainer-0"), gang_wait(), Time::ZERO)?;
//! let b = waiting.add(Pod::new("b", "ml", "trainer-1"), gang_wait(), Time::ZERO)?;
//!
//! // The third reaches quorum and allows its waiting siblings.
//! waiting.for_each(|wp| {
//!     wp.allow("GangScheduling");
//! });
//! assert!(a.wait().is_success() && b.wait().is_success());
//! assert!(waiting.is_empty());
//! # Ok::<(), gangsched::AddError>(())
//! ```
//!
//! # A gang through the barrier
//!
//! [`GangScheduling`] is kube-scheduler's gang plugin over a [`GroupRegistry`] and a waiting
//! map. Feed it cluster events; call its extension points from your scheduling cycle. In the
//! default [`Mode::Hardened`] a gang attempt is all or nothing (H1): quorum allows every waiting
//! member at once, and a timeout, delete or unreserve of one rejects them all.
//!
//! ```
//! use gangsched::{GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPods};
//!
//! let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
//! gang.on_group_added(PodGroup::gang("ml", "trainer", 3).unwrap()).unwrap();
//! let pods: Vec<Pod> = (0..3)
//!     .map(|i| Pod::new(format!("uid-{i}"), "ml", &format!("trainer-{i}")))
//!     .map(|pod| pod.with_group("trainer"))
//!     .collect();
//! for pod in &pods[..2] {
//!     gang.on_pod_added(pod.clone(), false).unwrap();
//! }
//! // PreEnqueue gates the gang until min_count members exist.
//! assert!(gang.pre_enqueue(&pods[0]).is_rejected());
//! gang.on_pod_added(pods[2].clone(), false).unwrap();
//! assert!(pods.iter().all(|p| gang.pre_enqueue(p).is_success()));
//!
//! // Scheduling cycles: reserve, then Permit. The first two wait for the third.
//! let mut waiting = Vec::new();
//! for pod in &pods[..2] {
//!     gang.reserve(pod).unwrap();
//!     let Permit::Wait { waiting: w, .. } = gang.permit(pod, Time::ZERO) else { unreachable!() };
//!     waiting.push(w);
//! }
//! gang.reserve(&pods[2]).unwrap();
//! assert!(matches!(gang.permit(&pods[2], Time::ZERO), Permit::Allow));
//! assert!(waiting.iter().all(|w| w.wait().is_success())); // all three bind
//! ```
//!
//! # Timeouts are data
//!
//! Nothing in gangway reads a clock. A timeout takes effect only when somebody calls
//! [`WaitingPods::expire`] (or [`GangScheduling::expire`], for a Hardened gang attempt's one
//! deadline) with a [`Time`]: a test, a loom thread, the model checker, or the
//! [`TimerDriver`] — one thread for the whole map, not a timer per pod.
//!
//! ```
//! use std::time::Duration;
//! use gangsched::{Pod, Time, WaitingPods};
//!
//! let waiting = WaitingPods::new();
//! let pod = Pod::new("a", "ml", "trainer-0");
//! let wp = waiting.add(pod, [("GangScheduling".into(), Duration::from_secs(300))], Time::ZERO)?;
//! assert!(waiting.expire(Time::from_secs(299)).is_empty());
//! let expired = waiting.expire(Time::from_secs(300));
//! assert_eq!(
//!     expired[0].status.message(),
//!     "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
//! );
//! assert!(wp.wait().is_rejected());
//! # Ok::<(), gangsched::AddError>(())
//! ```
//!
//! # Many waiting pods, few threads
//!
//! [`WaitingPods::with_channel`] (or [`WaitingPods::with_sink`]) delivers every decision to a
//! channel or callback, after every lock is released, so a handful of binding workers serve
//! any number of waiting pods. The blocking [`WaitingPod::wait`] is there for simple embedding.
//!
//! ```
//! use std::time::Duration;
//! use gangsched::{Clock, ManualClock, Pod, Time, TimerDriver, WaitingPods};
//!
//! let (waiting, decisions) = WaitingPods::with_channel();
//! let clock = ManualClock::new(Time::ZERO);
//! let _timer = TimerDriver::spawn(waiting.clone(), clock.clone());
//!
//! for i in 0..1000 {
//!     let pod = Pod::new(format!("uid-{i}"), "ml", &format!("worker-{i}"));
//!     waiting.add(pod, [("GangScheduling".into(), Duration::from_secs(60))], clock.now())?;
//! }
//! clock.advance(Duration::from_secs(60)); // the timer thread expires all of them
//! for _ in 0..1000 {
//!     assert!(decisions.recv().unwrap().status.is_rejected());
//! }
//! # Ok::<(), gangsched::AddError>(())
//! ```
//!
//! # Embedding the `Scheduler`
//!
//! A [`Scheduler`] wires the queue, the gang plugin, the waiting map and a cache of node
//! reservations together. You bring the two steps that touch the world: a
//! [`Placement`](scheduler::Placement) picks a node for a pod (kube-scheduler's Filter and
//! Score; [`ResourceFit`](scheduler::ResourceFit) by default), and a
//! [`Binder`](scheduler::Binder) writes the binding (the API server; an
//! [`InMemoryBinder`](scheduler::InMemoryBinder) by default). Closures of the right shape are
//! both. Cluster events come in through `add_node`, `add_group`, `add_pod`, … Each
//! [`schedule_one`](Scheduler::schedule_one) is one scheduling cycle (pop, place, assume,
//! reserve, Permit) and reports a [`CycleOutcome`](scheduler::CycleOutcome); pods that passed
//! Permit, at once or after waiting, reach their binding cycles through a channel, and
//! [`run_binding_cycles`](Scheduler::run_binding_cycles) runs those that are ready;
//! [`tick`](Scheduler::tick) applies whatever is due (permit deadlines, backoff flushes).
//! Driven by hand like this, with explicit [`Time`]s, a run is deterministic.
//! [`start`](Scheduler::start) runs the same steps on threads instead — a scheduling loop, a
//! few binding workers and one timer, reading a [`Clock`] — until
//! [`RunningScheduler::shutdown`](scheduler::RunningScheduler::shutdown).
//!
//! ```
//! use gangsched::scheduler::{BindError, CacheState, CycleOutcome, Node};
//! use gangsched::{Pod, PodGroup, Resources, Scheduler, SchedulerConfig, Status, Time};
//! use std::sync::{Arc, Mutex};
//!
//! // Placement: the first node, by name, with room for the pod.
//! let first_fit = |pod: &Pod, cache: &CacheState| -> Result<String, Status> {
//!     cache
//!         .nodes()
//!         .find(|node| pod.requests().fits_in(&node.free()))
//!         .map(|node| node.name().to_owned())
//!         .ok_or_else(|| Status::unschedulable("no node has room").with_plugin("FirstFit"))
//! };
//! // Binder: your API-server call goes here; this one keeps a list.
//! let bindings = Arc::new(Mutex::new(Vec::new()));
//! let binder = {
//!     let bindings = bindings.clone();
//!     move |pod: &Pod, node: &str| -> Result<(), BindError> {
//!         bindings.lock().unwrap().push(format!("{} -> {node}", pod.name()));
//!         Ok(())
//!     }
//! };
//! let s = Scheduler::with(SchedulerConfig::default(), first_fit, binder);
//!
//! let now = Time::ZERO;
//! for name in ["node-a", "node-b"] {
//!     s.add_node(Node::new(name, Resources::new(2_000, 8 << 30)), now)?; // 2 CPUs, 8 GiB
//! }
//! s.add_group(PodGroup::gang("ml", "trainer", 3)?, now)?;
//! for i in 0..3 {
//!     let name = format!("trainer-{i}");
//!     let pod = Pod::new(name.as_str(), "ml", &name)
//!         .with_group("trainer")
//!         .with_requests(Resources::new(1_000, 1 << 30));
//!     s.add_pod(pod, now)?;
//! }
//!
//! // Scheduling cycles: two members wait at Permit, the third reaches quorum.
//! let mut outcomes = Vec::new();
//! while let Some(outcome) = s.schedule_one(now) {
//!     outcomes.push(outcome);
//! }
//! assert!(matches!(outcomes[..], [
//!     CycleOutcome::Waiting { .. },
//!     CycleOutcome::Waiting { .. },
//!     CycleOutcome::Allowed { .. },
//! ]));
//! // Binding cycles: all three passed Permit together, and all three are bound.
//! assert_eq!(s.run_binding_cycles(now), 3);
//! assert_eq!(bindings.lock().unwrap().len(), 3);
//! assert!(["trainer-0", "trainer-1", "trainer-2"].iter().all(|&id| s.is_bound(&id.into())));
//! s.check()?; // I4, I5, I6 hold
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What became of each pod
//!
//! Every attempt ends in one [`PodOutcome`](scheduler::PodOutcome) — bound, unschedulable
//! (with the plugin's status), rejected at Permit (with its [`Cause`]: timed out, gang failed,
//! deleted, preempted, shut down), bind failed, or dropped (deleted in flight) — handed to the
//! [`OutcomeSink`](scheduler::OutcomeSink) you install with
//! [`Scheduler::builder`], outside every lock, whether you drive the cycles or
//! [`start`](Scheduler::start)'s threads do. That is what you write into the pod's
//! `PodScheduled` condition or an event:
//! [`pod_scheduled`](scheduler::PodOutcome::pod_scheduled) gives the condition kube-scheduler
//! would write. A Placement, a Binder or a sink that panics is caught at its call and treated
//! as its error — the reservation released, the pod back in the error backoff, the panic
//! counted in [`SchedulerStats::plugin_panics`](scheduler::SchedulerStats::plugin_panics) —
//! and the thread that called it lives on. [`Resources`] carry extended resources by name,
//! so a pod can ask for GPUs and never lands where there are too few.
//!
//! ```
//! use gangsched::scheduler::{outcome_channel, Node, PodOutcome};
//! use gangsched::{Labels, Pod, PodGroup, Resources, Scheduler, SchedulerConfig, Time};
//!
//! const GPU: &str = "nvidia.com/gpu";
//! let (outcomes, received) = outcome_channel();
//! let s = Scheduler::builder(SchedulerConfig::default()).outcomes(outcomes).build();
//! let now = Time::ZERO;
//! let gpus = Resources::new(32_000, 256 << 30).with_extended(GPU, 8);
//! s.add_node(Node::new("gpu-0", gpus).with_label("accelerator", "h100"), now)?;
//! s.add_node(Node::new("cpu-0", Resources::new(32_000, 256 << 30)), now)?;
//! s.add_group(PodGroup::gang("ml", "trainer", 3)?, now)?;
//! for i in 0..3 {
//!     let name = format!("trainer-{i}");
//!     let pod = Pod::new(name.as_str(), "ml", &name)
//!         .with_group("trainer")
//!         .with_requests(Resources::new(4_000, 32 << 30).with_extended(GPU, 4))
//!         .with_node_selector(Labels::new().with("accelerator", "h100"));
//!     s.add_pod(pod, now)?;
//! }
//! while s.schedule_one(now).is_some() {}
//! s.run_binding_cycles(now);
//!
//! // Eight GPUs hold two members; the third cannot fit, so the two wait at Permit.
//! let outcome = received.try_recv().expect("the third member's attempt ended");
//! let condition = outcome.pod_scheduled().unwrap();
//! assert_eq!(outcome.pod().name(), "trainer-2");
//! assert_eq!((condition.status_str(), condition.reason), ("False", "Unschedulable"));
//! assert_eq!(
//!     condition.message,
//!     "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, \
//!      1 node(s) didn't match Pod's node affinity/selector."
//! );
//! assert!(received.try_recv().is_none(), "the waiting members have no outcome yet");
//! // Their gang's timeout rejects both; their binding cycles report it.
//! let late = now + s.config().permit_timeout;
//! assert_eq!(s.tick(late).timed_out_gangs.len(), 1);
//! s.run_binding_cycles(late);
//! for _ in 0..2 {
//!     let outcome = received.try_recv().unwrap();
//!     assert!(matches!(outcome, PodOutcome::Rejected { cause: gangsched::Cause::TimedOut, .. }));
//! }
//! s.check()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Your own Permit plugins
//!
//! A quota, a budget, an approval: a [`PermitPlugin`] is asked about every reserved pod, with no
//! lock held, and says [`PermitVerdict::Allow`], `Wait` (its own timeout) or `Reject`. Give
//! them to [`SchedulerBuilder::permit_plugins`](scheduler::SchedulerBuilder::permit_plugins); a
//! plugin that made a pod wait decides it later through [`Scheduler::waiting`]. They are folded
//! as kube-scheduler folds its Permit plugins, after the gang's in `Mode::Upstream` — which lets
//! a later plugin turn away the member that closed its gang's quorum — and before it in
//! `Mode::Hardened`, which refuses their wait on a gang member
//! ([`GangScheduling::permit_with`]).
//!
//! ```
//! use std::time::Duration;
//! use gangsched::scheduler::{outcome_channel, Node, PodOutcome};
//! use gangsched::sync::Arc;
//! use gangsched::{PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, Resources};
//! use gangsched::{Scheduler, SchedulerConfig, Time};
//!
//! struct Approval;
//! impl PermitPlugin for Approval {
//!     fn name(&self) -> PluginName {
//!         "Approval".into()
//!     }
//!     fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
//!         PermitVerdict::wait(Duration::from_secs(60))
//!     }
//! }
//!
//! let (outcomes, received) = outcome_channel();
//! let plugins = PermitPlugins::new([Arc::new(Approval) as Arc<dyn PermitPlugin>])?;
//! let s = Scheduler::builder(SchedulerConfig::default())
//!     .permit_plugins(plugins)
//!     .outcomes(outcomes)
//!     .build();
//! let now = Time::ZERO;
//! s.add_node(Node::new("n1", Resources::new(4_000, 8 << 30)), now)?;
//! let pod = Pod::new("job", "ml", "job");
//! s.add_pod(pod.clone(), now)?;
//! s.schedule_one(now);
//! assert!(received.try_recv().is_none(), "waiting for approval");
//! assert!(s.waiting().allow(pod.id(), "Approval"));
//! s.run_binding_cycles(now);
//! assert!(matches!(received.try_recv(), Some(PodOutcome::Bound { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Choosing a `Mode`
//!
//! [`Mode::Upstream`] follows kube-scheduler 1.36 step for step, races included: each member
//! waits on its own timer, quorum allows the waiting members one at a time, and a member's
//! timeout or delete leaves its siblings waiting — so a gang can bind partially, or hold
//! reservations for a gang already lost. [`Mode::Hardened`], the default, keeps upstream's
//! behaviour otherwise and adds the guarantees H1–H6: one decision for the whole gang attempt,
//! whole-gang release, one deadline per attempt, exact decision reports, and no user code under
//! a gangway lock. Pick `Upstream` to reproduce what a real cluster does — conformance tests,
//! replaying an incident, or showing that a checker finds upstream's races; pick `Hardened`
//! for everything else. Set it in [`SchedulerConfig::mode`] or pass it to
//! [`GangScheduling::new`]. The same race in both modes:
//!
//! ```
//! use gangsched::{GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPods};
//!
//! for mode in [Mode::Upstream, Mode::Hardened] {
//!     let gang = GangScheduling::new(mode, WaitingPods::new());
//!     gang.on_group_added(PodGroup::gang("ml", "g", 2).unwrap()).unwrap();
//!     let (p0, p1) = (Pod::new("p0", "ml", "p0"), Pod::new("p1", "ml", "p1"));
//!     let (p0, p1) = (p0.with_group("g"), p1.with_group("g"));
//!     gang.on_pod_added(p0.clone(), false).unwrap();
//!     gang.on_pod_added(p1.clone(), false).unwrap();
//!
//!     gang.reserve(&p0).unwrap();
//!     let Permit::Wait { waiting: w0, .. } = gang.permit(&p0, Time::ZERO) else { panic!() };
//!     // p0's deadline passes (its own timer upstream, the attempt's when hardened) ...
//!     let deadline = Time::from_secs(300);
//!     gang.waiting().expire(deadline);
//!     gang.expire(deadline);
//!     // ... and p1 reaches Permit before p0's binding cycle has released p0.
//!     gang.reserve(&p1).unwrap();
//!     let p1_passes = matches!(gang.permit(&p1, deadline), Permit::Allow);
//!
//!     assert!(w0.wait().is_rejected());
//!     // Upstream: p1 binds alone, a partial gang. Hardened: nobody passes (I3).
//!     assert_eq!(p1_passes, mode == Mode::Upstream);
//! }
//! ```
//!
//! # Guarantees and their checkers
//!
//! The contract, with every proof and witness, is `docs/guarantees.md`; how to run each checker
//! is `docs/verification.md`. In short: `loom_*` (loom models), `prop_*` (proptest against a
//! reference model), `regression_*` and `e2e_*` are test files in `tests/tests/`; `check` is
//! the protocol model checker (`gangway check`, the `gangway-check` crate in `check/`), which
//! checks I3–I9 over every interleaving of the gang and queue protocol; `queue_moves` is the
//! cargo-fuzz target in `fuzz/fuzz_targets/`.
//!
//! | | what it means | checked by |
//! |---|---|---|
//! | I1 | a waiting pod is decided exactly once | `loom_waiting`, `prop_waiting` |
//! | I2 | no lost wake-up | `loom_waiting`, `loom_timer`, `loom_queue`, `e2e_timer` |
//! | I3 | 0 or a quorum of a gang pass Permit | `loom_gang`, `regression_partial_gang`, `check` |
//! | I4 | each pod is in exactly one place | `prop_queue`, `loom_queue`, `queue_moves`, `check` |
//! | I5 | group and node accounting add up | `loom_gang`, `prop_gang`, `check`, `e2e_scheduler` |
//! | I6 | no leaked reservation | `loom_gang`, `regression_held_reservations`, `check` |
//! | I7 | an event during a pod's attempt is not lost | `prop_queue`, `queue_moves`, `check` |
//! | I8 | a gang with room and all members binds | `check`, `e2e_scheduler`, `e2e_simulate` |
//! | I9 | no reservation held while a gang waits (pod-group cycle) | `check`, `loom_pod_group`, `conformance_pod_group` |
//! | H1 | one critical section decides a gang attempt | `loom_gang`, `loom_shards`, `prop_shards` |
//! | H2 | a failed attempt's members go back together | `e2e_queue_gang`, unit tests |
//! | H3 | one deadline per gang attempt | `loom_gang`, unit tests |
//! | H4 | `allow`/`reject` say whether this call decided | `loom_waiting`, `prop_waiting` |
//! | H5 | no user code under a gangway lock | `loom_waiting`, `prop_waiting`, `shuttle_reentrant_callbacks` |
//! | H6 | no hold-and-wait with the pod-group cycle | `check`, `loom_pod_group`, `simulate --contention` |
//!
//! Each row also has a witness: its checker, run on a deliberately broken variant or in
//! [`Mode::Upstream`], must find the violation. What makes the core checkable: every component
//! is a pure struct with `&mut self` transitions ([`WaitingState`]) behind a thin lock
//! ([`WaitingPods`]), and the locks come from one internal facade (`core/src/sync.rs`, not
//! part of the API), which becomes loom's under `RUSTFLAGS="--cfg loom"`. The checkers' hooks
//! — the driver's steps one by one, the planted flaws, symmetry renamings, raw-state accessors
//! — compile only with the `checking` feature, as the module `checking`, which is not
//! semver-stable; an embedder's build (the default) has none of them, which
//! `tests/tests/conformance_public_api.rs` checks along with the public API it pins
//! (`core/public-api.txt`).
//!
//! # Observability
//!
//! The scheduler emits `tracing` spans and events, seen once a subscriber is installed, and
//! metrics through the `metrics` facade under kube-scheduler's names; [`telemetry`] lists them
//! and has `describe_metrics()`.
//!
//! # Kubernetes types
//!
//! With the optional `k8s` feature, the module `gangsched::k8s` converts k8s-openapi's `Pod`,
//! `Node` and `PodGroup` objects into gangway's [`Pod`], [`scheduler::Node`] and [`PodGroup`]
//! — every requested resource, GPUs included, labels, the node selector, tolerations and
//! taints; a constraint it cannot honour is refused by name, never dropped. The feature picks no
//! Kubernetes version: your application picks it on its own k8s-openapi (`v1_33` to `v1_37`),
//! and the PodGroup conversions follow (`scheduling.k8s.io/v1alpha2` for 1.36, `v1beta1` and
//! `v1alpha3` for 1.37). The module's docs schedule a GPU gang from YAML and write each pod's
//! condition from its outcome.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// Whether the deliberate bug `$flaw` is planted in `$parts` (a checker's witness): the parts'
/// own answer with the `checking` feature; without it `false`, and neither the flaw nor the
/// question is compiled.
macro_rules! planted {
    ($parts:expr, $flaw:expr) => {{
        #[cfg(feature = "checking")]
        let planted = $parts.planted($flaw);
        #[cfg(not(feature = "checking"))]
        let planted = false;
        planted
    }};
}

#[cfg(feature = "checking")]
#[cfg_attr(docsrs, doc(cfg(feature = "checking")))]
pub mod checking;
mod debug_map;
mod fast_hash;
#[cfg(feature = "checking")]
mod fresh_copies;
pub mod gang;
#[cfg(feature = "k8s")]
#[cfg_attr(docsrs, doc(cfg(feature = "k8s")))]
pub mod k8s;
mod panic_message;
pub mod queue;
pub mod scheduler;
mod sharded;
#[cfg(feature = "checking")]
mod symmetry;
#[doc(hidden)]
pub mod sync;
pub mod telemetry;
pub mod time;
mod vocabulary;
pub mod waiting;

pub use gang::{GangScheduling, GroupRegistry, GroupState, Permit};
pub use gang::{PermitPlugin, PermitPlugins, PermitPluginsError, PermitVerdict};
pub use queue::{ClusterEvent, QueueConfig, QueuedPodInfo, SchedulingQueue};
pub use scheduler::{GangCycle, Scheduler, SchedulerConfig};
pub use time::{Clock, GoDuration, ManualClock, SystemClock, Time, TimerDriver};
pub use vocabulary::{
    Code, GroupKey, Labels, Mode, PluginName, PluginNames, Pod, PodGroup, PodGroupError, PodId,
    Policy, QueueingHint, Resources, Status, Taint, TaintEffect, Toleration, TolerationOperator,
};
pub use waiting::{
    AddError, Cause, Decision, DecisionSink, WaitingPod, WaitingPods, WaitingRef, WaitingState,
};
