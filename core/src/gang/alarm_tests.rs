//! The gang plugin wakes the timer when it sets a deadline earlier than the one the timer sleeps
//! for: a gang attempt's deadline earlier than its shard's (the registry's alarm), and a wait
//! for another plugin, registered under a group lock, earlier than the waiting map's (the map's
//! alarm, rung once the lock is released). Without the ring the timer sleeps past the new
//! deadline and the timeout takes effect late (issue #43: the mutants that dropped a ring were
//! missed by every test but the threaded ones).

use std::collections::HashMap;
use std::time::Duration;

use super::registry_tests::shard_holding;
use super::*;
use crate::time::{Alarm, Deadlines, Wake};
use crate::{GroupKey, Mode, Pod, PodGroup, Time, WaitingPods};

const NS: &str = "ml";

/// Whether `alarm` was rung since last asked (the ring is consumed).
fn rung(alarm: &Alarm) -> bool {
    alarm.sleep(Some(Duration::ZERO)) == Wake::Rung
}

fn at(secs: u64) -> Time {
    Time::ZERO + Duration::from_secs(secs)
}

fn member(group: &str, i: usize) -> Pod {
    let name = format!("{group}-{i}");
    Pod::new(name.as_str(), NS, &name).with_group(group)
}

/// Gangs of two members, minimum 2, added until three share a shard: their names.
fn three_gangs_in_one_shard(gang: &GangScheduling) -> Vec<String> {
    let mut by_shard: HashMap<usize, Vec<String>> = HashMap::new();
    (0..)
        .find_map(|i| {
            let name = format!("g{i}");
            gang.on_group_added(PodGroup::gang(NS, &name, 2).unwrap())
                .unwrap();
            for m in 0..2 {
                gang.on_pod_added(member(&name, m), false).unwrap();
            }
            let names = by_shard
                .entry(shard_holding(gang.registry(), &GroupKey::new(NS, &name)))
                .or_default();
            names.push(name);
            (names.len() == 3).then(|| names.clone())
        })
        .expect("three gangs share a shard")
}

/// The first member of `group` reserved and waiting at Permit at `now`: its gang's attempt
/// begins, its deadline `now` + the timeout.
fn wait_at(gang: &GangScheduling, group: &str, now: Time) {
    let pod = member(group, 0);
    gang.reserve(&pod).unwrap();
    assert!(
        matches!(gang.permit(&pod, now), Permit::Wait { .. }),
        "{group} waits"
    );
}

#[test]
fn an_attempt_deadline_earlier_than_its_shards_rings_the_gang_alarm() {
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    let trio = three_gangs_in_one_shard(&gang);
    let alarm = Alarm::new();
    gang.ring_on_earlier_deadline(alarm.clone());
    assert_eq!(
        Deadlines::next_deadline(&gang),
        None,
        "nothing to wake up for"
    );
    wait_at(&gang, &trio[0], at(100));
    assert!(rung(&alarm), "the shard's first deadline wakes the timer");
    let timeout = gang.timeout();
    assert_eq!(Deadlines::next_deadline(&gang), Some(at(100) + timeout));
    wait_at(&gang, &trio[1], at(200));
    assert!(!rung(&alarm), "a later one leaves its sleep as it is");
    wait_at(&gang, &trio[2], at(0));
    assert!(rung(&alarm), "an earlier one wakes it");
}

/// The waiting map's alarm; needs its shards (`checking`): the ring is for a deadline earlier
/// than its own shard's.
#[cfg(feature = "checking")]
mod waiting_alarm {
    use super::*;
    use crate::gang::permit_with_tests::{plugin, plugins};
    use crate::{PermitVerdict, Policy};

    #[test]
    fn a_wait_for_another_plugin_earlier_than_the_maps_rings_the_waiting_alarm() {
        let waiting = WaitingPods::new();
        let gang = GangScheduling::new(Mode::Hardened, waiting.clone());
        // A Basic group: Hardened lets its members wait for other plugins, under its group lock.
        gang.on_group_added(PodGroup::new(NS, "b", Policy::Basic).unwrap())
            .unwrap();
        // Three members whose waits share a shard of the map.
        let mut by_shard: HashMap<usize, Vec<usize>> = HashMap::new();
        let trio = (0..)
            .find_map(|i| {
                let members = by_shard
                    .entry(waiting.shard_of(member("b", i).id()))
                    .or_default();
                members.push(i);
                (members.len() == 3).then(|| members.clone())
            })
            .expect("three members share a shard");
        let alarm = Alarm::new();
        waiting.ring_on_earlier_deadline(alarm.clone());
        let wait = |i: usize, secs: u64, now: Time| {
            let pod = member("b", i);
            gang.on_pod_added(pod.clone(), false).unwrap();
            let pod = pod.with_node("n1");
            gang.reserve(&pod).unwrap();
            let quota = plugin("Quota", PermitVerdict::wait(Duration::from_secs(secs)));
            let others = plugins(&[&quota]);
            let permit = gang.permit_with(&pod, "n1", &others, now);
            assert!(matches!(permit, Permit::Wait { .. }), "b-{i} waits");
        };
        wait(trio[0], 60, at(100));
        assert!(rung(&alarm), "the shard's first deadline wakes the timer");
        wait(trio[1], 60, at(200));
        assert!(!rung(&alarm), "a later one leaves its sleep as it is");
        wait(trio[2], 1, at(0));
        assert!(rung(&alarm), "an earlier one wakes it");
    }
}
