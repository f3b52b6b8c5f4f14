//! gangway-check: the gang and queue protocol of Kubernetes gang scheduling, model-checked over
//! [gangsched]'s real states and driver steps with
//! [stateright](https://docs.rs/stateright) — every ordering of the informer's, the scheduler's,
//! the timer's and the binding workers' critical sections on a small cluster, each run as the
//! scheduler's own step on the core's own queue, gang, waiting-map, node-cache and driver
//! states. `gangway check` is its command line.
//!
//! 1. [`Cluster`] — a state: `Groups`, `WaitingState`, `CacheState`, `QueueState` and each
//!    pod's [`Stage`]; [`ClusterConfig`] and [`Preset`] say what is checked, [`Dimensions`]
//!    change it.
//! 2. [`GangProtocol`] — the model: each [`Action`] is one critical section of the concurrent
//!    core (scheduler, timer, binder, informer): the core's own driver step, run on the
//!    state's pure parts (`parts.rs`); the properties are I3–I9 (`always`) and vacuity guards
//!    (`sometimes`). [`Flaw`]s are bugs planted in the core's steps that the checker must find.
//! 3. [`check`] / [`check_model`] — explore and report ([`CheckReport`]), counterexamples as
//!    [`Timeline`]s (text, SVG, JSON), each action in the words of [`action_step`];
//!    [`start_explorer`] / [`serve`] — stateright's explorer on [`NamedActions`] (the same
//!    model, its actions named in the timeline's words).
//! 4. [`discover`], [`random_path`] — paths to replay on the real core (`gangway-tests`).
//!
//! Its API is the model checker's, and like gangsched's `checking` feature it builds on, it
//! is not semver-stable.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod cluster;
mod dimensions;
mod drive;
mod explorer;
mod home;
mod parts;
mod paths;
mod properties;
mod protocol;
mod run;
mod serve;
mod settling;
mod shared;
mod steps;
mod symmetry;
mod timeline;
mod words;

#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod flaw_tests;
#[cfg(test)]
mod pod_group_tests;
#[cfg(test)]
mod symmetry_tests;
#[cfg(test)]
mod timeline_tests;
#[cfg(test)]
mod witness;

pub use cluster::{Budget, Cluster, ClusterConfig, Stage};
pub use dimensions::{gang_cycle_name, parse_gang_cycle, Dimensions, GangSpec};
pub use drive::{drive, Driven, InCycle};
pub use explorer::{NamedAction, NamedActions};
pub use paths::{discover, random_path, random_path_from, Path};
pub use properties::{accounting, conservation, held_for_lost_member, lost_event, stuck_gang};
pub use protocol::{Action, GangProtocol, Quota};
pub use run::{check, check_model, check_with, timeline, CheckReport, Preset, Search, Verdict};
pub use serve::{serve, start_explorer, Explorer};
pub use settling::{check_settling, Settling};
pub use shared::Shared;
pub use steps::Flaw;
pub use symmetry::representative;
pub use timeline::{Step, Timeline};
pub use words::{action_label, action_step};
