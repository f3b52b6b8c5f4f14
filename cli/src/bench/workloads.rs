//! The workloads of `anchors/go-permit` (its README defines them), run through gangway's real
//! components (W1, W2 and W4 on a [`Barrier`]), each printing one line with the Go program's
//! keys.

use std::fmt;
use std::time::Instant;

use gangsched::{Mode, Pod, PodGroup, Time};

use super::barrier::{Barrier, BarrierOutcome};
use super::contention::{contention, Iter};
use super::hold::{hold, W2_TIMEOUT};

/// A workload of the Go anchor.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Barrier: 10,000 gangs × 8 pods (min count 8), scheduled pod by pod; seconds from the
    /// first scheduling cycle until every binding worker is done.
    W1,
    /// Hold: 100,000 gangs of min count 2 with one member each, so every pod waits until its
    /// gang attempt times out after 2 s; memory per waiting pod and how the timeouts drain.
    W2,
    /// Contention: 10,000 waiting pods (1,250 gangs of 8), two threads running 500,000
    /// operations each on the waiting map (80% get, 10% one gang's members, 10% reject and
    /// re-add); ns per operation.
    W3,
    /// Fan-out: one gang of 10,000; 9,999 wait, then the last member's Permit allows them all;
    /// seconds from that scheduling cycle until all 10,000 are bound.
    W4,
}

/// One output line: ordered `key=value` pairs.
#[derive(Debug, Default, Clone)]
pub struct BenchLine(Vec<(&'static str, String)>);

impl BenchLine {
    pub(super) fn add(&mut self, key: &'static str, value: impl fmt::Display) {
        self.0.push((key, value.to_string()));
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The line as one JSON object, keys in the line's order: each figure as the number it
    /// reads on the line, digit for digit (`"seconds": 0.012345`), any other value as a
    /// string (`"workload": "W1"`).
    pub fn to_json(&self) -> String {
        let pairs: Vec<String> = self
            .0
            .iter()
            .map(|(key, value)| {
                let is_number = serde_json::from_str::<serde_json::Number>(value).is_ok()
                    && !value.contains(char::is_whitespace);
                let value = if is_number {
                    value.clone()
                } else {
                    serde_json::Value::from(value.as_str()).to_string()
                };
                format!("{}:{value}", serde_json::Value::from(*key))
            })
            .collect();
        format!("{{{}}}", pairs.join(","))
    }
}

#[cfg(test)]
impl BenchLine {
    /// Panics unless every one of `keys` is on the line.
    pub(super) fn assert_has(&self, keys: &[&str]) {
        for key in keys {
            assert!(self.get(key).is_some(), "{key} in {self}");
        }
    }
}

impl fmt::Display for BenchLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&pairs.join(" "))
    }
}

/// Runs `workload` at `scale` (1 = the Go program's size; larger for the scaling table) with
/// `workers` binding workers (W3: operating threads), W3's "iterate over one gang" done the
/// `iter` way (the other workloads ignore it). Fails, like the Go program, if the outcome is
/// not the expected one: W1, W4 every pod bound; W2 every pod rejected by its timeout, none
/// bound, and memory measured before the first deadline; all of them the waiting map empty and
/// nothing assumed at the end; W3 every pod still waiting.
pub fn run(
    workload: Workload,
    scale: usize,
    workers: usize,
    iter: Iter,
) -> Result<BenchLine, String> {
    let scale = scale.max(1);
    match workload {
        Workload::W1 => barrier(10_000 * scale, 8, workers),
        Workload::W2 => hold(100_000 * scale, W2_TIMEOUT, workers),
        Workload::W3 => contention(1_250 * scale, 8, 1_000_000, workers, iter),
        Workload::W4 => fan_out(10_000 * scale, workers),
    }
}

/// `gangs` gangs of `size` members, min count `size`, members consecutive.
fn make_gangs(gangs: usize, size: usize) -> Vec<(PodGroup, Vec<Pod>)> {
    make_gangs_min(gangs, size, size)
}

/// `gangs` gangs of `size` members with min count `min`, members consecutive; a member's uid
/// starts with its gang's index in eight hex digits.
pub(super) fn make_gangs_min(gangs: usize, size: usize, min: usize) -> Vec<(PodGroup, Vec<Pod>)> {
    (0..gangs)
        .map(|g| {
            let name = format!("gang-{g}");
            let group = PodGroup::gang("bench", &name, min as u32).expect("min count ≥ 1");
            let pods = (0..size)
                .map(|m| {
                    // A 36-character uid, as in the Go program; the members share their
                    // group's key, as the Go pods share one gang-name string.
                    let uid = format!("{g:08x}-{m:04x}-4000-8000-{:012x}", g * size + m);
                    Pod::new(uid, "bench", &format!("{name}-{m}")).with_group_key(group.key())
                })
                .collect();
            (group, pods)
        })
        .collect()
}

fn expect_all_bound(outcome: &BarrierOutcome, pods: usize) -> Result<(), String> {
    let want = BarrierOutcome {
        bound: pods,
        rejected: 0,
        waiting: 0,
        assumed: 0,
    };
    if *outcome == want {
        Ok(())
    } else {
        Err(format!("expected {want:?}, got {outcome:?}"))
    }
}

fn barrier(gangs: usize, size: usize, workers: usize) -> Result<BenchLine, String> {
    let plan = make_gangs(gangs, size);
    let base = rss_mb("VmRSS");
    let barrier = Barrier::new(Mode::Hardened, workers, &plan);
    let started = Instant::now();
    for (_, pods) in &plan {
        for pod in pods {
            barrier.schedule(pod, Time::ZERO)?;
        }
    }
    let outcome = barrier.finish();
    let seconds = started.elapsed().as_secs_f64();
    let pods = gangs * size;
    expect_all_bound(&outcome, pods)?;
    let mut line = BenchLine::default();
    line.add("workload", "W1");
    line.add("gangs", gangs);
    line.add("gang_size", size);
    line.add("pods", pods);
    line.add("seconds", format!("{seconds:.6}"));
    line.add("pods_per_s", format!("{:.0}", pods as f64 / seconds));
    line.add("rss_mb", format!("{:.1}", rss_mb("VmHWM")));
    line.add("base_rss_mb", format!("{base:.1}"));
    line.add("workers", workers);
    Ok(line)
}

fn fan_out(size: usize, workers: usize) -> Result<BenchLine, String> {
    let plan = make_gangs(1, size);
    let pods = &plan[0].1;
    let barrier = Barrier::new(Mode::Hardened, workers, &plan);
    let (last, waiters) = pods.split_last().expect("a gang of at least one");
    for pod in waiters {
        barrier.schedule(pod, Time::ZERO)?;
    }
    if barrier.waiting().len() != waiters.len() {
        return Err(format!(
            "{} of {} members waiting before the last Permit",
            barrier.waiting().len(),
            waiters.len()
        ));
    }
    let started = Instant::now();
    barrier.schedule(last, Time::ZERO)?;
    let permit = started.elapsed().as_secs_f64();
    let outcome = barrier.finish();
    let seconds = started.elapsed().as_secs_f64();
    expect_all_bound(&outcome, size)?;
    let mut line = BenchLine::default();
    line.add("workload", "W4");
    line.add("gang_size", size);
    line.add("seconds", format!("{seconds:.6}"));
    line.add("permit_call_s", format!("{permit:.6}"));
    line.add("pods_per_s", format!("{:.0}", size as f64 / seconds));
    line.add("rss_mb", format!("{:.1}", rss_mb("VmHWM")));
    line.add("workers", workers);
    Ok(line)
}

/// `field` of /proc/self/status (VmRSS now, VmHWM the peak) in MB; 0 where there is none.
pub(super) fn rss_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_runs_bind_every_pod_and_print_the_go_keys() {
        let line = barrier(50, 8, 2).expect("every pod bound");
        line.assert_has(&[
            "workload",
            "gangs",
            "gang_size",
            "pods",
            "seconds",
            "pods_per_s",
            "rss_mb",
        ]);
        assert_eq!(line.get("pods"), Some("400"));
        let line = fan_out(200, 2).expect("every pod bound");
        assert!(line.get("permit_call_s").is_some(), "{line}");
    }

    #[test]
    fn the_json_object_has_the_lines_figures_in_its_order() {
        let mut line = BenchLine::default();
        line.add("workload", "W1");
        line.add("pods", 80_000);
        line.add("seconds", format!("{:.6}", 0.012_345_6));
        line.add("rss_mb", format!("{:.1}", 12.0));
        line.add("iter", "members");
        let json = line.to_json();
        assert_eq!(
            json,
            r#"{"workload":"W1","pods":80000,"seconds":0.012346,"rss_mb":12.0,"iter":"members"}"#
        );
        let object: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(object["pods"], 80_000);
        assert_eq!(object["seconds"], 0.012_346);
        assert_eq!(object["workload"], "W1");
    }

    #[test]
    fn a_wrong_outcome_fails_the_run() {
        let outcome = BarrierOutcome {
            bound: 7,
            rejected: 1,
            waiting: 0,
            assumed: 0,
        };
        assert!(expect_all_bound(&outcome, 8).is_err());
        assert!(expect_all_bound(
            &BarrierOutcome {
                rejected: 0,
                bound: 8,
                ..outcome
            },
            8
        )
        .is_ok());
    }
}
