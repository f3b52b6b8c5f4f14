//! Presenting model-checker counterexamples (issue #6 builds the checker on top).
//!
//! A counterexample is a [`Timeline`] of [`Step`]s — one per action, naming the actor, the pod
//! and gang it touched and what changed — printed as a numbered text timeline
//! ([`Timeline::write_text`]), drawn as an SVG sequence diagram ([`Timeline::to_svg`]) or
//! serialised as JSON ([`Timeline::to_json`]).

mod cluster;
mod protocol;
mod run;
mod timeline;

#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod timeline_tests;

pub use cluster::{Cluster, ClusterConfig, Stage};
pub use protocol::{accounting, held_for_lost_member, Action, Flaw, GangProtocol};
pub use run::{check, check_model, timeline, CheckReport, Preset, Verdict};
pub use timeline::{Step, Timeline};
