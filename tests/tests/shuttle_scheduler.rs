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

use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::checking::Flaw;
use gangsched::gang::PodGroup;
use gangsched::scheduler::{
    outcome_channel, BindError, Node, PodOutcome, RunningScheduler, Scheduler, SchedulerConfig,
};
use gangsched::sync::channel::Receiver;
use gangsched::sync::{thread, Arc, Mutex};
use gangsched::{Clock, ManualClock, Mode, Pod, Resources, Time};

const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;
const MIN: u64 = 2;

/// Schedules per scheduler (`SHUTTLE_ITERATIONS`, default 300).
fn iterations() -> usize {
    std::env::var("SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

/// The gang plugin's admissions, as its telemetry tells them (`gang: quorum, members allowed
/// together`: the gang, and the members that Permit let through). Every Permit runs on the
/// one scheduling loop, so they are told in the order they were decided. Shuttle runs every
/// thread of a schedule on the test's own OS thread, one at a time, so a thread-local list
/// sees them all; each schedule starts it afresh.
mod admissions {
    use std::cell::RefCell;

    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, Layer};
    use tracing_subscriber::prelude::*;

    thread_local! {
        pub static SEEN: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
    }

    struct Listener;

    #[derive(Default)]
    struct Fields {
        message: String,
        gang: String,
        members: u64,
    }

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            match field.name() {
                "message" => self.message = format!("{value:?}"),
                "gang" => self.gang = format!("{value:?}").trim_matches('"').to_owned(),
                _ => {}
            }
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            if field.name() == "gang" {
                self.gang = value.to_owned();
            }
        }
        fn record_u64(&mut self, field: &Field, value: u64) {
            if field.name() == "members" {
                self.members = value;
            }
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for Listener {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let mut fields = Fields::default();
            event.record(&mut fields);
            if fields.message == "gang: quorum, members allowed together" {
                SEEN.with(|seen| seen.borrow_mut().push((fields.gang, fields.members)));
            }
        }
    }

    /// Installs the listener (once per process) and forgets what the last schedule saw.
    pub fn reset() {
        let _ = tracing::subscriber::set_global_default(
            tracing_subscriber::registry()
                .with(Listener.with_filter(tracing_subscriber::filter::LevelFilter::INFO)),
        );
        SEEN.with(|seen| seen.borrow_mut().clear());
    }
}

/// Every call the binder got: (pod, node, whether it bound), in order.
type Calls = Arc<Mutex<Vec<(String, String, bool)>>>;

/// What the scheduler told the embedder about each pod, in order: the channel, and what the
/// main thread has read from it so far.
struct Outcomes {
    channel: Receiver<PodOutcome>,
    told: std::cell::RefCell<Vec<PodOutcome>>,
}

impl Outcomes {
    /// Everything told so far.
    fn told(&self) -> Vec<PodOutcome> {
        self.read();
        self.told.borrow().clone()
    }

    /// How many of the outcomes told so far answer a bind (bound or failed).
    fn binds_told(&self) -> usize {
        self.read();
        let told = self.told.borrow();
        told.iter()
            .filter(|o| matches!(o, PodOutcome::Bound { .. } | PodOutcome::BindFailed { .. }))
            .count()
    }

    fn read(&self) {
        self.told.borrow_mut().extend(self.channel.drain());
    }
}

fn member(gang: &str, i: usize) -> Pod {
    Pod::new(format!("{gang}-{i}"), "ml", &format!("{gang}-{i}"))
        .with_group(gang)
        .with_requests(Resources::new(CPU, GIB))
}

fn config(mode: Mode) -> SchedulerConfig {
    SchedulerConfig::default()
        .with_mode(mode)
        .with_workers(2)
        .with_permit_timeout(Duration::from_secs(300))
}

/// A scheduler built as an embedder builds it, its binder recording every call and failing
/// those `fails` says; a node with room for four members.
fn scheduler(
    mode: Mode,
    clock: &ManualClock,
    fails: fn(&str) -> bool,
) -> (Scheduler, Calls, Outcomes) {
    let calls: Calls = Arc::new(Mutex::new(Vec::new()));
    let binder = {
        let calls = calls.clone();
        move |pod: &Pod, node: &str| {
            let mut calls = calls.lock();
            let name = pod.name();
            if fails(name) && calls.iter().all(|(p, _, _)| p != name) {
                calls.push((name.to_owned(), node.to_owned(), false));
                return Err(BindError::Failed("the API server refused (test)".into()));
            }
            calls.push((name.to_owned(), node.to_owned(), true));
            Ok(())
        }
    };
    let (sink, outcomes) = outcome_channel();
    let s = Scheduler::builder(config(mode))
        .binder(binder)
        .outcomes(sink)
        .build();
    let node = Node::new("node-0", Resources::new(4 * CPU, 16 * GIB));
    s.add_node(node, clock.now()).unwrap();
    let outcomes = Outcomes {
        channel: outcomes,
        told: Default::default(),
    };
    (s, calls, outcomes)
}

/// Lets the scheduler's threads run until nothing is left to do (or a bound of yields: the
/// shutdown settles the rest); whether it got there. Nothing to do: no pod to pop or in
/// flight, none waiting, no binding cycle queued, no reservation held, and every bind the
/// binder answered told to the embedder (a binding cycle delivers its outcome once it has
/// handed its pod back, so a cycle under way is never taken for quiescence).
fn settle(s: &Scheduler, calls: &Calls, outcomes: &Outcomes) -> bool {
    // A thread about to act (the timer rung, its tick not yet run) shows nothing, so the idle
    // state must hold over a run of yields: each lets every other runnable thread go first
    // (PCT deprioritizes a yielding thread; the random scheduler picks among all).
    let mut idle = 0;
    for _ in 0..1000 {
        let lengths = s.queue().lengths();
        let (binds, answered) = (calls.lock().len(), outcomes.binds_told());
        if lengths.active == 0
            && lengths.in_flight == 0
            && s.in_binding().is_empty()
            && s.waiting().is_empty()
            && s.cache().with(|c| c.assumed_count()) == 0
            && binds == answered
        {
            idle += 1;
            if idle == 20 {
                return true;
            }
        } else {
            idle = 0;
        }
        thread::yield_now();
    }
    false
}

/// I4 at quiescence, before the shutdown (a closed queue takes nothing back): every pod not
/// deleted is bound or back in the queue.
fn check_settled(
    s: &Scheduler,
    (calls, outcomes): (&Calls, &Outcomes),
    added: &[Pod],
    deleted: &[String],
) -> Result<(), String> {
    let calls = calls.lock();
    for pod in added {
        let name = pod.name();
        let bound = calls.iter().any(|(p, _, ok)| p == name && *ok);
        if deleted.iter().any(|d| d == name) || bound {
            continue;
        }
        let in_binding = s.in_binding().contains(pod.id());
        let waits = s.waiting().get(pod.id()).is_some();
        if s.queue().place(pod.id()).is_none() && !in_binding && !waits {
            let binds = calls.iter().filter(|(p, _, _)| p == name).count();
            let told: Vec<String> = outcomes
                .told()
                .iter()
                .filter(|o| o.pod().name() == name)
                .map(|o| format!("{o:?}"))
                .collect();
            return Err(format!(
                "I4: {name} is nowhere at quiescence: not bound ({binds} failed bind calls), \
                 not queued, told {told:?} (cache {:?}, waiting {}, in binding {:?}, lengths {:?}, \
                 stats {:?})",
                s.cache().with(|c| c.phase(pod.id())),
                s.waiting().len(),
                s.in_binding(),
                s.queue().lengths(),
                s.stats()
            ));
        }
    }
    Ok(())
}

/// Starts `s`'s threads, with `flaw` planted in its cycles if there is one.
fn start(s: &Scheduler, clock: &ManualClock, flaw: Option<Flaw>) -> RunningScheduler {
    match flaw {
        None => s.start(clock.clone()),
        Some(flaw) => gangsched::checking::start_with_flaw(s, clock.clone(), flaw),
    }
}

/// The checks after a schedule, once shut down (see the module documentation) but I3, which
/// each scenario asks for where it holds: the first failure. `deleted`: pods the event thread
/// deleted.
fn check_after(
    s: &Scheduler,
    (calls, outcomes): (&Calls, &Outcomes),
    added: &[Pod],
    deleted: &[String],
) -> Result<(), String> {
    s.check()
        .map_err(|v| format!("after shutdown (I4, I5, I6): {v}"))?;
    let assumed = s.cache().with(|c| c.assumed_count());
    if assumed != 0 {
        return Err(format!("I6: {assumed} reservation(s) leaked"));
    }
    if !s.waiting().is_empty() {
        return Err("I6: a pod still waits at Permit after shutdown".into());
    }
    if !s.in_binding().is_empty() {
        return Err(format!(
            "I6: binding cycles never ran: {:?}",
            s.in_binding()
        ));
    }
    let calls = calls.lock().clone();
    let mut bound: BTreeMap<&str, usize> = BTreeMap::new();
    for (pod, _, _) in &calls {
        *bound.entry(pod).or_default() += 1;
    }
    // Each pod's last outcome; a Bound one exactly for the pods the binder bound.
    let mut last: BTreeMap<String, PodOutcome> = BTreeMap::new();
    for outcome in outcomes.told() {
        let name = outcome.pod().name().to_owned();
        if let PodOutcome::Bound { .. } = outcome {
            if !bound.contains_key(name.as_str()) {
                return Err(format!(
                    "{name}: a Bound outcome, but the binder never bound it"
                ));
            }
        }
        last.insert(name, outcome);
    }
    for pod in added {
        let name = pod.name();
        let binds = bound.get(name).copied().unwrap_or(0);
        // A pod whose first bind failed is bound at most once more.
        if binds > 2 {
            return Err(format!("I4: {name} given to the binder {binds} times"));
        }
        // Queued (never attempted), deleted, or told: a closed queue takes nothing back, so
        // a pod whose attempt ended at the shutdown has its outcome and no place.
        let placed = s.queue().place(pod.id()).is_some();
        let gone = deleted.iter().any(|d| d == name);
        if binds == 0 && !placed && !gone && !last.contains_key(name) {
            return Err(format!(
                "I4: {name} is lost: never bound, not queued, not deleted, no outcome"
            ));
        }
    }
    Ok(())
}

/// I3, as `gangway check` counts it, on each gang's first admission (nothing of the gang was
/// admitted before it): the members that Permit let through number at least the min count.
fn check_i3() -> Result<(), String> {
    let seen = admissions::SEEN.with(|seen| seen.borrow().clone());
    let mut first: BTreeMap<String, u64> = BTreeMap::new();
    for (gang, members) in seen {
        first.entry(gang).or_insert(members);
    }
    for (gang, members) in first {
        if members < MIN {
            return Err(format!(
                "I3: gang {gang} (min count {MIN}) first admitted with {members} member(s)"
            ));
        }
    }
    Ok(())
}

/// Fails the schedule with `verdict`'s failure, once every object of the run is dropped (a
/// shuttle primitive must not outlive its execution, even while a failure unwinds).
fn conclude(verdict: Result<(), String>, run: impl Sized) {
    drop(run);
    if let Err(failure) = verdict {
        panic!("{failure}");
    }
}

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
    admissions::reset();
    let clock = ManualClock::new(Time::ZERO);
    let (s, calls, outcomes) = scheduler(mode, &clock, |name| name == "a-1");
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

#[test]
fn churn_keeps_every_pod_and_reservation_accounted_for_random() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        shuttle::check_random(move || churn(mode, None), iterations());
    }
}

/// Runs `run` under PCT (depth 3) for up to 20 × [`iterations`] schedules, expecting a failure
/// that names `property`: a witness. Returns the failure.
fn witness(what: &str, property: &str, run: impl Fn() + Send + Sync + 'static) -> String {
    let n = 20 * iterations();
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        shuttle::check_pct(run, n, 3)
    }));
    let message = match found {
        Ok(()) => panic!("no schedule of {n} found {what}"),
        Err(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default(),
    };
    assert!(
        message.contains(property),
        "{what}: not {property}: {message}"
    );
    message
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
