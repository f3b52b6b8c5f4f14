use std::fmt;
use std::time::{Duration, Instant};

use super::{Alarm, Time};
use crate::sync::{Arc, Mutex};

/// A source of [`Time`]. gangway's components never call it themselves: a caller reads the clock
/// and passes the `Time` in, so tests, loom models and the model checker choose time freely.
/// Only the [`TimerDriver`](super::TimerDriver) holds a clock.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Time;

    /// How long, in real time, until this clock reads `t` (zero if it already does). `None`
    /// means real time says nothing about this clock: a timer must wait for the clock to
    /// [ring](Clock::watch) it instead.
    fn real_time_until(&self, t: Time) -> Option<Duration>;

    /// Asks the clock to ring `alarm` whenever it moves other than with real time (a
    /// [`ManualClock`] being advanced). The default does nothing.
    fn watch(&self, alarm: &Alarm) {
        let _ = alarm;
    }
}

/// The real monotonic clock. Its origin is the moment it was created, so `Time`s from two
/// `SystemClock`s are not comparable; share one (it is `Copy`).
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> SystemClock {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Time {
        let nanos = self.origin.elapsed().as_nanos();
        Time::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    fn real_time_until(&self, t: Time) -> Option<Duration> {
        Some(t - self.now())
    }
}

/// A clock that moves only when told to, for tests, simulations and model checking. Clones
/// share the same time, so one thread can advance it while others read it. It never moves
/// backwards. Advancing it rings every [watching](Clock::watch) alarm.
#[derive(Clone, Default)]
pub struct ManualClock {
    inner: Arc<ManualInner>,
}

#[derive(Default)]
struct ManualInner {
    now: Mutex<Time>,
    watchers: Mutex<Vec<Alarm>>,
}

impl ManualClock {
    /// A clock reading `start`.
    pub fn new(start: Time) -> ManualClock {
        let clock = ManualClock::default();
        *clock.inner.now.lock() = start;
        clock
    }

    /// Moves the clock forward by `d` and returns the new time.
    pub fn advance(&self, d: Duration) -> Time {
        let now = {
            let mut now = self.inner.now.lock();
            *now += d;
            *now
        };
        self.ring_watchers();
        now
    }

    /// Moves the clock to `t` if that is later than now, and returns the (new) time.
    pub fn advance_to(&self, t: Time) -> Time {
        let now = {
            let mut now = self.inner.now.lock();
            *now = (*now).max(t);
            *now
        };
        self.ring_watchers();
        now
    }

    fn ring_watchers(&self) {
        // Copy the list out so no alarm is rung under this clock's lock.
        let watchers: Vec<Alarm> = {
            let mut watchers = self.inner.watchers.lock();
            watchers.retain(|alarm| !alarm.is_stopped());
            watchers.clone()
        };
        for alarm in watchers {
            alarm.ring();
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Time {
        *self.inner.now.lock()
    }

    fn real_time_until(&self, _t: Time) -> Option<Duration> {
        None
    }

    fn watch(&self, alarm: &Alarm) {
        self.inner.watchers.lock().push(alarm.clone());
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now", &self.now())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_is_shared_and_monotonic() {
        let a = ManualClock::new(Time::from_secs(10));
        let b = a.clone();
        assert_eq!(a.advance(Duration::from_secs(5)), Time::from_secs(15));
        assert_eq!(b.now(), Time::from_secs(15));
        assert_eq!(b.advance_to(Time::from_secs(1)), Time::from_secs(15));
        assert_eq!(a.real_time_until(Time::MAX), None);
    }

    #[test]
    fn system_clock_moves_forward() {
        let clock = SystemClock::new();
        let t0 = clock.now();
        let t1 = clock.now();
        assert!(t1 >= t0);
        assert_eq!(clock.real_time_until(Time::ZERO), Some(Duration::ZERO));
    }
}
