//! The operation vocabulary: one enum of operations per component of the core, each with the
//! one function that applies it to the real core. The lockstep drivers, the differential
//! runners against kube-scheduler's code, the conformance tables, the fuzz harnesses and the
//! model checker's replay translate their own inputs into these instead of each calling the
//! core on its own.
//!
//! - [`queue`] — the scheduling queue: [`QueueOp`](queue::QueueOp), [`queue::apply`].

pub mod queue;
