//! The summary of a `gangway simulate` run, as text or JSON.

use std::io::{self, Write};

/// What a simulation run did, and whether the end-of-run invariants held.
///
/// The driver fills it in; `write_text` and `to_json` print it.
#[derive(serde::Serialize, Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// `"upstream"` or `"hardened"`.
    pub mode: String,
    /// `"barrier"` (the Permit barrier) or `"pod-group"` (the pod-group cycle).
    pub gang_cycle: String,
    /// The run's seed.
    pub seed: u64,
    /// Pods in the workload.
    pub pods_total: u64,
    /// Pods bound at the end.
    pub pods_bound: u64,
    /// Gangs in the workload.
    pub gangs_total: u64,
    /// Gangs with every member bound at the end.
    pub gangs_bound: u64,
    /// Bound pods that are not gang members (no group, or a Basic group).
    pub basic_pods_bound: u64,
    /// Gang attempts or pods rejected because the permit wait timed out.
    pub timeouts: u64,
    /// Pods rejected at or while waiting at Permit (timeouts, failed gang attempts, deletes).
    pub gang_rejections: u64,
    /// Gangs with some but fewer than `min_count` members bound at the end, none of whose
    /// members was deleted or failed to bind (those make a gang incomplete by the workload's
    /// doing): the I3 hazard.
    pub partial_gangs: u64,
    /// Pods neither bound, deleted nor anywhere in the queue at the end (I4).
    pub lost_pods: u64,
    /// Node reservations held at the end by pods that are not bound (I6).
    pub leaked_reservations: u64,
    /// Binds that failed (injected by `--bind-failure-rate`).
    pub bind_failures: u64,
    /// Pods deleted (injected by `--delete-rate`).
    pub deletes: u64,
    /// Median time a pod waited at permit, in milliseconds.
    pub permit_wait_p50_ms: f64,
    /// 99th-percentile time a pod waited at permit, in milliseconds.
    pub permit_wait_p99_ms: f64,
    /// Pods that ran their time once bound and completed (a workload's `run_ms`), counted in
    /// `pods_bound` too.
    pub completed: u64,
    /// Median time from a gang's first member's arrival to its `min_count`th member's bind,
    /// in simulated seconds, over the gangs that bound.
    pub gang_bind_p50_s: f64,
    /// 99th percentile of the same.
    pub gang_bind_p99_s: f64,
    /// Gangs bound per simulated second, up to the last gang's bind.
    pub gangs_per_sim_sec: f64,
    /// Node reservation-seconds held by attempts that did not bind (rejected at or while
    /// waiting at Permit, failed binds, deletes, and reservations still held at the end by
    /// pods not bound), in simulated seconds; `null` on the wall clock, where the driver does
    /// not see each cycle. Zero is I9 at work: no gang held nodes it could not use.
    pub wasted_reservation_seconds: Option<f64>,
    /// Simulated time the run covered, in seconds.
    pub virtual_seconds: f64,
    /// Wall-clock time the run took, in seconds.
    pub wall_seconds: f64,
    /// Pods bound per wall-clock second.
    pub pods_per_sec: f64,
    /// Gangs fully bound per wall-clock second.
    pub gangs_per_sec: f64,
    /// Pods of gangs that had room for their quorum at a rest (nothing left to do but wait for
    /// a permit deadline or the leftover flush) and waited for that timer all the same:
    /// progress without timeouts, measured in virtual time (0 on the wall clock). A
    /// delay — a wake-up or an announcement that did not happen, a pod parked where it should
    /// back off — or the Permit barrier's gangs holding each other off; not an invariant, so
    /// not counted by `is_clean`.
    pub waited_for_a_timer: u64,
    /// The first of those gangs, each as the rest that saw it (at most 10).
    pub timer_waits: Vec<String>,
    /// Invariant violations found at the end (I4, I5, I6) and, in virtual time, at each rest
    /// (I5, I7), one line each (empty when all held).
    pub violations: Vec<String>,
}

/// The `p`th percentile (`p` in 0–100) of `samples` by the nearest-rank method: the smallest
/// sample such that at least `p`% of the samples are less than or equal to it (so `p = 0` is
/// the minimum, `p = 100` the maximum, and the result is always one of the samples).
///
/// Sorts `samples` in place. `None` if there are no samples or `p` is outside 0–100 or NaN.
pub fn percentile(samples: &mut [u64], p: f64) -> Option<u64> {
    if samples.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    samples.sort_unstable();
    let n = samples.len();
    // ceil(p / 100 * n), at least 1; computed in f64, exact for any realistic sample count.
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    Some(samples[rank.clamp(1, n) - 1])
}

impl Report {
    /// Sets `pods_per_sec` and `gangs_per_sec` from the bound counts and `wall_seconds` (zero
    /// if no wall time elapsed).
    pub fn compute_rates(&mut self) {
        let per_sec = |n: u64| {
            if self.wall_seconds > 0.0 {
                n as f64 / self.wall_seconds
            } else {
                0.0
            }
        };
        self.pods_per_sec = per_sec(self.pods_bound);
        self.gangs_per_sec = per_sec(self.gangs_bound);
    }

    /// True if I3, I4 and I6 held (no partial gangs, lost pods or leaked reservations) and no
    /// other violation was recorded.
    pub fn is_clean(&self) -> bool {
        self.partial_gangs == 0
            && self.lost_pods == 0
            && self.leaked_reservations == 0
            && self.violations.is_empty()
    }

    /// The invariants line: `I3 ok / I4 ok / I6 ok`, with a count in place of `ok` for each
    /// invariant that failed.
    pub fn invariants_line(&self) -> String {
        let check = |name: &str, n: u64, what: &str| {
            if n == 0 {
                format!("{name} ok")
            } else {
                format!("{name} FAILED ({n} {what})")
            }
        };
        [
            check("I3", self.partial_gangs, "partial gangs"),
            check("I4", self.lost_pods, "lost pods"),
            check("I6", self.leaked_reservations, "leaked reservations"),
        ]
        .join(" / ")
    }

    /// Writes a compact human summary: aligned `key  value` lines, the invariants line, then
    /// one `violation` line per recorded violation.
    pub fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        let wasted = self
            .wasted_reservation_seconds
            .map_or("not measured on the wall clock".to_owned(), |s| {
                format!("{s:.1} s")
            });
        let lines: [(&str, String); 23] = [
            ("mode", self.mode.clone()),
            ("gang cycle", self.gang_cycle.clone()),
            ("seed", self.seed.to_string()),
            ("pods bound", of(self.pods_bound, self.pods_total)),
            ("gangs bound", of(self.gangs_bound, self.gangs_total)),
            ("basic pods bound", self.basic_pods_bound.to_string()),
            ("timeouts", self.timeouts.to_string()),
            ("gang rejections", self.gang_rejections.to_string()),
            ("partial gangs", self.partial_gangs.to_string()),
            ("lost pods", self.lost_pods.to_string()),
            ("leaked reservations", self.leaked_reservations.to_string()),
            ("bind failures", self.bind_failures.to_string()),
            ("deletes", self.deletes.to_string()),
            ("completed", self.completed.to_string()),
            (
                "gang time to bind",
                format!(
                    "p50 {:.1} s, p99 {:.1} s",
                    self.gang_bind_p50_s, self.gang_bind_p99_s
                ),
            ),
            ("gangs/sim second", format!("{:.4}", self.gangs_per_sim_sec)),
            ("wasted reservations", wasted),
            (
                "permit wait",
                format!(
                    "p50 {:.1} ms, p99 {:.1} ms",
                    self.permit_wait_p50_ms, self.permit_wait_p99_ms
                ),
            ),
            ("virtual time", format!("{:.1} s", self.virtual_seconds)),
            ("wall time", format!("{:.2} s", self.wall_seconds)),
            (
                "throughput",
                format!(
                    "{:.0} pods/s, {:.0} gangs/s",
                    self.pods_per_sec, self.gangs_per_sec
                ),
            ),
            (
                "waited for a timer",
                format!(
                    "{} pods (progress without timeouts)",
                    self.waited_for_a_timer
                ),
            ),
            ("invariants", self.invariants_line()),
        ];
        let width = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (key, value) in &lines {
            writeln!(out, "{key:<width$}  {value}")?;
        }
        for v in &self.violations {
            writeln!(out, "{:<width$}  {v}", "violation")?;
        }
        for w in &self.timer_waits {
            writeln!(out, "{:<width$}  {w}", "timer wait")?;
        }
        Ok(())
    }

    /// The report as pretty-printed JSON (non-finite numbers become `null`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
    }
}

/// `"n / total (pct%)"`.
fn of(n: u64, total: u64) -> String {
    if total == 0 {
        format!("{n} / 0")
    } else {
        format!("{n} / {total} ({:.1}%)", 100.0 * n as f64 / total as f64)
    }
}
