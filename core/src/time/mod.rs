//! Time as data: gangway never reads a clock on its own.
//!
//! 1. [`Time`] — a point on a monotonic timeline, in nanoseconds.
//! 2. [`Clock`] — where a `Time` comes from: [`SystemClock`] (real) or [`ManualClock`] (by hand).
//! 3. [`Alarm`] — wakes a sleeping timer early.
//! 4. [`TimerDriver`] — the one background thread that calls [`Deadlines::expire`] on time.
//! 5. [`GoDuration`] — prints a duration the way Go does (`5m0s`), for upstream-exact messages.

mod alarm;
mod clock;
mod driver;
mod go_duration;
mod instant;
#[cfg(test)]
mod timer_tests;

pub use alarm::Alarm;
#[cfg(test)]
pub(crate) use alarm::Wake;
pub use clock::{Clock, ManualClock, SystemClock};
pub use driver::{Deadlines, TimerDriver};
pub use go_duration::GoDuration;
pub use instant::Time;
