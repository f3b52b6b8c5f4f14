//! The operation vocabulary: one enum of operations per component of the core, each with the
//! one function that applies it to the real core. The lockstep drivers, the differential
//! runners against kube-scheduler's code, the conformance tables, the fuzz harnesses and the
//! model checker's replay translate their own inputs into these instead of each calling the
//! core on its own.
//!
//! - [`queue`] — the scheduling queue: [`QueueOp`](queue::QueueOp), [`queue::apply`] on the
//!   pure state or the locked queue, `QueueModel::apply` on the model.
//! - [`gang`] — the gang plugin's cluster events and extension points:
//!   [`GangOp`](gang::GangOp), [`gang::apply`] over the plugin's parts (flaw planted or not).
//! - [`scheduler`] — the driver's cluster events, timers, scheduling steps, binding cycles and
//!   an embedder's decisions: [`SchedulerOp`](scheduler::SchedulerOp), [`scheduler::apply`] over
//!   any `Parts` (a real scheduler's, with a flaw planted or not, or a model checker's states).
//! - [`waiting`] — the waiting map's decisions: [`Call`](waiting::Call), run by each real map
//!   under test through its [`Subject`](waiting::Subject) (the pure `WaitingState`, the sharded
//!   `WaitingPods`), beside the model (`model/src/waiting_lockstep/`).

/// The typed result of each kind of operation, taken out of its outcome enum (`$outcome`,
/// which has a `name` for the message): each `apply` returns the outcome of its operation's
/// kind, so another is a bug in `apply`, and the accessor says which.
macro_rules! outcome_of {
    ($outcome:ident $(<$g:ident>)?; $($method:ident: $variant:ident($ty:ty);)*) => {
        impl$(<$g>)? $outcome$(<$g>)? {
            $(
                #[doc = concat!("The result of a `", stringify!($variant), "` outcome.")]
                pub fn $method(self) -> $ty {
                    match self {
                        $outcome::$variant(result) => result,
                        other => panic!(
                            "apply returned a {} outcome for a {} operation",
                            other.name(),
                            stringify!($variant)
                        ),
                    }
                }
            )*
        }
    };
}

pub mod gang;
pub mod queue;
pub mod scheduler;
pub mod waiting;
