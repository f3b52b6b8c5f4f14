//! Loom models of the Permit barrier's binding path on a real `Scheduler` (issue #22): the
//! binding cycle's error path — WaitOnPermit rejected, unreserve and forget, the deferred
//! move-all that excludes the pod itself, the hand-back — racing a sibling's scheduling cycle
//! and a member's delete; and a sibling's registration at Permit racing the attempt's timeout
//! and the binding worker that takes the decision.
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_binding_cycle --target-dir target/loom`.
//!
//! After the race the main thread lets time and the scheduler run to rest — timers past every
//! deadline, every cycle and binding cycle — and checks `check()` (I4–I6) after the race and at
//! rest, nothing left in binding or assumed (I6), every pod bound, queued or deleted (I4), no
//! pod parked for room a node has (I7) and, in Hardened mode, I3 on what the binder bound.
//! Witnesses: Upstream's partial gang (I3) and flaws planted through `checking::Planted`.

use std::time::Duration;

use gangsched::checking::{self, check_nothing_parked_for_room, steps, Flaw, Parts, Planted};
use gangsched::queue::QueuePlace;
use gangsched::scheduler::{CycleOutcome, InMemoryBinder, Node};
use gangsched::sync::{model, thread, Arc};
use gangsched::{Mode, Pod, PodGroup, Resources, Scheduler, SchedulerConfig, Time};

const NS: &str = "ml";
const CPU: u64 = 1_000;
const TIMEOUT: Duration = Duration::from_secs(300);
/// When the race's cycles and binding cycles run: past the first attempt's deadline.
const NOW: Time = Time::from_secs(301);

/// The model's scheduler (Permit barrier) and the flaw its cycles and binding cycles run with.
struct Barrier {
    s: Scheduler,
    binder: InMemoryBinder,
    flaw: Option<Flaw>,
    members: Vec<Pod>,
    min_count: usize,
}

impl Barrier {
    /// Gang `g` of `min_count` with `size` members on one node of `cpus` CPUs, the members
    /// added in order.
    fn new(mode: Mode, flaw: Option<Flaw>, min_count: u32, size: usize, cpus: u64) -> Barrier {
        let binder = InMemoryBinder::new();
        let config = SchedulerConfig::default()
            .with_mode(mode)
            .with_permit_timeout(TIMEOUT);
        let s = Scheduler::builder(config).binder(binder.clone()).build();
        let node = Node::new("n", Resources::new(cpus * CPU, 64 << 30));
        s.add_node(node, Time::ZERO).unwrap();
        s.add_group(PodGroup::gang(NS, "g", min_count).unwrap(), Time::ZERO)
            .unwrap();
        let members: Vec<Pod> = (0..size)
            .map(|i| {
                let name = format!("g-{i}");
                Pod::new(name.as_str(), NS, &name)
                    .with_group("g")
                    .with_requests(Resources::new(CPU, 1 << 30))
            })
            .collect();
        for (i, pod) in members.iter().enumerate() {
            s.add_pod(pod.clone(), Time::from_millis(i as u64)).unwrap();
        }
        Barrier {
            s,
            binder,
            flaw,
            members,
            min_count: min_count as usize,
        }
    }

    /// The scheduling thread's next cycle, with the flaw if one is planted.
    fn cycle(&self, now: Time) -> Option<CycleOutcome> {
        match self.flaw {
            None => self.s.schedule_one(now),
            Some(flaw) => checking::schedule_one_with_flaw(&self.s, flaw, now),
        }
    }

    /// One binding worker's next binding cycle, if a decision waits; with the flaw planted,
    /// on the wrapper.
    fn bind_one(&self, now: Time) -> bool {
        let parts = checking::scheduler_parts(&self.s);
        match self.flaw {
            None => run_job(&mut { parts }, now),
            Some(flaw) => run_job(&mut Planted { parts, flaw }, now),
        }
    }

    /// Time and the scheduler run to rest: every binding cycle, every cycle, the timers past
    /// every deadline, a few rounds (backoffs end, retried members wait again and time out).
    fn rest(&self) {
        let mut now = NOW;
        for _ in 0..6 {
            loop {
                while self.bind_one(now) {}
                if self.cycle(now).is_none() {
                    break;
                }
            }
            now = now + TIMEOUT + Duration::from_secs(60);
            self.s.tick(now);
        }
        while self.bind_one(now) {}
    }
}

fn run_job(p: &mut impl Parts, now: Time) -> bool {
    let Some(job) = p.driver(|d| d.next_job()) else {
        return false;
    };
    steps::binding_cycle(p, job, now);
    true
}

/// `check()`, its violation as a panic that names the invariant.
fn checked(s: &Scheduler, when: &str) {
    if let Err(v) = s.check() {
        panic!("{} violated {when}: {}", v.invariant, v.detail);
    }
}

/// The checks once the threads have joined (see the module docs); `deleted`: the members the
/// model deleted.
fn settled(b: &Barrier, deleted: &[&Pod], hardened: bool) {
    let s = &b.s;
    checked(s, "after the race");
    // I3 as the race left it: the members past Permit — allowed and binding, or bound.
    let driver = checking::driver_state(s);
    let passed = b
        .members
        .iter()
        .filter(|p| {
            let id = p.id();
            let allowed = driver
                .assignment(id)
                .is_some_and(|a| !a.rejected && s.waiting().get(id).is_none());
            allowed || b.binder.binding(id).is_some()
        })
        .count();
    assert!(
        passed == 0 || passed >= b.min_count,
        "I3 violated: {passed} of gang g (min count {}) passed Permit",
        b.min_count
    );
    b.rest();
    checked(s, "at rest");
    let in_binding = s.in_binding();
    assert!(
        in_binding.is_empty(),
        "I6 violated: {in_binding:?} left in binding"
    );
    let assumed = s.cache().snapshot().assumed_count();
    assert_eq!(assumed, 0, "I6 violated: reservations left at rest");
    for pod in &b.members {
        let id = pod.id();
        let place = s.queue().place(id);
        if deleted.iter().any(|d| d.id() == id) {
            assert!(place.is_none(), "I4 violated: deleted {id} is still queued");
            continue;
        }
        let bound = b.binder.binding(id).is_some();
        let queued = place.is_some_and(|p| p != QueuePlace::InFlight);
        assert!(
            bound || queued,
            "I4 violated: {id} is neither bound nor queued at rest ({place:?})"
        );
    }
    if let Err(v) = check_nothing_parked_for_room(&s.queue().snapshot(), &s.cache().snapshot()) {
        panic!("{} violated at rest: {}", v.invariant, v.detail);
    }
    let bound = b
        .members
        .iter()
        .filter(|p| b.binder.binding(p.id()).is_some())
        .count();
    if hardened {
        assert!(
            bound == 0 || bound >= b.min_count,
            "I3 violated: {bound} of gang g (min count {}) bound at rest",
            b.min_count
        );
    }
}

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::spawn("model", f)
}

/// (a) The binding cycle's error path vs a sibling's scheduling cycle vs that sibling's
/// delete. Gang `g` (min 2) of `g-0` and `g-1` on a node with room for both: `g-0` waits at
/// Permit and its wait times out (Hardened: its attempt's; Upstream: its own timer), so its
/// rejection waits for a binding cycle. Then three threads: a binding worker runs `g-0`'s
/// binding cycle (unreserve, forget, the deferred move-all, the hand-back), the scheduling
/// thread runs `g-1`'s cycle, and the informer deletes `g-1`. `g-1` must never pass alone:
/// the gang never completes, so nothing binds (I3); Upstream's Permit counts `g-0`, rejected
/// but not yet unreserved, and `g-1` passes — kube-scheduler's partial gang.
fn error_path_vs_sibling_and_delete(mode: Mode, flaw: Option<Flaw>) {
    model(move || {
        let b = Barrier::new(mode, flaw, 2, 2, 2);
        b.cycle(Time::ZERO).expect("g-0 is active");
        b.s.tick(NOW);
        let b = Arc::new(b);
        let worker = spawn({
            let b = b.clone();
            move || {
                assert!(
                    b.bind_one(NOW),
                    "g-0's rejection waits for its binding cycle"
                )
            }
        });
        let scheduling = spawn({
            let b = b.clone();
            move || drop(b.cycle(NOW))
        });
        let informer = spawn({
            let b = b.clone();
            move || {
                b.s.delete_pod(&b.members[1], NOW).unwrap();
            }
        });
        worker.join().unwrap();
        scheduling.join().unwrap();
        informer.join().unwrap();
        settled(&b, &[&b.members[1]], mode == Mode::Hardened);
    });
}

#[test]
fn a_error_path_vs_sibling_cycle_and_delete_hardened() {
    error_path_vs_sibling_and_delete(Mode::Hardened, None);
}

/// Witness: Upstream's partial gang — `g-1`'s Permit counts the rejected `g-0` still assumed.
#[cfg(loom)]
#[test]
#[should_panic(expected = "I3 violated")]
fn witness_a_upstream_binds_a_partial_gang() {
    error_path_vs_sibling_and_delete(Mode::Upstream, None);
}

/// Witness: a rejected pod's binding cycle that does not hand it back (I4).
#[cfg(loom)]
#[test]
#[should_panic(expected = "I4 violated")]
fn witness_a_rejected_pod_not_handed_back_is_lost() {
    error_path_vs_sibling_and_delete(Mode::Hardened, Some(Flaw::RejectedNotRequeued));
}

/// Witness: a rejected pod's binding cycle that keeps its node reservation (I5 or I6).
#[cfg(loom)]
#[test]
#[should_panic(expected = "violated")]
fn witness_a_release_that_keeps_the_node_reservation_leaks() {
    error_path_vs_sibling_and_delete(Mode::Hardened, Some(Flaw::ReleaseKeepsNodeReservation));
}

/// (b) A sibling's registration at Permit vs the attempt's timeout vs the binding worker that
/// takes the decisions. Gang `g` (min 3) of three on a roomy node: `g-0` waits at Permit.
/// Three threads: the scheduling thread runs `g-1`'s cycle (it reserves and waits in the same
/// attempt), the timer fires the attempt's deadline, and a binding worker takes whatever
/// decision is there. Whatever the order, the attempt fails whole, its members come back, and
/// at rest the gang of three — `g-2` arriving in time — either binds whole or not at all.
fn registration_vs_timeout_vs_worker(mode: Mode, flaw: Option<Flaw>) {
    model(move || {
        let b = Barrier::new(mode, flaw, 3, 3, 4);
        b.cycle(Time::ZERO).expect("g-0 is active");
        let b = Arc::new(b);
        let scheduling = spawn({
            let b = b.clone();
            move || drop(b.cycle(Time::from_secs(1)))
        });
        let timer = spawn({
            let b = b.clone();
            move || drop(b.s.tick(NOW))
        });
        let worker = spawn({
            let b = b.clone();
            move || {
                b.bind_one(NOW);
            }
        });
        scheduling.join().unwrap();
        timer.join().unwrap();
        worker.join().unwrap();
        settled(&b, &[], mode == Mode::Hardened);
    });
}

#[test]
fn b_registration_vs_timeout_vs_worker_hardened() {
    registration_vs_timeout_vs_worker(Mode::Hardened, None);
}

#[test]
fn b_registration_vs_timeout_vs_worker_upstream() {
    registration_vs_timeout_vs_worker(Mode::Upstream, None);
}

/// Witness: kubernetes#88179's class — the scheduling cycle records what the binding cycle
/// needs only after Permit, so the timeout's decision on `g-1`, delivered in between, finds
/// nothing to act on and `g-1` keeps its reservation.
#[cfg(loom)]
#[test]
#[should_panic(expected = "violated")]
fn witness_b_recording_after_permit_strands_a_reservation() {
    registration_vs_timeout_vs_worker(Mode::Hardened, Some(Flaw::RecordsAfterPermit));
}

/// (c) A failed attempt's whole-gang hand-back (H2) vs a late member's cycle and the room it
/// needs. Hardened, gang `g` (min 3) on a node with room for two: `g-0` and `g-1` wait at
/// Permit, `g-2` found no room and is parked; the attempt times out, so both rejections wait
/// for a binding cycle. Three threads: a binding worker runs the first rejected member's
/// binding cycle, which hands back both members together with one backoff and announces the
/// room they free; the scheduling thread runs a cycle (`g-2`'s, once the room reaches it); the
/// informer adds a second node. Right after the race both rejected members are still in
/// binding or both are back (H2); at rest the gang binds whole (I8).
fn hand_back_vs_late_member(flaw: Option<Flaw>) {
    model(move || {
        let b = Barrier::new(Mode::Hardened, flaw, 3, 3, 2);
        for _ in 0..3 {
            b.cycle(Time::ZERO).expect("g-0, g-1, g-2 in turn");
        }
        b.s.tick(NOW);
        let b = Arc::new(b);
        let worker = spawn({
            let b = b.clone();
            move || assert!(b.bind_one(NOW), "the rejections wait for a binding cycle")
        });
        let scheduling = spawn({
            let b = b.clone();
            move || drop(b.cycle(NOW))
        });
        let informer = spawn({
            let b = b.clone();
            move || {
                let node = Node::new("n2", Resources::new(2 * CPU, 64 << 30));
                b.s.add_node(node, NOW).unwrap();
            }
        });
        worker.join().unwrap();
        scheduling.join().unwrap();
        informer.join().unwrap();
        let in_binding = b.s.in_binding();
        let held = b.members[..2]
            .iter()
            .filter(|p| in_binding.contains(p.id()))
            .count();
        assert!(
            held == 0 || held == 2 || b.flaw.is_some(),
            "H2 violated: {held} of the failed attempt's 2 members left in binding"
        );
        settled(&b, &[], true);
        let bound = b
            .members
            .iter()
            .filter(|p| b.binder.binding(p.id()).is_some())
            .count();
        assert_eq!(
            bound, 3,
            "I8 violated: the gang of three did not bind at rest"
        );
    });
}

#[test]
fn c_gang_hand_back_vs_late_member_hardened() {
    hand_back_vs_late_member(None);
}

/// Witness: a rejected pod's binding cycle that hands back neither itself nor its gang's
/// other rejected members (I4).
#[cfg(loom)]
#[test]
#[should_panic(expected = "I4 violated")]
fn witness_c_hand_back_that_loses_the_gang() {
    hand_back_vs_late_member(Some(Flaw::RejectedNotRequeued));
}
