use std::fmt;

use super::alarm::Wake;
use super::{Alarm, Clock, Time};
use crate::sync::thread::{self, JoinHandle};

/// Something with deadlines that a [`TimerDriver`] keeps: the waiting-pod map, and later the
/// gang registry. Timeouts take effect only through [`expire`](Deadlines::expire).
pub trait Deadlines: Send + Sync + 'static {
    /// Applies every timeout whose deadline is at or before `now`.
    fn expire(&self, now: Time);

    /// The earliest deadline not yet expired, if any.
    fn next_deadline(&self) -> Option<Time>;

    /// Keep `alarm` and ring it whenever a deadline earlier than every other is added, so a
    /// sleeping timer wakes up in time for it.
    fn ring_on_earlier_deadline(&self, alarm: Alarm);
}

/// One background thread that sleeps until the next deadline of a [`Deadlines`] and calls
/// `expire(clock.now())`. It wakes early when an earlier deadline is added or a
/// [`ManualClock`](super::ManualClock) is advanced, and stops (and is joined) when dropped or
/// [`shutdown`](TimerDriver::shutdown). No thread per waiting pod and no timer object per pod.
#[must_use = "the timer thread stops when the TimerDriver is dropped"]
pub struct TimerDriver {
    alarm: Alarm,
    thread: Option<JoinHandle<()>>,
}

impl TimerDriver {
    /// Starts the timer thread for `target`, reading time from `clock`.
    pub fn spawn<D, C>(target: D, clock: C) -> TimerDriver
    where
        D: Deadlines,
        C: Clock + 'static,
    {
        let alarm = Alarm::new();
        target.ring_on_earlier_deadline(alarm.clone());
        clock.watch(&alarm);
        let thread = thread::spawn("gangway-timer", {
            let alarm = alarm.clone();
            move || run(&target, &clock, &alarm)
        });
        TimerDriver {
            alarm,
            thread: Some(thread),
        }
    }

    /// Makes the timer look at its deadlines again now.
    pub fn wake(&self) {
        self.alarm.ring();
    }

    /// Stops the timer thread and waits for it to end.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        self.alarm.stop();
        if let Some(thread) = self.thread.take() {
            // A panic in the target's `expire` ends the thread; it is reported there, and
            // re-raising it here (possibly inside another drop) would only abort.
            let _ = thread.join();
        }
    }
}

fn run<D: Deadlines, C: Clock>(target: &D, clock: &C, alarm: &Alarm) {
    loop {
        target.expire(clock.now());
        let timeout = match target.next_deadline() {
            None => None,
            Some(deadline) => clock.real_time_until(deadline),
        };
        if timeout.is_some_and(|t| t.is_zero()) {
            continue;
        }
        if alarm.sleep(timeout) == Wake::Stopped {
            return;
        }
    }
}

impl Drop for TimerDriver {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

impl fmt::Debug for TimerDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerDriver")
            .field("running", &self.thread.is_some())
            .finish()
    }
}
