//! Unit tests of the [group index](super): where it files a group's members, that a group
//! whose last member leaves is dropped, and its check shown a broken index. (Found missing by
//! mutation testing, issue #43: the unit tier built the index only over one gang's members,
//! none of them gated by two gates or backing off, and never showed the check a broken one.)

use std::collections::{BTreeMap, BTreeSet};

use super::super::gate_index_tests::two_gates;
use super::super::state_tests::{checked, fail_unschedulable, slot_of, slots_of};
use super::super::{ClusterEvent, PluginSet, QueueConfig, QueuePlace, QueueState};
use super::{GroupIndex, GroupPool};
#[cfg(feature = "checking")]
use crate::symmetry::{PodRenaming, Renamed};
use crate::{GroupKey, Pod, PodId, Time};

fn member(name: &str, priority: i32) -> Pod {
    Pod::new(name, "ns", name)
        .with_priority(priority)
        .with_group("g")
}

/// Group "g" with a member in each place the index tells apart: `g-open` rejected in the
/// pool, `gated-g` and `held-g` gated by two gates, `g-back` backing off, `g-flight` in
/// flight; and `loner`, in no group, in the pool. The indexes built.
fn one_group_everywhere() -> (QueueState, PluginSet, GroupKey) {
    let p = two_gates();
    let mut q = QueueState::new(QueueConfig::default());
    for (name, priority) in [("g-back", 4), ("g-open", 3), ("loner", 2), ("g-flight", 1)] {
        let pod = if name == "loner" {
            Pod::new(name, "ns", name).with_priority(priority)
        } else {
            member(name, priority)
        };
        q.add(pod, Time::ZERO, &p).unwrap();
    }
    for name in ["gated-g", "held-g"] {
        assert!(
            !q.add(member(name, 0), Time::ZERO, &p).unwrap(),
            "{name} gated"
        );
    }
    fail_unschedulable(&mut q, "g-back", Time::ZERO, &p);
    let freed = ClusterEvent::AssignedPodDelete(Pod::new("x", "ns", "x"));
    q.move_all_to_active_or_backoff(freed, None, Time::ZERO, &p);
    assert!(matches!(
        q.place(&PodId::from("g-back")),
        Some(QueuePlace::Backoff(_))
    ));
    fail_unschedulable(&mut q, "g-open", Time::ZERO, &p);
    fail_unschedulable(&mut q, "loner", Time::ZERO, &p);
    assert_eq!(q.pop().expect("active").info.id().as_str(), "g-flight");
    q.build_indexes();
    checked(&q);
    (q, p, GroupKey::new("ns", "g"))
}

fn index(q: &QueueState) -> &GroupIndex {
    q.groups.as_deref().expect("built")
}

/// Renaming by the identity returns the queue as it is, its built index included; any other
/// renaming drops the index, to be rebuilt when next needed (issue #43: the identity's
/// shortcut, answered `false`, went unnoticed: the queues are equal either way).
#[cfg(feature = "checking")]
#[test]
fn the_identity_renaming_keeps_the_index_and_another_drops_it() {
    let (q, ..) = one_group_everywhere();
    assert!(q.renamed(&PodRenaming::identity()).groups.is_some());
    let swap = PodRenaming::new([
        (PodId::from("g-open"), member("g-back", 4)),
        (PodId::from("g-back"), member("g-open", 3)),
    ])
    .unwrap();
    assert!(q.renamed(&swap).groups.is_none());
}

/// Each member is filed where it is: rejected, under its own gate (two gates, two sets),
/// elsewhere (backing off or in flight); the pod of no group is not filed.
#[test]
fn the_index_files_each_member_where_it_is() {
    let (q, _, key) = one_group_everywhere();
    let group = index(&q).group(&key).expect("indexed");
    let set = |s: &super::SlotSet| s.iter().copied().collect::<BTreeSet<u32>>();
    assert_eq!(set(&group.open), slots_of(&q, ["g-open"]));
    assert_eq!(set(&group.elsewhere), slots_of(&q, ["g-back", "g-flight"]));
    let gated: BTreeMap<&str, BTreeSet<u32>> = group
        .gated
        .iter()
        .map(|(plugin, s)| (plugin.as_str(), set(s)))
        .collect();
    let expected = BTreeMap::from([
        ("Gate", slots_of(&q, ["gated-g"])),
        ("Hold", slots_of(&q, ["held-g"])),
    ]);
    assert_eq!(gated, expected);
    assert_eq!(group.slots().count(), 5);
    assert!(index(&q).groups.len() == 1, "the loner is in no group");
}

/// A group is dropped from the index with its last member, wherever each left from.
#[test]
fn a_group_leaves_the_index_with_its_last_member() {
    let (mut q, _, key) = one_group_everywhere();
    for name in ["g-open", "gated-g", "held-g", "g-back"] {
        assert!(q.delete(&PodId::from(name)), "{name}");
        checked(&q);
        assert!(index(&q).group(&key).is_some(), "after {name}");
    }
    assert!(q.done(&PodId::from("g-flight")));
    checked(&q);
    assert!(index(&q).group(&key).is_none(), "no member left");
}

/// The check finds a member lost, a gated member filed under its group's other gate (the
/// counts still agree), and a group kept with no member.
#[test]
fn the_check_finds_a_member_lost_or_misfiled_and_an_empty_group() {
    let (q, _, key) = one_group_everywhere();
    let check = |index: &GroupIndex| index.check(&q.slots, &q.places);

    let mut lost = index(&q).clone();
    lost.group_mut(&key).expect("indexed").open.clear();
    let found = check(&lost).expect_err("a member lost");
    assert!(found.contains("pod g-open is not indexed"), "{found}");

    let mut misfiled = index(&q).clone();
    let group = misfiled.group_mut(&key).expect("indexed");
    let held = slot_of(&q, "held-g");
    for (plugin, set) in &mut group.gated {
        if plugin.as_str() == "Hold" {
            set.remove(&held);
        } else {
            set.insert(held);
        }
    }
    let found = check(&misfiled).expect_err("a member under the other gate");
    assert!(found.contains("pod held-g is not indexed"), "{found}");

    let mut empty = index(&q).clone();
    empty
        .groups
        .insert(GroupKey::new("ns", "gone"), GroupPool::default());
    let found = check(&empty).expect_err("an empty group");
    assert!(found.contains("keeps an empty group"), "{found}");
}
