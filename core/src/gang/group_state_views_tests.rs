//! What a group's state ([`GroupState`]) and the registry's map of them ([`Groups`]) tell their
//! readers: the [`Members`] views, a member's pod, the answer of an update, the deadline index,
//! the checks, and a fingerprint that tells states apart. Found missing by the mutants of
//! 2026-12-07's run over `core/src/gang/` (unit tier): each of these answered a constant, or
//! the opposite, and no unit test noticed.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::*;
use crate::{GroupKey, Pod, PodGroup, PodId};

const NS: &str = "ml";

fn key() -> GroupKey {
    GroupKey::new(NS, "g")
}

fn member(i: usize) -> Pod {
    Pod::new(format!("p{i}"), NS, &format!("p{i}")).with_group("g")
}

fn id(i: usize) -> PodId {
    PodId::from(format!("p{i}").as_str())
}

/// Three members: `p0` assumed, `p1` and `p2` unscheduled.
fn one_assumed() -> GroupState {
    let mut state = GroupState::new(key());
    for i in 0..3 {
        state.add_pod(member(i), false).unwrap();
    }
    assert!(state.assume(&id(0)));
    state.check().unwrap();
    state
}

#[test]
fn a_members_view_holds_the_members_in_its_place_and_no_other() {
    let state = one_assumed();
    let assumed = state.assumed();
    assert_eq!(assumed.len(), 1);
    assert!(!assumed.is_empty());
    assert!(assumed.contains(&id(0)));
    assert!(!assumed.contains(&id(1)), "unscheduled, not assumed");
    assert!(!assumed.contains(&id(9)), "not a member");
    assert!(state.assigned().is_empty());
    let unscheduled = state.members_in(MemberPlace::Unscheduled);
    assert_eq!(unscheduled.iter().collect::<Vec<_>>(), [&id(1), &id(2)]);
    assert!(unscheduled.contains(&id(2)));
    assert!(!unscheduled.contains(&id(0)));
}

// Both impls are under test: against a set, and against a reference to one.
#[allow(clippy::op_ref)]
#[test]
fn a_members_view_equals_the_set_of_its_ids_only() {
    let state = one_assumed();
    let unscheduled = state.members_in(MemberPlace::Unscheduled);
    let same: BTreeSet<PodId> = [id(1), id(2)].into();
    let fewer: BTreeSet<PodId> = [id(1)].into();
    let other: BTreeSet<PodId> = [id(0), id(2)].into();
    let more: BTreeSet<PodId> = [id(0), id(1), id(2)].into();
    assert!(unscheduled == same);
    assert!(unscheduled == &same);
    for differs in [&fewer, &other, &more] {
        assert!(unscheduled != *differs, "{differs:?}");
        assert!(unscheduled != differs, "{differs:?}");
    }
}

#[test]
fn a_member_s_pod_is_found_by_its_id_and_updated_only_in_its_own_group() {
    let mut state = one_assumed();
    assert_eq!(state.pod(&id(1)).map(Pod::name), Some("p1"));
    assert_eq!(state.pod(&id(9)), None);
    let names: Vec<&str> = state.pods().map(Pod::name).collect();
    assert_eq!(names, ["p0", "p1", "p2"]);
    let labelled = member(1).with_label("team", "a");
    assert!(state.update_pod(labelled.clone()), "a member's new object");
    assert_eq!(state.pod(&id(1)), Some(&labelled));
    assert!(!state.update_pod(member(9)), "not a member");
    let elsewhere = Pod::new("p2", NS, "p2").with_group("h");
    assert!(!state.update_pod(elsewhere), "names another group");
    state.check().unwrap();
}

#[test]
fn an_update_keeping_a_gang_s_min_count_is_taken_with_fewer_members() {
    // A gang of minimum three with two members so far: an update that leaves the minimum as
    // it is (a label, say) is no raise, and is taken; a raise above the members is refused.
    let mut state = GroupState::new(key());
    state
        .set_group(Some(PodGroup::gang(NS, "g", 3).unwrap()))
        .unwrap();
    for i in 0..2 {
        state.add_pod(member(i), false).unwrap();
    }
    assert!(state
        .set_group(Some(PodGroup::gang(NS, "g", 3).unwrap()))
        .is_ok());
    assert!(state
        .set_group(Some(PodGroup::gang(NS, "g", 4).unwrap()))
        .is_err());
    assert_eq!(state.min_count(), Some(3));
}

fn fingerprint(state: &GroupState) -> u64 {
    let mut hasher = DefaultHasher::new();
    state.hash(&mut hasher);
    hasher.finish()
}

/// The model checker tells states apart by their hash: two group states that differ only in
/// where one member is must not hash alike (a member hashed to nothing would merge them, and
/// the checker would skip every state it had merged).
#[test]
fn group_states_that_differ_in_a_member_s_place_hash_apart() {
    // The same counts (one assumed, two unscheduled), a different member assumed.
    let first = one_assumed();
    let mut second = GroupState::new(key());
    for i in 0..3 {
        second.add_pod(member(i), false).unwrap();
    }
    assert!(second.assume(&id(1)));
    assert_ne!(first, second);
    assert_ne!(fingerprint(&first), fingerprint(&second));
    assert_eq!(fingerprint(&first), fingerprint(&first.clone()));
}

/// `check()` — the I5 accounting the scheduler and the checkers rely on — finds each way a
/// group state can be broken (the mutants that made it answer `Ok` always, or let a mark on a
/// member neither assumed nor in an attempt pass, went unnoticed by the unit tier).
#[test]
fn the_check_finds_each_broken_group_state() {
    let sound = one_assumed();
    sound.check().unwrap();
    let broken = |what: &str, breaks: &dyn Fn(&mut GroupState)| {
        let mut state = sound.clone();
        breaks(&mut state);
        let err = state.check().expect_err(what);
        assert!(err.starts_with("ml/g: "), "{what}: {err}");
    };
    broken("a member holding another pod", &|s| {
        s.members.get_mut(&id(1)).unwrap().pod = member(7);
    });
    broken("an unscheduled member marked as waiting for others", &|s| {
        s.members.get_mut(&id(1)).unwrap().waited_for_others = true;
    });
    broken("a member moved without its count", &|s| {
        s.members.get_mut(&id(1)).unwrap().placement = MemberPlace::Assigned;
    });
    broken("an unscheduled member waiting in the attempt", &|s| {
        s.attempt = Some(GangAttempt {
            deadline: crate::Time::ZERO,
            waiting: [id(1)].into(),
            failure: None,
        });
    });
    broken("a failed attempt with members waiting", &|s| {
        s.attempt = Some(GangAttempt {
            deadline: crate::Time::ZERO,
            waiting: [id(0)].into(),
            failure: Some("timed out".into()),
        });
    });
    broken("the object of another group", &|s| {
        s.group = Some(PodGroup::gang(NS, "h", 2).unwrap());
    });
    // An assumed member marked, in no attempt: sound; in the attempt too: not.
    let mut marked = sound.clone();
    assert!(marked.wait_for_others(&id(0)));
    marked.check().unwrap();
    marked.attempt = Some(GangAttempt {
        deadline: crate::Time::ZERO,
        waiting: [id(0)].into(),
        failure: None,
    });
    assert!(marked.check().is_err(), "marked and in the attempt");
}

/// Only an assumed member waits in an attempt, and none once the attempt has failed.
#[test]
fn only_an_assumed_member_waits_in_a_live_attempt() {
    let mut state = one_assumed();
    let timeout = std::time::Duration::from_secs(10);
    let now = crate::Time::ZERO;
    assert_eq!(
        state.wait_in_attempt(&id(1), now, timeout),
        None,
        "unscheduled"
    );
    assert_eq!(
        state.wait_in_attempt(&id(0), now, timeout),
        Some(now + timeout)
    );
    assert!(state.assume(&id(1)));
    assert_eq!(state.fail_attempt("timed out"), [id(0)]);
    assert_eq!(
        state.wait_in_attempt(&id(1), now, timeout),
        None,
        "the attempt failed"
    );
    state.check().unwrap();
}

/// Groups `g` (three members, `p0` assumed and waiting in a live attempt) and `h` (one member).
fn two_groups() -> Groups {
    let mut groups = Groups::new();
    groups
        .add_group(PodGroup::gang(NS, "g", 3).unwrap())
        .unwrap();
    for i in 0..3 {
        groups.add_pod(member(i), false).unwrap();
    }
    groups
        .add_pod(Pod::new("q0", NS, "q0").with_group("h"), false)
        .unwrap();
    groups.assume(&member(0)).unwrap();
    let timeout = std::time::Duration::from_secs(10);
    let opened = groups.change(&key(), |s| {
        s.wait_in_attempt(&id(0), crate::Time::ZERO, timeout)
    });
    assert_eq!(opened, Some(Some(crate::Time::ZERO + timeout)));
    groups.check().unwrap();
    groups
}

fn groups_fingerprint(groups: &Groups) -> u64 {
    let mut hasher = DefaultHasher::new();
    groups.hash(&mut hasher);
    hasher.finish()
}

#[test]
fn the_groups_map_lists_its_states_members_and_deadlines() {
    let groups = two_groups();
    assert_eq!(groups.len(), 2);
    assert!(!groups.is_empty());
    assert!(Groups::new().is_empty());
    let keys: Vec<String> = groups.iter().map(|s| s.key().to_string()).collect();
    assert_eq!(keys, ["ml/g", "ml/h"]);
    assert!(groups.is_member(&id(2)));
    assert!(groups.is_member(&PodId::from("q0")));
    assert!(!groups.is_member(&id(9)));
    let deadline = crate::Time::ZERO + std::time::Duration::from_secs(10);
    assert_eq!(groups.next_deadline(), Some(deadline));
    assert_eq!(groups.deadlines().collect::<Vec<_>>(), [&(deadline, key())]);
}

#[test]
fn an_update_through_the_map_says_whether_it_found_the_member() {
    let mut groups = two_groups();
    assert!(groups.update_pod(member(1).with_label("team", "a")));
    assert!(!groups.update_pod(member(9)), "not a member");
    assert!(!groups.update_pod(Pod::new("x", NS, "x")), "no group");
    groups.check().unwrap();
}

#[test]
fn maps_that_differ_in_one_group_s_member_hash_apart() {
    let first = two_groups();
    let mut second = first.clone();
    second.change(&key(), |s| assert!(s.assume(&id(1))));
    assert_ne!(first, second);
    assert_ne!(groups_fingerprint(&first), groups_fingerprint(&second));
    assert_eq!(
        groups_fingerprint(&first),
        groups_fingerprint(&first.clone())
    );
}

#[test]
fn the_map_s_check_finds_each_broken_index_and_state() {
    let sound = two_groups();
    let broken = |what: &str, breaks: &dyn Fn(&mut Groups)| {
        let mut groups = sound.clone();
        breaks(&mut groups);
        assert!(groups.check().is_err(), "{what}");
    };
    broken("a live attempt's deadline not indexed", &|g| {
        g.deadlines.clear()
    });
    broken("an index entry with no live attempt", &|g| {
        g.deadlines
            .insert((crate::Time::ZERO, GroupKey::new(NS, "h")));
    });
    broken("a state filed under another key", &|g| {
        let state = g.states.remove(&GroupKey::new(NS, "h")).unwrap();
        g.states.insert(GroupKey::new(NS, "x"), state);
    });
    broken("an unused state kept", &|g| {
        let unused = GroupState::new(GroupKey::new(NS, "u"));
        g.states.insert(unused.key().clone(), unused);
    });
    broken("a broken group state", &|g| {
        let state = g.states.get_mut(&key()).unwrap();
        state.members.get_mut(&id(1)).unwrap().placement = MemberPlace::Assigned;
    });
}
