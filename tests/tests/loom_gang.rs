//! Loom models of the gang barrier: the last member's Permit, timeouts, deletes and unreserves
//! racing on the real `GangScheduling` and `WaitingPods`.
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_gang --target-dir target/loom`.
//!
//! Every model asserts, in Hardened mode, I3 (the members of one gang attempt that pass Permit
//! number 0 or at least `min_count − assigned`), I2 (every waiter wakes: loom reports a thread
//! blocked forever as a deadlock) and, once the rejected members are unreserved, I5 and I6 (no
//! reservation left without a live waiting or binding pod). The same model of race (a) run in
//! Upstream mode must find the partial gang: that is the `#[should_panic]` witness. Model (e)
//! puts two gangs in different registry shards and races both quorums against one timer call
//! that fails both attempts, each under its own shard's lock, and delivers them together.

use std::time::Duration;

use gangsched::checking::group_shard_of;
use gangsched::gang::{GangScheduling, Permit};
use gangsched::sync::{model, thread, Arc};
use gangsched::{GroupKey, PodGroup};
use gangsched::{Mode, Pod, Status, Time, WaitingPods};

const NS: &str = "ml";
/// When every member's wait (upstream) or the attempt (hardened) times out.
const DEADLINE: Time = Time::from_secs(300);
/// Long after every deadline of the models.
const EVENTUALLY: Time = Time::from_secs(3_600);

/// A gang `g` of `min_count` with `members` pods `p0..`; `p0` is reserved and waits at Permit.
fn gang_with_first_waiting(
    mode: Mode,
    min_count: u32,
    members: usize,
) -> (GangScheduling, Vec<Pod>, gangsched::WaitingPod) {
    let gang = GangScheduling::with_timeout(mode, WaitingPods::new(), Duration::from_secs(300));
    gang.on_group_added(PodGroup::gang(NS, "g", min_count).unwrap())
        .unwrap();
    let pods: Vec<Pod> = (0..members)
        .map(|i| Pod::new(format!("p{i}"), NS, &format!("p{i}")).with_group("g"))
        .collect();
    for pod in &pods {
        gang.on_pod_added(pod.clone(), false).unwrap();
    }
    gang.reserve(&pods[0]).unwrap();
    let Permit::Wait { waiting, .. } = gang.permit(&pods[0], Time::ZERO) else {
        panic!("the first member waits");
    };
    (gang, pods, waiting)
}

/// How a member's scheduling cycle left Permit.
enum Outcome {
    Passed,
    Rejected,
    /// Parked at Permit; its binding cycle waits on this.
    Waiting(gangsched::WaitingPod),
}

/// The scheduling cycle of `pod`: reserve, then Permit.
fn schedule(gang: &GangScheduling, pod: &Pod) -> Outcome {
    gang.reserve(pod).unwrap();
    match gang.permit(pod, Time::ZERO) {
        Permit::Allow => Outcome::Passed,
        Permit::Reject { .. } => Outcome::Rejected,
        Permit::Wait { waiting, .. } => Outcome::Waiting(waiting),
    }
}

/// After the race, time moves on: every timer that is still armed fires (so a pod that
/// legitimately waits for a sibling that will never come is eventually rejected — without
/// this, loom would report the wait as a deadlock). A pod left waiting after that waits
/// forever: loom reports it.
fn eventually(gang: &GangScheduling, outcome: Outcome) -> bool {
    fire_timers(gang, EVENTUALLY);
    match outcome {
        Outcome::Passed => true,
        Outcome::Rejected => false,
        Outcome::Waiting(waiting) => waiting.wait().is_success(),
    }
}

/// The timer thread: applies every timeout due at `now`, in the waiting map (upstream's
/// per-pod timers) and in the gang's attempts (hardened's one deadline).
fn fire_timers(gang: &GangScheduling, now: Time) {
    gang.waiting().expire(now);
    gang.expire(now);
}

/// I3: the members of one attempt that passed Permit number 0 or ≥ `min_count − assigned`.
fn assert_gang_atomic(passed: usize, min_count: usize) {
    assert!(
        passed == 0 || passed >= min_count,
        "I3 violated: {passed} members passed Permit, fewer than min_count {min_count} (partial gang)"
    );
}

/// After the race: the binding cycles of rejected members unreserve them (the failure path).
/// Then I5 holds, every reservation belongs to a pod that passed Permit (I6), and nothing is
/// left waiting.
fn settle(gang: &GangScheduling, outcomes: &[(&Pod, bool)]) {
    for (pod, passed) in outcomes {
        if !passed {
            gang.unreserve(pod);
        }
    }
    let groups = gang.registry().snapshot();
    groups.check().expect("I5");
    gangsched::checking::waiting_state(gang.waiting())
        .check()
        .expect("waiting map consistent");
    assert!(gang.waiting().is_empty(), "I6: no member is left waiting");
    let state = groups
        .get(&GroupKey::new(NS, "g"))
        .expect("the group still exists");
    for id in state.assumed() {
        let passed = outcomes
            .iter()
            .any(|(pod, passed)| pod.id() == id && *passed);
        assert!(
            passed,
            "I6: {id} holds a reservation but neither waits nor binds"
        );
    }
}

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::spawn("model", f)
}

/// (a) The last member's Permit vs a sibling's timeout vs the sibling's waiter.
fn last_permit_vs_timeout(mode: Mode) {
    model(move || {
        let (gang, pods, w0) = gang_with_first_waiting(mode, 2, 2);
        let gang = Arc::new(gang);
        let pods = Arc::new(pods);
        let last = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || schedule(&gang, &pods[1])
        });
        let timer = spawn({
            let gang = gang.clone();
            move || fire_timers(&gang, DEADLINE)
        });
        let waiter = spawn(move || w0.wait());
        let p1 = last.join().unwrap();
        timer.join().unwrap();
        let p1_passed = eventually(&gang, p1);
        let p0_passed = waiter.join().unwrap().is_success();
        assert_gang_atomic(usize::from(p0_passed) + usize::from(p1_passed), 2);
        settle(&gang, &[(&pods[0], p0_passed), (&pods[1], p1_passed)]);
    });
}

#[test]
fn a_last_permit_vs_sibling_timeout_hardened() {
    last_permit_vs_timeout(Mode::Hardened);
}

/// Witness: upstream's per-pod timer rejects the waiting sibling while the last member's
/// Permit passes; one member of a gang of two binds.
#[cfg(loom)]
#[test]
#[should_panic(expected = "I3 violated")]
fn witness_a_upstream_finds_partial_gang() {
    last_permit_vs_timeout(Mode::Upstream);
}

/// (b) A waiting member is deleted while the last member reaches quorum.
fn delete_vs_quorum(mode: Mode) {
    model(move || {
        let (gang, pods, w0) = gang_with_first_waiting(mode, 2, 2);
        let gang = Arc::new(gang);
        let pods = Arc::new(pods);
        let last = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || schedule(&gang, &pods[1])
        });
        let deleter = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || {
                // The pod-delete handler: the group forgets the pod, then (upstream) its waiting
                // entry is rejected; hardened has already rejected it with its attempt.
                gang.on_pod_deleted(&pods[0]);
                gang.waiting().remove(pods[0].id());
            }
        });
        let waiter = spawn(move || w0.wait());
        let p1 = last.join().unwrap();
        deleter.join().unwrap();
        let p1_passed = eventually(&gang, p1);
        let p0_passed = waiter.join().unwrap().is_success();
        // p0 left the group; if it passed Permit before its delete it still counts.
        assert_gang_atomic(usize::from(p0_passed) + usize::from(p1_passed), 2);
        if !p1_passed {
            gang.unreserve(&pods[1]);
        }
        gang.registry().snapshot().check().expect("I5");
        assert!(
            gang.waiting().is_empty() || !p1_passed,
            "no member left waiting once p1 passed"
        );
    });
}

#[test]
fn b_delete_vs_quorum_hardened() {
    delete_vs_quorum(Mode::Hardened);
}

/// Witness: upstream's Permit computes the siblings to allow under the group lock and allows
/// them after releasing it; a delete in between leaves one member passing alone.
#[cfg(loom)]
#[test]
#[should_panic(expected = "I3 violated")]
fn witness_b_upstream_finds_partial_gang() {
    delete_vs_quorum(Mode::Upstream);
}

/// (c) A waiting member rejected out of band (preempted) goes through its binding cycle's
/// failure path — unreserve — while the last member's Permit reaches quorum.
fn unreserve_vs_allow(mode: Mode) {
    model(move || {
        let (gang, pods, w0) = gang_with_first_waiting(mode, 3, 3);
        gang.reserve(&pods[1]).unwrap();
        let Permit::Wait { waiting: w1, .. } = gang.permit(&pods[1], Time::ZERO) else {
            panic!("the second member waits");
        };
        assert!(
            w1.reject("Preemption", "preempted"),
            "the preemption decides p1"
        );
        let gang = Arc::new(gang);
        let pods = Arc::new(pods);
        let unreserver = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || gang.unreserve(&pods[1])
        });
        let last = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || schedule(&gang, &pods[2])
        });
        let waiter = spawn(move || w0.wait());
        unreserver.join().unwrap();
        let p2 = last.join().unwrap();
        let p2_passed = eventually(&gang, p2);
        let p0_passed = waiter.join().unwrap().is_success();
        assert_gang_atomic(usize::from(p0_passed) + usize::from(p2_passed), 3);
        settle(&gang, &[(&pods[0], p0_passed), (&pods[2], p2_passed)]);
    });
}

#[test]
fn c_unreserve_vs_allow_hardened() {
    unreserve_vs_allow(Mode::Hardened);
}

/// Witness: upstream allows the remaining waiting sibling and passes the last member although
/// the preempted one is gone: two of a gang of three bind.
#[cfg(loom)]
#[test]
#[should_panic(expected = "I3 violated")]
fn witness_c_upstream_finds_partial_gang() {
    unreserve_vs_allow(Mode::Upstream);
}

/// (d) Member k's Permit vs the rejection of its gang attempt (the timeout) before k is
/// registered in the waiting map. Hardened registers k under the group lock, so the rejection
/// either precedes k's Permit (which then rejects k) or finds k waiting and rejects it: k's
/// binding cycle never waits forever, and no member passes.
#[test]
fn d_permit_vs_gang_reject_before_registration_hardened() {
    model(|| {
        let (gang, pods, w0) = gang_with_first_waiting(Mode::Hardened, 3, 3);
        let gang = Arc::new(gang);
        let pods = Arc::new(pods);
        let member = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || schedule(&gang, &pods[1])
        });
        let timer = spawn({
            let gang = gang.clone();
            move || gang.expire(DEADLINE)
        });
        let waiter = spawn(move || w0.wait());
        let p1 = member.join().unwrap();
        let timed_out = timer.join().unwrap();
        assert_eq!(timed_out.len(), 1, "the attempt times out");
        assert!(
            gang.expire(EVENTUALLY).is_empty(),
            "p1 joined no later attempt"
        );
        let p1_passed = eventually(&gang, p1);
        let p0 = waiter.join().unwrap();
        assert!(
            !p1_passed && p0.is_rejected(),
            "nobody passes a timed-out attempt"
        );
        assert_eq!(
            p0,
            Status::unschedulable(
                "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
            )
            .with_plugin("GangScheduling")
        );
        settle(&gang, &[(&pods[0], false), (&pods[1], false)]);
    });
}

/// (e) Two gangs in different registry shards, each with its first member waiting: both last
/// members' Permits race one timer call whose batch holds both gangs' attempts (each failed
/// under its own shard's lock, the batch delivered together). Each gang passes whole or times
/// out whole.
#[test]
fn e_two_gangs_in_two_shards_vs_one_timer_batch_hardened() {
    model(|| {
        let gang = GangScheduling::with_timeout(
            Mode::Hardened,
            WaitingPods::new(),
            Duration::from_secs(300),
        );
        let registry = gang.registry();
        let g = GroupKey::new(NS, "g");
        let other = (0..)
            .map(|i| format!("h{i}"))
            .find(|name| {
                group_shard_of(registry, &GroupKey::new(NS, name)) != group_shard_of(registry, &g)
            })
            .expect("some group falls in another shard");
        let mut gangs = Vec::new();
        for name in ["g", other.as_str()] {
            gang.on_group_added(PodGroup::gang(NS, name, 2).unwrap())
                .unwrap();
            let pods: Vec<Pod> = (0..2)
                .map(|i| {
                    let uid = format!("{name}-{i}");
                    Pod::new(uid.as_str(), NS, &uid).with_group(name)
                })
                .collect();
            for pod in &pods {
                gang.on_pod_added(pod.clone(), false).unwrap();
            }
            let first = schedule(&gang, &pods[0]);
            assert!(
                matches!(first, Outcome::Waiting(_)),
                "the first member waits"
            );
            gangs.push((pods, first));
        }
        let gang = Arc::new(gang);
        let lasts: Vec<_> = gangs
            .iter()
            .map(|(pods, _)| {
                let (gang, last) = (gang.clone(), pods[1].clone());
                spawn(move || schedule(&gang, &last))
            })
            .collect();
        let timer = spawn({
            let gang = gang.clone();
            move || gang.expire(DEADLINE)
        });
        let last_outcomes: Vec<Outcome> = lasts.into_iter().map(|t| t.join().unwrap()).collect();
        let timed_out = timer.join().unwrap();
        let mut outcomes = Vec::new();
        for ((pods, first), last) in gangs.into_iter().zip(last_outcomes) {
            let key = GroupKey::of(&pods[0]).unwrap();
            let passed = [eventually(&gang, first), eventually(&gang, last)];
            let count = passed.iter().filter(|p| **p).count();
            assert_gang_atomic(count, 2);
            assert_eq!(
                timed_out.contains(&key),
                count == 0,
                "{key}: timed out exactly when it did not pass"
            );
            outcomes.push((pods, passed));
        }
        for (pods, passed) in &outcomes {
            for (pod, passed) in pods.iter().zip(passed) {
                if !passed {
                    gang.unreserve(pod);
                }
            }
        }
        gang.registry().snapshot().check().expect("I5");
        assert!(gang.waiting().is_empty(), "I6: no member is left waiting");
    });
}
