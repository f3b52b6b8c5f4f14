//! The ground floor: the words every other layer speaks, importing nothing of the crate but
//! the time and sync facades beside it.
//!
//! 1. [`Pod`], [`PodId`] — a pod as the scheduler sees it: its requests, labels, node
//!    selector, tolerations, priority and the group it names.
//! 2. [`PodGroup`], [`Policy`], [`GroupKey`] — the PodGroup object and its key.
//! 3. [`Resources`] — what a pod requests and a node offers; [`Taint`], [`Toleration`].
//! 4. [`Status`], [`Code`] — a plugin's verdict; [`PluginName`], [`PluginNames`].
//! 5. [`Labels`], [`Mode`], [`QueueingHint`].
//!
//! Beside it on the ground floor sit the time and sync facades and a few utilities (sharded
//! tables, hashing, telemetry, panic messages). Above it, each layer imports only from those
//! below: waiting → gang → queue → scheduler (`tests/tests/conformance_layers.rs` fails on an
//! import that runs upward).

mod group_key;
mod labels;
mod mode;
mod plugin_name;
mod plugin_names;
mod pod;
mod pod_group;
mod queueing_hint;
mod resources;
mod status;
mod taints;

pub use group_key::GroupKey;
pub use labels::Labels;
pub use mode::Mode;
pub use plugin_name::PluginName;
pub use plugin_names::PluginNames;
pub use pod::{Pod, PodId};
pub use pod_group::{PodGroup, PodGroupError, Policy};
pub use queueing_hint::QueueingHint;
pub use resources::Resources;
pub use status::{Code, Status};
pub(crate) use taints::untolerated;
pub use taints::{Taint, TaintEffect, Toleration, TolerationOperator};
