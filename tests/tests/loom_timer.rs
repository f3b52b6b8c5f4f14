//! Loom model of the timer driver: the one background thread that applies timeouts.
//!
//! A pod is added while the clock advances past its deadline; whichever happens first, the
//! timer thread must wake (the add rings it for an earlier deadline, the clock rings it when
//! it moves), reject the pod and deliver the timeout — no lost wake-up (I2). Dropping the
//! driver must wake and join the sleeping thread.

use std::time::Duration;

use gangsched::sync::{model, thread};
use gangsched::waiting::timeout_message;
use gangsched::{ManualClock, Pod, Time, TimerDriver, WaitingPods};

#[test]
fn timer_wakes_for_add_and_clock_advance_and_stops_on_drop() {
    model(|| {
        let (map, decisions) = WaitingPods::with_channel();
        let clock = ManualClock::new(Time::ZERO);
        let timer = TimerDriver::spawn(map.clone(), clock.clone());
        let adder = thread::spawn("adder", {
            let map = map.clone();
            move || {
                let waits = [("GangScheduling".into(), Duration::from_secs(10))];
                map.add(Pod::new("a", "ns", "a"), waits, Time::ZERO)
                    .unwrap();
            }
        });
        clock.advance(Duration::from_secs(10));
        let decision = decisions
            .recv()
            .expect("the timer delivers the timeout (I2)");
        assert_eq!(
            decision.status.message(),
            timeout_message(Duration::from_secs(10), &"GangScheduling".into())
        );
        adder.join().unwrap();
        assert!(map.is_empty());
        drop(timer); // stops and joins the timer thread; loom reports it if it never wakes
        assert!(decisions.try_recv().is_none(), "timed out once (I1)");
    });
}

#[test]
fn dropping_an_idle_timer_joins_it() {
    model(|| {
        let map = WaitingPods::new();
        let timer = TimerDriver::spawn(map.clone(), ManualClock::new(Time::ZERO));
        drop(timer);
        assert!(map.is_empty());
    });
}
