//! The facade's own behaviour in a normal build, on real threads: what every lock protocol
//! above it takes for granted. (Under `--cfg loom` its modelled channel has its own model,
//! `tests/tests/loom_channel.rs`.) Issue #43: these were missed by the unit tier, the facade
//! being exercised only through the components above it.

use std::time::{Duration, Instant};

use super::atomic::{AtomicU64, Ordering};
use super::channel::unbounded;
use super::{model, thread, Arc, Condvar, Mutex};

/// `model` runs its closure once, here, in a normal build.
#[test]
fn a_model_runs_once_on_real_threads() {
    let runs = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&runs);
    model(move || {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// One waiter on a condition variable, woken by `notify_one` long before its one-minute
/// timeout: it sees the flag and says it was woken, not timed out.
#[test]
fn notify_one_wakes_a_waiter() {
    let shared = Arc::new((Mutex::new(false), Condvar::new()));
    let (tx, rx) = unbounded();
    let waiter = Arc::clone(&shared);
    thread::spawn("waiter", move || {
        let (flag, woken) = &*waiter;
        let mut set = flag.lock();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !*set && Instant::now() < deadline {
            woken.wait_for(&mut set, Duration::from_secs(60));
        }
        tx.send(*set).ok();
    });
    std::thread::sleep(Duration::from_millis(50));
    *shared.0.lock() = true;
    shared.1.notify_one();
    let deadline = Instant::now() + Duration::from_secs(10);
    let woke = loop {
        if let Some(set) = rx.try_recv() {
            break Some(set);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    assert_eq!(woke, Some(true), "the waiter was not woken within 10 s");
}

/// `drain` takes everything ready, in order, and leaves the channel empty; a send to a
/// channel whose receiver is gone hands the value back with a message that says so.
#[test]
fn a_channel_drains_in_order_and_hands_back_what_it_cannot_send() {
    let (tx, rx) = unbounded();
    for i in 0..3 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.drain(), [0, 1, 2]);
    assert_eq!(rx.drain(), Vec::<i32>::new());
    drop(rx);
    let err = tx.send(7).unwrap_err();
    assert_eq!(err.0, 7);
    assert_eq!(err.to_string(), "sending on a disconnected channel");
}
