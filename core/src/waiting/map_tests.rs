//! Unit tests of [`WaitingPods`] and its [`WaitingPod`] handles that the pure state's tests
//! (`state_tests.rs`) cannot make: each handle call's own answer (H4), and the shard check a
//! checker relies on. Found missing by mutation testing (issue #43, docs/mutation.md): these
//! answers and that check were asserted nowhere a mutant of them could fail.

use std::time::Duration;

use super::WaitingPods;
use crate::{Cause, Code, PluginName, Pod, Time};

const MIN: Duration = Duration::from_secs(60);

fn pod(name: &str) -> Pod {
    Pod::new(name, "ml", name)
}

fn waits(plugins: &[&'static str]) -> Vec<(PluginName, Duration)> {
    plugins
        .iter()
        .map(|&p| (PluginName::from(p), MIN))
        .collect()
}

/// H4: `allow` answers `true` only for the call that decided — the last pending plugin's —
/// and `false` after a decision, whoever made it.
#[test]
fn a_handle_s_allow_says_whether_it_decided() {
    let map = WaitingPods::new();
    let handle = map.add(pod("a"), waits(&["p", "q"]), Time::ZERO).unwrap();
    assert!(!handle.allow("p"), "q is still pending");
    assert_eq!(handle.decision(), None);
    assert!(handle.allow("q"), "the last pending plugin's allow decides");
    assert_eq!(handle.decision().map(|s| s.code()), Some(Code::Success));
    assert!(!handle.allow("q"), "decided already");
    assert!(
        !handle.reject("p", "too late"),
        "the first decision wins (I1)"
    );
    assert_eq!(handle.cause(), Some(Cause::Allowed));
}

/// H4 for `reject` and `preempt`: `true` for the call that decided, `false` afterwards.
#[test]
fn a_handle_s_reject_and_preempt_say_whether_they_decided() {
    let map = WaitingPods::new();
    let rejected = map.add(pod("a"), waits(&["p"]), Time::ZERO).unwrap();
    assert!(rejected.reject("p", "no"));
    assert!(!rejected.reject("p", "no again"));
    assert!(!rejected.preempt("p", "and preempted"));
    assert_eq!(rejected.cause(), Some(Cause::Rejected));
    let preempted = map.add(pod("b"), waits(&["p"]), Time::ZERO).unwrap();
    assert!(preempted.preempt("p", "victim"));
    assert!(!preempted.allow("p"));
    assert_eq!(preempted.cause(), Some(Cause::Preempted));
}

/// The shard check finds a pod kept in a shard its uid does not hash to — what a wrong
/// `index_of` would do to lookups — and a latch that holds another pod.
#[cfg(feature = "checking")]
#[test]
fn the_shard_check_finds_a_pod_in_the_wrong_shard_and_a_foreign_latch() {
    use super::super::latch::Latch;
    use crate::sync::Arc;

    let map = WaitingPods::new();
    map.add(pod("a"), waits(&["p"]), Time::ZERO).unwrap();
    assert_eq!(map.check_shards(), Ok(()));
    let shards = &map.shared.shards;
    let stray = pod("stray");
    let home = shards.index_of(stray.id());
    let away = (home + 1) % shards.count();
    assert_ne!(home, away, "more than one shard");
    let latch = Arc::new(Latch::new(stray.clone()));
    shards
        .write_at(away)
        .add(stray, waits(&["p"]), Time::ZERO, latch)
        .unwrap();
    let found = map.check_shards().expect_err("a pod away from its shard");
    assert!(found.contains("pod stray is in shard"), "{found}");

    let map = WaitingPods::new();
    let own = pod("own");
    let home = map.shared.shards.index_of(own.id());
    let latch = Arc::new(Latch::new(pod("other")));
    map.shared
        .shards
        .write_at(home)
        .add(own, waits(&["p"]), Time::ZERO, latch)
        .unwrap();
    let found = map.check_shards().expect_err("a latch holding another pod");
    assert!(found.contains("latch holds other"), "{found}");
}

/// H4 for a caller's own cause: `reject_for` answers `true` only for the call that decided.
#[test]
fn reject_for_says_whether_it_decided() {
    let map = WaitingPods::new();
    let status = || crate::Status::unschedulable("gang failed");
    assert!(
        !map.reject_for(pod("a").id(), status(), Cause::GangFailed),
        "unknown"
    );
    let handle = map.add(pod("a"), waits(&["p"]), Time::ZERO).unwrap();
    assert!(map.reject_for(handle.id(), status(), Cause::GangFailed));
    assert_eq!(handle.cause(), Some(Cause::GangFailed));
    assert!(
        !map.reject_for(handle.id(), status(), Cause::GangFailed),
        "decided"
    );
}

/// A handle of an earlier registration of the same pod reads nothing pending: its ticket is
/// not the entry's (the pod waits again, for other plugins).
#[test]
fn a_stale_handle_sees_nothing_pending() {
    let map = WaitingPods::new();
    let first = map.add(pod("a"), waits(&["p"]), Time::ZERO).unwrap();
    assert_eq!(first.pending_plugins(), ["p"]);
    assert!(map.remove(first.id()).is_some());
    let second = map.add(pod("a"), waits(&["q"]), Time::ZERO).unwrap();
    assert_eq!(second.pending_plugins(), ["q"]);
    assert!(
        first.pending_plugins().is_empty(),
        "the old registration's view"
    );
}

/// A rejection held back for delivery names the pods it decided, and only those.
#[test]
fn deferred_deliveries_name_the_pods_they_decided() {
    let map = WaitingPods::new();
    for name in ["a", "b"] {
        map.add(pod(name), waits(&["p"]), Time::ZERO).unwrap();
    }
    let ids = [
        pod("a").id().clone(),
        pod("b").id().clone(),
        pod("gone").id().clone(),
    ];
    let deliveries = map.reject_all_deferred(&ids, "p", "no", Cause::Rejected);
    let mut named: Vec<String> = deliveries.ids().map(|id| id.to_string()).collect();
    named.sort();
    assert_eq!(named, ["a", "b"]);
}

/// The map spreads its pods over several shards, each in the shard its id names (all in one
/// is a correct map with one lock, which only this tells apart).
#[test]
fn pods_spread_over_the_shards() {
    let map = WaitingPods::new();
    assert!(map.shards() > 1, "a sharded map: {}", map.shards());
    let pods: Vec<Pod> = (0..64).map(|i| pod(&format!("p{i}"))).collect();
    for p in &pods {
        map.add(p.clone(), waits(&["p"]), Time::ZERO).unwrap();
    }
    let used: std::collections::BTreeSet<usize> = pods
        .iter()
        .map(|p| map.shared.shards.index_of(p.id()))
        .collect();
    assert!(used.len() > 1, "64 pods in {used:?}");
    #[cfg(feature = "checking")]
    map.check_shards().unwrap();
}

/// The timer's view of the map (`Deadlines`): its next deadline, and an expiry through the
/// trait that decides what is due — the call the timer thread makes.
#[test]
fn the_timer_expires_through_the_deadlines_trait() {
    use crate::time::Deadlines;
    let map = WaitingPods::new();
    assert_eq!(Deadlines::next_deadline(&map), None);
    let handle = map.add(pod("a"), waits(&["p"]), Time::ZERO).unwrap();
    assert_eq!(Deadlines::next_deadline(&map), Some(Time::ZERO + MIN));
    Deadlines::expire(&map, Time::ZERO + MIN);
    assert_eq!(handle.cause(), Some(Cause::TimedOut));
    assert_eq!(Deadlines::next_deadline(&map), None);
}

/// H1's count: `reject_all` answers how many pods this call decided — not those decided
/// before, nor those not waiting.
#[test]
fn reject_all_counts_the_pods_it_decided() {
    let map = WaitingPods::new();
    for name in ["a", "b", "c"] {
        map.add(pod(name), waits(&["p"]), Time::ZERO).unwrap();
    }
    assert!(map.reject(pod("c").id(), "p", "first"));
    let ids: Vec<_> = ["a", "b", "c", "gone"]
        .iter()
        .map(|n| pod(n).id().clone())
        .collect();
    assert_eq!(
        map.reject_all(&ids, "p", "gang failed", Cause::GangFailed),
        2
    );
    assert_eq!(map.reject_all(&ids, "p", "again", Cause::GangFailed), 0);
}

/// H4 for the map's own `preempt`: `true` only for the call that decided.
#[test]
fn the_map_s_preempt_says_whether_it_decided() {
    let map = WaitingPods::new();
    assert!(!map.preempt(pod("a").id(), "p", "victim"), "unknown");
    let handle = map.add(pod("a"), waits(&["p"]), Time::ZERO).unwrap();
    assert!(map.preempt(handle.id(), "p", "victim"));
    assert_eq!(handle.cause(), Some(Cause::Preempted));
    assert_eq!(handle.decision().map(|s| s.code()), Some(Code::Error));
    assert!(!map.preempt(handle.id(), "p", "again"), "decided");
}

/// `is_empty` and `len` follow the pods waiting.
#[test]
fn the_map_is_empty_only_while_no_pod_waits() {
    let map = WaitingPods::new();
    assert!(map.is_empty());
    assert_eq!(map.len(), 0);
    let handle = map.add(pod("a"), waits(&["p"]), Time::ZERO).unwrap();
    assert!(!map.is_empty());
    assert_eq!(map.len(), 1);
    assert!(map.remove(handle.id()).is_some());
    assert!(map.is_empty());
}

/// An expiry over many shards hands its decisions back in deadline order, as one unsharded
/// map would (the timer's callers deliver them in that order): each shard's part is in order,
/// the whole needs the merge.
#[test]
fn an_expiry_decides_in_deadline_order_across_the_shards() {
    let map = WaitingPods::new();
    let n = 32u64;
    for i in 0..n {
        let wait = vec![(PluginName::from("p"), Duration::from_secs(n - i))];
        map.add(pod(&format!("p{i:02}")), wait, Time::ZERO).unwrap();
    }
    let expired: Vec<String> = map
        .expire(Time::ZERO + Duration::from_secs(n))
        .into_iter()
        .map(|d| d.pod.name().to_owned())
        .collect();
    let latest_first: Vec<String> = (0..n).rev().map(|i| format!("p{i:02}")).collect();
    assert_eq!(expired, latest_first, "the earliest deadline first");
}

/// Deliveries appended to others are held with them (H5: nothing reaches the sink while the
/// caller still holds its locks) and delivered in one call, in order.
#[test]
fn appended_deliveries_wait_for_the_one_delivery() {
    let (map, decisions) = WaitingPods::with_channel();
    for name in ["a", "b"] {
        map.add(pod(name), waits(&["p"]), Time::ZERO).unwrap();
    }
    let mut first = map.reject_all_deferred(&[pod("a").id().clone()], "p", "no", Cause::Rejected);
    let second = map.reject_all_deferred(&[pod("b").id().clone()], "p", "no", Cause::Rejected);
    first.append(second);
    assert!(
        decisions.try_recv().is_none(),
        "nothing delivered before the call"
    );
    let named: Vec<String> = first.ids().map(|id| id.to_string()).collect();
    assert_eq!(named, ["a", "b"]);
    assert_eq!(first.deliver(), 2);
    let delivered: Vec<String> = std::iter::from_fn(|| decisions.try_recv())
        .map(|d| d.pod.name().to_owned())
        .collect();
    assert_eq!(delivered, ["a", "b"]);
}
