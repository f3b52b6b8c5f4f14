//! The timer driver on real threads and the system clock, with short timeouts.
#![cfg(not(loom))]

use std::time::{Duration, Instant};

use gangsched::{Clock, Pod, SystemClock, Time, TimerDriver, WaitingPods};

fn gang(wait: Duration) -> [(gangsched::PluginName, Duration); 1] {
    [("GangScheduling".into(), wait)]
}

#[test]
fn a_waiting_pod_times_out_on_the_system_clock() {
    let clock = SystemClock::new();
    let map = WaitingPods::new();
    let _timer = TimerDriver::spawn(map.clone(), clock);
    let start = Instant::now();
    let pod = map
        .add(
            Pod::new("a", "ns", "a"),
            gang(Duration::from_millis(50)),
            clock.now(),
        )
        .unwrap();
    let status = pod.wait();
    assert!(
        start.elapsed() >= Duration::from_millis(50),
        "not before its deadline"
    );
    assert_eq!(
        status.message(),
        "rejected due to timeout after waiting 50ms at plugin GangScheduling"
    );
    assert!(map.is_empty());
}

#[test]
fn an_earlier_deadline_wakes_a_sleeping_timer() {
    let clock = SystemClock::new();
    let (map, decisions) = WaitingPods::with_channel();
    let _timer = TimerDriver::spawn(map.clone(), clock);
    map.add(
        Pod::new("late", "ns", "late"),
        gang(Duration::from_secs(600)),
        clock.now(),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(20)); // let the timer go to sleep on the late one
    let start = Instant::now();
    map.add(
        Pod::new("soon", "ns", "soon"),
        gang(Duration::from_millis(30)),
        clock.now(),
    )
    .unwrap();
    let decision = decisions.recv().unwrap();
    assert_eq!(decision.pod.name(), "soon");
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "woken early, not at the late deadline"
    );
    assert_eq!(map.len(), 1);
}

#[test]
fn shutdown_returns_promptly_with_pods_still_waiting() {
    let clock = SystemClock::new();
    let map = WaitingPods::new();
    let timer = TimerDriver::spawn(map.clone(), clock);
    map.add(
        Pod::new("a", "ns", "a"),
        gang(Duration::from_secs(600)),
        clock.now(),
    )
    .unwrap();
    let start = Instant::now();
    timer.shutdown();
    assert!(start.elapsed() < Duration::from_secs(60));
    assert_eq!(map.len(), 1, "shutting the timer down decides nothing");
    assert_eq!(map.next_deadline().map(|t| t > Time::ZERO), Some(true));
}

#[test]
fn many_pods_few_threads() {
    // 100,000 pods wait at once; one timer thread and one receiver serve them all.
    let clock = SystemClock::new();
    let (map, decisions) = WaitingPods::with_channel();
    let _timer = TimerDriver::spawn(map.clone(), clock);
    let now = clock.now();
    for i in 0..100_000 {
        let pod = Pod::new(format!("uid-{i}"), "ns", &format!("w-{i}"));
        map.add(pod, gang(Duration::from_millis(100)), now).unwrap();
    }
    let mut rejected = 0;
    while rejected < 100_000 {
        assert!(decisions.recv().unwrap().status.is_rejected());
        rejected += 1;
    }
    assert!(map.is_empty());
    assert!(decisions.try_recv().is_none());
}
