//! W3 contention: 10,000 waiting pods (1,250 gangs of 8, min count 9 so no gang reaches
//! quorum), each reserved in the gang plugin and registered in the waiting map with a 5-minute
//! wait for "GangScheduling" (a deadline in the map's index, as upstream registers a waiting
//! pod; gangway keeps no timer object per pod). Two threads then run 500,000 pre-generated
//! operations each: 80% `get` of a pod, 10% iterate over one gang, 10% reject the pod's waiting
//! registration and register it afresh. No binding workers, as in the Go program. A `get` is
//! [`WaitingPods::find`]: the registration, borrowed, ready to allow or reject — what Go's
//! `GetWaitingPod` pointer is; an owned `WaitingPod` handle would count a reference too.
//!
//! "Iterate over one gang" has the Go program's two variants ([`Iter`]): `members` looks up each
//! assumed member in the waiting map under the gang's registry lock, as Permit reaches its
//! members; `scan` walks the whole map ([`WaitingPods::for_each`]) and filters by group.

use std::time::{Duration, Instant};

use gangsched::gang::GANG_SCHEDULING;
use gangsched::sync::channel::{self, Receiver};
use gangsched::sync::thread;
use gangsched::sync::Arc;
use gangsched::{Clock, GangScheduling, GroupKey, Mode, Pod, SystemClock, WaitingPods};

use super::workloads::{make_gangs_min, rss_mb, BenchLine};

/// The Go program's wait for W3's pods.
const WAIT: Duration = Duration::from_secs(5 * 60);

/// How W3's "iterate over one gang" operation reaches the gang's waiting pods (Go's `-iter`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Iter {
    /// A waiting-map `get` for each assumed member, under the gang's registry lock (what the
    /// gang Permit does; the variant issue #7 compares).
    #[default]
    Members,
    /// A walk over every waiting pod, keeping the gang's (upstream's only iteration).
    Scan,
}

impl Iter {
    fn name(self) -> &'static str {
        match self {
            Iter::Members => "members",
            Iter::Scan => "scan",
        }
    }
}

/// One pre-generated operation on pod (or gang) index `.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Get(u32),
    Gang(u32),
    RejectReadd(u32),
}

/// xorshift64: a tiny deterministic generator, enough to spread the operations.
struct XorShift(u64);

impl XorShift {
    fn seeded(seed: u64) -> XorShift {
        // One splitmix64 step, so that small seeds do not start in a run of zeros.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        XorShift((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in `0..n` (n < 2³²).
    fn below(&mut self, n: usize) -> u32 {
        (((self.next() >> 32) * n as u64) >> 32) as u32
    }
}

/// Thread `worker`'s `count` operations over `pods` pods in `gangs` gangs.
fn plan(worker: usize, count: usize, pods: usize, gangs: usize) -> Vec<Op> {
    let mut rng = XorShift::seeded(worker as u64 + 1);
    (0..count)
        .map(|_| match rng.below(10) {
            0..=7 => Op::Get(rng.below(pods)),
            8 => Op::Gang(rng.below(gangs)),
            _ => Op::RejectReadd(rng.below(pods)),
        })
        .collect()
}

/// What every operating thread shares.
struct Shared {
    gang: GangScheduling,
    pods: Vec<Pod>,
    keys: Vec<GroupKey>,
    clock: SystemClock,
    iter: Iter,
}

impl Shared {
    fn waiting(&self) -> &WaitingPods {
        self.gang.waiting()
    }

    /// Registers pod `i` at Permit with the 5-minute wait; `false` if it already waits.
    fn add(&self, i: usize) -> bool {
        let waits = [(GANG_SCHEDULING, WAIT)];
        let pod = self.pods[i].clone();
        self.waiting().add(pod, waits, self.clock.now()).is_ok()
    }

    /// Runs `ops`; returns the work done (waiting pods found). A re-add that finds the pod
    /// waiting again (the other thread re-added it first) leaves it waiting, as in Go.
    fn run(&self, ops: &[Op]) -> u64 {
        let mut found = 0u64;
        for &op in ops {
            match op {
                Op::Get(i) => {
                    found += u64::from(self.waiting().find(self.pods[i as usize].id()).is_some());
                }
                Op::Gang(g) => found += self.one_gang(&self.keys[g as usize]),
                Op::RejectReadd(i) => {
                    let id = self.pods[i as usize].id();
                    if let Some(found) = self.waiting().find(id) {
                        found.reject(GANG_SCHEDULING, "rejected by W3");
                    }
                    self.add(i as usize);
                }
            }
        }
        found
    }

    /// The gang's pods that wait, reached the [`Iter`] way.
    fn one_gang(&self, key: &GroupKey) -> u64 {
        match self.iter {
            Iter::Members => self
                .gang
                .registry()
                .with_state(key, |state| {
                    let mut found = 0;
                    for id in state.assumed() {
                        found += u64::from(self.waiting().find(id).is_some());
                    }
                    found
                })
                .unwrap_or(0),
            Iter::Scan => {
                let mut found = 0;
                self.waiting().for_each(|wp| {
                    found += u64::from(wp.pod().group_key() == Some(key));
                });
                found
            }
        }
    }
}

/// W3 with `gangs` gangs of `size` waiting pods (min count `size + 1`), `ops` operations in
/// all shared by `workers` threads, "iterate over one gang" done the `iter` way.
pub(super) fn contention(
    gangs: usize,
    size: usize,
    ops: usize,
    workers: usize,
    iter: Iter,
) -> Result<BenchLine, String> {
    let workers = workers.max(1);
    let plan_of_gangs = make_gangs_min(gangs, size, size + 1);
    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    let (mut pods, mut keys) = (Vec::new(), Vec::new());
    for (group, members) in plan_of_gangs {
        keys.push(group.key().clone());
        gang.on_group_added(group).map_err(|e| e.to_string())?;
        for pod in members {
            gang.on_pod_added(pod.clone(), false)
                .map_err(|e| e.to_string())?;
            gang.reserve(&pod).map_err(|e| e.to_string())?;
            pods.push(pod);
        }
    }
    let waiting = pods.len();
    let shared = Arc::new(Shared {
        gang,
        pods,
        keys,
        clock: SystemClock::new(),
        iter,
    });
    for i in 0..waiting {
        if !shared.add(i) {
            return Err(format!("pod {i} could not start waiting"));
        }
    }

    let per = ops / workers;
    let (go, start) = channel::unbounded::<()>();
    let start: Arc<Receiver<()>> = Arc::new(start);
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let ops = plan(w, per, waiting, gangs);
            let (shared, start) = (shared.clone(), start.clone());
            thread::spawn(&format!("w3-{w}"), move || {
                start.recv().map(|()| shared.run(&ops)).unwrap_or(0)
            })
        })
        .collect();
    let started = Instant::now();
    for _ in 0..workers {
        let _ = go.send(());
    }
    let mut found = 0;
    for t in threads {
        found += t.join().map_err(|_| "a W3 thread panicked".to_owned())?;
    }
    let seconds = started.elapsed().as_secs_f64();

    let left = shared.waiting().len();
    if left != waiting || found == 0 {
        return Err(format!(
            "{left} pods waiting at the end (want {waiting}), {found} found by the operations"
        ));
    }
    let total = per * workers;
    let mut line = BenchLine::default();
    line.add("workload", "W3");
    line.add("iter", iter.name());
    line.add("waiting", waiting);
    line.add("gang_size", size);
    line.add("ops", total);
    line.add("workers", workers);
    line.add("seconds", format!("{seconds:.6}"));
    line.add("ns_per_op", format!("{:.1}", seconds * 1e9 / total as f64));
    line.add("ops_per_s", format!("{:.0}", total as f64 / seconds));
    line.add("rss_mb", format!("{:.1}", rss_mb("VmHWM")));
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_contention_run_keeps_every_pod_waiting_and_prints_the_go_keys() {
        for iter in [Iter::Members, Iter::Scan] {
            let line = contention(50, 8, 20_000, 2, iter).expect("every pod still waiting");
            line.assert_has(&[
                "workload",
                "iter",
                "waiting",
                "gang_size",
                "ops",
                "workers",
                "seconds",
                "ns_per_op",
                "ops_per_s",
                "rss_mb",
            ]);
            assert_eq!(line.get("waiting"), Some("400"));
            assert_eq!(line.get("ops"), Some("20000"));
            assert_eq!(line.get("iter"), Some(iter.name()));
        }
    }

    #[test]
    fn the_plans_are_deterministic_and_mixed_as_the_go_program() {
        let a = plan(0, 100_000, 400, 50);
        assert_eq!(a, plan(0, 100_000, 400, 50));
        assert_ne!(a, plan(1, 100_000, 400, 50));
        let share = |f: fn(&Op) -> bool| a.iter().filter(|op| f(op)).count() as f64 / 1e5;
        assert!((share(|op| matches!(op, Op::Get(_))) - 0.8).abs() < 0.01);
        assert!((share(|op| matches!(op, Op::Gang(_))) - 0.1).abs() < 0.01);
        assert!(a.iter().all(|op| match *op {
            Op::Get(i) | Op::RejectReadd(i) => i < 400,
            Op::Gang(g) => g < 50,
        }));
    }
}
