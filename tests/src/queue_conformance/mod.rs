//! The scheduling-queue conformance tests (`tests/conformance_queue.rs`): kube-scheduler's
//! scheduling-queue unit tests as a table of [`Case`]s, grouped by theme, and one driver,
//! [`run`], that runs a case on [`QueueState`](gangsched::queue::QueueState) or on
//! [`SchedulingQueue`](gangsched::SchedulingQueue) with `check()` after every step; plus the
//! blocking-pop tests on real threads. Ported from kubernetes/kubernetes (Copyright 2017 The
//! Kubernetes Authors, Apache License 2.0); the test file's header gives the source and the
//! adaptations.

mod activate;
mod backoff;
mod blocking_pop;
mod driver;
mod export;
mod fidelity;
mod fixtures;
mod flushes;
mod gating;
mod in_flight;
mod ordering;
mod table;
mod unschedulable;
mod updates_deletes;
mod vocabulary;

pub use blocking_pop::{
    close_wakes_a_blocked_pop, every_way_into_the_active_queue_wakes_a_blocked_pop,
    pop_blocks_until_add,
};
pub use driver::{run, run_fidelity, Under};
pub use export::{export, place_name, Expect, Exported};
pub use fidelity::FIDELITY;
pub use fixtures::DEFAULT;
pub use table::cases;
pub use vocabulary::{At, Case, Ev, Pre, Step};
