//! Embedding the [`Scheduler`] with your own [`Binder`], driven by hand in virtual time.
//!
//! A gang `ml/trainer` of three pods (2 CPUs each, min count 3) in the default
//! [`Mode::Hardened`]:
//!
//! 1. At first there is room for two. Two members wait at Permit, the third finds no node.
//!    When the attempt's deadline passes, both waiting members are rejected together, and the
//!    first binding cycle hands both back to the queue in one call, releasing their
//!    reservations (H1, H2): nothing is left assumed, nothing is bound.
//! 2. A node joins. The third member finds room and waits; its Permit activates its
//!    siblings, which reach quorum, and the three pass Permit together.
//! 3. The binder fails `trainer-1`'s first bind (an API-server error). A gang is admitted
//!    at Permit, so its bound siblings keep their binding; `trainer-1` alone releases its
//!    reservation and backs off, is retried, passes Permit at once (its gang is already
//!    admitted) and binds.
//!
//! No thread is started: the example calls the scheduler's steps itself (`schedule_one`,
//! `run_binding_cycles`, `tick`) with explicit [`Time`]s, so every run prints the same log.
//! Run it with `cargo run -p gangsched --example embed_scheduler`; every outcome is asserted.

// An embedder's program uses std's locks; the workspace's lint keeps gangway's own code on
// its internal sync facade.
#![allow(clippy::disallowed_types)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gangsched::queue::QueuePlace;
use gangsched::scheduler::{BindError, Binder, CycleOutcome, Node, ResourceFit};
use gangsched::{Mode, Pod, PodGroup, PodId, Resources, Scheduler, SchedulerConfig, Time};

const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;
const PERMIT_TIMEOUT: Duration = Duration::from_secs(30);

/// A binder standing in for the API server: it records every call and fails the first bind
/// of the pods it is told to fail. Clones share the record.
#[derive(Clone, Default)]
struct FlakyBinder {
    fail_once: Arc<Mutex<BTreeSet<String>>>,
    calls: Arc<Mutex<Vec<(String, String, bool)>>>,
}

impl Binder for FlakyBinder {
    fn bind(&self, pod: &Pod, node: &str) -> Result<(), BindError> {
        let fail = self
            .fail_once
            .lock()
            .expect("binder state")
            .remove(pod.name());
        self.calls.lock().expect("binder state").push((
            pod.name().to_owned(),
            node.to_owned(),
            !fail,
        ));
        if fail {
            println!("         binder: {} -> {node} FAILED", pod.name());
            Err(BindError::Failed("etcd timeout".into()))
        } else {
            println!("         binder: {} -> {node} ok", pod.name());
            Ok(())
        }
    }
}

fn main() {
    let config = SchedulerConfig::default()
        .with_mode(Mode::Hardened)
        .with_permit_timeout(PERMIT_TIMEOUT);
    let binder = FlakyBinder::default();
    binder
        .fail_once
        .lock()
        .expect("binder state")
        .insert("trainer-1".into());
    let s = Scheduler::with(config, ResourceFit, binder.clone());

    let pods: Vec<Pod> = (0..3)
        .map(|i| {
            // The uid doubles as the name, so the log can print either.
            let name = format!("trainer-{i}");
            Pod::new(name.as_str(), "ml", &name)
                .with_group("trainer")
                .with_requests(Resources::new(2 * CPU, GIB))
        })
        .collect();
    let ids: Vec<PodId> = pods.iter().map(|p| p.id().clone()).collect();

    println!("== 1. room for two of three: the attempt times out, the gang goes back whole");
    let mut now = Time::ZERO;
    s.add_node(Node::new("node-a", Resources::new(4 * CPU, 16 * GIB)), now)
        .unwrap();
    s.add_group(PodGroup::gang("ml", "trainer", 3).unwrap(), now)
        .unwrap();
    for pod in &pods {
        s.add_pod(pod.clone(), now).unwrap();
    }
    let outcomes = schedule_all(&s, now);
    assert_eq!(count(&outcomes, "waiting"), 2);
    assert_eq!(count(&outcomes, "unschedulable"), 1);
    assert_eq!(s.waiting().len(), 2);

    now += PERMIT_TIMEOUT;
    log(now, "the attempt's deadline passes: tick");
    s.tick(now);
    // Both waiting members were rejected together. The first binding cycle of the failed
    // attempt hands back every rejected member in one call (one backoff for the gang) and
    // releases their reservations; the other member's cycle then finds nothing to do.
    let ran = s.run_binding_cycles(now);
    log(
        now,
        format!("binding cycles run: {ran}; the gang is back in the queue:"),
    );
    show_places(&s, &pods, now);
    assert_eq!(s.stats().permit_timeouts, 2);
    assert!(s.waiting().is_empty() && s.in_binding().is_empty());
    let parked = Some(QueuePlace::Unschedulable);
    assert!(s.queue().place(&ids[0]) == parked && s.queue().place(&ids[1]) == parked);
    assert_eq!(
        s.cache().with(|c| c.assumed_count()),
        0,
        "every reservation released (I6)"
    );
    assert!(
        binder.calls.lock().expect("binder state").is_empty(),
        "no member of a partial gang bound (I3)"
    );
    s.check().expect("I4, I5, I6");
    // trainer-2 is active again: the released room was announced, which is the event its
    // rejecting plugin (NodeResourcesFit) waits for. Its siblings, rejected by
    // GangScheduling, wait for a sibling's Permit to activate them.
    assert!(matches!(
        s.queue().place(&ids[2]),
        Some(QueuePlace::Active(_))
    ));

    println!("\n== 2. a node joins: the gang passes Permit together");
    now += Duration::from_secs(1);
    log(now, "node-b joins (2 CPUs)");
    s.add_node(Node::new("node-b", Resources::new(2 * CPU, 16 * GIB)), now)
        .unwrap();
    let outcomes = schedule_all(&s, now);
    assert_eq!(count(&outcomes, "waiting"), 2);
    assert_eq!(
        count(&outcomes, "allowed"),
        1,
        "the last member reaches quorum"
    );

    println!("\n== 3. trainer-1's bind failed: it alone is retried");
    show_places(&s, &pods, now);
    assert!(
        s.is_bound(&ids[0]) && s.is_bound(&ids[2]),
        "admitted siblings stay bound"
    );
    assert!(matches!(
        s.queue().place(&ids[1]),
        Some(QueuePlace::ErrorBackoff(_))
    ));
    assert_eq!(
        s.cache().with(|c| c.assumed_count()),
        0,
        "its reservation released"
    );
    let outcomes = settle(&s, &mut now);
    assert_eq!(
        count(&outcomes, "allowed"),
        1,
        "its gang is admitted: Permit allows it"
    );

    println!("\n== the end");
    show_places(&s, &pods, now);
    assert!(ids.iter().all(|id| s.is_bound(id)), "all three bound");
    let calls = binder.calls.lock().expect("binder state").clone();
    for (pod, node, ok) in &calls {
        println!(
            "         bind {pod} -> {node}: {}",
            if *ok { "ok" } else { "failed" }
        );
    }
    let tries: Vec<&(String, String, bool)> = calls
        .iter()
        .filter(|(pod, _, _)| pod == "trainer-1")
        .collect();
    assert_eq!(tries.len(), 2, "the binder saw the retry");
    assert!(!tries[0].2 && tries[1].2);
    assert_eq!(calls.len(), 4);
    let stats = s.stats();
    println!("         stats: {stats:?}");
    assert_eq!((stats.bound, stats.bind_failures), (3, 1));
    s.check().expect("I4, I5, I6 at the end");
}

/// Scheduling cycles until nothing is active, then the binding cycles of every decision.
fn schedule_all(s: &Scheduler, now: Time) -> Vec<CycleOutcome> {
    let mut outcomes = Vec::new();
    while let Some(outcome) = s.schedule_one(now) {
        log(now, describe(&outcome));
        outcomes.push(outcome);
    }
    let ran = s.run_binding_cycles(now);
    if ran > 0 {
        log(now, format!("binding cycles run: {ran}"));
    }
    outcomes
}

/// Moves `now` from deadline to deadline (backoff expiries, flushes), running the timers and
/// then every cycle they make possible, until all three pods are bound. (A running scheduler's
/// timer thread does this on its own: `Scheduler::start`.)
fn settle(s: &Scheduler, now: &mut Time) -> Vec<CycleOutcome> {
    let mut outcomes = Vec::new();
    while s.cache().with(|c| c.bound_count()) < 3 {
        let next = s.next_deadline().expect("something is due later");
        assert!(next < Time::from_secs(600), "the gang did not settle");
        *now = next.max(*now);
        log(*now, "tick: the next deadline is due");
        s.tick(*now);
        outcomes.extend(schedule_all(s, *now));
    }
    outcomes
}

/// One line for a scheduling cycle's outcome.
fn describe(outcome: &CycleOutcome) -> String {
    match outcome {
        CycleOutcome::Allowed { pod, node } => format!("{pod}: on {node}, Permit allows"),
        CycleOutcome::Waiting { pod, node } => {
            format!("{pod}: on {node}, waits at Permit for its gang")
        }
        CycleOutcome::Rejected { pod, status } | CycleOutcome::Released { pod, status, .. } => {
            format!("{pod}: rejected at Permit: {}", status.message())
        }
        CycleOutcome::Unschedulable { pod, status } => {
            format!("{pod}: unschedulable: {}", status.message())
        }
        // The enum may grow (it is `#[non_exhaustive]`).
        other => format!("{other:?}"),
    }
}

/// How many of `outcomes` are of kind `what` ("allowed", "waiting", "rejected",
/// "unschedulable").
fn count(outcomes: &[CycleOutcome], what: &str) -> usize {
    let kind = |o: &CycleOutcome| match o {
        CycleOutcome::Allowed { .. } => "allowed",
        CycleOutcome::Waiting { .. } => "waiting",
        CycleOutcome::Rejected { .. } | CycleOutcome::Released { .. } => "rejected",
        CycleOutcome::Unschedulable { .. } => "unschedulable",
        _ => "other",
    };
    outcomes.iter().filter(|o| kind(o) == what).count()
}

fn show_places(s: &Scheduler, pods: &[Pod], now: Time) {
    for pod in pods {
        let place = if s.is_bound(pod.id()) {
            "bound".to_owned()
        } else {
            match s.queue().place(pod.id()) {
                Some(QueuePlace::Active(_)) => "queued: active".to_owned(),
                Some(QueuePlace::Backoff(until)) => format!("queued: backoff until {until}"),
                Some(QueuePlace::ErrorBackoff(until)) => {
                    format!("queued: error backoff until {until}")
                }
                Some(QueuePlace::Unschedulable) => "queued: unschedulable pool".to_owned(),
                Some(QueuePlace::InFlight) => "in flight".to_owned(),
                None => "unknown".to_owned(),
            }
        };
        log(now, format!("  {} is {place}", pod.name()));
    }
}

fn log(now: Time, line: impl AsRef<str>) {
    println!("{:>7}  {}", now.to_string(), line.as_ref());
}
