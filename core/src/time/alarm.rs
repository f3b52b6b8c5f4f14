use std::time::Duration;

use crate::sync::{Arc, Condvar, Mutex};

/// A wake-up latch for a sleeping timer: ringing it makes the timer look at its deadlines again
/// (because an earlier one was added, or a [`ManualClock`](super::ManualClock) moved); stopping
/// it ends the timer. A ring is never lost: one that arrives while the timer is busy is kept
/// until the timer next sleeps. Clones share the latch.
#[derive(Clone, Debug, Default)]
pub struct Alarm {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    flags: Mutex<Flags>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct Flags {
    rung: bool,
    stopped: bool,
}

/// Why [`Alarm::sleep`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Somebody rang; the ring is consumed.
    Rung,
    /// The timeout passed (or the sleep ended early without a ring; treat it the same).
    TimedOut,
    /// The alarm was stopped; the timer should end.
    Stopped,
}

impl Alarm {
    /// A new alarm, neither rung nor stopped.
    pub fn new() -> Alarm {
        Alarm::default()
    }

    /// Wakes the sleeper, or makes its next sleep return at once.
    pub fn ring(&self) {
        self.inner.flags.lock().rung = true;
        self.inner.wake.notify_all();
    }

    /// Ends the sleeper for good: a sleep in progress or any later one returns at once.
    pub fn stop(&self) {
        self.inner.flags.lock().stopped = true;
        self.inner.wake.notify_all();
    }

    /// Whether [`stop`](Self::stop) has been called.
    pub fn is_stopped(&self) -> bool {
        self.inner.flags.lock().stopped
    }

    /// Sleeps until rung, stopped, or `timeout` passes (`None`: no timeout).
    pub(crate) fn sleep(&self, timeout: Option<Duration>) -> Wake {
        let mut flags = self.inner.flags.lock();
        loop {
            if flags.stopped {
                return Wake::Stopped;
            }
            if flags.rung {
                flags.rung = false;
                return Wake::Rung;
            }
            match timeout {
                None => self.inner.wake.wait(&mut flags),
                Some(timeout) => {
                    self.inner.wake.wait_for(&mut flags, timeout);
                    if !flags.stopped && !flags.rung {
                        return Wake::TimedOut;
                    }
                }
            }
        }
    }
}
