//! The shuttle suite's harness: the scheduler as an embedder builds it, its binder and
//! outcomes recorded, quiescence, the checks after a schedule and the witness runner
//! (`tests/tests/shuttle_scheduler.rs` documents what each check asserts).

use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::checking::Flaw;
use gangsched::scheduler::{
    outcome_channel, BindError, Node, OutcomeSink, PodOutcome, ResourceFit, RunningScheduler,
    Scheduler, SchedulerConfig,
};
use gangsched::sync::channel::Receiver;
use gangsched::sync::{thread, Arc, Mutex};
use gangsched::{
    Cause, Clock, GangCycle, GroupKey, ManualClock, Mode, PermitPlugins, Pod, Resources,
};
use gangway_check::at_rest;

pub(crate) const CPU: u64 = 1_000;
pub(crate) const GIB: u64 = 1 << 30;
pub(crate) const MIN: u64 = 2;

/// Schedules per scheduler (`SHUTTLE_ITERATIONS`, default 300).
pub(crate) fn iterations() -> usize {
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
pub(crate) mod admissions {
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

thread_local! {
    /// Called from inside the embedder's code the harness gives the scheduler — the binder and
    /// the outcome sink — when set (`shuttle_reentrant_callbacks.rs` re-enters the scheduler
    /// there). Shuttle runs a schedule's threads on the test's own OS thread, one at a time.
    pub(crate) static IN_USER_CODE: std::cell::Cell<Option<fn()>> = const { std::cell::Cell::new(None) };
}

fn in_user_code() {
    if let Some(hook) = IN_USER_CODE.with(|h| h.get()) {
        hook();
    }
}

/// A scheduler as [`scheduler_with`] builds it, with its binder's calls and its outcomes.
pub(crate) type Run = (Scheduler, Calls, Outcomes);

/// Every call the binder got: (pod, node, whether it bound), in order.
pub(crate) type Calls = Arc<Mutex<Vec<(String, String, bool)>>>;

/// What the scheduler told the embedder about each pod, in order: the channel, and what the
/// main thread has read from it so far.
pub(crate) struct Outcomes {
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

pub(crate) fn member(gang: &str, i: usize) -> Pod {
    Pod::new(format!("{gang}-{i}"), "ml", &format!("{gang}-{i}"))
        .with_group(gang)
        .with_requests(Resources::new(CPU, GIB))
}

pub(crate) fn config(mode: Mode) -> SchedulerConfig {
    SchedulerConfig::default()
        .with_mode(mode)
        .with_workers(2)
        .with_permit_timeout(Duration::from_secs(300))
}

/// A scheduler built as an embedder builds it, two binding workers, its binder recording every
/// call and failing those `fails` says; a node with room for four members.
pub(crate) fn scheduler(mode: Mode, clock: &ManualClock, fails: fn(&str) -> bool) -> Run {
    scheduler_with(mode, clock, fails, PermitPlugins::none(), 4, 2)
}

/// [`scheduler`] with the embedder's Permit plugins `permit`, a node of `cpus` CPUs and
/// `workers` binding workers.
pub(crate) fn scheduler_with(
    mode: Mode,
    clock: &ManualClock,
    fails: fn(&str) -> bool,
    permit: PermitPlugins,
    cpus: u64,
    workers: usize,
) -> Run {
    let config = config(mode).with_workers(workers);
    scheduler_configured(config, clock, fails, permit, cpus)
}

/// [`scheduler_with`] on `config` as it is (its gang cycle, say).
pub(crate) fn scheduler_configured(
    config: SchedulerConfig,
    clock: &ManualClock,
    fails: fn(&str) -> bool,
    permit: PermitPlugins,
    cpus: u64,
) -> Run {
    let calls: Calls = Arc::new(Mutex::new(Vec::new()));
    let binder = {
        let calls = calls.clone();
        move |pod: &Pod, node: &str| {
            in_user_code();
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
    let sink = move |outcome: PodOutcome| {
        in_user_code();
        sink.deliver(outcome);
    };
    let s = Scheduler::builder(config)
        .binder(binder)
        .outcomes(sink)
        .permit_plugins(permit)
        .build();
    let node = Node::new("node-0", Resources::new(cpus * CPU, 16 * GIB));
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
pub(crate) fn settle(s: &Scheduler, calls: &Calls, outcomes: &Outcomes) -> bool {
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
/// deleted is bound or back in the queue; then [`check_at_rest`].
pub(crate) fn check_settled(
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
    drop(calls);
    check_at_rest(s, outcomes)
}

/// I5, I7 and progress without timeouts at quiescence, as `gangway check` judges its states
/// and `gangway simulate` its rests (`gangway_check::at_rest`): the groups' partition, the
/// nodes' accounting and the two agreeing; no pod parked for room a node has (every release
/// of room was announced); no gang with room for its quorum left to wait for a permit
/// deadline or the leftover flush (but for the gangs a deadline already decided). Every
/// finding, in one failure.
pub(crate) fn check_at_rest(s: &Scheduler, outcomes: &Outcomes) -> Result<(), String> {
    // What follows a timeout is the timeout's doing: a gang a deadline rejected a member of is
    // not judged for progress.
    let timed_out: Vec<GroupKey> = outcomes
        .told()
        .iter()
        .filter_map(|o| match o {
            PodOutcome::Rejected {
                pod,
                cause: Cause::TimedOut,
                ..
            } => pod.group_key().cloned(),
            _ => None,
        })
        .collect();
    let found = at_rest(
        &s.gang().registry().snapshot(),
        &s.cache().snapshot(),
        &s.queue().snapshot(),
        s.config().gang_cycle == GangCycle::PodGroup,
        &ResourceFit,
        ResourceFit::PLUGIN,
        |gang| timed_out.contains(gang),
    );
    let queue = s.queue().snapshot();
    let waits = found.waiting_for_a_timer.iter().map(|room| {
        let places: Vec<String> = room
            .pods
            .iter()
            .map(|id| {
                let rejectors = queue.info(id).map(|i| i.unschedulable_plugins().clone());
                format!("{id} {:?} {rejectors:?}", queue.place(id))
            })
            .collect();
        format!("progress without timeouts: {room} ({})", places.join(", "))
    });
    let findings: Vec<String> = found.violations.into_iter().chain(waits).collect();
    match findings.is_empty() {
        true => Ok(()),
        false => Err(format!("at quiescence: {}", findings.join("; "))),
    }
}

/// Starts `s`'s threads, with `flaw` planted in its cycles if there is one.
pub(crate) fn start(s: &Scheduler, clock: &ManualClock, flaw: Option<Flaw>) -> RunningScheduler {
    match flaw {
        None => s.start(clock.clone()),
        Some(flaw) => gangsched::checking::start_with_flaw(s, clock.clone(), flaw),
    }
}

/// The checks after a schedule, once shut down (see the module documentation) but I3, which
/// each scenario asks for where it holds: the first failure. `deleted`: pods the event thread
/// deleted.
pub(crate) fn check_after(
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
pub(crate) fn check_i3() -> Result<(), String> {
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
pub(crate) fn conclude(verdict: Result<(), String>, run: impl Sized) {
    drop(run);
    if let Err(failure) = verdict {
        panic!("{failure}");
    }
}

/// Runs `run` under PCT (depth 3) for up to 20 × [`iterations`] schedules, expecting a failure
/// that names `property`: a witness. Returns the failure.
pub(crate) fn witness(
    what: &str,
    property: &str,
    run: impl Fn() + Send + Sync + 'static,
) -> String {
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
