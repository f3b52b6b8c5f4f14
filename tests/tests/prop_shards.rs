#![cfg(not(loom))]
//! Property test: the sharded [`gangsched::WaitingPods`] run in lockstep with one unsharded
//! [`gangsched::WaitingState`] over random operation sequences — single decisions, batches over
//! many pods (a gang's allow and reject, all or none), expiry and removal. After every step the
//! map's merged state (tickets included) equals the single state, and every call returns the
//! same decisions in the same order: sharding changes who waits for whom, never what is
//! decided.
//!
//! Twelve pods spread over the map's 64 shards, so that batches span several shards and some
//! pods share one. The case count comes from `PROPTEST_CASES` (default 256).

use std::time::Duration;

use gangsched::checking::waiting_shard_of;
use gangsched::waiting::{AllowOutcome, Decided};
use gangsched::{Cause, Pod, PodId, Status, Time, WaitingPods, WaitingState};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

const PODS: usize = 12;
const PLUGINS: [&str; 2] = ["A", "B"];

#[derive(Clone, Debug)]
enum Op {
    Add {
        pod: usize,
        waits: Vec<(usize, u64)>,
    },
    AddUntimed {
        pod: usize,
        plugin: usize,
    },
    Allow {
        pod: usize,
        plugin: usize,
    },
    Reject {
        pod: usize,
    },
    AllowAll {
        pods: Vec<usize>,
        plugin: usize,
    },
    RejectAll {
        pods: Vec<usize>,
    },
    Remove {
        pod: usize,
    },
    Expire {
        advance: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let pod = 0..PODS;
    let plugin = 0..PLUGINS.len();
    let pods = prop::collection::vec(0..PODS, 1..6);
    prop_oneof![
        4 => (pod.clone(), prop::collection::vec((plugin.clone(), 1u64..4), 1..3))
            .prop_map(|(pod, waits)| Op::Add { pod, waits }),
        1 => (pod.clone(), plugin.clone()).prop_map(|(pod, plugin)| Op::AddUntimed { pod, plugin }),
        2 => (pod.clone(), plugin.clone()).prop_map(|(pod, plugin)| Op::Allow { pod, plugin }),
        1 => pod.clone().prop_map(|pod| Op::Reject { pod }),
        3 => (pods.clone(), plugin).prop_map(|(pods, plugin)| Op::AllowAll { pods, plugin }),
        1 => pods.prop_map(|pods| Op::RejectAll { pods }),
        1 => pod.prop_map(|pod| Op::Remove { pod }),
        1 => (0u64..3).prop_map(|advance| Op::Expire { advance }),
    ]
}

/// A decision as both sides report it.
fn seen<L>(d: &Decided<L>) -> (PodId, Status) {
    (d.pod.id().clone(), d.status.clone())
}

struct Lockstep {
    map: WaitingPods,
    single: WaitingState<()>,
    ids: Vec<PodId>,
    now: Time,
}

impl Lockstep {
    fn new() -> Lockstep {
        Lockstep {
            map: WaitingPods::new(),
            single: WaitingState::new(),
            ids: (0..PODS).map(|i| PodId::from(format!("p{i}"))).collect(),
            now: Time::ZERO,
        }
    }

    fn pod(&self, i: usize) -> Pod {
        Pod::new(self.ids[i].as_str(), "ns", self.ids[i].as_str())
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let minute = |m: u64| Duration::from_secs(60 * m);
        match op {
            Op::Add { pod, waits } => {
                let waits: Vec<_> = waits
                    .iter()
                    .map(|&(p, m)| (PLUGINS[p].into(), minute(m)))
                    .collect();
                let real = self.map.add(self.pod(*pod), waits.clone(), self.now);
                let single = self.single.add(self.pod(*pod), waits, self.now, ());
                prop_assert_eq!(real.map(|h| h.ticket()).ok(), single.ok());
            }
            Op::AddUntimed { pod, plugin } => {
                let real = self
                    .map
                    .add_untimed(self.pod(*pod), PLUGINS[*plugin].into());
                let single = self
                    .single
                    .add_untimed(self.pod(*pod), PLUGINS[*plugin].into(), ());
                prop_assert_eq!(real.map(|h| h.ticket()).ok(), single.ok());
            }
            Op::Allow { pod, plugin } => {
                let id = &self.ids[*pod];
                let real = self.map.allow(id, PLUGINS[*plugin]);
                let single = self.single.allow(id, None, PLUGINS[*plugin]);
                prop_assert_eq!(real, matches!(single, AllowOutcome::Allowed(_)));
            }
            Op::Reject { pod } => {
                let id = &self.ids[*pod];
                let real = self.map.reject(id, "A", "no");
                let status = Status::unschedulable("no").with_plugin("A");
                let single = self.single.reject(id, None, status, Cause::Rejected);
                prop_assert_eq!(real, single.is_some());
            }
            Op::AllowAll { pods, plugin } => {
                let ids: Vec<PodId> = pods.iter().map(|&i| self.ids[i].clone()).collect();
                let real = self.map.allow_all(&ids, PLUGINS[*plugin]);
                let single = self.single.allow_all(&ids, PLUGINS[*plugin]);
                prop_assert_eq!(real, single.map(|d| d.len()), "batch over {:?}", ids);
            }
            Op::RejectAll { pods } => {
                let ids: Vec<PodId> = pods.iter().map(|&i| self.ids[i].clone()).collect();
                let real = self
                    .map
                    .reject_all(&ids, "A", "gang rejected", Cause::GangFailed);
                let status = Status::unschedulable("gang rejected").with_plugin("A");
                let single = self.single.reject_all(&ids, &status, Cause::GangFailed);
                prop_assert_eq!(real, single.len());
            }
            Op::Remove { pod } => {
                let id = &self.ids[*pod];
                let real = self.map.remove(id).map(|h| h.ticket());
                let single =
                    self.single
                        .reject(id, None, Status::unschedulable("removed"), Cause::Deleted);
                prop_assert_eq!(real, single.map(|d| d.ticket));
            }
            Op::Expire { advance } => {
                self.now += minute(*advance);
                let real: Vec<_> = self
                    .map
                    .expire(self.now)
                    .into_iter()
                    .map(|d| (d.pod.id().clone(), d.status))
                    .collect();
                let single: Vec<_> = self.single.expire(self.now).iter().map(seen).collect();
                prop_assert_eq!(real, single, "expiry in deadline order across shards");
            }
        }
        self.agree()
    }

    fn agree(&self) -> Result<(), TestCaseError> {
        let merged = gangsched::checking::waiting_state(&self.map);
        prop_assert_eq!(&merged, &self.single);
        prop_assert_eq!(merged.check(), Ok(()));
        prop_assert_eq!(self.map.len(), self.single.len());
        prop_assert_eq!(self.map.next_deadline(), self.single.next_deadline());
        let order: Vec<PodId> = self.map.snapshot().iter().map(|h| h.id().clone()).collect();
        let single: Vec<PodId> = self.single.iter().map(|e| e.pod().id().clone()).collect();
        prop_assert_eq!(order, single, "snapshot in pod id order");
        Ok(())
    }
}

#[test]
fn the_pods_span_several_shards() {
    let map = WaitingPods::new();
    let shards: std::collections::BTreeSet<usize> = (0..PODS)
        .map(|i| waiting_shard_of(&map, &PodId::from(format!("p{i}"))))
        .collect();
    assert!(shards.len() >= PODS / 2, "{shards:?} of {}", map.shards());
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn sharded_map_decides_as_one_state(ops in prop::collection::vec(op(), 1..80)) {
        let mut lockstep = Lockstep::new();
        for op in &ops {
            lockstep.step(op)?;
        }
    }
}
