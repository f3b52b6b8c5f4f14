#![cfg(shuttle)]
//! The whole threaded scheduler under shuttle (issue #22): the real [`Scheduler::start`] — one
//! scheduling loop, two binding workers, the timer thread — and an event thread playing the
//! informer, every lock, condition variable, channel and thread the core's own (the sync
//! facade's shuttle backend, `--cfg shuttle`), so shuttle's schedulers choose every
//! interleaving of the code that runs. Time is a [`ManualClock`] the event thread moves: under
//! shuttle no wait times out, the timer wakes when the clock rings it.
//!
//! Each schedule runs to quiescence, shuts the scheduler down (which joins every thread it
//! started: a thread left blocked is shuttle's deadlock, a failure) and then checks:
//!
//! - `Scheduler::check()` — I4 (each pod in one place), I5 (node reservations), I6 (nothing
//!   assumed without a binding cycle);
//! - at quiescence, before the shutdown (`harness::check_at_rest`, as `gangway simulate`
//!   judges its rests): I5 (the groups' partition agreeing with the cache), I7 (no pod parked
//!   for room a node has) and progress without timeouts (no gang with room for its quorum
//!   left to wait for a permit deadline or the leftover flush: a delay);
//! - nothing leaked: no pod assumed, waiting or in binding once shut down;
//! - every pod accounted for: bound once at most (the binder refuses a second binding and the
//!   test counts every call), a deleted pod never bound after its delete returned, every other
//!   pod bound or back in the queue;
//! - I3, from the gang plugin's own admissions (its `gang: quorum, members allowed together`
//!   events): a gang's first admission releases at least its min count of members (none of
//!   them was bound before it).
//!
//! The witness: the same schedules on `Mode::Upstream` find kube-scheduler's partial gang — a
//! member's Permit timeout rejects it, its binding cycle has not yet unreserved it when its
//! sibling's Permit counts it, and the sibling passes alone (the model checker's I3
//! counterexample, `upstream/traces/gang_i3_partial_gang.jsonl`).
//!
//! `SHUTTLE_ITERATIONS` sets the schedules per scheduler (PCT and random); a failure prints the
//! schedule, which `shuttle::replay` runs again (docs/verification.md).

use std::time::Duration;

use gangsched::checking::Flaw;
use gangsched::scheduler::{Node, Scheduler};
use gangsched::sync::{thread, Arc};
use gangsched::PodGroup;
use gangsched::{
    Clock, ManualClock, Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod,
    Resources, Time,
};

#[path = "shuttle_scheduler/harness.rs"]
mod harness;

use harness::{
    admissions, check_after, check_i3, check_settled, conclude, config, iterations, member,
    scheduler, scheduler_with, settle, start, witness, CPU, GIB, MIN,
};

/// A pod `x` fills three of the node's four CPUs; two members of one gang arrive, so only one
/// fits beside `x`. The event thread then moves the clock past the Permit timeout and deletes
/// `x`, which lets the other member in. Whatever the interleaving, the gang's first admission
/// releases both members (I3) — on Upstream, the waiter's timeout rejects it, its binding cycle
/// has not yet unreserved it when its sibling's Permit counts it, and the sibling passes alone.
fn timeout_races_a_sibling(mode: Mode, flaw: Option<Flaw>) {
    admissions::reset();
    let clock = ManualClock::new(Time::ZERO);
    let (s, calls, outcomes) = scheduler(mode, &clock, |_| false);
    let running = start(&s, &clock, flaw);
    let x = Pod::new("x", "ml", "x").with_requests(Resources::new(3 * CPU, GIB));
    let members: Vec<Pod> = (0..2).map(|i| member("a", i)).collect();
    let added: Vec<Pod> = std::iter::once(x.clone()).chain(members.clone()).collect();
    let events = thread::spawn("events", {
        let (s, clock) = (s.clone(), clock.clone());
        move || {
            s.add_pod(x.clone(), clock.now()).unwrap();
            let gang = PodGroup::gang("ml", "a", MIN as u32).unwrap();
            s.add_group(gang, clock.now()).unwrap();
            for pod in members {
                s.add_pod(pod, clock.now()).unwrap();
            }
            // The informer acts once a member waits at Permit (or it gives up waiting).
            for _ in 0..200 {
                if !s.waiting().is_empty() {
                    break;
                }
                thread::yield_now();
            }
            if std::env::var("SHUTTLE_DEBUG").is_ok() {
                eprintln!(
                    "before advance: waiting {} at {:?}",
                    s.waiting().len(),
                    clock.now()
                );
            }
            clock.advance(config(mode).permit_timeout);
            if std::env::var("SHUTTLE_DEBUG").is_ok() {
                eprintln!(
                    "after advance: waiting {:?} map next {:?} at {:?} next {:?}",
                    s.waiting().snapshot(),
                    s.waiting().next_deadline(),
                    clock.now(),
                    s.next_deadline()
                );
            }
            s.delete_pod(&x, clock.now()).unwrap();
        }
    });
    events.join().unwrap();
    let deleted = ["x".to_owned()];
    let settled = match settle(&s, &calls, &outcomes) {
        true => check_settled(&s, (&calls, &outcomes), &added, &deleted),
        false => Ok(()),
    };
    running.shutdown();
    // I3 in either mode: the witness's own check.
    let verdict = settled
        .and_then(|()| check_after(&s, (&calls, &outcomes), &added, &deleted))
        .and_then(|()| check_i3());
    conclude(verdict, (s, calls, outcomes, clock));
}

/// Two gangs of three (min 2), one member's first bind refused, a member deleted, the other
/// gang's min count raised and the node replaced while they schedule; the clock moves past the
/// backoffs and the timeout.
fn churn(mode: Mode, flaw: Option<Flaw>) {
    churn_with_workers(mode, flaw, 2);
}

/// [`churn`] with `workers` binding workers.
fn churn_with_workers(mode: Mode, flaw: Option<Flaw>, workers: usize) {
    admissions::reset();
    let clock = ManualClock::new(Time::ZERO);
    let fails = |name: &str| name == "a-1";
    let (s, calls, outcomes) =
        scheduler_with(mode, &clock, fails, PermitPlugins::none(), 4, workers);
    let running = start(&s, &clock, flaw);
    let added: Vec<Pod> = ["a", "b"]
        .iter()
        .flat_map(|g| (0..3).map(move |i| member(g, i)))
        .collect();
    let deleted = vec!["b-2".to_owned()];
    let events = thread::spawn("events", {
        let (s, clock, added) = (s.clone(), clock.clone(), added.clone());
        move || {
            for g in ["a", "b"] {
                let gang = PodGroup::gang("ml", g, MIN as u32).unwrap();
                s.add_group(gang, clock.now()).unwrap();
            }
            for pod in &added {
                s.add_pod(pod.clone(), clock.now()).unwrap();
            }
            let b2 = added.iter().find(|p| p.name() == "b-2").unwrap();
            s.delete_pod(b2, clock.now()).unwrap();
            clock.advance(Duration::from_secs(2));
            let _ = s.update_group(PodGroup::gang("ml", "b", 3).unwrap(), clock.now());
            let node = Node::new("node-1", Resources::new(4 * CPU, 16 * GIB));
            s.add_node(node, clock.now()).unwrap();
            let _ = s.delete_node("node-0", clock.now());
            clock.advance(config(mode).permit_timeout);
        }
    });
    events.join().unwrap();
    let settled = match settle(&s, &calls, &outcomes) {
        true => check_settled(&s, (&calls, &outcomes), &added, &deleted),
        false => Ok(()),
    };
    running.shutdown();
    let verdict = settled.and_then(|()| check_after(&s, (&calls, &outcomes), &added, &deleted));
    // Upstream may bind a gang partly here too (its partial gang): I3 is Hardened's.
    let verdict = match mode {
        Mode::Hardened => verdict.and_then(|()| check_i3()),
        Mode::Upstream => verdict,
    };
    conclude(verdict, (s, calls, outcomes, clock));
}

/// Holds pod `w` at Permit for a minute; allows every other pod.
struct HoldsW;

impl PermitPlugin for HoldsW {
    fn name(&self) -> PluginName {
        "Hold".into()
    }
    fn permit(&self, pod: &Pod, _: &str) -> PermitVerdict {
        if pod.name() == "w" {
            PermitVerdict::wait(Duration::from_secs(60))
        } else {
            PermitVerdict::Allow
        }
    }
}

/// The binding cycle's error path and the room it frees: `w` fills the node's two CPUs and
/// waits at Permit for `Hold`; `y`, as large (a gang of one), arrives and finds no room (parked, or in flight
/// as the room is freed); the event thread rejects `w` through the waiting map, and deletes it
/// once its binding cycle is over. That cycle unreserves `w`, forgets it in the cache and
/// announces the freed room (deferred, and not to `w` itself), so `y` is asked again and binds.
/// A release that announces nothing leaves `y` parked beside a free node — unless `w`, placed
/// again, is deleted from the node and that delete announces it: I7 at quiescence, and its
/// gang left to wait for the leftover flush (progress without timeouts).
fn release_announces_room(flaw: Option<Flaw>) {
    admissions::reset();
    let clock = ManualClock::new(Time::ZERO);
    let holds = PermitPlugins::new([Arc::new(HoldsW) as Arc<dyn PermitPlugin>]).unwrap();
    let (s, calls, outcomes) = scheduler_with(Mode::Hardened, &clock, |_| false, holds, 2, 2);
    let running = start(&s, &clock, flaw);
    let w = Pod::new("w", "ml", "w").with_requests(Resources::new(2 * CPU, GIB));
    let y = Pod::new("y", "ml", "y")
        .with_group("b")
        .with_requests(Resources::new(2 * CPU, GIB));
    let added = vec![w.clone(), y.clone()];
    let events = thread::spawn("events", {
        let (s, clock) = (s.clone(), clock.clone());
        move || {
            s.add_group(PodGroup::gang("ml", "b", 1).unwrap(), clock.now())
                .unwrap();
            s.add_pod(w.clone(), clock.now()).unwrap();
            let waits = |s: &Scheduler| s.waiting().get(w.id()).is_some();
            yield_until(|| waits(&s));
            s.add_pod(y, clock.now()).unwrap();
            thread::yield_now();
            s.waiting().reject(w.id(), "Hold", "no quota for w");
            yield_until(|| !waits(&s) && !s.in_binding().contains(w.id()));
            s.delete_pod(&w, clock.now()).unwrap();
        }
    });
    events.join().unwrap();
    let deleted = ["w".to_owned()];
    let settled = match settle(&s, &calls, &outcomes) {
        true => check_settled(&s, (&calls, &outcomes), &added, &deleted),
        false => Ok(()),
    };
    running.shutdown();
    let verdict = settled.and_then(|()| check_after(&s, (&calls, &outcomes), &added, &deleted));
    conclude(verdict, (s, calls, outcomes, clock));
}

/// Yields until `done` (or a bound of yields: the informer gives up waiting).
fn yield_until(done: impl Fn() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        thread::yield_now();
    }
}

#[test]
fn a_rejected_pods_release_reaches_the_pod_waiting_for_its_room_pct() {
    shuttle::check_pct(|| release_announces_room(None), iterations(), 3);
}

#[test]
fn a_rejected_pods_release_reaches_the_pod_waiting_for_its_room_random() {
    shuttle::check_random(|| release_announces_room(None), iterations());
}

#[test]
fn hardened_gang_binds_whole_whatever_the_timeout_races_pct() {
    shuttle::check_pct(
        || timeout_races_a_sibling(Mode::Hardened, None),
        iterations(),
        3,
    );
}

#[test]
fn hardened_gang_binds_whole_whatever_the_timeout_races_random() {
    shuttle::check_random(
        || timeout_races_a_sibling(Mode::Hardened, None),
        iterations(),
    );
}

#[test]
fn churn_keeps_every_pod_and_reservation_accounted_for_pct() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        shuttle::check_pct(move || churn(mode, None), iterations(), 3);
    }
}

/// The same churn with four binding workers: the failed bind's hand-back, the deleted
/// member's and the other gang's binding cycles on different workers at once.
#[test]
fn churn_with_four_binding_workers_pct() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        shuttle::check_pct(move || churn_with_workers(mode, None, 4), iterations(), 3);
    }
}

#[test]
fn churn_keeps_every_pod_and_reservation_accounted_for_random() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        shuttle::check_random(move || churn(mode, None), iterations());
    }
}

/// On Upstream the same schedules find kube-scheduler's partial gang (I3).
#[test]
fn upstream_partial_gang_is_found() {
    witness("Upstream's partial gang", "I3", || {
        timeout_races_a_sibling(Mode::Upstream, None)
    });
}

/// A binding cycle that drops a pod whose bind failed (`Flaw::BindFailureLosesPod`) leaves it
/// nowhere: found as I4 at quiescence.
#[test]
fn a_failed_bind_that_loses_its_pod_is_found() {
    let flaw = Some(Flaw::BindFailureLosesPod);
    witness("a lost pod", "I4", move || churn(Mode::Hardened, flaw));
}

/// The scheduling cycle recording what the binding cycle needs only after Permit
/// (`Flaw::RecordsAfterPermit`, kubernetes#88179's class): a timeout that comes at once finds
/// nothing to act on, and the pod keeps its reservation.
#[test]
fn a_waiter_registered_after_permit_is_found() {
    let flaw = Some(Flaw::RecordsAfterPermit);
    witness("kubernetes#88179", "I6", move || {
        timeout_races_a_sibling(Mode::Hardened, flaw)
    });
}

/// A rejected pod's binding cycle that releases the gang but not the node
/// (`Flaw::ReleaseKeepsNodeReservation`): a reservation leaks.
#[test]
fn a_release_that_keeps_the_node_reservation_is_found() {
    let flaw = Some(Flaw::ReleaseKeepsNodeReservation);
    witness("a leaked reservation", "I6", move || {
        timeout_races_a_sibling(Mode::Hardened, flaw)
    });
}

/// The binding cycle's error path skipping its deferred move-all
/// (`Flaw::ReleaseAnnouncesNothing`): the pod waiting for the room it frees is never asked
/// again — a lost event, found as I7 at quiescence.
#[test]
fn a_release_that_skips_the_deferred_move_all_is_found() {
    let flaw = Some(Flaw::ReleaseAnnouncesNothing);
    let found = witness("a lost event", "I7", move || release_announces_room(flaw));
    // The same quiescence seen as a delay: y's gang has its room and waits for the flush.
    assert!(found.contains("progress without timeouts"), "{found}");
    assert!(found.contains("has room for 1 more (y)"), "{found}");
}
