//! Loom models of the sharded waiting map: a gang whose two members fall in different shards,
//! decided by batches that must lock both shards at once, in one order.
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_shards --target-dir target/loom`. Without `--cfg loom`
//! each model runs once on real threads (a smoke test) and the witnesses are skipped.
//!
//! Model 1 asserts H1 across shards: a batch allow clears the plugin for every member or for
//! none, whatever a racing rejection does. Model 2 asserts that two batches naming the same
//! members in opposite orders both finish (loom reports a lock-order deadlock). Model 3 runs a
//! batch allow against expiry, which walks the shards one by one: each pod is decided once,
//! and the gang is never split. The `witness_*` tests run models 1 and 2 on broken maps.

use std::time::Duration;

use gangsched::sync::{model, thread};
use gangsched::{Pod, PodId, Time, WaitingPods};
use gangway_tests::gang_batch::{in_another_shard, GangBatch, RealShards, PLUGINS};

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::spawn("model", f)
}

/// A batch allow of the gang against a rejection of its second member.
fn batch_allow_vs_member_reject<M: GangBatch>() {
    model(|| {
        let map = M::with_two_shards();
        let [a, b] = map.ids();
        let allower = spawn({
            let (map, ids) = (map.clone(), map.ids());
            move || map.allow_all(&ids, PLUGINS[0])
        });
        let rejector = spawn({
            let (map, b) = (map.clone(), b.clone());
            move || map.reject(&b)
        });
        let allowed = allower.join().unwrap();
        let rejected = rejector.join().unwrap();
        assert!(
            rejected,
            "b waits for a second plugin, so the rejection always lands"
        );
        assert!(!map.waiting(&b));
        // `a` still waits for the second plugin; clearing it allows `a` only if the batch
        // cleared the first one.
        let a_cleared = map.allow_all(std::slice::from_ref(&a), PLUGINS[1]) == Ok(1);
        assert_eq!(
            a_cleared,
            allowed.is_ok(),
            "a gang's batch clears every member or none (H1): {allowed:?}"
        );
        assert_eq!(allowed.is_err(), allowed == Err(b), "only b can be missing");
    });
}

/// Two batches naming the gang's members in opposite orders, clearing one plugin each.
fn opposite_batches<M: GangBatch>() {
    model(|| {
        let map = M::with_two_shards();
        let [a, b] = map.ids();
        let forward = spawn({
            let (map, ids) = (map.clone(), [a.clone(), b.clone()]);
            move || map.allow_all(&ids, PLUGINS[0])
        });
        let backward = spawn({
            let (map, ids) = (map.clone(), [b.clone(), a.clone()]);
            move || map.allow_all(&ids, PLUGINS[1])
        });
        let (first, second) = (forward.join().unwrap(), backward.join().unwrap());
        assert_eq!(
            first.unwrap() + second.unwrap(),
            2,
            "each pod is allowed once, by whichever batch cleared its last plugin"
        );
        assert!(!map.waiting(&a) && !map.waiting(&b));
    });
}

#[test]
fn model_1_batch_allow_vs_member_reject() {
    batch_allow_vs_member_reject::<RealShards>();
}

#[test]
fn model_2_opposite_batches_do_not_deadlock() {
    opposite_batches::<RealShards>();
}

#[test]
fn model_3_batch_allow_vs_expiry_across_shards() {
    model(|| {
        let (map, decisions) = WaitingPods::with_channel();
        let a = PodId::from("a");
        let b = in_another_shard(&map, &a);
        for id in [&a, &b] {
            let waits = [(PLUGINS[0].into(), Duration::from_secs(60))];
            let pod = Pod::new(id.as_str(), "ns", id.as_str());
            map.add(pod, waits, Time::ZERO).unwrap();
        }
        let allower = spawn({
            let (map, ids) = (map.clone(), [a.clone(), b.clone()]);
            move || map.allow_all(&ids, PLUGINS[0])
        });
        let timer = spawn({
            let map = map.clone();
            move || map.expire(Time::from_secs(60)).len()
        });
        let allowed = allower.join().unwrap();
        let expired = timer.join().unwrap();
        match allowed {
            Ok(n) => assert_eq!((n, expired), (2, 0), "the whole gang allowed, none expired"),
            Err(_) => assert_eq!(expired, 2, "the batch found a member gone: both expire"),
        }
        assert!(map.is_empty());
        assert_eq!(map.next_deadline(), None);
        gangsched::checking::waiting_state(&map).check().unwrap();
        assert_eq!(decisions.drain().len(), 2, "one delivery per pod");
    });
}

#[cfg(loom)]
mod witnesses {
    use super::*;
    use gangway_tests::gang_batch::broken::{BrokenShards, InNamedOrder, OneAtATime};

    #[test]
    #[should_panic(expected = "a gang's batch clears every member or none")]
    fn witness_model_1_finds_partial_gang() {
        batch_allow_vs_member_reject::<BrokenShards<OneAtATime>>();
    }

    #[test]
    #[should_panic(expected = "deadlock")]
    fn witness_model_2_finds_lock_order_deadlock() {
        opposite_batches::<BrokenShards<InNamedOrder>>();
    }
}
