//! The blocking pop, on real threads.

use gangsched::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gangsched::queue::{Popped, QueuePlace};
use gangsched::sync::thread::{self, JoinHandle};
use gangsched::sync::Arc;
use gangsched::{SchedulingQueue, Time};

use super::fixtures::{id, plugins, pod, s, DEFAULT, FIT, PENDING, T0};
use super::vocabulary::Ev;

/// How long a popper may take to wake once it should.
const WAKE: Duration = Duration::from_secs(5);
/// How long a popper is given to block before the test checks it still waits.
const SETTLE: Duration = Duration::from_millis(30);

fn locked_queue() -> (SchedulingQueue, Arc<AtomicBool>) {
    let open = Arc::new(AtomicBool::new(false));
    let q = SchedulingQueue::new(DEFAULT, Arc::new(plugins(open.clone())));
    (q, open)
}

fn spawn_popper(q: &SchedulingQueue) -> JoinHandle<Option<Popped>> {
    let q = q.clone();
    thread::spawn("popper", move || q.pop())
}

/// Waits (up to [`WAKE`]) for the popper to return; on timeout closes the queue so the thread
/// ends, and fails.
fn join_popper(q: &SchedulingQueue, h: JoinHandle<Option<Popped>>, ctx: &str) -> Option<Popped> {
    let start = Instant::now();
    while !h.is_finished() {
        if start.elapsed() > WAKE {
            q.close();
            let _ = h.join();
            panic!("{ctx}: the blocked pop was not woken within {WAKE:?}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    h.join().expect("the popper does not panic")
}

/// Spawns a popper on an empty active queue, checks it blocks, runs `wake`, and returns what
/// the pop returned.
fn blocked_pop_woken_by(q: &SchedulingQueue, ctx: &str, wake: impl FnOnce()) -> Option<Popped> {
    assert_eq!(q.lengths().active, 0, "{ctx}: nothing active yet");
    let h = spawn_popper(q);
    std::thread::sleep(SETTLE);
    assert!(
        !h.is_finished(),
        "{ctx}: pop blocks while nothing is active"
    );
    wake();
    let popped = join_popper(q, h, ctx);
    q.snapshot().check().expect("I4");
    popped
}

/// `TestPriorityQueue_Pop` (`tryPop`): a pop on an empty queue blocks until a pod is added.
pub fn pop_blocks_until_add() {
    let (q, _) = locked_queue();
    let popped = blocked_pop_woken_by(&q, "add", || {
        assert!(q.add(pod("hpp", 1000), T0).unwrap());
    });
    let popped = popped.expect("a pod");
    assert_eq!(popped.info.id(), &id("hpp"));
    assert_eq!(q.place(&id("hpp")), Some(QueuePlace::InFlight));
    assert_eq!(q.lengths().in_flight, 1);
}

/// `TestSchedulingQueue_Close`: close wakes a blocked pop, which returns `None`; a closed
/// queue still hands out the pods already active, then `None`.
pub fn close_wakes_a_blocked_pop() {
    let (q, _) = locked_queue();
    assert!(blocked_pop_woken_by(&q, "close", || q.close()).is_none());
    assert!(q.pop().is_none(), "closed and empty: no wait");

    let (q, _) = locked_queue();
    q.add(pod("a", 0), T0).unwrap();
    q.close();
    assert_eq!(q.pop().map(|p| p.info.id().clone()), Some(id("a")));
    assert!(q.pop().is_none());
}

/// (gangway) Every operation that makes a pod active wakes a blocked pop (I2 for the queue):
/// an event, an activation, the end of a backoff, an update that lifts a gate, a pod handed
/// back pending on a plugin an event during its attempt concerned.
pub fn every_way_into_the_active_queue_wakes_a_blocked_pop() {
    let (q, open) = locked_queue();
    let park = |name: &str, now: Time| {
        q.add(pod(name, 0), now).unwrap();
        let p = q.try_pop().unwrap();
        let place = q
            .add_unschedulable_if_not_present(p.info.rejected_by(FIT), now)
            .unwrap();
        assert_eq!(place, Some(QueuePlace::Unschedulable));
    };

    park("by-event", T0);
    let p = blocked_pop_woken_by(&q, "move_all", || {
        assert_eq!(
            q.move_all_to_active_or_backoff(Ev::PodDeleted.event(), None, s(5)),
            1
        );
    });
    assert_eq!(p.unwrap().info.id(), &id("by-event"));

    park("by-activate", s(10));
    let p = blocked_pop_woken_by(&q, "activate", || {
        assert_eq!(q.activate(&[id("by-activate")], s(10)), 1);
    });
    assert_eq!(p.unwrap().info.id(), &id("by-activate"));

    park("by-backoff", s(20));
    assert_eq!(
        q.move_all_to_active_or_backoff(Ev::PodDeleted.event(), None, s(20)),
        1
    );
    assert_eq!(q.place(&id("by-backoff")), Some(QueuePlace::Backoff(s(21))));
    let p = blocked_pop_woken_by(&q, "flush_backoff_completed", || {
        assert_eq!(q.flush_backoff_completed(s(21)), 1);
    });
    assert_eq!(p.unwrap().info.id(), &id("by-backoff"));

    assert!(!q.add(pod("gated-a", 0), s(30)).unwrap());
    let p = blocked_pop_woken_by(&q, "update", || {
        open.store(true, Ordering::SeqCst);
        let place = q.update(pod("gated-a", 0), pod("gated-a", 0), s(31));
        assert!(matches!(place, QueuePlace::Active(_)));
    });
    assert_eq!(p.unwrap().info.id(), &id("gated-a"));

    q.add(pod("pending", 0), s(40)).unwrap();
    let attempt = q.try_pop().unwrap();
    q.move_all_to_active_or_backoff(Ev::PodDeleted.event(), None, s(40));
    let p = blocked_pop_woken_by(&q, "add_unschedulable_if_not_present", || {
        let place = q
            .add_unschedulable_if_not_present(attempt.info.pending_on(PENDING), s(40))
            .unwrap();
        assert!(matches!(place, Some(QueuePlace::Active(_))));
    });
    assert_eq!(p.unwrap().info.id(), &id("pending"));
    q.close();
}
