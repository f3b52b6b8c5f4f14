//! W2 hold: 100,000 gangs of min count 2 with one member each, so every pod waits at Permit
//! until its gang attempt's deadline; a [`TimerDriver`] over the gang plugin, reading the
//! system clock, times each attempt out (the whole gang rejected at its one deadline) and the
//! binding workers receive the rejections through the waiting map's sink and unreserve.
//!
//! Measured as the Go program does: `admit_s` (scheduling every pod), `rss_per_pod_b` (VmRSS
//! growth ÷ pods once every pod waits, over a baseline taken after the pods, the plugin, the
//! workers, the timer and the per-pod harness arrays exist), `drain_s` (first rejection to
//! reach a worker → last), `first_timeout_lag_ms` and `max_lag_ms` (a waiter's return past its
//! own deadline, admitted time + timeout).
//!
//! Go also prints `live_heap_per_pod_b` (heap growth after a GC) and `stack_per_pod_b`
//! (goroutine stacks). Neither has a counterpart here: there is no garbage-collected heap to
//! measure apart from the RSS, and no thread (nor stack) per waiting pod — the binding workers
//! and the timer thread exist before the baseline. Those keys are left out rather than filled
//! with an invented number; all of a waiting pod's memory is in `rss_per_pod_b`.

use std::time::{Duration, Instant};

use gangsched::sync::{Arc, Mutex};
use gangsched::{Clock, Decision, Mode, SystemClock, Time, TimerDriver};

use super::barrier::{Barrier, BarrierOutcome, OnDecided};
use super::workloads::{make_gangs_min, rss_mb, BenchLine};

/// The Go program's Permit timeout for W2.
pub(super) const W2_TIMEOUT: Duration = Duration::from_secs(2);

/// Not-yet-stamped slot of a per-pod time array.
const UNSET: u64 = u64::MAX;

/// What the binding workers record: per worker, when each pod's decision reached it (ns on the
/// run's clock) and how many reached it — one lock per worker, so the workers share nothing
/// while they drain (Go stamps a slice slot and bumps an atomic counter).
struct Returns {
    at: Vec<Mutex<Stamps>>,
    total: usize,
}

/// One worker's stamps.
struct Stamps {
    at: Vec<u64>,
    count: usize,
}

impl Returns {
    fn new(workers: usize, pods: usize) -> Returns {
        Returns {
            // `vec![UNSET; n]` writes every slot, so the pages are resident before the baseline.
            at: (0..workers)
                .map(|_| {
                    Mutex::new(Stamps {
                        at: vec![UNSET; pods],
                        count: 0,
                    })
                })
                .collect(),
            total: pods,
        }
    }

    fn stamp(&self, worker: usize, pod: usize, now: Time) {
        let mut mine = self.at[worker].lock();
        mine.at[pod] = now.as_nanos();
        mine.count += 1;
    }

    /// Waits until every pod has returned, for at most `limit`, looking every millisecond as
    /// the Go program does; the count reached.
    fn wait_all(&self, limit: Duration) -> usize {
        let until = Instant::now() + limit;
        loop {
            let count: usize = self.at.iter().map(|w| w.lock().count).sum();
            if count >= self.total || Instant::now() >= until {
                return count;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Each pod's return time (the earliest stamp of any worker; `UNSET` if none).
    fn merged(&self) -> Vec<u64> {
        let mut merged = vec![UNSET; self.total];
        for at in &self.at {
            for (m, &t) in merged.iter_mut().zip(at.lock().at.iter()) {
                *m = (*m).min(t);
            }
        }
        merged
    }
}

/// The pod index of a W2 pod: gangs have one member, and the uid starts with the gang index in
/// eight hex digits (`make_gangs_min`).
fn pod_index(decision: &Decision) -> Option<usize> {
    let uid = decision.pod.id().as_str();
    usize::from_str_radix(uid.get(..8)?, 16).ok()
}

/// The drain and lag figures, from per-pod admitted and returned times (ns).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Lags {
    first: u64,
    last: u64,
    /// The first waiter's return past its deadline, ns (negative if early).
    first_lag: i128,
    /// The largest return past its own deadline of any waiter, ns.
    max_lag: i128,
}

fn lags(admitted: &[u64], returned: &[u64], timeout: Duration) -> Option<Lags> {
    let timeout = timeout.as_nanos() as i128;
    let (first, last) = (*returned.iter().min()?, *returned.iter().max()?);
    if last == UNSET {
        return None; // some pod never returned
    }
    let max_lag = admitted
        .iter()
        .zip(returned)
        .map(|(&a, &r)| r as i128 - a as i128 - timeout)
        .max()?;
    let first_lag = first as i128 - *admitted.first()? as i128 - timeout;
    Some(Lags {
        first,
        last,
        first_lag,
        max_lag,
    })
}

/// What W2 requires: every pod waited at the measurement, which came before the first
/// deadline; every pod was rejected and none bound; nothing waits or is assumed at the end.
fn expect_all_rejected(
    outcome: &BarrierOutcome,
    pods: usize,
    waiting_at_measure: usize,
    late: bool,
) -> Result<(), String> {
    let want = BarrierOutcome {
        bound: 0,
        rejected: pods,
        waiting: 0,
        assumed: 0,
    };
    if *outcome != want || waiting_at_measure != pods || late {
        return Err(format!(
            "expected {want:?} with {pods} waiting before the first deadline, got {outcome:?} \
             with {waiting_at_measure} waiting, measured late: {late}"
        ));
    }
    Ok(())
}

/// W2 with `gangs` one-member gangs of min count 2, a Permit timeout of `timeout` and
/// `workers` binding workers.
pub(super) fn hold(gangs: usize, timeout: Duration, workers: usize) -> Result<BenchLine, String> {
    let workers = workers.max(1);
    let plan = make_gangs_min(gangs, 1, 2);
    let clock = SystemClock::new();
    let returns = Arc::new(Returns::new(workers, gangs));
    let mut admitted = vec![UNSET; gangs];
    let on_decided: OnDecided = {
        let returns = returns.clone();
        Arc::new(move |worker, decision: &Decision| {
            let now = clock.now();
            if let Some(pod) = pod_index(decision).filter(|&i| i < returns.total) {
                returns.stamp(worker, pod, now);
            }
        })
    };
    let barrier = Barrier::with_timeout(Mode::Hardened, workers, &plan, timeout, Some(on_decided));
    let timer = TimerDriver::spawn(barrier.gang().clone(), clock);
    let base = rss_mb("VmRSS");

    let started = Instant::now();
    for ((_, pods), at) in plan.iter().zip(admitted.iter_mut()) {
        let now = clock.now();
        *at = now.as_nanos();
        for pod in pods {
            barrier.schedule(pod, now)?;
        }
    }
    let admit = started.elapsed().as_secs_f64();
    let waiting_at_measure = barrier.waiting().len();
    let measured_at = clock.now();
    let rss = rss_mb("VmRSS");
    let late = admitted
        .first()
        .is_some_and(|&a| measured_at > Time::from_nanos(a) + timeout);

    // Every deadline is at most `timeout` after the last admission; allow a generous margin.
    let returned = returns.wait_all(timeout + Duration::from_secs(60));
    timer.shutdown();
    let outcome = barrier.finish();
    expect_all_rejected(&outcome, gangs, waiting_at_measure, late)?;
    let lags = lags(&admitted, &returns.merged(), timeout)
        .ok_or_else(|| format!("{returned} of {gangs} pods returned"))?;

    let ms = |ns: i128| format!("{:.3}", ns as f64 / 1e6);
    let mut line = BenchLine::default();
    line.add("workload", "W2");
    line.add("pods", gangs);
    line.add("timeout_s", timeout.as_secs_f64());
    line.add("admit_s", format!("{admit:.6}"));
    let growth = (rss - base) * 1024.0 * 1024.0;
    line.add("rss_per_pod_b", format!("{:.0}", growth / gangs as f64));
    let drain = Duration::from_nanos(lags.last - lags.first).as_secs_f64();
    line.add("drain_s", format!("{drain:.6}"));
    line.add("first_timeout_lag_ms", ms(lags.first_lag));
    line.add("max_lag_ms", ms(lags.max_lag));
    line.add("rss_mb", format!("{:.1}", rss_mb("VmHWM")));
    line.add("base_rss_mb", format!("{base:.1}"));
    line.add("workers", workers);
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_hold_rejects_every_pod_at_its_deadline_and_prints_the_go_keys() {
        let line = hold(500, Duration::from_millis(200), 2).expect("every pod rejected");
        line.assert_has(&[
            "workload",
            "pods",
            "timeout_s",
            "admit_s",
            "rss_per_pod_b",
            "drain_s",
            "first_timeout_lag_ms",
            "max_lag_ms",
            "rss_mb",
            "base_rss_mb",
        ]);
        assert_eq!(line.get("pods"), Some("500"));
        assert_eq!(line.get("timeout_s"), Some("0.2"));
        let first_lag: f64 = line.get("first_timeout_lag_ms").unwrap().parse().unwrap();
        assert!(
            first_lag >= 0.0,
            "no waiter returns before its deadline: {line}"
        );
    }

    #[test]
    fn a_wrong_outcome_or_a_late_measurement_fails_the_run() {
        let good = BarrierOutcome {
            bound: 0,
            rejected: 8,
            waiting: 0,
            assumed: 0,
        };
        assert!(expect_all_rejected(&good, 8, 8, false).is_ok());
        assert!(expect_all_rejected(&good, 8, 8, true).is_err());
        assert!(expect_all_rejected(&good, 8, 7, false).is_err());
        let bound = BarrierOutcome {
            bound: 1,
            rejected: 7,
            ..good
        };
        assert!(expect_all_rejected(&bound, 8, 8, false).is_err());
        let assumed = BarrierOutcome { assumed: 1, ..good };
        assert!(expect_all_rejected(&assumed, 8, 8, false).is_err());
    }

    #[test]
    fn lags_are_measured_from_each_pods_own_deadline() {
        let timeout = Duration::from_nanos(100);
        let lags = lags(&[0, 10, 20], &[105, 130, 121], timeout).unwrap();
        assert_eq!((lags.first, lags.last), (105, 130));
        assert_eq!((lags.first_lag, lags.max_lag), (5, 20));
        assert!(super::lags(&[0, 10], &[105, UNSET], timeout).is_none());
    }
}
