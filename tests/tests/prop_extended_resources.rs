#![cfg(not(loom))]
//! Property test: extended resources (GPUs, a hugepage size) are never oversubscribed. Random
//! nodes with random GPU and hugepage capacities and labels, random gangs and single pods
//! asking for random amounts of them (some with a node selector) go through a real
//! `Scheduler` driven by hand — scheduling and binding cycles, timeouts, deletes, failed
//! binds. After every step the cache's own check (I5) holds and no node has more of any
//! resource assumed or bound than it has; at the end every bound pod sits on a node its
//! selector matches. The case count comes from `PROPTEST_CASES` (default 256).
//!
//! The witness: a placement that ignores extended resources (`CpuOnly`, below) breaks the
//! property on the first GPU pod that lands on a node without room for it.

use std::time::Duration;

use gangsched::scheduler::{
    CacheState, InMemoryBinder, Node, Placement, ResourceFit, Scheduler, SchedulerConfig,
};
use gangsched::{Labels, Mode, Pod, PodGroup, Resources, Status, Time};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

const GPU: &str = "nvidia.com/gpu";
const HUGEPAGES: &str = "hugepages-2Mi";
const CPU: u64 = 1_000;
const GIB: u64 = 1 << 30;

#[derive(Clone, Debug)]
struct NodeSpec {
    gpus: u64,
    hugepages: u64,
    h100: bool,
}

#[derive(Clone, Debug)]
struct PodSpec {
    gpus: u64,
    hugepages: u64,
    /// Only on nodes labelled `accelerator=h100`.
    wants_h100: bool,
}

#[derive(Clone, Debug)]
enum Op {
    /// A gang of these members (min count: all of them).
    Gang(Vec<PodSpec>),
    /// A pod of no gang.
    Single(PodSpec),
    /// Scheduling and binding cycles until nothing moves.
    Settle,
    /// Time passes: timeouts and backoffs.
    Advance(u64),
    /// The `n`-th pod added so far is deleted.
    Delete(usize),
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (0u64..5, 0u64..4, any::<bool>()).prop_map(|(gpus, pages, h100)| NodeSpec {
        gpus,
        hugepages: pages * (2 << 20),
        h100,
    })
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (0u64..4, 0u64..3, prop::bool::weighted(0.3)).prop_map(|(gpus, pages, wants_h100)| PodSpec {
        gpus,
        hugepages: pages * (2 << 20),
        wants_h100,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => prop::collection::vec(pod_spec(), 2..4).prop_map(Op::Gang),
        2 => pod_spec().prop_map(Op::Single),
        4 => Just(Op::Settle),
        1 => (1u64..20).prop_map(Op::Advance),
        1 => (0usize..16).prop_map(Op::Delete),
    ]
}

/// A placement that forgets extended resources: fits CPU and memory only (the witness).
struct CpuOnly;

impl Placement for CpuOnly {
    fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status> {
        let wanted = Resources::new(pod.requests().cpu_millis, pod.requests().memory_bytes);
        cache
            .nodes()
            .find(|n| wanted.fits_in(&n.free()))
            .map(|n| n.name().to_owned())
            .ok_or_else(|| Status::unschedulable("no room"))
    }
}

fn requests(spec: &PodSpec) -> Resources {
    Resources::new(CPU / 4, GIB / 4)
        .with_extended(GPU, spec.gpus)
        .with_extended(HUGEPAGES, spec.hugepages)
}

fn pod(n: usize, spec: &PodSpec, group: Option<&str>) -> Pod {
    let mut pod = Pod::new(format!("p{n}"), "ml", &format!("p{n}")).with_requests(requests(spec));
    if spec.wants_h100 {
        pod = pod.with_node_selector(Labels::new().with("accelerator", "h100"));
    }
    match group {
        Some(group) => pod.with_group(group),
        None => pod,
    }
}

/// No node holds more of any resource than it has, and the cache's accounting adds up.
fn never_oversubscribed(s: &Scheduler) -> Result<(), TestCaseError> {
    s.cache().with(|cache| -> Result<(), TestCaseError> {
        cache.check().map_err(TestCaseError::fail)?;
        for node in cache.nodes() {
            let (requested, capacity) = (node.requested(), node.capacity());
            for name in [GPU, HUGEPAGES] {
                prop_assert!(
                    requested.extended(name) <= capacity.extended(name),
                    "{} holds {} of {name} but has {}",
                    node.name(),
                    requested.extended(name),
                    capacity.extended(name)
                );
            }
            prop_assert!(requested.cpu_millis <= capacity.cpu_millis);
        }
        Ok(())
    })
}

fn run(
    placement: impl Placement + 'static,
    mode: Mode,
    nodes: &[NodeSpec],
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_permit_timeout(Duration::from_secs(10));
    let binder = InMemoryBinder::new().with_failures(|pod, _| pod.name().ends_with('7'));
    let s = Scheduler::with(config, placement, binder);
    let mut now = Time::ZERO;
    for (i, spec) in nodes.iter().enumerate() {
        let capacity = Resources::new(8 * CPU, 64 * GIB)
            .with_extended(GPU, spec.gpus)
            .with_extended(HUGEPAGES, spec.hugepages);
        let mut node = Node::new(&format!("n{i}"), capacity);
        if spec.h100 {
            node = node.with_label("accelerator", "h100");
        }
        s.add_node(node, now).unwrap();
    }
    let mut pods: Vec<Pod> = Vec::new();
    for (g, op) in ops.iter().enumerate() {
        match op {
            Op::Gang(members) => {
                let group = format!("g{g}");
                let gang = PodGroup::gang("ml", &group, members.len() as u32).unwrap();
                s.add_group(gang, now).unwrap();
                for spec in members {
                    let p = pod(pods.len(), spec, Some(&group));
                    s.add_pod(p.clone(), now).unwrap();
                    pods.push(p);
                }
            }
            Op::Single(spec) => {
                let p = pod(pods.len(), spec, None);
                s.add_pod(p.clone(), now).unwrap();
                pods.push(p);
            }
            Op::Settle => {
                while s.schedule_one(now).is_some() || s.run_binding_cycles(now) > 0 {
                    never_oversubscribed(&s)?;
                }
            }
            Op::Advance(secs) => {
                now += Duration::from_secs(*secs);
                s.tick(now);
            }
            Op::Delete(n) => {
                if let Some(p) = pods.get(*n) {
                    let _ = s.delete_pod(p, now);
                }
            }
        }
        never_oversubscribed(&s)?;
        s.check().map_err(|v| TestCaseError::fail(v.to_string()))?;
    }
    s.cache().with(|cache| -> Result<(), TestCaseError> {
        for p in &pods {
            if let Some(node) = cache.pod_node(p.id()) {
                let labels = cache.node(node).unwrap().labels().clone();
                prop_assert!(p.node_selector().matches(&labels), "{p:?} on {node}");
            }
        }
        Ok(())
    })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn extended_resources_are_never_oversubscribed(
        hardened in any::<bool>(),
        nodes in prop::collection::vec(node_spec(), 1..4),
        ops in prop::collection::vec(op(), 1..24),
    ) {
        let mode = if hardened { Mode::Hardened } else { Mode::Upstream };
        run(ResourceFit, mode, &nodes, &ops)?;
    }
}

/// The witness: the same run with a placement that ignores extended resources is caught.
#[test]
fn a_placement_that_ignores_gpus_is_caught() {
    let nodes = [NodeSpec {
        gpus: 1,
        hugepages: 0,
        h100: false,
    }];
    let spec = PodSpec {
        gpus: 1,
        hugepages: 0,
        wants_h100: false,
    };
    let ops = [Op::Single(spec.clone()), Op::Single(spec), Op::Settle];
    assert!(run(CpuOnly, Mode::Hardened, &nodes, &ops).is_err());
    assert!(run(ResourceFit, Mode::Hardened, &nodes, &ops).is_ok());
}
