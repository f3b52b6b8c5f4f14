//! Tests for the report: the percentile helper, the text summary and the JSON output.

use super::report::{percentile, Report};

#[test]
fn percentile_is_nearest_rank() {
    let mut s: Vec<u64> = (1..=100).rev().collect();
    assert_eq!(percentile(&mut s, 50.0), Some(50));
    assert_eq!(percentile(&mut s, 99.0), Some(99));
    assert_eq!(percentile(&mut s, 99.5), Some(100));
    assert_eq!(percentile(&mut s, 100.0), Some(100));
    assert_eq!(percentile(&mut s, 0.0), Some(1));
    assert_eq!(percentile(&mut s, 0.5), Some(1));
    assert_eq!(percentile(&mut s, 1.0), Some(1));
    assert_eq!(percentile(&mut s, 1.5), Some(2));

    let mut four = [40, 10, 30, 20];
    assert_eq!(percentile(&mut four, 50.0), Some(20));
    assert_eq!(percentile(&mut four, 51.0), Some(30));
    assert_eq!(percentile(&mut four, 75.0), Some(30));
    assert_eq!(percentile(&mut four, 99.0), Some(40));
    assert_eq!(four, [10, 20, 30, 40], "sorted in place");

    assert_eq!(percentile(&mut [7], 99.0), Some(7));
    assert_eq!(percentile(&mut [], 50.0), None);
    assert_eq!(percentile(&mut [1, 2], -1.0), None);
    assert_eq!(percentile(&mut [1, 2], 100.1), None);
    assert_eq!(percentile(&mut [1, 2], f64::NAN), None);
}

fn sample() -> Report {
    let mut r = Report {
        mode: "hardened".into(),
        gang_cycle: "barrier".into(),
        seed: 1,
        pods_total: 200,
        pods_bound: 150,
        gangs_total: 10,
        gangs_bound: 6,
        basic_pods_bound: 20,
        timeouts: 3,
        gang_rejections: 4,
        bind_failures: 2,
        deletes: 1,
        permit_wait_p50_ms: 12.0,
        permit_wait_p99_ms: 2500.5,
        virtual_seconds: 95.25,
        wall_seconds: 0.5,
        ..Report::default()
    };
    r.compute_rates();
    r
}

fn text(r: &Report) -> String {
    let mut out = Vec::new();
    r.write_text(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn rates_come_from_wall_time() {
    let r = sample();
    assert_eq!((r.pods_per_sec, r.gangs_per_sec), (300.0, 12.0));
    let mut idle = Report {
        pods_bound: 5,
        ..Report::default()
    };
    idle.compute_rates();
    assert_eq!(idle.pods_per_sec, 0.0);
}

#[test]
fn text_summary_is_aligned_and_reports_invariants() {
    let r = sample();
    assert!(r.is_clean());
    let t = text(&r);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "mode                 hardened");
    assert!(
        lines.contains(&"wasted reservations  not measured on the wall clock"),
        "{t}"
    );
    let virtual_run = Report {
        gang_cycle: "pod-group".into(),
        wasted_reservation_seconds: Some(0.0),
        gang_bind_p50_s: 10.0,
        gang_bind_p99_s: 95.5,
        ..sample()
    };
    let t2 = text(&virtual_run);
    for line in [
        "gang cycle           pod-group",
        "wasted reservations  0.0 s",
        "gang time to bind    p50 10.0 s, p99 95.5 s",
    ] {
        assert!(t2.lines().any(|l| l == line), "{line:?} in {t2}");
    }
    assert!(
        lines.contains(&"pods bound           150 / 200 (75.0%)"),
        "{t}"
    );
    assert!(
        lines.contains(&"gangs bound          6 / 10 (60.0%)"),
        "{t}"
    );
    assert!(
        lines.contains(&"permit wait          p50 12.0 ms, p99 2500.5 ms"),
        "{t}"
    );
    assert!(
        lines.contains(&"throughput           300 pods/s, 12 gangs/s"),
        "{t}"
    );
    assert!(
        lines.contains(&"waited for a timer   0 pods (progress without timeouts)"),
        "{t}"
    );
    assert_eq!(
        *lines.last().unwrap(),
        "invariants           I3 ok / I4 ok / I6 ok"
    );
    // Every value starts in the same column.
    assert!(
        lines
            .iter()
            .all(|l| l.len() > 21 && l.as_bytes()[20] == b' ' && l.as_bytes()[21] != b' '),
        "{t}"
    );
}

#[test]
fn text_summary_lists_violations() {
    let r = Report {
        partial_gangs: 2,
        leaked_reservations: 1,
        violations: vec!["I3: gang default/gang-0007 has 3 of 8 bound".into()],
        ..sample()
    };
    assert!(!r.is_clean());
    let t = text(&r);
    assert!(
        t.contains("invariants           I3 FAILED (2 partial gangs) / I4 ok / I6 FAILED (1 leaked reservations)\n"),
        "{t}"
    );
    assert!(
        t.ends_with("violation            I3: gang default/gang-0007 has 3 of 8 bound\n"),
        "{t}"
    );
    let only_violation = Report {
        violations: vec!["x".into()],
        ..sample()
    };
    assert!(!only_violation.is_clean());
}

#[test]
fn json_has_every_field() {
    let r = Report {
        lost_pods: 1,
        violations: vec!["I4: pod default/a lost".into()],
        ..sample()
    };
    let json = r.to_json();
    assert!(
        json.starts_with("{\n  \"mode\": \"hardened\",\n"),
        "pretty: {json}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "mode",
        "gang_cycle",
        "seed",
        "pods_total",
        "pods_bound",
        "gangs_total",
        "gangs_bound",
        "basic_pods_bound",
        "timeouts",
        "gang_rejections",
        "partial_gangs",
        "lost_pods",
        "leaked_reservations",
        "bind_failures",
        "deletes",
        "permit_wait_p50_ms",
        "permit_wait_p99_ms",
        "completed",
        "gang_bind_p50_s",
        "gang_bind_p99_s",
        "gangs_per_sim_sec",
        "wasted_reservation_seconds",
        "virtual_seconds",
        "wall_seconds",
        "pods_per_sec",
        "gangs_per_sec",
        "waited_for_a_timer",
        "timer_waits",
        "violations",
    ] {
        assert!(keys.contains(&key), "missing {key}: {json}");
    }
    assert_eq!(keys.len(), 29);
    assert_eq!(v["pods_bound"], 150);
    assert_eq!(v["lost_pods"], 1);
    assert_eq!(v["permit_wait_p99_ms"], 2500.5);
    assert_eq!(v["violations"][0], "I4: pod default/a lost");
    let nan = Report {
        permit_wait_p50_ms: f64::NAN,
        ..Report::default()
    };
    assert!(nan.to_json().contains("\"permit_wait_p50_ms\": null"));
}
