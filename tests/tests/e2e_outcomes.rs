//! Every pod's outcome reaches the embedder's sink, on every path and in both modes: bound,
//! unschedulable (with the plugin), rejected at Permit for a timeout, a gang's failure and a
//! deletion, bind failed, dropped — one outcome per ended attempt, none for a pod still
//! waiting, and `tick()` says what it expired. Driven by hand in virtual time, so every
//! expectation is exact.
#![cfg(not(loom))]

use std::time::Duration;

use gangsched::scheduler::{
    outcome_channel, BindError, InMemoryBinder, Node, PodOutcome, PodScheduled, ResourceFit,
};
use gangsched::sync::{Arc, Mutex};
use gangsched::waiting::Receiver;
use gangsched::{Code, GroupKey, Mode, Pod, PodGroup, Resources, Scheduler};
use gangsched::{SchedulerConfig, Time};

const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;
const TIMEOUT: Duration = Duration::from_secs(10);

fn member(gang: &str, i: usize) -> Pod {
    Pod::new(format!("{gang}-{i}"), "ml", &format!("{gang}-{i}"))
        .with_group(gang)
        .with_requests(Resources::new(CPU, GIB))
}

/// A scheduler with one node of `cpus` cores, a binder that fails for the pods `fails` names,
/// and the receiving end of its outcomes.
fn scheduler(
    mode: Mode,
    cpus: u64,
    fails: impl Fn(&Pod) -> bool + Send + Sync + 'static,
) -> (Scheduler, Receiver<PodOutcome>) {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_permit_timeout(TIMEOUT);
    let (outcomes, received) = outcome_channel();
    let s = Scheduler::builder(config)
        .placement(ResourceFit)
        .binder(InMemoryBinder::new().with_failures(move |pod, _| fails(pod)))
        .outcomes(outcomes)
        .build();
    s.add_node(
        Node::new("n", Resources::new(cpus * CPU, 64 * GIB)),
        Time::ZERO,
    )
    .unwrap();
    (s, received)
}

/// A gang of three on a node with room for two: two members wait at Permit, the third found
/// no room (its outcome is waiting in the receiver).
fn two_of_three_waiting(mode: Mode) -> (Scheduler, Receiver<PodOutcome>) {
    let (s, received) = scheduler(mode, 2, |_| false);
    let now = Time::ZERO;
    s.add_group(PodGroup::gang("ml", "g", 3).unwrap(), now)
        .unwrap();
    for i in 0..3 {
        s.add_pod(member("g", i), now).unwrap();
    }
    settle(&s, now);
    (s, received)
}

/// Every scheduling and binding cycle that can run at `now`.
fn settle(s: &Scheduler, now: Time) {
    while s.schedule_one(now).is_some() || s.run_binding_cycles(now) > 0 {}
}

fn drain(received: &Receiver<PodOutcome>) -> Vec<PodOutcome> {
    std::iter::from_fn(|| received.try_recv()).collect()
}

/// `(pod name, what)` for each outcome, in order.
fn summary(outcomes: &[PodOutcome]) -> Vec<(String, String)> {
    outcomes
        .iter()
        .map(|o| {
            let what = match o {
                PodOutcome::Bound { node, .. } => format!("bound {node}"),
                PodOutcome::Unschedulable { status, .. } => format!(
                    "unschedulable {}",
                    status.plugin().map_or("-", |p| p.as_str())
                ),
                PodOutcome::Rejected { cause, .. } => format!("rejected {cause}"),
                PodOutcome::BindFailed { .. } => "bind failed".to_owned(),
                PodOutcome::Dropped { .. } => "dropped".to_owned(),
                other => format!("{other:?}"),
            };
            (o.pod().name().to_owned(), what)
        })
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn a_pod_that_fits_is_bound_and_one_too_big_is_unschedulable_in_both_modes() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let (s, received) = scheduler(mode, 2, |_| false);
        let now = Time::ZERO;
        s.add_pod(
            Pod::new("a", "ml", "small").with_requests(Resources::new(CPU, GIB)),
            now,
        )
        .unwrap();
        let big = Pod::new("b", "ml", "big").with_requests(Resources::new(4 * CPU, GIB));
        s.add_pod(big, now).unwrap();
        settle(&s, now);
        let outcomes = drain(&received);
        let mut seen = summary(&outcomes);
        seen.sort();
        assert_eq!(
            seen,
            pairs(&[
                ("big", "unschedulable NodeResourcesFit"),
                ("small", "bound n")
            ]),
            "{mode:?}"
        );
        let unschedulable = outcomes.iter().find(|o| !o.is_final()).unwrap();
        let condition = unschedulable.pod_scheduled().unwrap();
        assert_eq!(condition.status_str(), "False");
        assert_eq!(condition.reason, PodScheduled::UNSCHEDULABLE);
        assert_eq!(
            condition.message,
            "0/1 nodes are available: 1 Insufficient cpu."
        );
        let bound = outcomes.iter().find(|o| o.is_final()).unwrap();
        assert!(bound.pod_scheduled().unwrap().status);
        s.check().unwrap();
    }
}

#[test]
fn a_gang_that_cannot_gather_times_out_and_tick_says_so() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        // Room for two of three: two wait, the third finds no room.
        let (s, received) = two_of_three_waiting(mode);
        assert_eq!(
            summary(&drain(&received)),
            pairs(&[("g-2", "unschedulable NodeResourcesFit")]),
            "{mode:?}: the waiting pods have no outcome yet"
        );
        let late = Time::ZERO + TIMEOUT;
        let tick = s.tick(late);
        match mode {
            Mode::Hardened => {
                assert_eq!(tick.timed_out_gangs, [GroupKey::new("ml", "g")]);
                assert!(tick.timed_out_pods.is_empty());
            }
            _ => {
                let mut pods: Vec<_> = tick.timed_out_pods.iter().map(|p| p.to_string()).collect();
                pods.sort();
                assert_eq!(pods, ["g-0", "g-1"]);
                assert!(tick.timed_out_gangs.is_empty());
            }
        }
        s.run_binding_cycles(late);
        let mut seen = summary(&drain(&received));
        seen.sort();
        assert_eq!(
            seen,
            pairs(&[("g-0", "rejected timed out"), ("g-1", "rejected timed out")]),
            "{mode:?}"
        );
        assert!(s.tick(late).timed_out_pods.is_empty(), "expired once");
        s.check().unwrap();
    }
}

#[test]
fn deleting_a_waiting_member_drops_it_and_hardened_fails_its_gang_at_once() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let (s, received) = two_of_three_waiting(mode);
        let now = Time::ZERO;
        drain(&received);
        s.delete_pod(&member("g", 0), now).unwrap();
        settle(&s, now);
        let mut seen = summary(&drain(&received));
        seen.sort();
        match mode {
            // The attempt is lost with its member: the sibling is rejected now (H1).
            Mode::Hardened => assert_eq!(
                seen,
                pairs(&[("g-0", "dropped"), ("g-1", "rejected gang failed")]),
            ),
            // Upstream lets the sibling wait for its own timer.
            _ => assert_eq!(seen, pairs(&[("g-0", "dropped")])),
        }
        if mode == Mode::Upstream {
            let late = Time::ZERO + TIMEOUT;
            s.tick(late);
            s.run_binding_cycles(late);
            let mut late_seen = summary(&drain(&received));
            late_seen.sort();
            // g-0's freed node moves g-2 (unschedulable: no room) towards backoff, but 1.36
            // runs PreEnqueue on the way in, and the gang is short of its min count without
            // g-0: g-2 is gated, not popped from backoff, and only g-1 times out.
            assert_eq!(late_seen, pairs(&[("g-1", "rejected timed out")]));
        }
        s.check().unwrap();
    }
}

#[test]
fn a_failed_bind_is_an_outcome_and_the_retry_binds() {
    for mode in [Mode::Hardened, Mode::Upstream] {
        let failed_once = Arc::new(Mutex::new(false));
        let fails = {
            let failed_once = failed_once.clone();
            move |_: &Pod| !std::mem::replace(&mut *failed_once.lock(), true)
        };
        let (s, received) = scheduler(mode, 2, fails);
        let now = Time::ZERO;
        s.add_pod(Pod::new("a", "ml", "a"), now).unwrap();
        settle(&s, now);
        let outcomes = drain(&received);
        assert_eq!(
            summary(&outcomes),
            pairs(&[("a", "bind failed")]),
            "{mode:?}"
        );
        let PodOutcome::BindFailed { error, .. } = &outcomes[0] else {
            unreachable!()
        };
        assert!(matches!(error, BindError::Failed(_)));
        let condition = outcomes[0].pod_scheduled().unwrap();
        assert_eq!(condition.reason, PodScheduled::SCHEDULER_ERROR);
        // Back in the error backoff; once it is over the pod binds.
        let later = Time::ZERO + Duration::from_secs(30);
        s.tick(later);
        settle(&s, later);
        assert_eq!(summary(&drain(&received)), pairs(&[("a", "bound n")]));
        s.check().unwrap();
    }
}

#[test]
fn a_shut_down_scheduler_rejects_its_waiting_pods_as_outcomes() {
    let (s, received) = scheduler(Mode::Hardened, 2, |_| false);
    let now = Time::ZERO;
    s.add_group(PodGroup::gang("ml", "g", 3).unwrap(), now)
        .unwrap();
    for i in 0..2 {
        s.add_pod(member("g", i), now).unwrap();
    }
    // Two of three: PreEnqueue gates them; a third arrives that cannot fit anywhere.
    s.add_pod(
        member("g", 2).with_requests(Resources::new(8 * CPU, GIB)),
        now,
    )
    .unwrap();
    settle(&s, now);
    drain(&received);
    assert_eq!(s.waiting().len(), 2);
    s.close();
    s.run_binding_cycles(now);
    let outcomes = drain(&received);
    assert_eq!(
        summary(&outcomes),
        pairs(&[("g-0", "rejected shut down"), ("g-1", "rejected shut down")])
    );
    let PodOutcome::Rejected { status, .. } = &outcomes[0] else {
        unreachable!()
    };
    assert_eq!(status.code(), Code::Unschedulable);
    s.check().unwrap();
}

#[test]
fn a_closure_is_a_sink_and_its_panic_is_caught_and_counted() {
    let config = SchedulerConfig::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |outcome: PodOutcome| {
            seen.lock().push(outcome.to_string());
            panic!("the sink is broken");
        }
    };
    let s = Scheduler::builder(config).outcomes(sink).build();
    let now = Time::ZERO;
    s.add_node(Node::new("n", Resources::new(CPU, GIB)), now)
        .unwrap();
    s.add_pod(Pod::new("a", "ml", "a"), now).unwrap();
    s.add_pod(Pod::new("b", "ml", "b"), now).unwrap();
    settle(&s, now);
    assert_eq!(
        *seen.lock(),
        ["ml/a bound to n", "ml/b bound to n"],
        "both delivered, the panic did not stop the second"
    );
    assert_eq!(s.stats().plugin_panics, 2);
    assert_eq!(s.stats().bound, 2);
    s.check().unwrap();
}
