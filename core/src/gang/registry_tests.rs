//! The group registry's reads and its sharding: what it counts and reads, and that its groups
//! spread over its shards, each in the shard its key names (issue #43: the mutants that
//! answered a fixed count, or put every group in one shard, which only a test of the shards
//! themselves tells from a correct registry).

use super::*;
use crate::{GroupKey, Mode, PodGroup, WaitingPods};

const NS: &str = "ml";
const GROUPS: u32 = 64;

fn with_groups(n: u32) -> GangScheduling {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    for i in 0..n {
        let group = PodGroup::gang(NS, &format!("g{i}"), i % 5 + 1).unwrap();
        gang.on_group_added(group).unwrap();
    }
    gang
}

/// The shard of `registry` that holds group `key` (for tests that need two groups in one
/// shard, or a shard with none).
pub(super) fn shard_holding(registry: &GroupRegistry, key: &GroupKey) -> usize {
    (0..registry.shards())
        .find(|&i| registry.read_shard(i).get(key).is_some())
        .expect("the group is held")
}

fn key(i: u32) -> GroupKey {
    GroupKey::new(NS, &format!("g{i}"))
}

#[test]
fn the_registry_counts_and_reads_its_groups() {
    let empty = with_groups(0);
    assert_eq!(empty.registry().len(), 0);
    assert!(empty.registry().is_empty());
    for n in [1, 3] {
        let gang = with_groups(n);
        let registry = gang.registry();
        assert_eq!(registry.len(), n as usize);
        assert!(!registry.is_empty());
        for i in 0..n {
            let min = registry.with_state(&key(i), GroupState::min_count);
            assert_eq!(min, Some(Some(i % 5 + 1)), "g{i}");
        }
        assert_eq!(registry.with_state(&key(n), GroupState::min_count), None);
    }
}

#[test]
fn groups_spread_over_the_shards_each_in_the_shard_its_key_names() {
    let gang = with_groups(GROUPS);
    let registry = gang.registry();
    assert!(registry.shards() > 1, "a sharded registry");
    let holding = |k: &GroupKey| -> Vec<usize> {
        (0..registry.shards())
            .filter(|&i| registry.read_shard(i).get(k).is_some())
            .collect()
    };
    for i in 0..GROUPS {
        let k = key(i);
        let held = holding(&k);
        assert_eq!(held.len(), 1, "g{i} in one shard: {held:?}");
        assert!(
            registry.read_key(&k).get(&k).is_some(),
            "g{i} where its key says"
        );
        #[cfg(feature = "checking")]
        assert_eq!(registry.shard_of(&k), held[0], "g{i}");
    }
    let used = (0..registry.shards())
        .filter(|&i| !registry.read_shard(i).is_empty())
        .count();
    // 64 keys over the shards by their hash: all in one shard would be a registry with one lock.
    assert!(used > 1, "{GROUPS} groups in {used} shard(s)");
}
