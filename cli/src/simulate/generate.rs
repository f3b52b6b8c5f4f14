//! The generated workloads of `gangway simulate`: the default one — nodes, gangs and Basic
//! pods from a seed ([`Workload::generate`]) — and the contention one, gangs that each need
//! most of the cluster and run for a while ([`Workload::contention`]).

use super::workload::{default_namespace, GroupSpec, NodeSpec, PodSpec, Workload};

/// Sizes of the generated default workload (see [`Workload::generate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenerateSpec {
    /// Number of nodes (64 CPU, 256 GiB each).
    pub nodes: usize,
    /// Number of gangs.
    pub gangs: usize,
    /// Smallest gang size (at least 1).
    pub min_gang: u32,
    /// Largest gang size (raised to `min_gang` if smaller).
    pub max_gang: u32,
    /// Number of pods outside any gang.
    pub basic_pods: usize,
    /// PRNG seed: the same spec always yields the same workload.
    pub seed: u64,
}

impl Default for GenerateSpec {
    /// The default: 500 nodes, 1,000 gangs of 2–64 pods, 2,000 Basic pods, seed 1.
    fn default() -> Self {
        Self {
            nodes: 500,
            gangs: 1000,
            min_gang: 2,
            max_gang: 64,
            basic_pods: 2000,
            seed: 1,
        }
    }
}

/// Sizes of the contention workload (see [`Workload::contention`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContentionSpec {
    /// Number of nodes (64 CPU, 256 GiB each; one member fits on a node).
    pub nodes: usize,
    /// Number of gangs.
    pub gangs: usize,
    /// How long each member runs once bound, in milliseconds.
    pub run_ms: u64,
    /// PRNG seed: the same spec always yields the same workload.
    pub seed: u64,
}

impl Default for ContentionSpec {
    /// 32 nodes, 100 gangs running 60 s each, seed 1.
    fn default() -> Self {
        Self {
            nodes: 32,
            gangs: 100,
            run_ms: 60_000,
            seed: 1,
        }
    }
}

/// splitmix64: tiny, fast and good enough for workload generation.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (`lo <= hi`); the modulo bias is negligible for these ranges.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `p` (0 to 1).
    pub(super) fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next_u64().is_multiple_of(n)
    }
}

const GIB: u64 = 1 << 30;
/// Arrivals of gangs and Basic pods are spread over this window.
const ARRIVAL_WINDOW_MS: u64 = 60_000;
/// Members of a gang arrive within this long of the gang's first member.
const GANG_SPREAD_MS: u64 = 2_000;
/// How late the occasional straggler member arrives.
const STRAGGLER_DELAY_MS: u64 = 30_000;
/// Number of Basic-policy groups some of the non-gang pods join.
const BASIC_GROUPS: usize = 8;

/// Nodes `node-0000`… of 64 CPU and 256 GiB.
fn generated_nodes(count: usize) -> Vec<NodeSpec> {
    (0..count)
        .map(|i| NodeSpec {
            name: format!("node-{i:04}"),
            cpu_millis: 64_000,
            memory_bytes: 256 * GIB,
        })
        .collect()
}

impl Workload {
    /// Generates a workload, the same for the same spec: nodes `node-0000`… of 64 CPU and
    /// 256 GiB; gangs `gang-0000`… whose `min_count` is their size (uniform in
    /// `min_gang..=max_gang`), members `gang-0000-07`… requesting 0.25–1 CPU and 1–4 GiB at the
    /// gang's priority (0, 100 or 1000). Gangs and `basic_pods` pods `pod-0000`… (a quarter of
    /// them in Basic groups `basic-0`…`basic-7`, the rest in none) arrive over the first 60 s;
    /// a gang's members within 2 s of each other, except that one gang in ten has a member
    /// 30 s late. Pods are listed in arrival order.
    pub fn generate(spec: &GenerateSpec) -> Workload {
        let mut rng = SplitMix64(spec.seed);
        let min_gang = spec.min_gang.max(1);
        let max_gang = spec.max_gang.max(min_gang);
        let nodes = generated_nodes(spec.nodes);
        let mut groups = Vec::new();
        let mut pods = Vec::new();
        for g in 0..spec.gangs {
            let size = rng.range(u64::from(min_gang), u64::from(max_gang)) as u32;
            let name = format!("gang-{g:04}");
            let priority = [0, 100, 1000][rng.range(0, 2) as usize];
            let cpu_millis = rng.range(1, 4) * 250;
            let memory_bytes = rng.range(1, 4) * GIB;
            let start = rng.range(0, ARRIVAL_WINDOW_MS);
            let straggler = rng.one_in(10).then(|| rng.range(0, u64::from(size) - 1));
            for m in 0..size {
                let mut arrival_ms = start + rng.range(0, GANG_SPREAD_MS);
                if straggler == Some(u64::from(m)) {
                    arrival_ms += STRAGGLER_DELAY_MS;
                }
                pods.push(PodSpec {
                    name: format!("{name}-{m:02}"),
                    namespace: default_namespace(),
                    group: Some(name.clone()),
                    priority,
                    cpu_millis,
                    memory_bytes,
                    arrival_ms,
                    delete_ms: None,
                    run_ms: None,
                });
            }
            groups.push(GroupSpec {
                namespace: default_namespace(),
                name,
                min_count: Some(size),
            });
        }
        let basic_groups = BASIC_GROUPS.min(spec.basic_pods);
        for b in 0..basic_groups {
            groups.push(GroupSpec {
                namespace: default_namespace(),
                name: format!("basic-{b}"),
                min_count: None,
            });
        }
        for p in 0..spec.basic_pods {
            let group = (p % 4 == 0).then(|| format!("basic-{}", (p / 4) % basic_groups.max(1)));
            pods.push(PodSpec {
                name: format!("pod-{p:04}"),
                namespace: default_namespace(),
                group,
                priority: [0, 100, 1000][rng.range(0, 2) as usize],
                cpu_millis: rng.range(1, 8) * 250,
                memory_bytes: rng.range(1, 8) * GIB / 2,
                arrival_ms: rng.range(0, ARRIVAL_WINDOW_MS),
                delete_ms: None,
                run_ms: None,
            });
        }
        pods.sort_by_key(|p| p.arrival_ms);
        Workload {
            nodes,
            groups,
            pods,
        }
    }

    /// Generates the contention workload, the same for the same spec: nodes as
    /// [`generate`](Self::generate)'s; gangs `gang-0000`… each needing 60–90% of the nodes
    /// (size and `min_count` the nodes' share, rounded up, at least 1), every member
    /// requesting 40 CPU and 160 GiB, so one member fits on a node and no two gangs fit
    /// together. Gangs arrive over the first 60 s, a gang's members within 2 s of each other,
    /// so the members of gangs that arrive close together interleave in the queue; each
    /// member runs `run_ms` once bound, then completes and frees its node. All at priority 0.
    pub fn contention(spec: &ContentionSpec) -> Workload {
        let mut rng = SplitMix64(spec.seed);
        let nodes = generated_nodes(spec.nodes);
        let mut groups = Vec::new();
        let mut pods = Vec::new();
        for g in 0..spec.gangs {
            let share_pct = rng.range(60, 90) as usize;
            let size = (spec.nodes * share_pct).div_ceil(100).max(1);
            let name = format!("gang-{g:04}");
            let start = rng.range(0, ARRIVAL_WINDOW_MS);
            for m in 0..size {
                pods.push(PodSpec {
                    name: format!("{name}-{m:03}"),
                    namespace: default_namespace(),
                    group: Some(name.clone()),
                    priority: 0,
                    cpu_millis: 40_000,
                    memory_bytes: 160 * GIB,
                    arrival_ms: start + rng.range(0, GANG_SPREAD_MS),
                    delete_ms: None,
                    run_ms: Some(spec.run_ms),
                });
            }
            groups.push(GroupSpec {
                namespace: default_namespace(),
                name,
                min_count: Some(size as u32),
            });
        }
        pods.sort_by_key(|p| p.arrival_ms);
        Workload {
            nodes,
            groups,
            pods,
        }
    }
}
