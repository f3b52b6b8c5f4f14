//! The placement over the node index against the full scan, in gangsched's own unit tests:
//! 72 nodes of three shapes, some tainted, some labelled, filled unevenly, and 300 pods of
//! every size, some tolerating the taint, some selecting the label. The index's answer must be
//! the scan's, node for node (issue #43: the unit tier never built the index for a placement,
//! which a cache does from 64 nodes, and missed every mutant of `best_indexed`;
//! `tests/tests/prop_placement_index.rs` asks the same of generated clusters in the
//! integration tier).

use super::*;
use crate::scheduler::Node;
use crate::{TaintEffect, Toleration};

/// A small deterministic generator (a linear congruential one), so the cluster is the same
/// each run.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn spot() -> Taint {
    Taint::new("spot", "", TaintEffect::NoSchedule)
}

/// 72 nodes: 4000m/4000, 8000m/2000 and 2000m/8000 in turn; every fourth tainted `spot`, every
/// fifth labelled `zone=b`; 90 pods assumed on nodes drawn at random (an assume does not
/// check fit, so a few nodes are over-full and fit nothing).
fn cluster(draw: &mut Draw) -> CacheState {
    let mut cache = CacheState::new();
    for i in 0..72 {
        let (cpu, memory) = [(4000, 4000), (8000, 2000), (2000, 8000)][i % 3];
        let mut node = Node::new(&format!("n{i:02}"), Resources::new(cpu, memory));
        if i % 4 == 0 {
            node = node.with_taint(spot());
        }
        if i % 5 == 0 {
            node = node.with_label("zone", "b");
        }
        cache.add_node(node).unwrap();
    }
    for k in 0..90 {
        let node = format!("n{:02}", draw.below(72));
        let requests = Resources::new(draw.below(5) * 500, draw.below(5) * 500);
        let pod = Pod::new(format!("f{k}"), "ml", &format!("f{k}")).with_requests(requests);
        cache.assume(&pod, &node).unwrap();
    }
    cache
}

#[test]
fn the_index_places_as_the_full_scan_does() {
    let mut draw = Draw(20_261_208);
    let cache = cluster(&mut draw);
    let index = cache.node_index().expect("72 nodes: the index is built");
    let mut placed = 0;
    for k in 0..300 {
        let requests = Resources::new(draw.below(10) * 500, draw.below(10) * 500);
        let mut pod = Pod::new(format!("q{k}"), "ml", &format!("q{k}")).with_requests(requests);
        if draw.below(3) == 0 {
            pod = pod.with_toleration(Toleration::exists("spot"));
        }
        if draw.below(4) == 0 {
            pod = pod.with_node_selector(Labels::new().with("zone", "b"));
        }
        let scanned = best_scanned(&pod, &cache);
        assert_eq!(best_indexed(&pod, index), scanned, "{pod:?}");
        placed += usize::from(scanned.is_some());
    }
    assert!(placed > 100 && placed < 300, "{placed} of 300 placed");
}
