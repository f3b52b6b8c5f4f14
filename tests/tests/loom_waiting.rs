//! Loom models of the waiting-pod map: every interleaving of the racing decisions, the timer,
//! the waiter and the delivery path, on the real `WaitingPods`.
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_waiting --target-dir target/loom`. Without `--cfg loom`
//! each model runs once on real threads (a smoke test) and the witnesses are skipped.
//!
//! Each model asserts I1 (one decision, reported by exactly one racing call, returned by
//! `wait`, delivered once, the map entry gone) and I2 (every waiter and receiver wakes: loom
//! reports a thread blocked forever as a deadlock). The `witness_*` tests run the same models
//! on broken latches and expect loom to find the lost wake-up or the double decision.

use std::time::Duration;

use gangsched::sync::{model, thread, Arc};
use gangsched::waiting::timeout_message;
use gangsched::{Pod, Status, Time, WaitingPods};
use gangway_tests::{DecisionPoint, RealPod, GANG, OTHER};

const FIVE_MINUTES: Duration = Duration::from_secs(300);

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::spawn("model", f)
}

/// After the race: the pod left the map, `wait`/`decision` agree, and the delivery channel
/// carried that decision exactly once.
fn assert_settled<D: DecisionPoint>(pod: &D, seen: &Status) {
    assert_eq!(
        pod.decision().as_ref(),
        Some(seen),
        "decision() agrees with wait() (I1)"
    );
    assert!(!pod.registered(), "a decided pod is no longer in the map");
    let delivered = pod.try_delivery().expect("the decision was delivered (I2)");
    assert_eq!(
        &delivered.status, seen,
        "the delivered decision is the one made (I1)"
    );
    assert!(
        pod.try_delivery().is_none(),
        "the decision was delivered exactly once (I1)"
    );
}

/// Model 1: allow vs reject vs a blocked waiter.
fn allow_vs_reject_vs_waiter<D: DecisionPoint>() {
    model(|| {
        let pod = Arc::new(D::waiting_for(&[(GANG, FIVE_MINUTES)]));
        let waiter = spawn({
            let pod = pod.clone();
            move || pod.wait()
        });
        let allower = spawn({
            let pod = pod.clone();
            move || pod.allow(GANG)
        });
        let rejecter = spawn({
            let pod = pod.clone();
            move || pod.reject(GANG, "rejected by the model")
        });
        let allowed = allower.join().unwrap();
        let rejected = rejecter.join().unwrap();
        let seen = waiter.join().unwrap();
        assert_eq!(
            u8::from(allowed) + u8::from(rejected),
            1,
            "exactly one racing call reports that it decided (I1, H4)"
        );
        assert_eq!(
            seen.is_success(),
            allowed,
            "wait returns the decision made (I1)"
        );
        if rejected {
            assert_eq!(seen.plugin().map(|p| p.as_str()), Some(GANG));
        }
        assert_settled(&*pod, &seen);
    });
}

/// Model 2: two plugins pending; allow(a) and allow(b) race with the timer thread's expire.
fn two_plugins_allow_vs_expire<D: DecisionPoint>() {
    model(|| {
        let waits = [
            (GANG, Duration::from_secs(60)),
            (OTHER, Duration::from_secs(30)),
        ];
        let pod = Arc::new(D::waiting_for(&waits));
        let waiter = spawn({
            let pod = pod.clone();
            move || pod.wait()
        });
        let allow_gang = spawn({
            let pod = pod.clone();
            move || pod.allow(GANG)
        });
        let allow_other = spawn({
            let pod = pod.clone();
            move || pod.allow(OTHER)
        });
        let timer = spawn({
            let pod = pod.clone();
            move || pod.expire(Time::from_secs(60))
        });
        let allowed = [allow_gang.join().unwrap(), allow_other.join().unwrap()];
        let expired = timer.join().unwrap();
        let seen = waiter.join().unwrap();
        let deciders = allowed.iter().filter(|a| **a).count() + usize::from(expired.is_some());
        assert_eq!(
            deciders, 1,
            "exactly one of allow, allow, expire decided (I1, H4)"
        );
        match &expired {
            None => assert!(seen.is_success(), "allowed once both plugins cleared"),
            Some(status) => {
                assert_eq!(status, &seen, "wait returns the timeout (I1)");
                let plugin = seen.plugin().expect("a timeout names its plugin");
                let wait = waits
                    .iter()
                    .find(|(p, _)| plugin == p)
                    .expect("a pending plugin")
                    .1;
                assert_eq!(seen.message(), timeout_message(wait, plugin));
            }
        }
        assert_settled(&*pod, &seen);
    });
}

/// Model 3: the pod is deleted (reject via the map) vs allow vs the waiter.
fn remove_vs_allow_vs_waiter<D: DecisionPoint>() {
    model(|| {
        let pod = Arc::new(D::waiting_for(&[(GANG, FIVE_MINUTES)]));
        let waiter = spawn({
            let pod = pod.clone();
            move || pod.wait()
        });
        let remover = spawn({
            let pod = pod.clone();
            move || pod.remove()
        });
        let allower = spawn({
            let pod = pod.clone();
            move || pod.allow(GANG)
        });
        let removed = remover.join().unwrap();
        let allowed = allower.join().unwrap();
        let seen = waiter.join().unwrap();
        assert_eq!(
            u8::from(removed) + u8::from(allowed),
            1,
            "one decider (I1, H4)"
        );
        if removed {
            assert_eq!(
                seen,
                Status::unschedulable("removed"),
                "a deleted pod is rejected"
            );
        } else {
            assert!(seen.is_success());
        }
        assert_settled(&*pod, &seen);
    });
}

/// Model 5: the delivery path. A binding worker blocks on the channel while allow and reject
/// race; it receives exactly the one decision.
fn delivery_under_racing_decisions<D: DecisionPoint>() {
    model(|| {
        let pod = Arc::new(D::waiting_for(&[(GANG, FIVE_MINUTES)]));
        let worker = spawn({
            let pod = pod.clone();
            move || pod.next_delivery().expect("the map outlives the worker")
        });
        let allower = spawn({
            let pod = pod.clone();
            move || pod.allow(GANG)
        });
        let rejecter = spawn({
            let pod = pod.clone();
            move || pod.reject(GANG, "rejected by the model")
        });
        let allowed = allower.join().unwrap();
        let rejected = rejecter.join().unwrap();
        let delivered = worker.join().unwrap();
        assert_eq!(
            u8::from(allowed) + u8::from(rejected),
            1,
            "one decider (I1, H4)"
        );
        assert_eq!(
            delivered.status.is_success(),
            allowed,
            "the decision made is delivered"
        );
        assert_eq!(
            pod.decision(),
            Some(delivered.status),
            "delivery agrees with the latch"
        );
        assert!(pod.try_delivery().is_none(), "delivered exactly once (I1)");
        assert!(!pod.registered());
    });
}

#[test]
fn model_1_allow_vs_reject_vs_waiter() {
    allow_vs_reject_vs_waiter::<RealPod>();
}

#[test]
fn model_2_two_plugins_allow_vs_expire() {
    two_plugins_allow_vs_expire::<RealPod>();
}

#[test]
fn model_3_remove_vs_allow_vs_waiter() {
    remove_vs_allow_vs_waiter::<RealPod>();
}

/// Model 4: map-level races. Pod A waits; pod B is added while the timer expires and A is
/// allowed. A is decided once; B is either timed out (added before the expire) or still
/// waiting with its deadline indexed; the map's structure stays consistent.
#[test]
fn model_4_add_vs_expire_vs_allow_other_pod() {
    model(|| {
        let (map, decisions) = WaitingPods::with_channel();
        let gang = || [(GANG.into(), Duration::from_secs(30))];
        let a = map
            .add(Pod::new("a", "ns", "a"), gang(), Time::ZERO)
            .unwrap();
        let adder = spawn({
            let map = map.clone();
            move || {
                map.add(Pod::new("b", "ns", "b"), gang(), Time::ZERO)
                    .is_ok()
            }
        });
        let timer = spawn({
            let map = map.clone();
            move || map.expire(Time::from_secs(30))
        });
        let allower = spawn({
            let a = a.clone();
            move || a.allow(GANG)
        });
        assert!(adder.join().unwrap(), "b was not waiting before");
        let expired = timer.join().unwrap();
        let allowed = allower.join().unwrap();

        let expired_a = expired.iter().any(|d| d.pod.name() == "a");
        let expired_b = expired.iter().any(|d| d.pod.name() == "b");
        assert_eq!(
            u8::from(allowed) + u8::from(expired_a),
            1,
            "a decided once (I1)"
        );
        assert_eq!(a.wait().is_success(), allowed);
        let b_waiting = map.get(&"b".into()).is_some();
        assert_eq!(
            b_waiting, !expired_b,
            "b is timed out or still waiting, never lost"
        );
        assert_eq!(map.len(), usize::from(b_waiting));
        assert_eq!(
            map.next_deadline(),
            b_waiting.then_some(Time::from_secs(30))
        );
        gangsched::checking::waiting_state(&map).check().unwrap();
        assert_eq!(
            decisions.drain().len(),
            1 + usize::from(expired_b),
            "one delivery each"
        );
    });
}

#[test]
fn model_5_delivery_under_racing_decisions() {
    delivery_under_racing_decisions::<RealPod>();
}

/// A waiting map with one pod, for the H5 model: iterate and decide from the callback while
/// another thread allows.
trait IterateAndDecide: Send + Sync + 'static {
    fn with_one_pod() -> Self;
    /// Iterates the waiting pods, rejecting each from the callback; `true` if it decided one.
    fn reject_while_iterating(&self) -> bool;
    fn allow(&self) -> bool;
}

impl IterateAndDecide for WaitingPods {
    fn with_one_pod() -> Self {
        let map = WaitingPods::new();
        map.add(
            Pod::new("p", "ns", "p"),
            [(GANG.into(), FIVE_MINUTES)],
            Time::ZERO,
        )
        .unwrap();
        map
    }

    fn reject_while_iterating(&self) -> bool {
        let mut rejected = false;
        self.for_each(|wp| rejected |= wp.reject(GANG, "rejected while iterating"));
        rejected
    }

    fn allow(&self) -> bool {
        WaitingPods::allow(self, &"p".into(), GANG)
    }
}

impl IterateAndDecide for gangway_tests::broken::IterateUnderLock {
    fn with_one_pod() -> Self {
        Self::default()
    }

    fn reject_while_iterating(&self) -> bool {
        let mut rejected = false;
        self.for_each(|map| {
            rejected |= map.decide(Status::unschedulable("rejected while iterating"))
        });
        rejected
    }

    fn allow(&self) -> bool {
        self.decide(Status::success())
    }
}

/// H5: an iteration whose closure decides pods runs while another thread allows: no deadlock,
/// one decision.
fn decide_from_iteration<M: IterateAndDecide>() {
    model(|| {
        let map = Arc::new(M::with_one_pod());
        let iterator = spawn({
            let map = map.clone();
            move || map.reject_while_iterating()
        });
        let allower = spawn({
            let map = map.clone();
            move || map.allow()
        });
        let rejected = iterator.join().unwrap();
        let allowed = allower.join().unwrap();
        assert_eq!(
            u8::from(rejected) + u8::from(allowed),
            1,
            "one decider (I1)"
        );
    });
}

#[test]
fn model_5b_iteration_callback_decides() {
    decide_from_iteration::<WaitingPods>();
}

/// H5: the decision sink calls back into the map (it looks the decided pod up) while another
/// thread decides: no deadlock, and the sink sees the pod already gone from the map.
#[test]
fn model_5c_sink_reenters_the_map() {
    model(|| {
        let seen = Arc::new(gangsched::sync::Mutex::new(Vec::new()));
        let slot: Arc<gangsched::sync::Mutex<Option<WaitingPods>>> = Arc::default();
        let map = WaitingPods::with_sink({
            let (seen, slot) = (seen.clone(), slot.clone());
            move |d: gangsched::Decision| {
                let map = slot.lock().clone().expect("set before any decision");
                seen.lock()
                    .push((d.status.is_success(), map.get(d.pod.id()).is_some()));
            }
        });
        *slot.lock() = Some(map.clone());
        let pod = map
            .add(
                Pod::new("p", "ns", "p"),
                [(GANG.into(), FIVE_MINUTES)],
                Time::ZERO,
            )
            .unwrap();
        let rejecter = spawn({
            let map = map.clone();
            move || map.reject(&"p".into(), GANG, "rejected by the model")
        });
        let allowed = pod.allow(GANG);
        let rejected = rejecter.join().unwrap();
        assert_eq!(
            u8::from(rejected) + u8::from(allowed),
            1,
            "one decider (I1)"
        );
        assert_eq!(
            *seen.lock(),
            vec![(allowed, false)],
            "one delivery, after the pod left the map"
        );
        slot.lock().take(); // the map reaches itself through the sink; break the cycle
    });
}

#[cfg(loom)]
mod witnesses {
    use super::*;
    use gangway_tests::broken::{BrokenLatch, CheckThenStoreSeparately, NotifyBeforeStore};

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_model_1_finds_lost_wakeup() {
        allow_vs_reject_vs_waiter::<BrokenLatch<NotifyBeforeStore>>();
    }

    #[test]
    #[should_panic(expected = "exactly one racing call reports that it decided")]
    fn witness_model_1_finds_double_decision() {
        allow_vs_reject_vs_waiter::<BrokenLatch<CheckThenStoreSeparately>>();
    }

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_model_2_finds_lost_wakeup() {
        two_plugins_allow_vs_expire::<BrokenLatch<NotifyBeforeStore>>();
    }

    #[test]
    #[should_panic(expected = "exactly one of allow, allow, expire decided")]
    fn witness_model_2_finds_double_decision() {
        two_plugins_allow_vs_expire::<BrokenLatch<CheckThenStoreSeparately>>();
    }

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_model_3_finds_lost_wakeup() {
        remove_vs_allow_vs_waiter::<BrokenLatch<NotifyBeforeStore>>();
    }

    #[test]
    #[should_panic(expected = "one decider")]
    fn witness_model_3_finds_double_decision() {
        remove_vs_allow_vs_waiter::<BrokenLatch<CheckThenStoreSeparately>>();
    }

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_model_5b_finds_callback_under_lock() {
        decide_from_iteration::<gangway_tests::broken::IterateUnderLock>();
    }

    #[test]
    #[should_panic(expected = "one decider")]
    fn witness_model_5_finds_double_delivery() {
        delivery_under_racing_decisions::<BrokenLatch<CheckThenStoreSeparately>>();
    }
}
