//! Unit tests of the [gate index](super::gate_index): which slots it files under which gate,
//! the mask a move skips by, and its check shown a broken index. (Found missing by mutation
//! testing, issue #43: the index is built only from 64 gated pods, or by the checkers' seam,
//! and no unit test did either, so an index that filed nothing, or a mask that skipped the
//! wrong gates, went through the unit tier.)

use std::collections::BTreeSet;

use super::state_tests::{checked, fail_unschedulable, plugins, pod, slot_of, slots_of};
use super::{PluginSet, QueueConfig, QueueState};
use crate::{Code, Pod, PodId, Status, Time};

/// The state tests' plugins, and a second gate, "Hold", that holds every pod named "held*".
pub(super) fn two_gates() -> PluginSet {
    plugins().with_pre_enqueue("Hold", |p: &Pod| {
        if p.name().starts_with("held") {
            Status::with_reason(Code::UnschedulableAndUnresolvable, "held")
        } else {
            Status::success()
        }
    })
}

/// Three pods gated by "Gate", two held by "Hold", one rejected in an attempt (not gated):
/// six in the pool, with the indexes built.
fn pool_of_two_gates() -> (QueueState, PluginSet) {
    let p = two_gates();
    let mut q = QueueState::new(QueueConfig::default());
    q.add(pod("plain", 1), Time::ZERO, &p).unwrap();
    fail_unschedulable(&mut q, "plain", Time::ZERO, &p);
    for name in ["gated-0", "held-0", "gated-1", "held-1", "gated-2"] {
        assert!(
            !q.add(pod(name, 0), Time::ZERO, &p).unwrap(),
            "{name} gated"
        );
    }
    q.build_indexes();
    checked(&q);
    (q, p)
}

/// The slots whose bits `mask` sets.
fn masked(mask: Option<Vec<u64>>) -> Option<BTreeSet<u32>> {
    mask.map(|words| {
        (0..words.len() as u32 * 64)
            .filter(|&slot| words[slot as usize / 64] >> (slot % 64) & 1 == 1)
            .collect()
    })
}

/// The mask names exactly the slots of the gates a move skips, and nothing when it skips no
/// gate that gates a pod.
#[test]
fn the_mask_names_the_pods_of_the_gates_skipped() {
    let (q, _) = pool_of_two_gates();
    let gates = q.gates.as_ref().expect("built");
    let gate = slots_of(&q, ["gated-0", "gated-1", "gated-2"]);
    let held = slots_of(&q, ["held-0", "held-1"]);
    assert_eq!(
        masked(gates.mask(|g| g.as_str() == "Gate")),
        Some(gate.clone())
    );
    assert_eq!(
        masked(gates.mask(|g| g.as_str() == "Hold")),
        Some(held.clone())
    );
    let both: BTreeSet<u32> = gate.union(&held).copied().collect();
    assert_eq!(masked(gates.mask(|_| true)), Some(both));
    assert_eq!(masked(gates.mask(|_| false)), None);
    assert_eq!(
        masked(gates.mask(|g| g.as_str() == "NodeResourcesFit")),
        None
    );
}

/// A pod that leaves the pool leaves the index (the queue's check compares the two), and a
/// gate none of whose pods is left is no longer masked.
#[test]
fn a_pod_that_leaves_the_pool_leaves_the_index() {
    let (mut q, p) = pool_of_two_gates();
    q.update(pod("gated-1", 0), pod("gated-1", 5), Time::ZERO, &p);
    checked(&q);
    assert!(q.delete(&PodId::from("held-0")));
    assert!(q.delete(&PodId::from("held-1")));
    checked(&q);
    let gates = q.gates.as_ref().expect("built");
    let gate = slots_of(&q, ["gated-0", "gated-2"]);
    assert_eq!(masked(gates.mask(|g| g.as_str() == "Gate")), Some(gate));
    assert_eq!(masked(gates.mask(|g| g.as_str() == "Hold")), None);
    // A pod gated afterwards is filed as it arrives.
    assert!(!q.add(pod("held-2", 0), Time::ZERO, &p).unwrap());
    checked(&q);
    let gates = q.gates.as_ref().expect("built");
    let held = slots_of(&q, ["held-2"]);
    assert_eq!(masked(gates.mask(|g| g.as_str() == "Hold")), Some(held));
}

/// The check finds a gated pod the index lost, one filed under another gate (the counts
/// still agree), and an ungated pod filed as gated.
#[test]
fn the_check_finds_a_pod_lost_misfiled_or_filed_as_gated() {
    let (q, _) = pool_of_two_gates();
    let (held, gated, plain) = (
        slot_of(&q, "held-1"),
        slot_of(&q, "gated-0"),
        slot_of(&q, "plain"),
    );
    let gated_info = q.info_at(gated).clone();

    let mut lost = q.gates.clone().expect("built");
    lost.remove(held);
    let found = lost.check(&q.pool, &q.slots).expect_err("a pod lost");
    assert!(
        found.contains("held-1 is not indexed under Hold"),
        "{found}"
    );

    let mut misfiled = q.gates.clone().expect("built");
    misfiled.remove(held);
    misfiled.insert(held, &gated_info);
    let found = misfiled
        .check(&q.pool, &q.slots)
        .expect_err("a pod misfiled");
    assert!(
        found.contains("held-1 is not indexed under Hold"),
        "{found}"
    );

    let mut extra = q.gates.clone().expect("built");
    extra.insert(plain, &gated_info);
    let found = extra
        .check(&q.pool, &q.slots)
        .expect_err("an ungated pod filed");
    assert!(
        found.contains("files 6 slots, the pool 5 gated pods"),
        "{found}"
    );
}
