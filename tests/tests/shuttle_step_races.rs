#![cfg(shuttle)]
//! Cluster events racing every step of the cycle (issue #43): the driver's error branches that
//! only a race reaches — a step whose precondition a concurrent delete or update broke between
//! two of the locks it takes — each reached here, on the real threaded scheduler under
//! shuttle, and each run judged as `shuttle_scheduler.rs` judges its own (quiescence, I4–I7,
//! progress without timeouts, nothing leaked after the shutdown).
//!
//! Every error branch of the steps says what happened in a debug log line; a listener keeps
//! the lines each test's schedules produced, and the test asks for the branches it is meant to
//! reach: a scenario that stopped reaching one fails, so docs/verification.md's table of error
//! branches ("Error branches only a race reaches") names tests that reach them, not tests that
//! once did.
//!
//! The scenarios, each in both modes and, where the step differs, both gang cycles:
//!
//! - a node leaves while pods are placed on it: the assume after the placement fails;
//! - a member is deleted while its gang schedules: Reserve finds it gone, Permit releases it,
//!   its binding cycle finds it deleted before or after its bind, an admitted gang is left short;
//! - a gang's PodGroup is raised, deleted and its members with it while the pod-group cycle
//!   gathers, simulates and commits: the group gone, the quorum lost since the snapshot;
//! - a bound pod arrives as its node leaves (two informers): refused or added whole — the race
//!   that made the informer's thread panic before the cache found the node and took the pod in
//!   one critical section (the fix's witness: this test, on the code before it, panics with
//!   "the node is known and the pod names it").

use std::collections::BTreeSet;

use gangsched::queue::QueuePlace;
use gangsched::scheduler::{AddPodError, Node, Scheduler, UpdatePodError};
use gangsched::sync::{thread, Arc};
use gangsched::{
    Clock, GangCycle, GroupKey, ManualClock, Mode, PermitPlugins, Pod, PodGroup, Resources, Time,
};

#[path = "shuttle_scheduler/harness.rs"]
#[allow(dead_code)]
mod harness;

use harness::{
    check_after, check_settled, conclude, config, iterations, member, scheduler_configured, settle,
    start, CPU, GIB, MIN,
};

/// The debug lines of the steps' error branches, as the schedules of one test produced them.
mod branches {
    use std::cell::RefCell;
    use std::collections::{BTreeMap, BTreeSet};

    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, Layer};
    use tracing_subscriber::prelude::*;

    thread_local! {
        /// Shuttle runs every thread of a schedule on the test's own OS thread, one at a
        /// time: a thread-local set sees every line of the test's schedules.
        pub static SEEN: RefCell<BTreeSet<String>> = const { RefCell::new(BTreeSet::new()) };
        /// The schedules run so far, and for each line the schedules that logged it.
        pub static REACHED: RefCell<Tally> = const { RefCell::new((0, BTreeMap::new())) };
    }

    /// The schedules run so far, and for each line how many of them logged it and the last
    /// that did.
    pub type Tally = (usize, BTreeMap<String, (usize, usize)>);

    struct Listener;

    struct Message(String);

    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for Listener {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let mut message = Message(String::new());
            event.record(&mut message);
            REACHED.with(|first| {
                let (schedule, lines) = &mut *first.borrow_mut();
                let (count, last) = lines.entry(message.0.clone()).or_insert((0, 0));
                if *last != *schedule {
                    *count += 1;
                    *last = *schedule;
                }
            });
            SEEN.with(|seen| seen.borrow_mut().insert(message.0));
        }
    }

    /// Installs the listener (once per process).
    pub fn listen() {
        let _ = tracing::subscriber::set_global_default(
            tracing_subscriber::registry()
                .with(Listener.with_filter(tracing_subscriber::filter::LevelFilter::DEBUG)),
        );
    }
}

/// A scenario, run as one schedule.
type Scenario = Arc<dyn Fn() + Send + Sync>;

/// Schedules per scheduler for a test that asks for branches: [`iterations`], but at least
/// 1,000 — the rarest branch here needs a few hundred (docs/verification.md), and a bound
/// lowered for a quick run must not make a reached branch look unreached.
fn schedules() -> usize {
    iterations().max(1_000)
}

/// Runs each of `scenarios` under PCT and the random scheduler, [`schedules`] schedules each,
/// then asks that every line of `expected` was logged by some schedule: each a step's error
/// branch.
fn reaches(expected: &[&str], scenarios: Vec<Scenario>) {
    branches::listen();
    branches::SEEN.with(|seen| seen.borrow_mut().clear());
    branches::REACHED.with(|first| *first.borrow_mut() = Default::default());
    for scenario in &scenarios {
        let run = {
            let scenario = scenario.clone();
            move || {
                branches::REACHED.with(|first| first.borrow_mut().0 += 1);
                scenario()
            }
        };
        shuttle::check_pct(run.clone(), schedules(), 3);
        shuttle::check_random(run, schedules());
    }
    let seen: BTreeSet<String> = branches::SEEN.with(|seen| seen.borrow().clone());
    // How often each was reached (`--nocapture`): the figures in docs/verification.md.
    branches::REACHED.with(|first| {
        let (schedules, lines) = &*first.borrow();
        for line in expected {
            let (count, _) = lines.get(*line).copied().unwrap_or_default();
            eprintln!("reached {line:?} in {count} of {schedules} schedules");
        }
    });
    let missing: Vec<&&str> = expected.iter().filter(|e| !seen.contains(**e)).collect();
    assert!(
        missing.is_empty(),
        "error branches not reached in {} schedules: {missing:?}; lines seen: {seen:?}",
        2 * schedules() * scenarios.len()
    );
}

/// [`a_member_is_deleted_through_its_cycle`]'s two scenarios: the delete early, and once the
/// member's binding cycle has begun.
fn member_deleted(mode: Mode, cycle: GangCycle) -> Vec<Scenario> {
    [false, true]
        .into_iter()
        .map(|in_binding| {
            Arc::new(move || a_member_is_deleted_through_its_cycle(mode, cycle, in_binding))
                as Scenario
        })
        .collect()
}

/// One scenario.
fn one(scenario: impl Fn() + Send + Sync + 'static) -> Vec<Scenario> {
    vec![Arc::new(scenario)]
}

/// A scheduler in `mode` on `cycle`, one node of four CPUs (`node-0`), two binding workers;
/// the binder refuses nothing.
fn scheduler(mode: Mode, cycle: GangCycle, clock: &ManualClock) -> harness::Run {
    let config = config(mode).with_gang_cycle(cycle);
    scheduler_configured(config, clock, |_| false, PermitPlugins::none(), 4)
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

/// Lets the scheduler's threads run a few steps.
fn pause(steps: usize) {
    for _ in 0..steps {
        thread::yield_now();
    }
}

/// The end of a schedule: quiescence judged, the scheduler shut down, the rest judged.
fn judge(
    (s, calls, outcomes): harness::Run,
    running: gangsched::scheduler::RunningScheduler,
    clock: ManualClock,
    added: &[Pod],
    deleted: &[String],
) {
    let settled = match settle(&s, &calls, &outcomes) {
        true => check_settled(&s, (&calls, &outcomes), added, deleted),
        false => Ok(()),
    };
    running.shutdown();
    let verdict = settled.and_then(|()| check_after(&s, (&calls, &outcomes), added, deleted));
    conclude(verdict, (s, calls, outcomes, clock));
}

/// A gang of two (min 2) and a pod of its own arrive; the node they are placed on leaves and
/// another joins, while their cycles run.
fn node_leaves_as_pods_are_placed(mode: Mode, cycle: GangCycle) {
    let clock = ManualClock::new(Time::ZERO);
    let run = scheduler(mode, cycle, &clock);
    let running = start(&run.0, &clock, None);
    let solo = Pod::new("solo", "ml", "solo").with_requests(Resources::new(CPU, GIB));
    let added: Vec<Pod> = (0..2)
        .map(|i| member("a", i))
        .chain([solo.clone()])
        .collect();
    let events = thread::spawn("events", {
        let (s, clock, added) = (run.0.clone(), clock.clone(), added.clone());
        move || {
            let gang = PodGroup::gang("ml", "a", MIN as u32).unwrap();
            s.add_group(gang, clock.now()).unwrap();
            for pod in &added {
                s.add_pod(pod.clone(), clock.now()).unwrap();
            }
            pause(2);
            let _ = s.delete_node("node-0", clock.now());
            let node = Node::new("node-1", Resources::new(4 * CPU, 16 * GIB));
            s.add_node(node, clock.now()).unwrap();
        }
    });
    events.join().unwrap();
    judge(run, running, clock, &added, &[]);
}

/// A gang of two (min 2) arrives on a node with room for both; one member is deleted while
/// the gang schedules (`in_binding`: once that member's binding cycle has begun), and the
/// clock passes the Permit timeout.
fn a_member_is_deleted_through_its_cycle(mode: Mode, cycle: GangCycle, in_binding: bool) {
    let clock = ManualClock::new(Time::ZERO);
    let run = scheduler(mode, cycle, &clock);
    let running = start(&run.0, &clock, None);
    let added: Vec<Pod> = (0..2).map(|i| member("a", i)).collect();
    let events = thread::spawn("events", {
        let (s, clock, added) = (run.0.clone(), clock.clone(), added.clone());
        move || {
            let gang = PodGroup::gang("ml", "a", MIN as u32).unwrap();
            s.add_group(gang, clock.now()).unwrap();
            for pod in &added {
                s.add_pod(pod.clone(), clock.now()).unwrap();
            }
            match in_binding {
                true => yield_until(|| s.in_binding().contains(added[0].id())),
                false => pause(3),
            }
            s.delete_pod(&added[0], clock.now()).unwrap();
            clock.advance(config(Mode::Hardened).permit_timeout);
        }
    });
    events.join().unwrap();
    judge(run, running, clock, &added, &["a-0".to_owned()]);
}

/// A gang of three (min 2) schedules while its PodGroup's minimum is raised to three, a member
/// is deleted (the gang short), and the group and the other members are deleted: the group's
/// state leaves the registry while a member may still be popped.
fn a_group_changes_as_its_gang_is_gathered(mode: Mode, cycle: GangCycle) {
    let clock = ManualClock::new(Time::ZERO);
    let run = scheduler(mode, cycle, &clock);
    let running = start(&run.0, &clock, None);
    let added: Vec<Pod> = (0..3).map(|i| member("a", i)).collect();
    let events = thread::spawn("events", {
        let (s, clock, added) = (run.0.clone(), clock.clone(), added.clone());
        move || {
            let gang = PodGroup::gang("ml", "a", MIN as u32).unwrap();
            s.add_group(gang, clock.now()).unwrap();
            for pod in &added {
                s.add_pod(pod.clone(), clock.now()).unwrap();
            }
            pause(2);
            let raised = PodGroup::gang("ml", "a", 3).unwrap();
            s.update_group(raised, clock.now()).unwrap();
            s.delete_pod(&added[2], clock.now()).unwrap();
            pause(2);
            s.delete_group(&GroupKey::new("ml", "a")).unwrap();
            for pod in &added[..2] {
                s.delete_pod(pod, clock.now()).unwrap();
            }
        }
    });
    events.join().unwrap();
    let deleted: Vec<String> = added.iter().map(|p| p.name().to_owned()).collect();
    judge(run, running, clock, &added, &deleted);
}

/// A gang of one (min 1) arrives; once its member is popped, its PodGroup and the member are
/// deleted — so the group's state leaves the registry while the member's cycle runs.
fn a_gang_of_one_leaves_as_it_is_scheduled(mode: Mode, cycle: GangCycle) {
    let clock = ManualClock::new(Time::ZERO);
    let run = scheduler(mode, cycle, &clock);
    let running = start(&run.0, &clock, None);
    let pod = member("g", 0);
    let events = thread::spawn("events", {
        let (s, clock, pod) = (run.0.clone(), clock.clone(), pod.clone());
        move || {
            s.add_group(PodGroup::gang("ml", "g", 1).unwrap(), clock.now())
                .unwrap();
            s.add_pod(pod.clone(), clock.now()).unwrap();
            yield_until(|| s.queue().place(pod.id()) == Some(QueuePlace::InFlight));
            s.delete_group(&GroupKey::new("ml", "g")).unwrap();
            s.delete_pod(&pod, clock.now()).unwrap();
        }
    });
    events.join().unwrap();
    let deleted = [pod.name().to_owned()];
    judge(run, running, clock, &[pod], &deleted);
}

/// A gang of two (min 2) arrives; once its first member is assumed, the PodGroup and both
/// members are deleted — the group's state leaves the registry between that member's Permit
/// (a wait, which activates its sibling) and the activation.
fn a_gang_leaves_as_its_first_member_waits(mode: Mode) {
    let clock = ManualClock::new(Time::ZERO);
    let run = scheduler(mode, GangCycle::PermitBarrier, &clock);
    let running = start(&run.0, &clock, None);
    let added: Vec<Pod> = (0..2).map(|i| member("a", i)).collect();
    let events = thread::spawn("events", {
        let (s, clock, added) = (run.0.clone(), clock.clone(), added.clone());
        move || {
            let gang = PodGroup::gang("ml", "a", MIN as u32).unwrap();
            s.add_group(gang, clock.now()).unwrap();
            for pod in &added {
                s.add_pod(pod.clone(), clock.now()).unwrap();
            }
            let assumed = |s: &Scheduler| {
                let assumed = |pod: &Pod| s.cache().with(|c| c.phase(pod.id())).is_some();
                added.iter().any(assumed)
            };
            yield_until(|| assumed(&s));
            s.delete_group(&GroupKey::new("ml", "a")).unwrap();
            for pod in added.iter().rev() {
                s.delete_pod(pod, clock.now()).unwrap();
            }
        }
    });
    events.join().unwrap();
    let deleted: Vec<String> = added.iter().map(|p| p.name().to_owned()).collect();
    judge(run, running, clock, &added, &deleted);
}

/// Two informers at once: the pod informer adds `q`, bound to `node-1`, and sees `r`'s
/// binding to it; the node informer deletes `node-1`. Each pod is refused (its node unknown)
/// or taken whole — in the cache and counted by its group — and the scheduler's check holds.
fn a_bound_pod_arrives_as_its_node_leaves(mode: Mode) {
    let clock = ManualClock::new(Time::ZERO);
    let run = scheduler(mode, GangCycle::default(), &clock);
    let s = run.0.clone();
    let node = Node::new("node-1", Resources::new(4 * CPU, 16 * GIB));
    s.add_node(node, clock.now()).unwrap();
    s.add_group(PodGroup::gang("ml", "a", MIN as u32).unwrap(), clock.now())
        .unwrap();
    let q = member("a", 0).with_node("node-1");
    let r = member("a", 1);
    s.add_pod(r.clone(), clock.now()).unwrap();
    let pods = thread::spawn("pod informer", {
        let (s, clock, q, r) = (s.clone(), clock.clone(), q.clone(), r.clone());
        move || {
            let added = match s.add_pod(q, clock.now()) {
                Ok(()) => true,
                Err(AddPodError::UnknownNode { .. }) => false,
                Err(e) => panic!("add_pod: {e}"),
            };
            let bound = r.clone().with_node("node-1");
            let updated = match s.update_pod(r, bound, clock.now()) {
                Ok(()) => true,
                Err(UpdatePodError::UnknownNode { .. }) => false,
                Err(e) => panic!("update_pod: {e}"),
            };
            (added, updated)
        }
    });
    let nodes = thread::spawn("node informer", {
        let (s, clock) = (s.clone(), clock.clone());
        move || s.delete_node("node-1", clock.now()).unwrap()
    });
    let (added, updated) = pods.join().unwrap();
    let on_node = nodes.join().unwrap();
    let verdict = taken_whole(&s, &q, added)
        .and_then(|()| taken_whole(&s, &r.clone().with_node("node-1"), updated))
        .and_then(|()| s.check().map_err(|v| format!("I4, I5, I6: {v}")))
        .and_then(
            |()| match on_node.len() == usize::from(added) + usize::from(updated) {
                true => Ok(()),
                false => Err(format!(
                    "node-1 left with {on_node:?}: added {added}, updated {updated}"
                )),
            },
        );
    conclude(verdict, (run, clock));
}

/// Two adds of one pod at once — not an informer's order, but the API's to survive: `p`
/// unbound and, at the same time, `p` bound to `node-0` (a gang member, so the group registry
/// is asked too), and a plain pod `s` twice. One add of each wins, the other is refused with
/// a typed error, and the scheduler's check holds. The refusals seen go to [`REFUSALS`].
fn the_same_pod_added_twice_at_once(mode: Mode) {
    let clock = ManualClock::new(Time::ZERO);
    let run = scheduler(mode, GangCycle::default(), &clock);
    let s = run.0.clone();
    s.add_group(PodGroup::gang("ml", "a", 1).unwrap(), clock.now())
        .unwrap();
    let unbound = member("a", 0);
    let bound = unbound.clone().with_node("node-0");
    let plain = Pod::new("s", "ml", "s").with_requests(Resources::new(CPU, GIB));
    let adds: Vec<_> = [unbound, bound, plain.clone(), plain]
        .into_iter()
        .enumerate()
        .map(|(i, pod)| {
            let (s, clock) = (s.clone(), clock.clone());
            thread::spawn(
                ["informer 0", "informer 1", "informer 2", "informer 3"][i],
                move || s.add_pod(pod, clock.now()),
            )
        })
        .collect();
    let results: Vec<Result<(), AddPodError>> =
        adds.into_iter().map(|t| t.join().unwrap()).collect();
    let verdict = results
        .chunks(2)
        .try_for_each(|pair| match pair {
            [Ok(()), Err(e)] | [Err(e), Ok(())] => {
                let kind = format!("{e:?}");
                let kind = kind.split(['(', ' ']).next().unwrap_or_default().to_owned();
                REFUSALS.with(|r| r.borrow_mut().insert(kind));
                Ok(())
            }
            other => Err(format!("two adds of one pod: {other:?}")),
        })
        .and_then(|()| s.check().map_err(|v| format!("I4, I5, I6: {v}")));
    conclude(verdict, (run, clock));
}

thread_local! {
    /// The refusals [`the_same_pod_added_twice_at_once`] saw, by variant.
    static REFUSALS: std::cell::RefCell<BTreeSet<String>> = const { std::cell::RefCell::new(BTreeSet::new()) };
}

/// A bound pod the scheduler took (`taken`) is in the cache, bound, and counted by its group
/// as placed; one it refused is in neither as bound.
fn taken_whole(s: &Scheduler, pod: &Pod, taken: bool) -> Result<(), String> {
    let in_cache = s.cache().with(|c| c.phase(pod.id())).is_some();
    let groups = s.gang().registry().snapshot();
    let placed = pod
        .group_key()
        .and_then(|key| groups.get(key))
        .and_then(|g| g.place_of(pod.id()))
        .is_some_and(|place| place != gangsched::gang::MemberPlace::Unscheduled);
    match (taken, in_cache, placed) {
        (true, true, true) | (false, false, false) => Ok(()),
        _ => Err(format!(
            "{}: taken {taken}, but in the cache {in_cache} and placed in its group {placed}",
            pod.name()
        )),
    }
}

const ASSUME_FAILED: &str = "assume failed";
const RESERVE_FAILED: &str = "reserve failed";
const DELETED_BEFORE_BIND: &str = "deleted before it bound: released";
const DELETED_AS_BOUND: &str = "bound, but deleted meanwhile";
const SHORT: &str = "admitted gang short of quorum";
const GROUP_GONE: &str = "pod group state not found: error backoff";

#[test]
fn a_node_leaving_fails_the_assume_after_the_placement() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let scenario = move || node_leaves_as_pods_are_placed(mode, GangCycle::PermitBarrier);
        reaches(&[ASSUME_FAILED], one(scenario));
    }
}

#[test]
fn a_node_leaving_fails_the_pod_group_commit() {
    let scenario = || node_leaves_as_pods_are_placed(Mode::Hardened, GangCycle::PodGroup);
    reaches(&["commit: assume failed"], one(scenario));
    // Upstream commits member by member, through the scheduling cycle's own assume.
    let scenario = || node_leaves_as_pods_are_placed(Mode::Upstream, GangCycle::PodGroup);
    reaches(&[ASSUME_FAILED], one(scenario));
}

#[test]
fn a_member_deleted_through_its_cycle_meets_every_step() {
    let hardened = member_deleted(Mode::Hardened, GangCycle::PermitBarrier);
    reaches(
        &[RESERVE_FAILED, DELETED_BEFORE_BIND, DELETED_AS_BOUND],
        hardened,
    );
    let upstream = member_deleted(Mode::Upstream, GangCycle::PermitBarrier);
    reaches(
        &[RESERVE_FAILED, DELETED_BEFORE_BIND, DELETED_AS_BOUND],
        upstream,
    );
}

#[test]
fn a_member_deleted_through_a_pod_group_cycle_meets_every_step() {
    let hardened = member_deleted(Mode::Hardened, GangCycle::PodGroup);
    reaches(
        &[
            "commit: reserve failed",
            SHORT,
            DELETED_BEFORE_BIND,
            DELETED_AS_BOUND,
        ],
        hardened,
    );
    let upstream = member_deleted(Mode::Upstream, GangCycle::PodGroup);
    reaches(&[RESERVE_FAILED, DELETED_AS_BOUND], upstream);
}

#[test]
fn a_group_changing_under_the_pod_group_cycle_meets_every_step() {
    let hardened = || a_group_changes_as_its_gang_is_gathered(Mode::Hardened, GangCycle::PodGroup);
    reaches(
        &["commit: quorum lost since the snapshot", SHORT],
        one(hardened),
    );
}

#[test]
fn a_group_leaving_under_the_pod_group_cycle_fails_the_gather() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let scenario = move || a_gang_of_one_leaves_as_it_is_scheduled(mode, GangCycle::PodGroup);
        reaches(&[GROUP_GONE], one(scenario));
    }
}

#[test]
fn a_group_leaving_under_the_permit_barrier_meets_permit_and_the_activation() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let scenario = move || a_gang_leaves_as_its_first_member_waits(mode);
        reaches(&["activation: group not in the registry"], one(scenario));
    }
    let scenario =
        || a_gang_of_one_leaves_as_it_is_scheduled(Mode::Upstream, GangCycle::PermitBarrier);
    reaches(&["deleted during its cycle: dropped"], one(scenario));
}

/// The regression: refused or taken whole, never a panic, in either mode.
#[test]
fn a_bound_pod_arrives_as_its_node_leaves_refused_or_whole() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        reaches(
            &[
                "bound pod refused: its node is unknown",
                "binding observed on an unknown node, refused",
            ],
            one(move || a_bound_pod_arrives_as_its_node_leaves(mode)),
        );
    }
}

/// Two adds of one pod at once: the refusals only a race reaches — the group registry's (the
/// other add passed the "already known" look first) and the queue's — each seen.
#[test]
fn the_same_pod_added_twice_at_once_is_taken_once() {
    REFUSALS.with(|r| r.borrow_mut().clear());
    for mode in [Mode::Hardened, Mode::Upstream] {
        let scenario = move || the_same_pod_added_twice_at_once(mode);
        reaches(&["bound pod refused by its group, undone"], one(scenario));
    }
    let seen = REFUSALS.with(|r| r.borrow().clone());
    for refusal in ["AlreadyKnown", "Group", "Queue"] {
        assert!(seen.contains(refusal), "{refusal} never seen: {seen:?}");
    }
}
