//! Runs a [`Workload`] through the real [`Scheduler`] and measures the outcome.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use gangsched::scheduler::{InMemoryBinder, Node, ResourceFit, Scheduler, SchedulerConfig};
use gangsched::sync::{Arc, Mutex};
use gangsched::{Clock, Pod, PodGroup, PodId, Resources, SystemClock, Time};

use super::generate::SplitMix64;
use super::ledger::Ledger;
use super::rest::{at_rest, Rests};
use super::workload::RUN_AFTER_LAST_TIME;
use super::{percentile, Options, Progress, Report, Workload, WorkloadError};

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    /// The workload file is wrong.
    #[error("{0}")]
    Workload(#[from] WorkloadError),
    /// A flag is wrong.
    #[error("invalid option: {0}")]
    Options(String),
    /// The scheduler refused part of the workload.
    #[error("workload refused: {0}")]
    Refused(String),
}

/// After the last event, how long virtual time may run on (retries, timeouts) before the run
/// ends with whatever did not bind.
const HORIZON: Duration = Duration::from_secs(30 * 60);
/// How many of the gangs that waited for a timer the report describes.
const TIMER_WAITS_SHOWN: usize = 10;
/// The latest a generated delete (`--delete-rate`) comes after its pod's arrival, in ms.
const LATEST_DELETE_MS: u64 = 120_000;
// A workload's latest time leaves the clock room for both (see `LATEST_MS`).
const _: () =
    assert!(HORIZON.as_millis() + LATEST_DELETE_MS as u128 <= RUN_AFTER_LAST_TIME.as_millis());

/// Loads the workload `options` name, or generates the default one.
pub fn load(options: &Options) -> Result<Workload, SimulateError> {
    match &options.workload {
        Some(path) => Ok(Workload::from_path(path)?),
        None if options.contention => {
            let spec = options.contention_spec().map_err(SimulateError::Options)?;
            Ok(Workload::contention(&spec))
        }
        None => {
            let spec = options.generate_spec().map_err(SimulateError::Options)?;
            Ok(Workload::generate(&spec))
        }
    }
}

/// One timed event of the workload.
enum Event {
    Arrive(Pod),
    Delete(Pod),
}

/// Runs `workload` as `options` say: in deterministic virtual time (the default: the same
/// seed gives the same run) or, with `--real-time`, on the scheduler's own threads and the
/// system clock. Checks I3, I4 and I6 at the end; in virtual time also I5 and I7 at each rest
/// and the gangs that waited for a timer they should not have needed (`rest.rs`).
///
/// # Errors
///
/// A rate out of range; a workload time past [`LATEST_MS`](super::workload::LATEST_MS)
/// ([`WorkloadError::TooLate`]: the clock would saturate and the run never end); a node,
/// group or pod the scheduler refuses.
pub fn run(options: &Options, workload: &Workload) -> Result<Report, SimulateError> {
    workload.check_times()?;
    for (flag, rate) in [
        ("--bind-failure-rate", options.bind_failure_rate),
        ("--delete-rate", options.delete_rate),
    ] {
        if !(0.0..=1.0).contains(&rate) {
            return Err(SimulateError::Options(format!(
                "{flag} {rate} is not a probability"
            )));
        }
    }
    let config = SchedulerConfig::default()
        .with_mode(options.mode.into())
        .with_gang_cycle(options.gang_cycle);
    let rng = Arc::new(Mutex::new(SplitMix64(options.seed)));
    let failure_rate = options.bind_failure_rate;
    let failed = Arc::new(Mutex::new(BTreeSet::new()));
    let binder = InMemoryBinder::default().with_failures({
        let (rng, failed) = (rng.clone(), failed.clone());
        move |pod, _| {
            let fail = failure_rate > 0.0 && rng.lock().chance(failure_rate);
            if fail {
                failed.lock().insert(pod.id().clone());
            }
            fail
        }
    });
    let pods = pods_of(workload);
    let run_for = workload
        .pods
        .iter()
        .filter_map(|p| {
            let ms = p.run_ms?;
            Some((pods[&p.name].0.id().clone(), Duration::from_millis(ms)))
        })
        .collect::<HashMap<_, _>>();
    let clock = options.real_time.then(SystemClock::new);
    let ledger = Arc::new(Mutex::new(Ledger::new(clock, run_for)));
    let scheduler = Scheduler::builder(config)
        .placement(ResourceFit)
        .binder(binder.clone())
        .outcomes({
            let ledger = ledger.clone();
            move |outcome: gangsched::scheduler::PodOutcome| ledger.lock().outcome(&outcome)
        })
        .build();
    let events = timeline(&pods, workload, options.delete_rate, &mut rng.lock());
    let started = Instant::now();
    let mut progress = Progress::new(pods.len() as u64, !options.json);
    let mut rests = None;
    let end = match clock {
        Some(clock) => run_real_time(&scheduler, workload, &events, &ledger, clock, &mut progress)?,
        None => {
            let mut rng = rng.lock().clone();
            let mut run = Run {
                scheduler: &scheduler,
                ledger: &ledger,
                rests: Rests::default(),
            };
            let end = run.virtual_time(workload, &events, &mut progress, &mut rng)?;
            rests = Some(run.rests);
            end
        }
    };
    progress.finish();
    let failed = failed.lock().clone();
    let ledger = ledger.lock();
    let seen = Seen {
        binder: &binder,
        failed: &failed,
        ledger: &ledger,
    };
    let mut report = summarise(&scheduler, seen, workload, &pods, &events, options, end);
    if let Some(rests) = rests {
        report.violations.extend(rests.violations);
        report.waited_for_a_timer = rests.waited.len() as u64;
        let mut seen: Vec<String> = Vec::new();
        for (_, what) in rests.waited.into_values() {
            if !seen.contains(&what) {
                seen.push(what);
            }
        }
        report.timer_waits = seen.into_iter().take(TIMER_WAITS_SHOWN).collect();
    }
    report.virtual_seconds = end.as_nanos() as f64 / 1e9;
    report.wall_seconds = started.elapsed().as_secs_f64();
    report.compute_rates();
    Ok(report)
}

/// The workload's pods as gangway pods, by name.
fn pods_of(workload: &Workload) -> HashMap<String, (Pod, Time)> {
    workload
        .pods
        .iter()
        .map(|p| {
            let mut pod = Pod::new(format!("{}/{}", p.namespace, p.name), &p.namespace, &p.name)
                .with_priority(p.priority)
                .with_requests(Resources::new(p.cpu_millis, p.memory_bytes))
                .with_creation_time(Time::from_millis(p.arrival_ms));
            if let Some(group) = &p.group {
                pod = pod.with_group(group);
            }
            (p.name.clone(), (pod, Time::from_millis(p.arrival_ms)))
        })
        .collect()
}

/// Arrivals; deletes the workload names, and deletes of a `delete_rate` share of the other
/// pods 1–120 s after they arrive; in time order (ties: arrival before delete, then workload
/// order).
fn timeline(
    pods: &HashMap<String, (Pod, Time)>,
    workload: &Workload,
    delete_rate: f64,
    rng: &mut SplitMix64,
) -> Vec<(Time, Event)> {
    let mut events = Vec::new();
    for spec in &workload.pods {
        let (pod, at) = &pods[&spec.name];
        events.push((*at, Event::Arrive(pod.clone())));
        if let Some(ms) = spec.delete_ms {
            events.push((Time::from_millis(ms), Event::Delete(pod.clone())));
        } else if delete_rate > 0.0 && rng.chance(delete_rate) {
            let later = *at + Duration::from_millis(rng.range(1_000, LATEST_DELETE_MS));
            events.push((later, Event::Delete(pod.clone())));
        }
    }
    events.sort_by_key(|(at, e)| (*at, matches!(e, Event::Delete(_))));
    events
}

fn setup(scheduler: &Scheduler, workload: &Workload, now: Time) -> Result<(), SimulateError> {
    let refused = |e: &dyn std::fmt::Display| SimulateError::Refused(e.to_string());
    for n in &workload.nodes {
        let node = Node::new(&n.name, Resources::new(n.cpu_millis, n.memory_bytes));
        scheduler.add_node(node, now).map_err(|e| refused(&e))?;
    }
    for g in &workload.groups {
        let group = match g.min_count {
            Some(min) => PodGroup::gang(&g.namespace, &g.name, min),
            None => PodGroup::new(&g.namespace, &g.name, gangsched::Policy::Basic),
        }
        .map_err(|e| refused(&e))?;
        scheduler.add_group(group, now).map_err(|e| refused(&e))?;
    }
    Ok(())
}

fn apply(scheduler: &Scheduler, event: &Event, now: Time) -> Result<(), SimulateError> {
    match event {
        Event::Arrive(pod) => scheduler
            .add_pod(pod.clone(), now)
            .map_err(|e| SimulateError::Refused(e.to_string())),
        Event::Delete(pod) => scheduler
            .delete_pod(pod, now)
            .map(drop)
            .map_err(|e| SimulateError::Refused(e.to_string())),
    }
}

/// A virtual-time run: the scheduler and the ledger that follows it.
struct Run<'a> {
    scheduler: &'a Scheduler,
    ledger: &'a Mutex<Ledger>,
    /// What the run's rests found (`rest.rs`).
    rests: Rests,
}

impl Run<'_> {
    /// Virtual time: one thread; at each instant apply the due events, completions and
    /// timers, run scheduling cycles and binding cycles until nothing moves, then jump to the
    /// next instant anything is due. Returns the time it stopped at: when every pod has bound
    /// and every event is applied, or nothing happened for [`HORIZON`].
    ///
    /// In the real scheduler, scheduling cycles and binding cycles run on different threads,
    /// so a decision may wait in the workers' queue while the next pod is scheduled. Here the
    /// seed decides, before each scheduling cycle, whether the pending binding cycles run
    /// first — the same seed, the same interleaving.
    fn virtual_time(
        &mut self,
        workload: &Workload,
        events: &[(Time, Event)],
        progress: &mut Progress,
        rng: &mut SplitMix64,
    ) -> Result<Time, SimulateError> {
        let scheduler = self.scheduler;
        let gang_cycle = scheduler.config().gang_cycle;
        let mut now = Time::ZERO;
        setup(scheduler, workload, now)?;
        // The latest instant something was fed in: an event or a completion.
        let mut latest = events.last().map_or(Time::ZERO, |(at, _)| *at);
        let total = events
            .iter()
            .filter(|(_, e)| matches!(e, Event::Arrive(_)))
            .count() as u64;
        let mut next = 0;
        loop {
            self.ledger.lock().set_now(now);
            while let Some((at, event)) = events.get(next).filter(|(at, _)| *at <= now) {
                debug_assert!(*at <= now);
                apply(scheduler, event, now)?;
                next += 1;
            }
            let completions = self.ledger.lock().due(now);
            for pod in &completions {
                complete(scheduler, pod, now)?;
                latest = latest.max(now);
            }
            scheduler.tick(now);
            loop {
                let mut moved = rng.chance(0.5) && scheduler.run_binding_cycles(now) > 0;
                if let Some(outcome) = scheduler.schedule_one(now) {
                    self.ledger.lock().cycle(&outcome);
                    moved = true;
                } else {
                    moved |= scheduler.run_binding_cycles(now) > 0;
                }
                if !moved {
                    break;
                }
            }
            let stats = scheduler.stats();
            progress.set(stats.bound.min(total));
            let workload = [
                events.get(next).map(|(at, _)| *at),
                self.ledger.lock().next_completion(),
            ]
            .into_iter()
            .flatten()
            .min();
            let timer = scheduler.next_deadline();
            let backoff = scheduler.queue().next_backoff_expiry();
            let Some(then) = [workload, timer].into_iter().flatten().min() else {
                self.rest(gang_cycle, now);
                return Ok(now);
            };
            let all_bound = next == events.len() && stats.bound >= total;
            let ends = then > latest + HORIZON || all_bound;
            if ends || at_rest(backoff, timer, workload) {
                self.rest(gang_cycle, now);
            }
            if ends {
                return Ok(now);
            }
            // A deadline at `now` was applied by `tick`; never stand still.
            now = then.max(now + Duration::from_nanos(1));
        }
    }
}

impl Run<'_> {
    /// The checks at a rest of the run (`rest.rs`), the gangs a deadline decided left out of
    /// progress.
    fn rest(&mut self, gang_cycle: gangsched::GangCycle, now: Time) {
        let ledger = self.ledger.lock();
        let timed_out = |gang: &gangsched::GroupKey| ledger.timed_out(gang);
        self.rests.check(self.scheduler, gang_cycle, now, timed_out);
    }
}

/// A bound pod ran its time: it is deleted, freeing its node.
fn complete(scheduler: &Scheduler, pod: &Pod, now: Time) -> Result<(), SimulateError> {
    scheduler
        .delete_pod(pod, now)
        .map(drop)
        .map_err(|e| SimulateError::Refused(e.to_string()))
}

/// Real time: the scheduler's own threads; events are fed at their arrival times (measured
/// from the start) and completions when they are due; the run ends when the scheduler is
/// quiet or the horizon passes.
fn run_real_time(
    scheduler: &Scheduler,
    workload: &Workload,
    events: &[(Time, Event)],
    ledger: &Mutex<Ledger>,
    clock: SystemClock,
    progress: &mut Progress,
) -> Result<Time, SimulateError> {
    setup(scheduler, workload, clock.now())?;
    let running = scheduler.start(clock);
    let feed_completions = |now: Time| -> Result<(), SimulateError> {
        let due = ledger.lock().due(now);
        due.iter().try_for_each(|pod| complete(scheduler, pod, now))
    };
    for (at, event) in events {
        loop {
            let next = ledger.lock().next_completion();
            let Some(due) = next.filter(|due| due < at) else {
                break;
            };
            std::thread::sleep(due.saturating_duration_since(clock.now()));
            feed_completions(clock.now())?;
        }
        let wait = at.saturating_duration_since(clock.now());
        std::thread::sleep(wait);
        apply(scheduler, event, clock.now())?;
        progress.set(scheduler.stats().bound);
    }
    let last = events.last().map_or(Time::ZERO, |(at, _)| *at);
    let mut horizon = last + scheduler.config().permit_timeout + Duration::from_secs(5);
    let total = events
        .iter()
        .filter(|(_, e)| matches!(e, Event::Arrive(_)))
        .count() as u64;
    let mut quiet_since = Instant::now();
    let mut last_bound = u64::MAX;
    while clock.now() < horizon {
        let next = ledger.lock().next_completion();
        if next.is_some_and(|due| due <= clock.now()) {
            feed_completions(clock.now())?;
            horizon = horizon.max(clock.now() + scheduler.config().permit_timeout);
        }
        let bound = scheduler.stats().bound;
        progress.set(bound);
        if bound >= total {
            break;
        }
        if bound != last_bound || !scheduler.in_binding().is_empty() {
            last_bound = bound;
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() > Duration::from_secs(2)
            && scheduler.waiting().is_empty()
            && next.is_none()
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let end = clock.now();
    running.shutdown();
    Ok(end)
}

/// What the run observed beside the scheduler: the binder's bindings, the binds it failed,
/// and the ledger of reservations, binds and completions.
struct Seen<'a> {
    binder: &'a InMemoryBinder,
    failed: &'a BTreeSet<PodId>,
    ledger: &'a Ledger,
}

/// The report: what bound, what did not and why, and the invariants at the end.
fn summarise(
    scheduler: &Scheduler,
    seen: Seen<'_>,
    workload: &Workload,
    pods: &HashMap<String, (Pod, Time)>,
    events: &[(Time, Event)],
    options: &Options,
    end: Time,
) -> Report {
    let Seen {
        binder,
        failed,
        ledger,
    } = seen;
    let stats = scheduler.stats();
    // Hash sets throughout: every pod of the run is looked up in each (issue #23).
    let completed: HashSet<&PodId> = ledger.completed().iter().collect();
    let failed: HashSet<&PodId> = failed.iter().collect();
    // A set: a million pods checked against 50,000 deletes was most of a large run's time.
    let deleted: HashSet<&PodId> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Delete(p) => Some(p.id()),
            Event::Arrive(_) => None,
        })
        .collect();
    let is_deleted = |id: &PodId| deleted.contains(id);
    let in_binding = scheduler.in_binding();
    let in_binding: HashSet<&PodId> = in_binding.iter().collect();
    // Per group: members bound at the end, and whether a member was deleted or failed to
    // bind (then an incomplete gang is the workload's doing, not an I3 violation).
    let mut members: HashMap<(&str, &str), (u64, bool)> = HashMap::new();
    let mut basic_bound = 0;
    let mut pods_bound = 0;
    let mut lost = 0;
    for spec in &workload.pods {
        let pod = &pods[&spec.name].0;
        let bound = (binder.is_bound(pod.id()) && scheduler.is_bound(pod.id()))
            || completed.contains(pod.id());
        pods_bound += u64::from(bound);
        match &spec.group {
            Some(group) => {
                let entry = members.entry((&spec.namespace, group)).or_default();
                entry.0 += u64::from(bound);
                entry.1 |= is_deleted(pod.id()) || failed.contains(pod.id());
            }
            None => basic_bound += u64::from(bound),
        }
        let somewhere = bound
            || scheduler.queue().place(pod.id()).is_some()
            || in_binding.contains(pod.id())
            || scheduler.waiting().get(pod.id()).is_some();
        if !somewhere && !is_deleted(pod.id()) {
            lost += 1;
        }
    }
    let mut gangs_bound = 0;
    let mut partial = 0;
    let mut to_bind = gang_bind_times(workload, pods, ledger);
    let last_gang_bound = to_bind.iter().map(|(_, bound)| *bound).max();
    let mut to_bind: Vec<u64> = to_bind.drain(..).map(|(took, _)| took).collect();
    for g in &workload.groups {
        let (bound, disturbed) = members
            .get(&(g.namespace.as_str(), g.name.as_str()))
            .copied()
            .unwrap_or_default();
        match g.min_count {
            Some(min) if bound >= u64::from(min) => gangs_bound += 1,
            Some(_) if bound > 0 && !disturbed => partial += 1,
            Some(_) => {}
            None => basic_bound += bound,
        }
    }
    let leaked = scheduler.leaked_reservations().len() as u64;
    let mut violations = Vec::new();
    if let Err(e) = scheduler.check() {
        violations.push(e.to_string());
    }
    let mut waits = scheduler.permit_waits();
    let ms = |ns: Option<u64>| ns.map_or(0.0, |ns| ns as f64 / 1e6);
    let seconds = |ns: Option<u64>| ns.map_or(0.0, |ns| ns as f64 / 1e9);
    let gangs_per_sim_sec = match last_gang_bound {
        Some(at) if at > Time::ZERO => gangs_bound as f64 / seconds(Some(at.as_nanos())),
        _ => 0.0,
    };
    Report {
        mode: format!("{:?}", gangsched::Mode::from(options.mode)).to_lowercase(),
        gang_cycle: crate::gang_cycle_name(options.gang_cycle).to_owned(),
        completed: completed.len() as u64,
        gang_bind_p50_s: seconds(percentile(&mut to_bind, 50.0)),
        gang_bind_p99_s: seconds(percentile(&mut to_bind, 99.0)),
        gangs_per_sim_sec,
        wasted_reservation_seconds: ledger.wasted_seconds(end),
        seed: options.seed,
        pods_total: workload.pod_count() as u64,
        pods_bound,
        gangs_total: workload.gang_count() as u64,
        gangs_bound,
        basic_pods_bound: basic_bound,
        timeouts: stats.permit_timeouts,
        gang_rejections: stats.permit_rejections,
        partial_gangs: partial,
        lost_pods: lost,
        leaked_reservations: leaked,
        bind_failures: stats.bind_failures,
        deletes: deleted.len() as u64,
        permit_wait_p50_ms: ms(percentile(&mut waits, 50.0)),
        permit_wait_p99_ms: ms(percentile(&mut waits, 99.0)),
        violations,
        ..Report::default()
    }
}

/// For each gang that bound (its `min_count`th member bound), how long after its first
/// member arrived, in nanoseconds, and when.
fn gang_bind_times(
    workload: &Workload,
    pods: &HashMap<String, (Pod, Time)>,
    ledger: &Ledger,
) -> Vec<(u64, Time)> {
    let mut members: HashMap<(&str, &str), (Time, Vec<Time>)> = HashMap::new();
    for spec in &workload.pods {
        let Some(group) = &spec.group else { continue };
        let (pod, arrival) = &pods[&spec.name];
        let entry = members
            .entry((&spec.namespace, group))
            .or_insert((*arrival, Vec::new()));
        entry.0 = entry.0.min(*arrival);
        entry.1.extend(ledger.bound_at(pod.id()));
    }
    let mut times = Vec::new();
    for g in &workload.groups {
        let Some(min) = g.min_count else { continue };
        let Some((first, bound)) = members.get_mut(&(g.namespace.as_str(), g.name.as_str())) else {
            continue;
        };
        bound.sort_unstable();
        if let Some(at) = bound.get((min as usize).saturating_sub(1)) {
            let took = at.saturating_duration_since(*first).as_nanos() as u64;
            times.push((took, *at));
        }
    }
    times
}
