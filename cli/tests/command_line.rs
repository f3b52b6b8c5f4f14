//! The `gangway` binary's flags end to end: counts of 0 refused, output files checked before a
//! run, `--json` for `check` and `bench`, `--expect-counterexample`, `simulate`'s refusal of
//! times that saturate the clock, and `--serve` reporting the address it bound.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn gangway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("gangway runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gangway-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn a_count_of_zero_is_refused_with_one_clear_line() {
    for (args, flag) in [
        (&["check", "--threads", "0"][..], "--threads"),
        (&["bench", "W1", "--scale", "0"][..], "--scale"),
        (&["bench", "W1", "--workers", "0"][..], "--workers"),
        (&["simulate", "--nodes", "0"][..], "--nodes"),
    ] {
        let output = gangway(args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&format!("error: invalid value '0' for '{flag}"))
                && first.ends_with("must be at least 1"),
            "{args:?}: {err}"
        );
        assert!(stdout(&output).is_empty(), "{args:?} ran");
    }
}

/// `gangway check --preset tiny --mode upstream --trace-svg PATH`.
fn check_tiny_upstream_to_svg(path: &std::path::Path) -> Output {
    let path = path.to_str().expect("a UTF-8 path");
    gangway(&[
        "check",
        "--preset",
        "tiny",
        "--mode",
        "upstream",
        "--trace-svg",
        path,
    ])
}

#[test]
fn an_unwritable_trace_svg_fails_before_the_check_runs() {
    let dir = scratch("trace-svg");
    let path = dir.join("no-such-dir").join("trace.svg");
    let output = check_tiny_upstream_to_svg(&path);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [format!(
            "gangway check: cannot write {}: No such file or directory (os error 2)",
            path.display()
        )],
        "one line naming the path, before the check starts (its `checking …` line)"
    );
    assert!(
        stdout(&output).is_empty(),
        "a report was printed: the check ran"
    );

    // A writable path gets the counterexample.
    let path = dir.join("trace.svg");
    let output = check_tiny_upstream_to_svg(&path);
    assert!(output.status.success(), "{}", stderr(&output));
    let svg = std::fs::read_to_string(&path).expect("the SVG is written");
    assert!(svg.starts_with("<svg"), "{svg}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn check_json(args: &[&str]) -> Value {
    let output = gangway(&[&["check", "--json"][..], args].concat());
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_str(&stdout(&output)).expect("the report is JSON")
}

#[test]
fn check_json_gives_each_invariant_its_id() {
    let report = check_json(&["--preset", "tiny", "--mode", "upstream"]);
    let properties = report["properties"]
        .as_array()
        .expect("a list of properties");
    let ids: Vec<&Value> = properties.iter().map(|p| &p["id"]).collect();
    assert_eq!(
        ids,
        ["I3", "I4", "I5", "I6", "I7", "I8"]
            .map(Value::from)
            .iter()
            // The two vacuity guards, and progress without timeouts (no invariant id).
            .chain([&Value::Null, &Value::Null, &Value::Null])
            .collect::<Vec<_>>(),
        "{report:#}"
    );
    for p in properties {
        if let Some(id) = p["id"].as_str() {
            let name = p["name"].as_str().expect("a name");
            assert!(name.starts_with(&format!("{id} ")), "{p:#}");
            assert_eq!(p["kind"], "always", "{p:#}");
        } else if p["name"] == "progress without timeouts" {
            assert_eq!(p["kind"], "always", "{p:#}");
        } else {
            assert_eq!(p["kind"], "sometimes", "{p:#}");
        }
    }
    let i3 = &properties[0];
    assert_eq!(
        (&i3["id"], &i3["holds"]),
        (&Value::from("I3"), &Value::from(false))
    );
}

#[test]
fn check_json_reports_the_dimensions_checked() {
    let report = check_json(&["--preset", "tiny"]);
    assert_eq!(report["dimensions_changed"], false, "{report:#}");
    assert_eq!(
        report["dimensions"]["gangs"],
        serde_json::json!([{"members": 2, "min": 2}])
    );
    assert_eq!(report["dimensions"]["nodes"], serde_json::json!([2]));

    let report = check_json(&[
        "--preset",
        "tiny",
        "--gangs",
        "3/2",
        "--nodes",
        "1,1",
        "--group-updates",
        "0",
    ]);
    let dimensions = &report["dimensions"];
    assert_eq!(report["dimensions_changed"], true, "{report:#}");
    assert_eq!(
        dimensions["gangs"],
        serde_json::json!([{"members": 3, "min": 2}])
    );
    assert_eq!(dimensions["nodes"], serde_json::json!([1, 1]));
    assert_eq!(dimensions["group_updates"], 0);
    // The rest stays the preset's.
    assert_eq!(dimensions["arrivals"], true);
    assert_eq!(dimensions["timeouts"], 1);
    let cluster = report["cluster"].as_str().expect("the cluster line");
    assert!(
        cluster.starts_with("gangs (members/min) 3/2; nodes (room) 1, 1;"),
        "{cluster}"
    );
    assert_eq!(report["preset"], "tiny");
}

#[test]
fn expect_counterexample_exits_by_whether_one_was_found() {
    let upstream = gangway(&[
        "check",
        "--preset",
        "tiny",
        "--mode",
        "upstream",
        "--expect-counterexample",
    ]);
    assert!(upstream.status.success(), "{}", stderr(&upstream));
    assert!(
        stdout(&upstream).contains("COUNTEREXAMPLE"),
        "{}",
        stdout(&upstream)
    );

    let hardened = gangway(&["check", "--preset", "tiny", "--expect-counterexample"]);
    assert_eq!(hardened.status.code(), Some(1), "{}", stderr(&hardened));
    assert!(
        stderr(&hardened)
            .lines()
            .any(|l| l == "gangway check: no counterexample found (--expect-counterexample)"),
        "{}",
        stderr(&hardened)
    );
    // Without the flag a Hardened check that holds passes.
    assert!(gangway(&["check", "--preset", "tiny"]).status.success());
}

/// W1's keys, in the order of its key=value line.
const W1_KEYS: [&str; 9] = [
    "workload",
    "gangs",
    "gang_size",
    "pods",
    "seconds",
    "pods_per_s",
    "rss_mb",
    "base_rss_mb",
    "workers",
];

#[test]
fn bench_json_is_the_key_value_line_as_one_object() {
    let line = gangway(&["bench", "W1"]);
    assert!(line.status.success(), "{}", stderr(&line));
    let line = stdout(&line);
    let keys: Vec<&str> = line
        .split_whitespace()
        .map(|pair| pair.split_once('=').expect("key=value").0)
        .collect();
    assert_eq!(keys, W1_KEYS, "{line}");

    let json = gangway(&["bench", "W1", "--json"]);
    assert!(json.status.success(), "{}", stderr(&json));
    let text = stdout(&json);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let object: serde_json::Map<String, Value> =
        serde_json::from_str(&text).expect("one JSON object");
    // serde_json's map sorts its keys: the line's order is checked on the text.
    let mut at = 0;
    for key in W1_KEYS {
        let found = text[at..]
            .find(&format!("\"{key}\":"))
            .unwrap_or_else(|| panic!("{key} in order in {text}"));
        at += found + 1;
    }
    assert_eq!(object.len(), W1_KEYS.len(), "{text}");
    assert_eq!(object["workload"], "W1");
    assert_eq!(object["gangs"], 10_000);
    assert_eq!(object["pods"], 80_000);
    assert_eq!(object["workers"], 2);
    for key in ["seconds", "pods_per_s", "rss_mb", "base_rss_mb"] {
        assert!(object[key].is_number(), "{key}: {text}");
    }
}

#[test]
fn simulate_refuses_a_workload_whose_times_saturate_the_clock() {
    let dir = scratch("simulate");
    let path = dir.join("late.json");
    std::fs::write(
        &path,
        r#"{
  "nodes": [{"name": "n", "cpu_millis": 1000, "memory_bytes": 1073741824}],
  "pods": [{"name": "p", "cpu_millis": 1, "memory_bytes": 1,
            "arrival_ms": 18446744073709551615}]
}
"#,
    )
    .expect("written");
    let output = gangway(&["simulate", path.to_str().expect("a UTF-8 path")]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("pods[0].arrival_ms") && err.contains("too late"),
        "{err}"
    );
    assert!(stdout(&output).is_empty(), "a report was printed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `gangway check --serve 127.0.0.1:0` says where it serves on its first stdout line, and the
/// explorer there names actions in the timeline's words.
#[test]
fn serve_prints_the_address_it_bound_first() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(["check", "--preset", "tiny", "--serve", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("gangway starts");
    let mut first = String::new();
    let read = BufReader::new(child.stdout.take().expect("piped")).read_line(&mut first);
    let answer = read.map(|_| {
        let addr = first
            .trim_end()
            .strip_prefix("serving on http://")
            .and_then(|rest| rest.strip_suffix('/'))
            .map(str::to_owned);
        addr.map(|addr| get(&addr, "/.states/0"))
    });
    // The explorer serves until killed.
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer.expect("its stdout reads");
    let body = answer.unwrap_or_else(|| panic!("not `serving on http://ADDR/`: {first:?}"));
    assert!(
        body.contains("\"action\":\"informer a-0 gang ns/a: pod created, queued\""),
        "{body}"
    );
}

/// `GET path` on `addr` over HTTP/1.1: the whole response.
fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("the explorer listens");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("the request is sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("the response is read");
    response
}

/// `gangway differential` against a stand-in for the Go harness (a script printing fixed
/// observations): equal observations pass; one changed place fails, exit 1, with the first
/// differing step and both observations — the witness that the runner can fail. A harness
/// that cannot run is exit 2.
#[test]
fn the_differential_reports_the_first_difference_and_fails() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("differential");
    let trace = dir.join("trace.jsonl");
    std::fs::write(
        &trace,
        "{\"op\":\"add\",\"pod\":\"a\"}\n{\"op\":\"pop\"}\n{\"op\":\"done\",\"pod\":\"a\"}\n",
    )
    .unwrap();
    let harness = |name: &str, second_place: &str| {
        let path = dir.join(name);
        let script = format!(
            "#!/bin/sh\ncat > /dev/null\n\
             echo '{{\"step\":1,\"op\":\"add\",\"places\":{{\"a\":\"active\"}}}}'\n\
             echo '{{\"step\":2,\"op\":\"pop\",\"popped\":\"a\",\"places\":{{\"a\":\"{second_place}\"}}}}'\n\
             echo '{{\"step\":3,\"op\":\"done\",\"places\":{{\"a\":\"absent\"}}}}'\n"
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let run = |harness: &PathBuf| {
        let (harness, trace) = (harness.to_str().unwrap(), trace.to_str().unwrap());
        gangway(&["differential", "--upstream", harness, trace])
    };
    let same = run(&harness("same.sh", "in_flight"));
    assert!(same.status.success(), "{}{}", stdout(&same), stderr(&same));
    assert!(
        stdout(&same).contains("3 steps, all equal"),
        "{}",
        stdout(&same)
    );
    assert!(stdout(&same).contains("fidelity: 3 of 3 steps equal (100.0%)"));

    let broken = run(&harness("broken.sh", "active"));
    assert_eq!(broken.status.code(), Some(1), "{}", stdout(&broken));
    let out = stdout(&broken);
    assert!(
        out.contains("2 of 3 steps equal; first difference at step 2: {\"op\":\"pop\"}"),
        "{out}"
    );
    assert!(out.contains("kube-scheduler {\"step\":2,\"op\":\"pop\",\"popped\":\"a\",\"places\":{\"a\":\"active\"}}"), "{out}");
    assert!(out.contains("gangway        {\"step\":2,\"op\":\"pop\",\"popped\":\"a\",\"places\":{\"a\":\"in_flight\"}}"), "{out}");

    let missing = run(&dir.join("no-such-harness"));
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("cannot run"),
        "{}",
        stderr(&missing)
    );
}

/// `gangway differential --gang` against a stand-in for upstream/cmd/gangtrace (a script
/// printing fixed observations, and a line of its own that is not one): a gang trace is told
/// from a queue trace, equal observations pass, a changed Permit status fails with exit 1; a
/// gang trace without `--gang` is exit 2.
#[test]
fn the_gang_differential_reports_the_first_difference_and_fails() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("gang-differential");
    let trace = dir.join("gang.jsonl");
    std::fs::write(
        &trace,
        "{\"op\":\"add\",\"pod\":\"solo\"}\n{\"op\":\"schedule\",\"pod\":\"solo\"}\n",
    )
    .unwrap();
    let harness = |name: &str, code: &str| {
        let path = dir.join(name);
        let success = r#"{"code":"Success","plugin":"","message":""}"#;
        let script = format!(
            "#!/bin/sh\ncat > /dev/null\n\
             echo '{{\"step\":1,\"op\":\"add\"}}'\n\
             echo '{{\"step\":2,\"op\":\"schedule\",\"permit\":{{\"code\":\"{code}\",\"plugin\":\"\",\"message\":\"\"}},\"wait_on_permit\":{{\"solo\":{success}}}}}'\n\
             echo PASS\n"
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let run = |harness: &PathBuf| {
        let (harness, trace) = (harness.to_str().unwrap(), trace.to_str().unwrap());
        gangway(&["differential", "--gang", harness, trace])
    };
    let same = run(&harness("same.sh", "Success"));
    assert!(same.status.success(), "{}{}", stdout(&same), stderr(&same));
    assert!(
        stdout(&same).contains("2 steps, all equal"),
        "{}",
        stdout(&same)
    );

    let broken = run(&harness("broken.sh", "Wait"));
    assert_eq!(broken.status.code(), Some(1), "{}", stdout(&broken));
    let out = stdout(&broken);
    assert!(
        out.contains("1 of 2 steps equal; first difference at step 2: {\"op\":\"schedule\",\"pod\":\"solo\"}"),
        "{out}"
    );

    let trace = trace.to_str().unwrap();
    let no_harness = gangway(&["differential", trace]);
    assert_eq!(no_harness.status.code(), Some(2));
    assert!(
        stderr(&no_harness).contains("--gang BIN"),
        "{}",
        stderr(&no_harness)
    );
}
