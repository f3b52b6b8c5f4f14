//! gangway-check: the gang and queue protocol of Kubernetes gang scheduling, model-checked over
//! [gangsched]'s real states and driver steps with [stateright](https://docs.rs/stateright) —
//! every ordering of the informer's, the scheduler's, the timer's and the binding workers'
//! critical sections on a small cluster, each run as the scheduler's own step on the core's own
//! queue, gang, waiting-map, node-cache and driver states. `gangway check` is its command line;
//! this crate is for checking **your own parts** the same way.
//!
//! # Checking gangway
//!
//! A [`Check`] explores a [`Preset`] cluster in a [`Mode`](gangsched::Mode) and reports each
//! property — the invariants I3–I9 (`always`) and vacuity guards (`sometimes`, which say the
//! model reached what it should) — with a numbered timeline for each counterexample:
//!
//! ```
//! use gangsched::Mode;
//! use gangway_check::{Check, Preset};
//!
//! let hardened = Check::new(Preset::Tiny, Mode::Hardened).run()?;
//! assert!(hardened.all_hold(), "{hardened}");
//!
//! // kube-scheduler's behaviour has its races: a partial gang, as a timeline.
//! let upstream = Check::new(Preset::Tiny, Mode::Upstream).run()?;
//! let partial = upstream.verdict("I3 gang atomicity").unwrap();
//! assert!(!partial.holds);
//! println!("{}", partial.trace.as_ref().unwrap());
//! # Ok::<(), gangway_check::CheckError>(())
//! ```
//!
//! # Checking your own placement and Permit plugins
//!
//! Give the check your [`Placement`](gangsched::scheduler::Placement) — with the queueing
//! hints it declares ([`requeue_on`](gangsched::scheduler::Placement::requeue_on)) — and your
//! [`PermitPlugins`](gangsched::PermitPlugins): the model runs them where the scheduler
//! does, and holds the placement to its contract at every call ([`Plugins`]: P1, a function
//! of the pod and the cache, and a node with room). Here a placement that forgets that a
//! released reservation gives room back: a pod it turned away stays parked though it fits
//! (I7), until the queue's 5-minute flush.
//!
//! ```
//! use gangsched::queue::EventKind;
//! use gangsched::scheduler::{CacheState, Placement};
//! use gangsched::{Mode, Pod, Status};
//! use gangway_check::{Check, Preset};
//!
//! struct FirstFit(&'static [EventKind]);
//!
//! impl Placement for FirstFit {
//!     fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status> {
//!         cache
//!             .nodes()
//!             .find(|node| pod.requests().fits_in(&node.free()))
//!             .map(|node| node.name().to_owned())
//!             .ok_or_else(|| Status::unschedulable("no room").with_plugin("FirstFit"))
//!     }
//!
//!     fn requeue_on(&self) -> &'static [EventKind] {
//!         self.0
//!     }
//! }
//!
//! let check = |placement| {
//!     Check::new(Preset::Medium, Mode::Hardened)
//!         .placement("FirstFit", placement)
//!         .run()
//! };
//! let wrong = check(FirstFit(&[EventKind::NodeAdd]))?;
//! assert!(!wrong.verdict("I7 no lost event").unwrap().holds);
//!
//! let room = &[EventKind::AssignedPodDelete, EventKind::NodeAdd, EventKind::NodeUpdate];
//! let right = check(FirstFit(room))?;
//! assert!(right.all_hold(), "{right}");
//! # Ok::<(), gangway_check::CheckError>(())
//! ```
//!
//! `cargo run --release -p gangway-check --example own_placement` checks that placement and a
//! second plausible mistake — one that remembers the nodes' room between calls — and prints
//! the reports. A Permit plugin of yours that rejects, or holds pods for an approval, is
//! explored the same way: each of its denials in every order with everything else, each of
//! its approvals at any moment ([`Action::PluginAllows`]).
//!
//! # The parts of the crate
//!
//! 1. [`Cluster`] — a state: `Groups`, `WaitingState`, `CacheState`, `QueueState` and each
//!    pod's [`Stage`]; [`ClusterConfig`] and [`Preset`] say what is checked, [`Dimensions`]
//!    change it.
//! 2. [`GangProtocol`] — the model: each [`Action`] is one critical section of the concurrent
//!    core (scheduler, timer, binder, informer, embedder): the core's own driver step, run on
//!    the state's pure parts (`parts.rs`) with the model's [`Plugins`]; the properties are
//!    I3–I9 and P1 (`always`) and vacuity guards (`sometimes`). [`Flaw`]s are bugs planted in
//!    the core's steps that the checker must find.
//! 3. [`Check`], [`check`] / [`check_model`] — explore and report ([`CheckReport`]: text,
//!    JSON), counterexamples as [`Timeline`]s (text, SVG, JSON), each action in the words of
//!    [`action_step`]; [`start_explorer`] / [`serve`] — stateright's explorer on
//!    [`NamedActions`] (the same model, its actions named in the timeline's words).
//! 4. [`discover`], [`random_path`] — paths to replay on the real core (`gangway-tests`).
//!
//! Its API is the model checker's, and like gangsched's `checking` feature it builds on, it
//! is not semver-stable.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod check;
mod cluster;
mod dimensions;
mod drive;
mod explorer;
mod home;
mod parts;
mod paths;
mod plugins;
mod properties;
mod protocol;
mod rest;
mod run;
mod serve;
mod settling;
mod shared;
mod state_space;
mod steps;
mod successor;
mod symmetry;
mod timeline;
mod timeliness;
mod words;

#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod flaw_tests;
#[cfg(test)]
mod in_place_tests;
#[cfg(test)]
mod pod_group_tests;
#[cfg(test)]
mod properties_tests;
#[cfg(test)]
mod symmetry_tests;
#[cfg(test)]
mod timeline_tests;
#[cfg(test)]
mod timeliness_tests;
#[cfg(test)]
mod witness;

pub use check::{Check, CheckError};
pub use cluster::{Budget, Cluster, ClusterConfig, Stage};
pub use dimensions::{gang_cycle_name, parse_gang_cycle, Dimensions, GangSpec};
pub use drive::{drive, Driven, InCycle};
pub use explorer::{NamedAction, NamedActions};
pub use paths::{discover, random_path, random_path_from, Path};
pub use plugins::Plugins;
pub use properties::{
    accounting, conservation, held_for_lost_member, lost_event, parked_with_room, stuck_gang,
};
pub use protocol::{Action, GangProtocol, Quota, I9, PLACEMENT, PROGRESS};
pub use rest::{at_rest, AtRest};
pub use run::{
    check, check_model, check_with, timeline, CheckReport, PluginsChecked, Preset, Search, Verdict,
};
pub use serve::{serve, start_explorer, Explorer};
pub use settling::{check_settling, Settling};
pub use shared::Shared;
pub use steps::Flaw;
pub use symmetry::representative;
pub use timeline::{Step, Timeline};
pub use timeliness::{gangs_with_room, rescue_only, RoomFor};
pub use words::{action_label, action_step};
