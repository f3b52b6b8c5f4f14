#![cfg(not(loom))]
//! Property test: the default placement through the cache's node index (its nodes by class and
//! fill, issue #23) decides exactly as the full scan of every node. Two caches run side by side
//! over random operation sequences — nodes added, updated and removed (a few capacities, one
//! with a GPU extended resource and one with no memory; a few labels and taints; identical
//! nodes under different names), pods assumed (where the placement puts them, or on a node
//! named at random, which may overcommit it), forgotten, bound, observed bound (up to a
//! saturating request) and removed, with a few request sizes, tolerations and node selectors.
//! One cache has its index built from the start ([`checking::build_node_index`]); the other,
//! with fewer nodes than a cache builds it for, scans. After every op: the caches are equal
//! (`==`, the index takes no part in it), both `check()` (I5, and the index against the
//! nodes), the same node count, and for each of a set of probe pods `ResourceFit.place` gives
//! the same node or the same full `Status` (code, plugin and message) on both. The universe is
//! small on purpose (8 node names, 10 pods), and ops name nodes and pods by index, so
//! shrinking keeps them meaningful. The case count comes from `PROPTEST_CASES` (default 256).
//!
//! Beside it: 200 identical nodes (the cache builds its index by itself) filled one pod at a
//! time, every decision compared with a scan written here; and the witnesses that the
//! comparisons can fail — a probe answered from a stale copy of the cache, and the scan here
//! with its tie-break turned around.

use std::fmt::Debug;

use gangsched::checking;
use gangsched::scheduler::{CacheState, Node, Placement, ResourceFit};
use gangsched::{Labels, Pod, PodId, Resources, Status};
use gangsched::{Taint, TaintEffect, Toleration};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

const GPU: &str = "nvidia.com/gpu";
const NODES: u8 = 8;
const PODS: u8 = 10;

/// A node's capacity, labels and taints, by index into the lists below.
#[derive(Clone, Copy, Debug)]
struct NodeSpec {
    capacity: u8,
    labels: u8,
    taints: u8,
}

/// What a pod asks for, by index into the lists below.
#[derive(Clone, Copy, Debug)]
struct PodSpec {
    requests: u8,
    tolerations: u8,
    selector: u8,
}

/// One step on both caches; nodes and pods by index.
#[derive(Clone, Debug)]
enum Op {
    AddNode(u8, NodeSpec),
    UpdateNode(u8, NodeSpec),
    RemoveNode(u8),
    /// Assumed where the placement puts it (if anywhere).
    AssumePlaced(u8, PodSpec),
    /// Assumed on a named node, fit or not.
    AssumeOn(u8, PodSpec, u8),
    Forget(u8),
    FinishBinding(u8),
    AddBound(u8, PodSpec, u8),
    RemovePod(u8),
}

fn capacity(i: u8) -> Resources {
    match i % 5 {
        0 => Resources::new(4000, 4000),
        1 => Resources::new(2000, 8000),
        2 => Resources::new(4000, 4000).with_extended(GPU, 2),
        3 => Resources::new(1000, 1000),
        _ => Resources::new(3000, 0),
    }
}

fn labels(i: u8) -> Labels {
    match i % 3 {
        0 => Labels::new(),
        1 => Labels::new().with("zone", "a"),
        _ => Labels::new().with("zone", "b"),
    }
}

fn taints(i: u8) -> Vec<Taint> {
    match i % 4 {
        0 => vec![],
        1 => vec![Taint::new(GPU, "present", TaintEffect::NoSchedule)],
        2 => vec![Taint::new("spot", "", TaintEffect::PreferNoSchedule)],
        _ => vec![
            Taint::new("maintenance", "soon", TaintEffect::NoExecute),
            Taint::new(GPU, "present", TaintEffect::NoSchedule),
        ],
    }
}

fn requests(i: u8) -> Resources {
    match i % 8 {
        0 => Resources::ZERO,
        1 => Resources::new(500, 500),
        2 => Resources::new(1000, 1000),
        3 => Resources::new(2000, 1000),
        4 => Resources::new(1000, 3000),
        5 => Resources::new(500, 500).with_extended(GPU, 1),
        6 => Resources::new(1500, 0).with_extended(GPU, 2),
        // Saturates a node's requested sum when observed bound.
        _ => Resources::new(u64::MAX, 10),
    }
}

fn tolerations(i: u8) -> Vec<Toleration> {
    match i % 3 {
        0 => vec![],
        1 => vec![Toleration::exists(GPU)],
        _ => vec![Toleration::exists("")],
    }
}

fn selector(i: u8) -> Labels {
    match i % 3 {
        0 | 1 => Labels::new(),
        _ => Labels::new().with("zone", "a"),
    }
}

fn node_name(i: u8) -> String {
    format!("n{i}")
}

fn node(i: u8, spec: NodeSpec) -> Node {
    let node = Node::new(&node_name(i), capacity(spec.capacity)).with_labels(labels(spec.labels));
    taints(spec.taints)
        .into_iter()
        .fold(node, |node, taint| node.with_taint(taint))
}

fn pod(i: u8, spec: PodSpec) -> Pod {
    let name = format!("p{i}");
    let pod = Pod::new(name.as_str(), "ns", &name)
        .with_requests(requests(spec.requests))
        .with_node_selector(selector(spec.selector));
    tolerations(spec.tolerations)
        .into_iter()
        .fold(pod, |pod, t| pod.with_toleration(t))
}

/// The probes asked of both caches after every op: every request size, each with some
/// tolerations and selectors.
fn probes() -> Vec<Pod> {
    (0..8u8)
        .flat_map(|r| {
            [(0, 0), (1, 2), (2, 1)].map(|(t, s)| {
                let spec = PodSpec {
                    requests: r,
                    tolerations: t,
                    selector: s,
                };
                pod(100 + r * 3 + t, spec)
            })
        })
        .collect()
}

/// Two caches, one indexed from the start, one scanning.
struct Lockstep {
    indexed: CacheState,
    scanned: CacheState,
    probes: Vec<Pod>,
}

impl Lockstep {
    fn new() -> Lockstep {
        let mut indexed = CacheState::new();
        checking::build_node_index(&mut indexed);
        Lockstep {
            indexed,
            scanned: CacheState::new(),
            probes: probes(),
        }
    }

    /// Runs `op` on both caches, then compares them.
    fn step(&mut self, op: &Op) -> Result<(), String> {
        let (a, b) = (&mut self.indexed, &mut self.scanned);
        match op {
            Op::AddNode(n, spec) => drop(both(a, b, |c| c.add_node(node(*n, *spec)))?),
            Op::UpdateNode(n, spec) => drop(both(a, b, |c| c.update_node(node(*n, *spec)))?),
            Op::RemoveNode(n) => drop(both(a, b, |c| c.remove_node(&node_name(*n)))?),
            Op::AssumePlaced(p, spec) => {
                let pod = pod(*p, *spec);
                if let Ok(node) = both(a, b, |c| ResourceFit.place(&pod, c))? {
                    both(a, b, |c| c.assume(&pod, &node))?.ok();
                }
            }
            Op::AssumeOn(p, spec, n) => {
                let pod = pod(*p, *spec);
                both(a, b, |c| c.assume(&pod, &node_name(*n)))?.ok();
            }
            Op::Forget(p) => drop(both(a, b, |c| c.forget(&pod_id(*p)))?),
            Op::FinishBinding(p) => drop(both(a, b, |c| c.finish_binding(&pod_id(*p)))?),
            Op::AddBound(p, spec, n) => {
                let pod = pod(*p, *spec).with_node(&node_name(*n));
                both(a, b, |c| c.add_bound(&pod))?.ok();
            }
            Op::RemovePod(p) => drop(both(a, b, |c| c.remove_pod(&pod_id(*p)))?),
        }
        compare(a, b, &self.probes)
    }
}

/// Runs `f` on both caches; its result, if they agree.
fn both<R: PartialEq + Debug>(
    indexed: &mut CacheState,
    scanned: &mut CacheState,
    f: impl Fn(&mut CacheState) -> R,
) -> Result<R, String> {
    let (x, y) = (f(indexed), f(scanned));
    if x == y {
        Ok(x)
    } else {
        Err(format!("the caches answered {x:?} (indexed) and {y:?}"))
    }
}

/// The id of pod `i` (whatever it asks for).
fn pod_id(i: u8) -> PodId {
    let spec = PodSpec {
        requests: 0,
        tolerations: 0,
        selector: 0,
    };
    pod(i, spec).id().clone()
}

/// Equal caches, both consistent, the same decision for every probe.
fn compare(indexed: &CacheState, scanned: &CacheState, probes: &[Pod]) -> Result<(), String> {
    if indexed != scanned {
        return Err(format!("the caches differ:\n{indexed:?}\n{scanned:?}"));
    }
    indexed.check().map_err(|e| format!("indexed: {e}"))?;
    scanned.check().map_err(|e| format!("scanned: {e}"))?;
    if indexed.node_count() != scanned.node_count() {
        return Err("the node counts differ".into());
    }
    same_decisions(indexed, scanned, probes)
}

/// The same node, or the same full status, for every probe.
fn same_decisions(
    indexed: &CacheState,
    scanned: &CacheState,
    probes: &[Pod],
) -> Result<(), String> {
    for probe in probes {
        let on_a: Result<String, Status> = ResourceFit.place(probe, indexed);
        let on_b = ResourceFit.place(probe, scanned);
        if on_a != on_b {
            return Err(format!(
                "probe {} ({:?}) placed {on_a:?} (indexed), {on_b:?} (scanned)",
                probe.id(),
                probe.requests()
            ));
        }
    }
    Ok(())
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    // Mostly the same two classes, so that identical nodes share buckets.
    let common = (0u8..2).prop_map(|c| NodeSpec {
        capacity: c,
        labels: 0,
        taints: 0,
    });
    let any = (0u8..5, 0u8..3, 0u8..4).prop_map(|(capacity, labels, taints)| NodeSpec {
        capacity,
        labels,
        taints,
    });
    prop_oneof![common, any]
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (0u8..8, 0u8..3, 0u8..3).prop_map(|(requests, tolerations, selector)| PodSpec {
        requests,
        tolerations,
        selector,
    })
}

fn op() -> impl Strategy<Value = Op> {
    let n = 0..NODES;
    let p = 0..PODS;
    prop_oneof![
        3 => (n.clone(), node_spec()).prop_map(|(n, s)| Op::AddNode(n, s)),
        1 => (n.clone(), node_spec()).prop_map(|(n, s)| Op::UpdateNode(n, s)),
        1 => n.clone().prop_map(Op::RemoveNode),
        5 => (p.clone(), pod_spec()).prop_map(|(p, s)| Op::AssumePlaced(p, s)),
        1 => (p.clone(), pod_spec(), n.clone()).prop_map(|(p, s, n)| Op::AssumeOn(p, s, n)),
        2 => p.clone().prop_map(Op::Forget),
        2 => p.clone().prop_map(Op::FinishBinding),
        1 => (p.clone(), pod_spec(), n).prop_map(|(p, s, n)| Op::AddBound(p, s, n)),
        2 => p.prop_map(Op::RemovePod),
    ]
}

proptest! {
    // Failures are saved beside the other regression files (the cwd of an integration test is
    // the package root, tests/). The case count stays with `PROPTEST_CASES`.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/prop_placement_index.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_index_places_as_the_scan(ops in prop::collection::vec(op(), 1..80)) {
        let mut lockstep = Lockstep::new();
        for (i, op) in ops.iter().enumerate() {
            lockstep
                .step(op)
                .map_err(|e| TestCaseError::fail(format!("op {i} {op:?}: {e}")))?;
        }
    }
}

// ---- many nodes: the index the cache builds by itself ---------------------------------------

/// The default placement's rule, written out node by node over the public view: the node that
/// passes the filters with the least CPU and memory fractions left free (in units of 2^-32,
/// rounded down, a resource the node has none of counting as used), ties to the least name —
/// or, `reversed`, to the greatest (a planted wrong tie-break, for the witness).
fn scan(pod: &Pod, cache: &CacheState, reversed: bool) -> Option<String> {
    let fraction = |part: u64, whole: u64| match whole {
        0 => 0,
        _ => u128::from(part) * (1u128 << 32) / u128::from(whole),
    };
    let want = pod.requests();
    let fits = cache.nodes().filter(|node| {
        let tolerated = node.taints().iter().all(|taint| {
            !taint.effect.filters() || pod.tolerations().iter().any(|t| t.tolerates(taint))
        });
        tolerated && pod.node_selector().matches(node.labels()) && want.fits_in(&node.free())
    });
    let scored = fits.map(|node| {
        let (free, capacity) = (node.free(), node.capacity());
        let score = fraction(free.cpu_millis - want.cpu_millis, capacity.cpu_millis)
            + fraction(free.memory_bytes - want.memory_bytes, capacity.memory_bytes);
        (score, node.name().to_owned())
    });
    let best = if reversed {
        scored.min_by(|(s, a), (t, b)| s.cmp(t).then(b.cmp(a)))
    } else {
        scored.min()
    };
    best.map(|(_, name)| name)
}

/// 200 identical nodes of 4 CPU and 4000 bytes.
fn identical_nodes() -> CacheState {
    let mut cache = CacheState::new();
    for i in 0..200 {
        let node = Node::new(&format!("node-{i:03}"), Resources::new(4000, 4000));
        cache.add_node(node).unwrap();
    }
    cache
}

/// Places `pod` on `cache` through the index, checks the decision against [`scan`] and the
/// cache against its index, and assumes it there.
fn place_and_assume(cache: &mut CacheState, pod: &Pod) -> Result<String, Status> {
    let placed = ResourceFit.place(pod, cache);
    assert_eq!(placed.as_ref().ok(), scan(pod, cache, false).as_ref());
    if let Ok(node) = &placed {
        cache.assume(pod, node).unwrap();
    }
    cache.check().unwrap();
    placed
}

#[test]
fn two_hundred_identical_nodes_fill_one_at_a_time() {
    let mut cache = identical_nodes();
    let sizes = [1000, 500, 1500, 1000, 2000, 250];
    let mut placed = Vec::new();
    for i in 0.. {
        let size = sizes[i % sizes.len()];
        let pod = Pod::new(format!("p{i}").as_str(), "ns", &format!("p{i}"))
            .with_requests(Resources::new(size, size));
        match place_and_assume(&mut cache, &pod) {
            Ok(node) => placed.push((pod, node)),
            Err(status) => {
                // The first pod that fits nowhere: every node counted.
                assert!(status.message().starts_with("0/200 nodes are available: "));
                break;
            }
        }
    }
    // Tightest first: node-000 fills before node-001 is touched, and so on.
    let first_of = |name: &str| placed.iter().position(|(_, n)| n == name).unwrap();
    assert!((1..200)
        .all(|i| first_of(&format!("node-{:03}", i - 1)) < first_of(&format!("node-{i:03}"))));
    // Freeing room in the middle sends the next pods there: the tightest fit, then the name.
    let on = |node: &str| {
        placed
            .iter()
            .filter(|(_, n)| n == node)
            .map(|(p, _)| p.id().clone())
            .collect::<Vec<_>>()
    };
    let (mid, late) = (on("node-150"), on("node-020"));
    cache.remove_pod(&mid[0]).unwrap();
    cache.remove_pod(&late[0]).unwrap();
    cache.check().unwrap();
    for i in 0..4 {
        let pod = Pod::new(format!("q{i}").as_str(), "ns", &format!("q{i}"))
            .with_requests(Resources::new(250, 250));
        place_and_assume(&mut cache, &pod).ok();
    }
    // Every node's fill agrees with its pods, and the index with the nodes.
    assert_eq!(cache.node_count(), 200);
    cache.check().unwrap();
}

#[test]
fn equal_fill_ties_go_to_the_first_name_and_full_nodes_are_counted_once_each() {
    let mut cache = identical_nodes();
    let pod = |i: usize, cpu: u64| {
        Pod::new(format!("p{i}").as_str(), "ns", &format!("p{i}"))
            .with_requests(Resources::new(cpu, cpu))
    };
    // The same fill on three nodes far apart: the first of them by name wins.
    for (i, node) in ["node-170", "node-033", "node-099"].into_iter().enumerate() {
        cache.assume(&pod(i, 1000), node).unwrap();
    }
    let probe = pod(9, 1000);
    assert_eq!(ResourceFit.place(&probe, &cache).unwrap(), "node-033");
    assert_eq!(scan(&probe, &cache, false).unwrap(), "node-033");
    // The witness: the tie-break turned around picks another node of the same score.
    assert_eq!(scan(&probe, &cache, true).unwrap(), "node-170");
    // Nothing fits a pod bigger than a node: every node under both resources.
    let status = ResourceFit.place(&pod(10, 4001), &cache).unwrap_err();
    assert_eq!(
        status.message(),
        "0/200 nodes are available: 200 Insufficient cpu, 200 Insufficient memory."
    );
}

// ---- witnesses: the comparisons can fail ---------------------------------------------------

/// A probe answered from a copy of the indexed cache taken before the last op is told apart
/// from the scanning cache's answer: the comparison sees a placement that lags one transition
/// (as a stale index would place), not only the caches' inequality.
#[test]
fn a_stale_copy_is_caught() {
    let mut lockstep = Lockstep::new();
    // Two nodes of 1 CPU and 1000 bytes; a pod of half of each.
    let spec = NodeSpec {
        capacity: 3,
        labels: 0,
        taints: 0,
    };
    let half = PodSpec {
        requests: 1,
        tolerations: 0,
        selector: 0,
    };
    for op in [Op::AddNode(0, spec), Op::AddNode(1, spec)] {
        lockstep.step(&op).unwrap();
    }
    let stale = lockstep.indexed.clone();
    lockstep.step(&Op::AssumePlaced(0, half)).unwrap();
    assert_eq!(lockstep.scanned.pod_node(&pod_id(0)), Some("n0"));
    // A whole node's pod now fits only n1; the stale copy still says n0.
    let err = same_decisions(&stale, &lockstep.scanned, &lockstep.probes).unwrap_err();
    assert!(
        err.contains(r#"placed Ok("n0") (indexed), Ok("n1")"#),
        "{err}"
    );
    let err = compare(&stale, &lockstep.scanned, &lockstep.probes).unwrap_err();
    assert!(err.contains("the caches differ"), "{err}");
}
