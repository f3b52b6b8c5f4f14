//! gangway: the concurrency core of Kubernetes gang scheduling, checked race-free.
//!
//! A gang is a group of pods that must run together or not at all. kube-scheduler parks each
//! member at its Permit step until enough members are placed, then lets them all go. gangway
//! implements that barrier — the waiting-pod map, the gang state machine and the scheduling
//! queue — as a library whose every lock, wake-up and timeout race is explored exhaustively with
//! [loom](https://docs.rs/loom), and whose invariants (I1–I8 in `docs/guarantees.md`) each have
//! a checker and a witness that the checker finds their violation.
//!
//! # Parking pods at Permit
//!
//! A pod whose Permit plugin says `Wait` is added to the [`WaitingPods`] map with one deadline
//! per plugin. Something else decides it: a sibling allows it, a plugin rejects it, the pod is
//! deleted, or its deadline passes. The first decision wins and is reported exactly once.
//!
//! ```
//! use std::time::Duration;
//! use gangway::{Pod, Time, WaitingPods};
//!
//! let waiting = WaitingPods::new();
//! let five_minutes = Duration::from_secs(300);
//!
//! // Two members of a gang of three passed Permit with `Wait`.
//! let a = waiting.add(Pod::new("a", "ml", "trainer-0"), [("GangScheduling".into(), five_minutes)], Time::ZERO).unwrap();
//! let b = waiting.add(Pod::new("b", "ml", "trainer-1"), [("GangScheduling".into(), five_minutes)], Time::ZERO).unwrap();
//!
//! // The third reaches quorum and allows its waiting siblings.
//! waiting.for_each(|wp| { wp.allow("GangScheduling"); });
//! assert!(a.wait().is_success() && b.wait().is_success());
//! assert!(waiting.is_empty());
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
//! use gangway::{GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPods};
//!
//! let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
//! gang.on_group_added(PodGroup::gang("ml", "trainer", 3).unwrap()).unwrap();
//! let pods: Vec<Pod> = (0..3)
//!     .map(|i| Pod::new(format!("uid-{i}"), "ml", &format!("trainer-{i}")).with_group("trainer"))
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
//! [`WaitingPods::expire`] with a [`Time`]: a test, a loom thread, the model checker, or the
//! [`TimerDriver`] — one thread for the whole map, not a timer per pod.
//!
//! ```
//! use std::time::Duration;
//! use gangway::{Pod, Time, WaitingPods};
//!
//! let waiting = WaitingPods::new();
//! let wp = waiting.add(Pod::new("a", "ml", "trainer-0"), [("GangScheduling".into(), Duration::from_secs(300))], Time::ZERO).unwrap();
//! assert!(waiting.expire(Time::from_secs(299)).is_empty());
//! let expired = waiting.expire(Time::from_secs(300));
//! assert_eq!(expired[0].status.message(), "rejected due to timeout after waiting 5m0s at plugin GangScheduling");
//! assert!(wp.wait().is_rejected());
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
//! use gangway::{Clock, ManualClock, Pod, Time, TimerDriver, WaitingPods};
//!
//! let (waiting, decisions) = WaitingPods::with_channel();
//! let clock = ManualClock::new(Time::ZERO);
//! let _timer = TimerDriver::spawn(waiting.clone(), clock.clone());
//!
//! for i in 0..1000 {
//!     let pod = Pod::new(format!("uid-{i}"), "ml", &format!("worker-{i}"));
//!     waiting.add(pod, [("GangScheduling".into(), Duration::from_secs(60))], clock.now()).unwrap();
//! }
//! clock.advance(Duration::from_secs(60)); // the timer thread expires all of them
//! for _ in 0..1000 {
//!     assert!(decisions.recv().unwrap().status.is_rejected());
//! }
//! ```
//!
//! # Checked, not hoped
//!
//! Every component is a pure struct with `&mut self` transitions ([`WaitingState`]) behind a
//! thin lock ([`WaitingPods`]); the locks come from one facade, [`sync`], which becomes loom's
//! under `RUSTFLAGS="--cfg loom"`. See `docs/verification.md` for the loom models, property
//! tests and what each proves.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod fast_hash;
mod fresh_copies;
pub mod gang;
mod hint;
#[cfg(feature = "k8s")]
pub mod k8s;
mod mode;
mod plugin;
mod plugin_names;
mod pod;
pub mod queue;
pub mod scheduler;
mod sharded;
mod status;
pub mod symmetry;
pub mod sync;
pub mod telemetry;
pub mod time;
pub mod waiting;

pub use gang::{GangScheduling, GroupKey, GroupRegistry, GroupState, Permit, PodGroup, Policy};
pub use hint::QueueingHint;
pub use mode::Mode;
pub use plugin::PluginName;
pub use plugin_names::PluginNames;
pub use pod::{Pod, PodId};
pub use queue::{ClusterEvent, QueueConfig, QueuedPodInfo, SchedulingQueue};
pub use scheduler::{Resources, Scheduler, SchedulerConfig};
pub use status::{Code, Status};
pub use time::{Clock, GoDuration, ManualClock, SystemClock, Time, TimerDriver};
pub use waiting::{
    AddError, Decision, DecisionSink, WaitingPod, WaitingPods, WaitingRef, WaitingState,
};
