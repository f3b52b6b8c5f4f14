#![cfg(shuttle)]
//! H5 checked, not assumed: no gangway lock is held around anything outside the core. Under
//! shuttle, the whole threaded scheduler runs with every piece of code it calls out to
//! re-entering it — a tracing subscriber (every event, `DEBUG` and up), a metrics recorder
//! (every counter, gauge and histogram), the embedder's Permit plugin, its binder and its
//! outcome sink — each looking at the queue, the waiting map, the gang registry, the cache
//! and the driver through the public API. A callback made under one of those locks would block
//! on it for ever: shuttle reports the deadlock, with the schedule to replay.
//!
//! Left out, because they are documented to run under a lock, as in kube-scheduler: the
//! placement plugin (under the cache's lock) and the queue's plugins (under the queue's). And
//! `Scheduler::check`, which waits for the steps under way to end: a callback inside a step
//! must not call it.
//!
//! The witness: a waiting map with `WaitingFlaw::DeliversUnderLock` planted (a rejection
//! delivered, and told to telemetry, under its shard's lock) is found by the same subscriber.
//!
//! `SHUTTLE_ITERATIONS` sets the schedules per scheduler (PCT and random).

use std::cell::{Cell, RefCell};
use std::time::Duration;

use gangsched::checking::{waiting_pods_with_flaw, WaitingFlaw};
use gangsched::scheduler::Scheduler;
use gangsched::sync::{thread, Arc};
use gangsched::PodGroup;
use gangsched::{
    Clock, Decision, ManualClock, Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName,
    Pod, Resources, Time, WaitingPods,
};

#[path = "shuttle_scheduler/harness.rs"]
#[allow(dead_code)]
mod harness;

use harness::{
    check_after, check_settled, conclude, config, iterations, member, scheduler_with, settle,
    start, witness, CPU, GIB, IN_USER_CODE,
};

/// What a callback re-enters in the schedule under way: a scheduler, or (the witness) a bare
/// waiting map. Shuttle runs a schedule's threads on the test's own OS thread, one at a time,
/// so a thread-local reaches them all.
enum Target {
    None,
    Scheduler(Scheduler),
    Waiting(WaitingPods),
}

thread_local! {
    static TARGET: RefCell<Target> = const { RefCell::new(Target::None) };
    /// A callback is re-entering: what it calls may emit telemetry, which does not re-enter
    /// again (that would never end).
    static INSIDE: Cell<bool> = const { Cell::new(false) };
    /// How many times a callback re-entered in this schedule.
    static REENTERED: Cell<u64> = const { Cell::new(0) };
}

/// Looks at every part the target has, through the public API, as an embedder's callback might.
fn reenter() {
    if INSIDE.with(|i| i.replace(true)) {
        return;
    }
    TARGET.with(|target| match &*target.borrow() {
        Target::None => {}
        Target::Scheduler(s) => {
            let _ = s.queue().lengths();
            let _ = s.queue().snapshot();
            let _ = s.waiting().len();
            let _ = s.waiting().snapshot();
            let _ = s.gang().registry().snapshot();
            let _ = s.cache().with(|c| c.assumed_count());
            let _ = s.in_binding();
            let _ = s.stats();
            let _ = s.next_deadline();
            REENTERED.with(|n| n.set(n.get() + 1));
        }
        Target::Waiting(map) => {
            let _ = map.len();
            let _ = map.snapshot();
            REENTERED.with(|n| n.set(n.get() + 1));
        }
    });
    INSIDE.with(|i| i.set(false));
}

/// A tracing subscriber and a metrics recorder that re-enter on every event and every metric,
/// installed once per process.
mod telemetry {
    use std::sync::Arc as StdArc;

    use metrics::{
        Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata,
        Recorder, SharedString, Unit,
    };
    use tracing_subscriber::layer::{Context, Layer};
    use tracing_subscriber::prelude::*;

    struct Reentering;

    impl<S: tracing::Subscriber> Layer<S> for Reentering {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            // gangway's events only: shuttle's own are told from inside its scheduler, where
            // no thread may touch a lock.
            if event.metadata().target().starts_with("gangsched") {
                super::reenter();
            }
        }
    }

    struct Metric;

    impl CounterFn for Metric {
        fn increment(&self, _: u64) {
            super::reenter();
        }
        fn absolute(&self, _: u64) {
            super::reenter();
        }
    }

    impl GaugeFn for Metric {
        fn increment(&self, _: f64) {
            super::reenter();
        }
        fn decrement(&self, _: f64) {
            super::reenter();
        }
        fn set(&self, _: f64) {
            super::reenter();
        }
    }

    impl HistogramFn for Metric {
        fn record(&self, _: f64) {
            super::reenter();
        }
    }

    struct ReenteringRecorder;

    impl Recorder for ReenteringRecorder {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
            super::reenter();
            Counter::from_arc(StdArc::new(Metric))
        }
        fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
            super::reenter();
            Gauge::from_arc(StdArc::new(Metric))
        }
        fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
            super::reenter();
            Histogram::from_arc(StdArc::new(Metric))
        }
    }

    /// Installs both (once per process).
    pub fn install() {
        let _ = tracing::subscriber::set_global_default(
            tracing_subscriber::registry()
                .with(Reentering.with_filter(tracing_subscriber::filter::LevelFilter::DEBUG)),
        );
        let _ = metrics::set_global_recorder(ReenteringRecorder);
    }
}

/// Starts a schedule whose callbacks re-enter `target`.
fn aim(target: Target) {
    telemetry::install();
    TARGET.with(|t| *t.borrow_mut() = target);
    INSIDE.with(|i| i.set(false));
    REENTERED.with(|n| n.set(0));
}

/// Ends the schedule's re-entry (the target's shuttle objects must not outlive it).
fn disarm() -> u64 {
    TARGET.with(|t| *t.borrow_mut() = Target::None);
    IN_USER_CODE.with(|h| h.set(None));
    REENTERED.with(|n| n.get())
}

/// The embedder's Permit plugin: re-enters, then holds `solo` at Permit for a minute and
/// allows every other pod.
struct Reentrant;

impl PermitPlugin for Reentrant {
    fn name(&self) -> PluginName {
        "Reentrant".into()
    }
    fn permit(&self, pod: &Pod, _: &str) -> PermitVerdict {
        reenter();
        if pod.name() == "solo" {
            PermitVerdict::wait(Duration::from_secs(60))
        } else {
            PermitVerdict::Allow
        }
    }
}

/// A gang of three (min 2) with one member's first bind refused, a pod the plugin holds and
/// the embedder then rejects, the gang's min count raised, a node added and the clock moved
/// past the backoffs and the timeouts — every callback re-entering the scheduler.
fn everything_reenters(mode: Mode) {
    let clock = ManualClock::new(Time::ZERO);
    let plugins = PermitPlugins::new([Arc::new(Reentrant) as Arc<dyn PermitPlugin>]).unwrap();
    let (s, calls, outcomes) = scheduler_with(mode, &clock, |n| n == "a-1", plugins, 4, 2);
    aim(Target::Scheduler(s.clone()));
    IN_USER_CODE.with(|h| h.set(Some(reenter)));
    let running = start(&s, &clock, None);
    let solo = Pod::new("solo", "ml", "solo").with_requests(Resources::new(CPU, GIB));
    let members: Vec<Pod> = (0..3).map(|i| member("a", i)).collect();
    let added: Vec<Pod> = std::iter::once(solo.clone())
        .chain(members.clone())
        .collect();
    let events = thread::spawn("events", {
        let (s, clock) = (s.clone(), clock.clone());
        move || {
            s.add_group(PodGroup::gang("ml", "a", 2).unwrap(), clock.now())
                .unwrap();
            s.add_pod(solo.clone(), clock.now()).unwrap();
            for pod in members {
                s.add_pod(pod, clock.now()).unwrap();
            }
            thread::yield_now();
            s.waiting().reject(solo.id(), "Reentrant", "no quota");
            clock.advance(Duration::from_secs(2));
            let _ = s.update_group(PodGroup::gang("ml", "a", 3).unwrap(), clock.now());
            let node = gangsched::scheduler::Node::new("node-1", Resources::new(4 * CPU, GIB));
            s.add_node(node, clock.now()).unwrap();
            clock.advance(config(mode).permit_timeout);
        }
    });
    events.join().unwrap();
    let settled = match settle(&s, &calls, &outcomes) {
        true => check_settled(&s, (&calls, &outcomes), &added, &[]),
        false => Ok(()),
    };
    running.shutdown();
    let verdict = settled.and_then(|()| check_after(&s, (&calls, &outcomes), &added, &[]));
    let reentered = disarm();
    let verdict = verdict.and_then(|()| match reentered {
        0 => Err("no callback re-entered: the test checks nothing".to_owned()),
        _ => Ok(()),
    });
    conclude(verdict, (s, calls, outcomes, clock));
}

#[test]
fn every_callback_may_reenter_the_scheduler_pct() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        shuttle::check_pct(move || everything_reenters(mode), iterations(), 3);
    }
}

#[test]
fn every_callback_may_reenter_the_scheduler_random() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        shuttle::check_random(move || everything_reenters(mode), iterations());
    }
}

/// A waiting map whose rejections are delivered under the shard's lock; a pod waits, and
/// another thread rejects it while a third looks at the map.
fn rejection_delivered_under_lock() {
    let map = waiting_pods_with_flaw(|_: Decision| reenter(), WaitingFlaw::DeliversUnderLock);
    aim(Target::Waiting(map.clone()));
    let pod = Pod::new("p", "ml", "p");
    let waiting = map
        .add(
            pod.clone(),
            [("Quota".into(), Duration::from_secs(60))],
            Time::ZERO,
        )
        .unwrap();
    let rejecter = thread::spawn("rejecter", {
        let map = map.clone();
        move || map.reject(pod.id(), "Quota", "no quota")
    });
    let decided = waiting.wait();
    assert!(!decided.is_success());
    assert!(rejecter.join().unwrap());
    disarm();
    drop(map);
}

/// The witness: the subscriber's look at the map, from inside the flawed delivery, blocks on
/// the shard lock that delivery holds — shuttle reports a deadlock.
#[test]
fn a_rejection_delivered_under_its_lock_is_found() {
    witness(
        "a callback under a lock",
        "deadlock",
        rejection_delivered_under_lock,
    );
}
