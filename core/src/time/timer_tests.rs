//! The timer's plumbing, with real threads: the alarm's latch, the clocks' rings and the
//! `TimerDriver`'s thread. Everything above it (the waiting map's and the gang registry's
//! timeouts) is tested through `expire(now)` with time as data, so these are the only tests that
//! see a timeout take effect by itself (issue #43: the plumbing's mutants were missed by the
//! unit tier and judged only by the threaded end-to-end tests and `loom_timer`).
//!
//! A lost wake-up or a thread that never ends fails its test within a bound (`BOUND`) instead of
//! hanging it: no test sleeps without a timeout on the thread that asserts.

use std::time::{Duration, Instant};

use super::alarm::Wake;
use super::{Alarm, Clock, Deadlines, ManualClock, SystemClock, Time, TimerDriver};
use crate::sync::channel::unbounded;
use crate::sync::{thread, Arc, Mutex};

/// How long a test waits for something that should happen at once.
const BOUND: Duration = Duration::from_secs(10);

/// `f` on another thread, its result if it returns within [`BOUND`], else `None` (the thread is
/// left to itself).
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = unbounded();
    thread::spawn("within", move || {
        tx.send(f()).ok();
    });
    let deadline = Instant::now() + BOUND;
    while Instant::now() < deadline {
        if let Some(value) = rx.try_recv() {
            return Some(value);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

/// What a sleep that does not wait (a zero timeout) finds, on another thread within [`BOUND`]:
/// a sleep that mistook its timeout for nothing would loop for ever.
fn woken(alarm: &Alarm) -> Option<Wake> {
    let sleeper = alarm.clone();
    within(move || sleeper.sleep(Some(Duration::ZERO)))
}

/// Polls `done` until it holds or [`BOUND`] passes; whether it held.
fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + BOUND;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    done()
}

#[test]
fn a_ring_before_the_sleep_is_kept_and_consumed_by_it() {
    let alarm = Alarm::new();
    alarm.ring();
    assert_eq!(woken(&alarm), Some(Wake::Rung), "the ring was kept");
    assert_eq!(woken(&alarm), Some(Wake::TimedOut), "the ring was consumed");
}

#[test]
fn a_sleep_with_nothing_to_wake_it_times_out() {
    let alarm = Alarm::new();
    let sleeper = alarm.clone();
    assert_eq!(
        within(move || sleeper.sleep(Some(Duration::from_millis(5)))),
        Some(Wake::TimedOut)
    );
}

/// A ring or a stop that arrives while the sleeper waits (50 ms after it started, long before
/// its one-minute timeout) ends the sleep with its own reason. Whatever the timing, the right
/// code answers the same; a sleep that mistook either for its timeout is seen when the ring
/// lands during the wait, as it almost always does.
#[test]
fn a_ring_or_a_stop_during_the_sleep_ends_it_for_its_own_reason() {
    for (signal, expected) in [
        (Alarm::ring as fn(&Alarm), Wake::Rung),
        (Alarm::stop, Wake::Stopped),
    ] {
        let alarm = Alarm::new();
        let sleeper = alarm.clone();
        let (tx, rx) = unbounded();
        thread::spawn("sleeper", move || {
            tx.send(sleeper.sleep(Some(Duration::from_secs(60)))).ok();
        });
        std::thread::sleep(Duration::from_millis(50));
        signal(&alarm);
        assert!(
            eventually(|| rx
                .try_recv()
                .map(|woke| assert_eq!(woke, expected))
                .is_some()),
            "{expected:?}: the sleep did not end"
        );
    }
}

#[test]
fn a_stopped_alarm_says_so_and_ends_every_later_sleep() {
    let alarm = Alarm::new();
    assert!(!alarm.is_stopped());
    alarm.stop();
    assert!(alarm.is_stopped());
    alarm.ring();
    assert_eq!(woken(&alarm), Some(Wake::Stopped), "a stop outranks a ring");
}

#[test]
fn a_system_clock_counts_real_time_from_its_creation() {
    let clock = SystemClock::new();
    std::thread::sleep(Duration::from_millis(2));
    let now = clock.now();
    assert!(now >= Time::ZERO + Duration::from_millis(2), "{now}");
    let hour = Duration::from_secs(3600);
    let until = clock.real_time_until(now + hour).unwrap();
    assert!(until <= hour && until > hour - BOUND, "{until:?}");
}

#[test]
fn advancing_a_manual_clock_rings_its_live_watchers_only() {
    let clock = ManualClock::new(Time::ZERO);
    let (watching, stopped) = (Alarm::new(), Alarm::new());
    clock.watch(&watching);
    clock.watch(&stopped);
    stopped.stop();
    clock.advance(Duration::from_secs(1));
    assert_eq!(woken(&watching), Some(Wake::Rung), "advance");
    clock.advance_to(Time::from_secs(5));
    assert_eq!(woken(&watching), Some(Wake::Rung), "advance_to");
}

/// A `Deadlines` that records each `expire` and has at most one deadline, dropped once expired.
#[derive(Default)]
struct Recorder {
    expired_at: Mutex<Vec<Time>>,
    deadline: Mutex<Option<Time>>,
}

struct Target(Arc<Recorder>);

impl Deadlines for Target {
    fn expire(&self, now: Time) {
        self.0.expired_at.lock().push(now);
        let mut deadline = self.0.deadline.lock();
        if deadline.is_some_and(|d| d <= now) {
            *deadline = None;
        }
    }

    fn next_deadline(&self) -> Option<Time> {
        *self.0.deadline.lock()
    }

    fn ring_on_earlier_deadline(&self, _alarm: Alarm) {}
}

/// A recorder with `deadline`, and the driver keeping it on `clock`.
fn driven(deadline: Option<Time>, clock: impl Clock + 'static) -> (Arc<Recorder>, TimerDriver) {
    let recorder = Arc::new(Recorder::default());
    *recorder.deadline.lock() = deadline;
    let driver = TimerDriver::spawn(Target(Arc::clone(&recorder)), clock);
    (recorder, driver)
}

/// Drops `driver` and asserts that its thread ended within [`BOUND`]. Each test ends its driver
/// so: one left to drop at the end of a test would hang it if stopping were broken.
fn stop(driver: TimerDriver) {
    assert!(within(move || drop(driver)).is_some(), "not joined");
}

fn expiries(recorder: &Recorder) -> usize {
    recorder.expired_at.lock().len()
}

#[test]
fn the_driver_expires_at_start_and_again_each_time_it_is_woken() {
    let (recorder, driver) = driven(None, ManualClock::new(Time::ZERO));
    assert!(eventually(|| expiries(&recorder) == 1), "at start");
    driver.wake();
    assert!(eventually(|| expiries(&recorder) == 2), "woken once");
    driver.wake();
    assert!(eventually(|| expiries(&recorder) == 3), "woken twice");
    stop(driver);
}

#[test]
fn a_manual_clock_moved_to_the_deadline_wakes_the_driver_for_it() {
    let deadline = Time::from_secs(5);
    let clock = ManualClock::new(Time::ZERO);
    let (recorder, driver) = driven(Some(deadline), clock.clone());
    assert!(eventually(|| expiries(&recorder) == 1), "at start");
    clock.advance_to(deadline);
    assert!(
        eventually(|| recorder.expired_at.lock().last() == Some(&deadline)),
        "{:?}",
        *recorder.expired_at.lock()
    );
    stop(driver);
}

#[test]
fn a_system_clock_driver_sleeps_until_the_deadline_then_expires_it() {
    let clock = SystemClock::new();
    let deadline = clock.now() + Duration::from_millis(20);
    let (recorder, driver) = driven(Some(deadline), clock);
    assert!(
        eventually(|| recorder.deadline.lock().is_none()),
        "not expired: {:?}",
        *recorder.expired_at.lock()
    );
    assert!(recorder.expired_at.lock().iter().any(|&t| t >= deadline));
    stop(driver);
}

/// Dropping the driver, or shutting it down, stops its thread and joins it: the thread's copy
/// of the target is gone when either returns.
#[test]
fn dropping_or_shutting_down_the_driver_ends_its_thread() {
    for shut_down in [false, true] {
        let (recorder, driver) = driven(None, ManualClock::new(Time::ZERO));
        assert!(eventually(|| expiries(&recorder) == 1), "at start");
        let ended = within(move || {
            if shut_down {
                driver.shutdown();
            } else {
                drop(driver);
            }
        });
        assert!(ended.is_some(), "shut_down {shut_down}: not joined");
        assert_eq!(Arc::strong_count(&recorder), 1, "shut_down {shut_down}");
    }
}
