//! Tests for workload parsing, error locations, validation and generation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::generate::GenerateSpec;
use super::workload::{Workload, WorkloadError};

fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
}

const NODE_TOML: &str = "[[nodes]]\nname = \"n\"\ncpu_millis = 1000\nmemory_bytes = 1000\n\n";
const NODE_JSON: &str = "{ \"name\": \"n\", \"cpu_millis\": 1000, \"memory_bytes\": 1000 }";

fn toml_err(src: &str) -> WorkloadError {
    Workload::parse_toml(src).expect_err("the workload should be rejected")
}

fn json_err(src: &str) -> WorkloadError {
    Workload::parse_json(src).expect_err("the workload should be rejected")
}

/// Asserts the error's line and field, and that its message names both.
fn assert_at(err: &WorkloadError, line: usize, field: &str) {
    let msg = err.to_string();
    assert_eq!(err.line(), Some(line), "{msg}");
    assert_eq!(err.field(), Some(field), "{msg}");
    assert!(msg.contains(&format!("line {line}")), "{msg}");
    assert!(msg.contains(field), "{msg}");
}

#[test]
fn example_files_parse_to_the_same_workload() {
    let toml = Workload::from_path(&workloads_dir().join("small.toml")).unwrap();
    let json = Workload::from_path(&workloads_dir().join("small.json")).unwrap();
    assert_eq!(toml, json);
    assert_eq!(
        (toml.nodes.len(), toml.gang_count(), toml.pod_count()),
        (3, 2, 8)
    );
    let basic = toml.pods.iter().filter(|p| p.group.is_none()).count();
    assert_eq!(basic, 2);
    let sweep = toml.pods.iter().find(|p| p.name == "sweep-2").unwrap();
    assert_eq!((sweep.namespace.as_str(), sweep.arrival_ms), ("ml", 32_000));
    let web = toml.pods.iter().find(|p| p.name == "web-0").unwrap();
    assert_eq!(
        (web.namespace.as_str(), web.priority, web.group.as_deref()),
        ("default", 1000, None)
    );
}

#[test]
fn toml_type_error_names_line_and_field() {
    let src = format!(
        "{NODE_TOML}[[pods]]\nname = \"a\"\ncpu_millis = 1\nmemory_bytes = 1\n\n\
         [[pods]]\nname = \"b\"\ncpu_millis = \"lots\"\nmemory_bytes = 1\n"
    );
    let err = toml_err(&src);
    assert_at(&err, 13, "pods[1].cpu_millis");
    assert!(
        matches!(
            err,
            WorkloadError::Parse {
                column: Some(14),
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn toml_missing_and_unknown_fields_are_named() {
    let src = format!("{NODE_TOML}[[pods]]\nname = \"a\"\ncpu_millis = 1\n");
    let err = toml_err(&src);
    assert_at(&err, 6, "pods[0].memory_bytes");
    assert!(
        err.to_string().contains("missing field `memory_bytes`"),
        "{err}"
    );

    let src = format!("{NODE_TOML}[[pods]]\nname = \"a\"\ncpu = 1\n");
    assert_at(&toml_err(&src), 8, "pods[0].cpu");
    assert!(toml_err(&src).to_string().contains("unknown field `cpu`"));

    let err = toml_err("[[nodes]]\nname = \"n\"\ncpu_millis = -5\nmemory_bytes = 1\n");
    assert_at(&err, 3, "nodes[0].cpu_millis");
}

#[test]
fn toml_syntax_error_names_line() {
    let src = format!("{NODE_TOML}[[pods]]\nname = \"a\ncpu_millis = 1\n");
    let err = toml_err(&src);
    assert_eq!(err.line(), Some(7), "{err}");
    assert!(matches!(err, WorkloadError::Parse { .. }));
}

#[test]
fn json_type_error_names_line_and_field() {
    let src = format!(
        "{{\n  \"nodes\": [{NODE_JSON}],\n  \"pods\": [\n    \
         {{ \"name\": \"a\", \"cpu_millis\": 1, \"memory_bytes\": 1 }},\n    \
         {{ \"name\": \"b\",\n      \"cpu_millis\": \"lots\", \"memory_bytes\": 1 }}\n  ]\n}}\n"
    );
    let err = json_err(&src);
    assert_at(&err, 6, "pods[1].cpu_millis");
    assert!(
        !err.to_string().contains(" at line "),
        "no duplicated position: {err}"
    );
}

#[test]
fn json_missing_and_unknown_fields_are_named() {
    let src = format!(
        "{{\"nodes\": [{NODE_JSON}],\n\"pods\": [\n{{\"name\": \"a\", \"cpu_millis\": 1}}\n]}}"
    );
    let err = json_err(&src);
    assert_at(&err, 3, "pods[0].memory_bytes");

    let src =
        format!("{{\"nodes\": [{NODE_JSON}],\n\"groups\": [\n{{\"name\": \"g\",\n\"min\": 2}}]}}");
    assert_at(&json_err(&src), 4, "groups[0].min");

    let err =
        json_err("{\"nodes\": [\n{\"name\": \"n\", \"cpu_millis\": 1, \"memory_bytes\": 1.5}]}");
    assert_at(&err, 2, "nodes[0].memory_bytes");
}

#[test]
fn json_syntax_error_names_line() {
    let err = json_err("{\n\"nodes\": [\n{\"name\": \"n\",, }\n]}");
    assert_eq!(err.line(), Some(3), "{err}");
}

#[test]
fn unknown_group_names_the_pod_line_in_toml_and_json() {
    let toml = format!(
        "{NODE_TOML}[[groups]]\nname = \"g\"\nmin_count = 2\n\n\
         [[pods]]\nname = \"a\"\ngroup = \"g\"\ncpu_millis = 1\nmemory_bytes = 1\n\n\
         [[pods]]\nname = \"b\"\ngroup = \"nope\"\ncpu_millis = 1\nmemory_bytes = 1\n"
    );
    let err = toml_err(&toml);
    assert_at(&err, 18, "pods[1].group");
    assert!(err.to_string().contains("unknown group \"nope\""), "{err}");

    let json = format!(
        "{{\"nodes\": [{NODE_JSON}],\n\"groups\": [{{\"name\": \"g\"}}],\n\"pods\": [\n\
         {{\"name\": \"a\", \"group\": \"g\", \"cpu_millis\": 1, \"memory_bytes\": 1}},\n\
         {{\"name\": \"b\", \"group\": \"nope\", \"cpu_millis\": 1, \"memory_bytes\": 1}}\n]}}"
    );
    assert_at(&json_err(&json), 5, "pods[1].group");
}

#[test]
fn a_group_in_another_namespace_does_not_count() {
    let src = format!(
        "{NODE_TOML}[[groups]]\nnamespace = \"ml\"\nname = \"g\"\n\n\
         [[pods]]\nname = \"a\"\ngroup = \"g\"\ncpu_millis = 1\nmemory_bytes = 1\n"
    );
    assert_at(&toml_err(&src), 12, "pods[0].group");
    let ok = src.replace("name = \"a\"\n", "name = \"a\"\nnamespace = \"ml\"\n");
    assert!(Workload::parse_toml(&ok).is_ok());
}

#[test]
fn semantic_errors_name_the_field() {
    let node = |name: &str, cpu: u64, mem: u64| {
        format!("[[nodes]]\nname = \"{name}\"\ncpu_millis = {cpu}\nmemory_bytes = {mem}\n")
    };
    let err = toml_err("");
    assert_eq!((err.field(), err.line()), (Some("nodes"), None));
    assert!(err.to_string().contains("no nodes"), "{err}");
    assert_at(
        &toml_err(&(node("a", 1, 1) + &node("a", 1, 1))),
        6,
        "nodes[1].name",
    );
    assert_at(
        &toml_err(&(node("a", 1, 1) + &node("b", 0, 1))),
        7,
        "nodes[1].cpu_millis",
    );
    assert_at(&toml_err(&node("a", 1, 0)), 4, "nodes[0].memory_bytes");
    let zero = node("a", 1, 1) + "[[groups]]\nname = \"g\"\nmin_count = 0\n";
    assert_at(&toml_err(&zero), 7, "groups[0].min_count");
    let dup = node("a", 1, 1)
        + "[[groups]]\nname = \"g\"\n[[groups]]\nname = \"g\"\n[[groups]]\nname = \"g\"\nnamespace = \"x\"\n";
    assert_at(&toml_err(&dup), 8, "groups[1].name");
    let pods = node("a", 1, 1)
        + "[[pods]]\nname = \"p\"\ncpu_millis = 1\nmemory_bytes = 1\n\
           [[pods]]\nname = \"p\"\ncpu_millis = 1\nmemory_bytes = 1\n";
    assert_at(&toml_err(&pods), 10, "pods[1].name");
}

#[test]
fn inline_toml_arrays_still_name_the_field() {
    let src = "nodes = [{ name = \"a\", cpu_millis = 1, memory_bytes = 1 },\n\
               { name = \"b\", cpu_millis = \"x\", memory_bytes = 1 }]\n";
    let err = toml_err(src);
    assert_eq!(err.line(), Some(2), "{err}");
    assert!(err.field().unwrap().ends_with("cpu_millis"), "{err}");
    // Semantic errors without `[[nodes]]` headers give the path and no line.
    let err = toml_err("nodes = [{ name = \"a\", cpu_millis = 0, memory_bytes = 1 }]\n");
    assert_eq!(
        (err.field(), err.line()),
        (Some("nodes[0].cpu_millis"), None)
    );
}

#[test]
fn from_path_names_the_file_and_checks_the_extension() {
    let dir = std::env::temp_dir().join(format!("gangway-workload-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[[nodes]]\nname = \"n\"\ncpu_millis = true\nmemory_bytes = 1\n",
    )
    .unwrap();
    let err = Workload::from_path(&bad).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "{}: line 3, column 14: nodes[0].cpu_millis: ",
            bad.display()
        )),
        "{msg}"
    );

    let yaml = dir.join("w.yaml");
    std::fs::write(&yaml, "nodes: []").unwrap();
    let err = Workload::from_path(&yaml).unwrap_err();
    assert!(matches!(err, WorkloadError::Format { .. }), "{err}");
    assert!(err.to_string().contains("w.yaml") && err.to_string().contains(".toml or .json"));

    let missing = dir.join("missing.json");
    let err = Workload::from_path(&missing).unwrap_err();
    assert!(matches!(err, WorkloadError::Read { .. }) && err.to_string().contains("missing.json"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn small_spec(seed: u64) -> GenerateSpec {
    GenerateSpec {
        nodes: 20,
        gangs: 50,
        min_gang: 2,
        max_gang: 16,
        basic_pods: 40,
        seed,
    }
}

#[test]
fn generate_is_deterministic_and_valid() {
    let a = Workload::generate(&small_spec(7));
    assert_eq!(a, Workload::generate(&small_spec(7)));
    assert_ne!(a, Workload::generate(&small_spec(8)));
    a.validate().unwrap();
    assert_eq!((a.nodes.len(), a.gang_count()), (20, 50));
    assert_eq!(a.nodes[3].name, "node-0003");
    assert_eq!(
        (a.nodes[0].cpu_millis, a.nodes[0].memory_bytes),
        (64_000, 256 << 30)
    );
    assert!(a
        .pods
        .windows(2)
        .all(|w| w[0].arrival_ms <= w[1].arrival_ms));

    let mut members: HashMap<&str, Vec<_>> = HashMap::new();
    for p in &a.pods {
        if let Some(g) = p.group.as_deref().filter(|g| g.starts_with("gang-")) {
            assert!(p.name.starts_with(&format!("{g}-")), "{}", p.name);
            assert!((250..=1000).contains(&p.cpu_millis) && p.cpu_millis % 250 == 0);
            assert!(((1 << 30)..=(4 << 30)).contains(&p.memory_bytes));
            assert!([0, 100, 1000].contains(&p.priority));
            members.entry(g).or_default().push(p);
        }
    }
    let mut stragglers = 0;
    for g in a.groups.iter().filter(|g| g.min_count.is_some()) {
        let m = &members[g.name.as_str()];
        let size = g.min_count.unwrap();
        assert!((2..=16).contains(&size));
        assert_eq!(m.len(), size as usize, "{} has min_count members", g.name);
        assert!(m.iter().all(|p| p.priority == m[0].priority));
        let (lo, hi) = m.iter().fold((u64::MAX, 0), |(lo, hi), p| {
            (lo.min(p.arrival_ms), hi.max(p.arrival_ms))
        });
        assert!(lo <= 60_000 && hi <= 92_000);
        stragglers += usize::from(hi - lo > 2_000);
    }
    assert!(stragglers > 0, "some gangs have a late member");
    let plain = a.pods.iter().filter(|p| p.group.is_none()).count();
    let in_basic = a
        .pods
        .iter()
        .filter(|p| p.group.as_deref().is_some_and(|g| g.starts_with("basic-")))
        .count();
    assert_eq!((plain + in_basic, in_basic), (40, 10));
}

#[test]
fn generate_default_matches_the_issue_and_round_trips() {
    let w = Workload::generate(&GenerateSpec::default());
    assert_eq!((w.nodes.len(), w.gang_count()), (500, 1000));
    let gang_pods = w
        .pods
        .iter()
        .filter(|p| p.group.as_deref().is_some_and(|g| g.starts_with("gang-")));
    assert_eq!(w.pod_count() - gang_pods.count(), 2000);
    w.validate().unwrap();

    let small = Workload::generate(&small_spec(3));
    let json = serde_json::to_string(&small).unwrap();
    assert_eq!(Workload::parse_json(&json).unwrap(), small);
    let toml = toml::to_string(&small).unwrap();
    assert_eq!(Workload::parse_toml(&toml).unwrap(), small);
}

#[test]
fn generate_tolerates_degenerate_sizes() {
    let spec = GenerateSpec {
        nodes: 1,
        gangs: 3,
        min_gang: 0,
        max_gang: 0,
        basic_pods: 0,
        seed: 0,
    };
    let w = Workload::generate(&spec);
    assert!(w.groups.iter().all(|g| g.min_count == Some(1)));
    assert_eq!(w.pod_count(), 3);
    w.validate().unwrap();
    let none = GenerateSpec {
        nodes: 0,
        gangs: 0,
        basic_pods: 0,
        ..spec
    };
    assert_eq!(
        Workload::generate(&none).validate().unwrap_err().field(),
        Some("nodes")
    );
}
