//! Loom models of the scheduling queue's blocking `pop`: a popper blocked on an empty active
//! queue races the operations that make a pod active — `add`, `move_all_to_active_or_backoff`,
//! `activate` — and `close`. No wake-up may be lost (I2 for the queue): loom reports a popper
//! that sleeps forever as a deadlock. The `witness_*` tests run the same models on
//! `BrokenQueue`s that forget a notify or sleep in a second critical section, and on the real
//! queue with a `QueueFlaw` planted in its wake-ups (the bug corpus's kubernetes PR #119784 and
//! kubernetes#130976).
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_queue --target-dir target/loom`.

use gangsched::queue::{
    ClusterEvent, EventKind, PluginSet, QueueConfig, QueuePlace, SchedulingQueue,
};
use gangsched::sync::{model, thread, Arc};
use gangsched::{Pod, PodId, QueueingHint, Time};

const NODE: &str = "NodeResourcesFit";
/// Long after the parked pod's backoff: a move sends it straight to the active queue.
const LATER: Time = Time::from_secs(60);

/// A NodeResourcesFit-like plugin: freed resources may help.
fn plugins() -> PluginSet {
    PluginSet::new().with_hint(NODE, EventKind::AssignedPodDelete, |_, _| {
        Ok(QueueingHint::Queue)
    })
}

fn pod(name: &str) -> Pod {
    Pod::new(name, "ns", name)
}

fn freed() -> ClusterEvent {
    ClusterEvent::AssignedPodDelete(pod("gone"))
}

/// A blocking queue as the models drive it.
trait BlockingQueue: Send + Sync + 'static {
    fn empty() -> Self;
    /// Adds `a` and parks it in the unschedulable pool (popped, rejected by NodeResourcesFit).
    fn with_parked_pod() -> Self
    where
        Self: Sized;
    fn add(&self, pod: Pod);
    fn pop(&self) -> Option<PodId>;
    fn move_all(&self) -> usize;
    fn activate(&self, id: &PodId) -> usize;
    fn close(&self);
    fn check(&self);
}

impl BlockingQueue for SchedulingQueue {
    fn empty() -> Self {
        SchedulingQueue::new(QueueConfig::default(), Arc::new(plugins()))
    }

    fn with_parked_pod() -> Self {
        let q = Self::empty();
        park_a(&q);
        q
    }

    fn add(&self, pod: Pod) {
        SchedulingQueue::add(self, pod, LATER).unwrap();
    }

    fn pop(&self) -> Option<PodId> {
        SchedulingQueue::pop(self).map(|p| p.info.id().clone())
    }

    fn move_all(&self) -> usize {
        self.move_all_to_active_or_backoff(freed(), None, LATER)
    }

    fn activate(&self, id: &PodId) -> usize {
        SchedulingQueue::activate(self, std::slice::from_ref(id), LATER)
    }

    fn close(&self) {
        SchedulingQueue::close(self);
    }

    fn check(&self) {
        self.snapshot().check().expect("I4");
    }
}

/// Adds `a` and parks it in the unschedulable pool (popped, rejected by NodeResourcesFit).
fn park_a(q: &SchedulingQueue) {
    q.add(pod("a"), Time::ZERO).unwrap();
    let popped = q.try_pop().unwrap();
    q.add_unschedulable_if_not_present(popped.info.rejected_by(NODE), Time::ZERO)
        .unwrap();
}

/// A popper blocked on the empty queue vs the hand-back of `a`, whose attempt saw the room it
/// needs freed: rejected by NodeResourcesFit, it is poppable at once — backing off for a
/// rejection, which a pop takes when nothing is active (1.36's pop from backoff, the default)
/// — and the popper gets it.
fn blocked_pop_vs_hand_back(build: fn() -> SchedulingQueue) {
    model(move || {
        let q = Arc::new(build());
        q.add(pod("a"), Time::ZERO).unwrap();
        let popped = q.try_pop().unwrap();
        assert_eq!(
            q.move_all_to_active_or_backoff(freed(), None, Time::ZERO),
            0
        );
        let popper = thread::spawn("popper", {
            let q = q.clone();
            move || BlockingQueue::pop(&*q)
        });
        let hand_back = thread::spawn("hand-back", {
            let q = q.clone();
            move || {
                let info = popped.info.rejected_by(NODE);
                q.add_unschedulable_if_not_present(info, LATER).unwrap()
            }
        });
        let place = hand_back.join().unwrap();
        assert!(
            matches!(
                place,
                Some(QueuePlace::Active(_) | QueuePlace::Backoff(_)) | None
            ),
            "poppable at once (or popped already): {place:?}"
        );
        assert_eq!(popper.join().unwrap(), Some(PodId::from("a")));
        BlockingQueue::check(&*q);
    });
}

/// A popper blocked on the empty queue vs `make_active` on another thread: the popper gets
/// `a`.
fn blocked_pop_vs<Q: BlockingQueue>(parked: bool, make_active: fn(&Q)) {
    model(move || {
        let q = Arc::new(if parked {
            Q::with_parked_pod()
        } else {
            Q::empty()
        });
        let popper = thread::spawn("popper", {
            let q = q.clone();
            move || q.pop()
        });
        let mover = thread::spawn("mover", {
            let q = q.clone();
            move || make_active(&q)
        });
        mover.join().unwrap();
        let popped = popper.join().unwrap();
        assert_eq!(
            popped,
            Some(PodId::from("a")),
            "the popper gets the pod made active"
        );
        q.check();
    });
}

/// Two poppers, one add, then close: one popper gets `a`, the other wakes with `None`.
fn two_poppers_add_close<Q: BlockingQueue>() {
    model(|| {
        let q = Arc::new(Q::empty());
        let poppers: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                thread::spawn("popper", move || q.pop())
            })
            .collect();
        q.add(pod("a"));
        q.close();
        let mut got: Vec<_> = poppers.into_iter().map(|p| p.join().unwrap()).collect();
        got.sort();
        assert_eq!(
            got,
            vec![None, Some(PodId::from("a"))],
            "one pod, one popper; close wakes the other"
        );
        q.check();
    });
}

/// Two poppers blocked on the empty queue race two adds (one from another thread, one from
/// the main thread): each pod is popped once, and no popper is left asleep with a pod waiting
/// for it (loom reports that as a deadlock).
fn two_poppers_vs_two_adds<Q: BlockingQueue>() {
    model(|| {
        let q = Arc::new(Q::empty());
        let poppers: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                thread::spawn("popper", move || q.pop())
            })
            .collect();
        let adder = thread::spawn("adder", {
            let q = q.clone();
            move || q.add(pod("b"))
        });
        q.add(pod("a"));
        adder.join().unwrap();
        let mut got: Vec<_> = poppers.into_iter().map(|p| p.join().unwrap()).collect();
        got.sort();
        assert_eq!(
            got,
            vec![Some(PodId::from("a")), Some(PodId::from("b"))],
            "two pods, two poppers: each pod popped once"
        );
        q.check();
    });
}

/// Two poppers that pop until the queue is closed race an add from another thread; the main
/// thread adds too, then closes. Between them the poppers get each pod exactly once, and a pop
/// returns nothing only once the queue is closed.
fn poppers_until_closed_vs_adds<Q: BlockingQueue>() {
    use gangsched::sync::atomic::{AtomicBool, Ordering};
    model(|| {
        let q = Arc::new(Q::empty());
        let closed = Arc::new(AtomicBool::new(false));
        let poppers: Vec<_> = (0..2)
            .map(|_| {
                let (q, closed) = (q.clone(), closed.clone());
                thread::spawn("popper", move || {
                    let mut got = Vec::new();
                    while let Some(id) = q.pop() {
                        got.push(id);
                    }
                    assert!(
                        closed.load(Ordering::SeqCst),
                        "a pop returned nothing before the queue was closed"
                    );
                    got
                })
            })
            .collect();
        let adder = thread::spawn("adder", {
            let q = q.clone();
            move || q.add(pod("b"))
        });
        q.add(pod("a"));
        adder.join().unwrap();
        closed.store(true, Ordering::SeqCst);
        q.close();
        let mut got: Vec<PodId> = poppers
            .into_iter()
            .flat_map(|p| p.join().unwrap())
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![PodId::from("a"), PodId::from("b")],
            "each pod popped exactly once"
        );
        q.check();
    });
}

fn add_a<Q: BlockingQueue>(q: &Q) {
    q.add(pod("a"));
}

fn move_all<Q: BlockingQueue>(q: &Q) {
    assert_eq!(q.move_all(), 1);
}

fn activate_a<Q: BlockingQueue>(q: &Q) {
    assert_eq!(q.activate(&PodId::from("a")), 1);
}

#[test]
fn blocked_pop_vs_add() {
    blocked_pop_vs::<SchedulingQueue>(false, add_a);
}

#[test]
fn blocked_pop_vs_move_all() {
    blocked_pop_vs::<SchedulingQueue>(true, move_all);
}

#[test]
fn blocked_pop_vs_activate() {
    blocked_pop_vs::<SchedulingQueue>(true, activate_a);
}

#[test]
fn blocked_pop_vs_hand_back_to_the_active_queue() {
    blocked_pop_vs_hand_back(<SchedulingQueue as BlockingQueue>::empty);
}

#[test]
fn blocked_poppers_vs_add_and_close() {
    two_poppers_add_close::<SchedulingQueue>();
}

#[test]
fn blocked_poppers_vs_two_adds() {
    two_poppers_vs_two_adds::<SchedulingQueue>();
}

#[test]
fn poppers_until_closed_vs_two_adds() {
    poppers_until_closed_vs_adds::<SchedulingQueue>();
}

#[test]
fn blocked_pop_vs_close() {
    model(|| {
        let q = Arc::new(<SchedulingQueue as BlockingQueue>::empty());
        let popper = thread::spawn("popper", {
            let q = q.clone();
            move || BlockingQueue::pop(&*q)
        });
        BlockingQueue::close(&*q);
        assert_eq!(popper.join().unwrap(), None);
    });
}

#[cfg(loom)]
mod witnesses {
    use super::*;
    use gangway_tests::broken::{BrokenQueue, QueueFlaw};

    /// The same trait over a broken queue, for the witnesses.
    macro_rules! broken_queue {
        ($name:ident, $flaw:expr) => {
            struct $name(BrokenQueue);

            impl BlockingQueue for $name {
                fn empty() -> Self {
                    $name(BrokenQueue::new($flaw, plugins()))
                }

                fn with_parked_pod() -> Self {
                    let q = Self::empty();
                    q.0.with_state(false, |s, p| {
                        s.add(pod("a"), Time::ZERO, p).unwrap();
                        let popped = s.pop().unwrap();
                        s.add_unschedulable_if_not_present(
                            popped.info.rejected_by(NODE),
                            Time::ZERO,
                            p,
                        )
                        .unwrap();
                    });
                    q
                }

                fn add(&self, pod: Pod) {
                    self.0
                        .with_state(false, |s, p| s.add(pod, LATER, p).unwrap());
                }

                fn pop(&self) -> Option<PodId> {
                    self.0.pop()
                }

                fn move_all(&self) -> usize {
                    self.0.with_state(true, |s, p| {
                        s.move_all_to_active_or_backoff(freed(), None, LATER, p)
                    })
                }

                fn activate(&self, id: &PodId) -> usize {
                    self.0
                        .with_state(true, |s, p| s.activate(std::slice::from_ref(id), LATER, p))
                }

                fn close(&self) {
                    self.0.with_state(false, |s, _| s.close());
                }

                fn check(&self) {
                    self.0.with_state(false, |s, _| s.check().expect("I4"));
                }
            }
        };
    }

    /// The real queue with a `QueueFlaw` planted in its own wake-ups
    /// (`checking::scheduling_queue_with_flaw`).
    macro_rules! planted_queue {
        ($name:ident) => {
            struct $name(SchedulingQueue);

            impl $name {
                fn planted() -> SchedulingQueue {
                    gangsched::checking::scheduling_queue_with_flaw(
                        QueueConfig::default(),
                        Arc::new(plugins()),
                        gangsched::checking::QueueFlaw::$name,
                    )
                }
            }

            impl BlockingQueue for $name {
                fn empty() -> Self {
                    $name(Self::planted())
                }
                fn with_parked_pod() -> Self {
                    let q = Self::empty();
                    park_a(&q.0);
                    q
                }
                fn add(&self, pod: Pod) {
                    BlockingQueue::add(&self.0, pod);
                }
                fn pop(&self) -> Option<PodId> {
                    BlockingQueue::pop(&self.0)
                }
                fn move_all(&self) -> usize {
                    BlockingQueue::move_all(&self.0)
                }
                fn activate(&self, id: &PodId) -> usize {
                    BlockingQueue::activate(&self.0, id)
                }
                fn close(&self) {
                    BlockingQueue::close(&self.0);
                }
                fn check(&self) {
                    BlockingQueue::check(&self.0);
                }
            }
        };
    }

    planted_queue!(WakesOneOnlyWhenEmpty);
    planted_queue!(ChecksThenSleeps);
    planted_queue!(HandBackWakesNobody);

    /// The bug corpus's kubernetes#130976 (open): a `pop` that looks for a pod in one critical
    /// section and sleeps in another misses an add in between; loom finds the popper asleep.
    #[test]
    #[should_panic(expected = "deadlock")]
    fn kubernetes_130976_a_pop_that_checks_then_sleeps_misses_an_add() {
        blocked_pop_vs::<ChecksThenSleeps>(false, add_a);
    }

    /// The bug corpus's kubernetes PR #119784: a hand-back straight to the active queue that
    /// wakes nobody leaves the popper asleep beside the pod.
    #[test]
    #[should_panic(expected = "deadlock")]
    fn kubernetes_pr_119784_a_hand_back_to_the_active_queue_wakes_nobody() {
        blocked_pop_vs_hand_back(HandBackWakesNobody::planted);
    }

    /// Waking one popper, and only when the queue was empty, leaves the second popper asleep
    /// beside the second pod: loom finds the lost wake-up.
    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_waking_one_only_when_empty_loses_a_popper() {
        two_poppers_vs_two_adds::<WakesOneOnlyWhenEmpty>();
    }

    broken_queue!(NoWakeOnMove, QueueFlaw::NoWakeOnMove);
    broken_queue!(SleepAfterUnlock, QueueFlaw::SleepAfterUnlock);

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_move_all_without_wake_loses_the_popper() {
        blocked_pop_vs::<NoWakeOnMove>(true, move_all);
    }

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_activate_without_wake_loses_the_popper() {
        blocked_pop_vs::<NoWakeOnMove>(true, activate_a);
    }

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_sleep_after_unlock_loses_an_add() {
        blocked_pop_vs::<SleepAfterUnlock>(false, add_a);
    }
}
