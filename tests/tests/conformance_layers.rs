//! The core's layers import only downward (docs/architecture.md): the ground floor
//! (`vocabulary`, `time`, the sync facade and the small utilities beside it) imports nothing
//! above it; then `waiting` → `gang` → `queue` → `scheduler`, each importing only from the
//! layers below its own; the adapters (`k8s`) and the checkers' seams (`checking`) sit on top.
//! Inside `scheduler` the same holds for its own floors: the pure parts, then the steps over
//! them, then the locked scheduler that runs the steps.
//!
//! Read from the sources: every `crate::…` and `super::…` path outside comments and test code
//! (`*_tests.rs` files and `#[cfg(test)]` modules, which may build anything they test with),
//! resolved to the module it names — a name the crate root re-exports (`crate::Pod`) resolves
//! through `lib.rs`'s `pub use`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The crate's top-level modules by layer, lowest first.
const LAYERS: &[&[&str]] = &[
    &[
        "vocabulary",
        "time",
        "sync",
        "sharded",
        "fast_hash",
        "debug_map",
        "panic_message",
        "telemetry",
        "symmetry",
        "fresh_copies",
    ],
    &["waiting"],
    &["gang"],
    &["queue"],
    &["scheduler"],
    &["k8s", "checking"],
];

/// `scheduler`'s own modules by floor, lowest first: its pure parts, the steps over them, and
/// the scheduler that runs the steps on its locked parts. A module not named here is refused.
const SCHEDULER_FLOORS: &[&[&str]] = &[
    &[
        "binder",
        "cache",
        "cache_check",
        "cache_rename",
        "config",
        "driver_rename",
        "driver_state",
        "error",
        "jobs",
        "node",
        "node_index",
        "node_view",
        "outcome",
        "placement",
        "plugins",
        "pod_group_condition",
        "pod_table",
        "stats",
        "tally",
    ],
    &["flaw", "parts", "steps", "check"],
    &[
        "builder",
        "by_hand",
        "locked",
        "runner",
        "scheduler",
        "planted",
    ],
];

/// One import that runs upward.
#[derive(Debug, PartialEq, Eq)]
struct Upward {
    file: String,
    from: String,
    to: String,
}

fn floor_of(floors: &[&[&str]], module: &str) -> Option<usize> {
    floors.iter().position(|floor| floor.contains(&module))
}

/// The code of `source` without comments, string literals' contents and test modules.
fn code_of(source: &str) -> String {
    let mut code = String::new();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines.next().unwrap_or_default();
            if next.contains("mod ") && next.trim_end().ends_with('{') {
                // A test module: skip to its closing brace, at the indentation it opened at.
                let indent = &next[..next.len() - next.trim_start().len()];
                let close = format!("{indent}}}");
                for inner in lines.by_ref() {
                    if inner == close {
                        break;
                    }
                }
                continue;
            }
            code_line(next, &mut code);
            continue;
        }
        code_line(line, &mut code);
    }
    code
}

/// `line` without its comment and its strings' contents, onto `code`.
fn code_line(line: &str, code: &mut String) {
    let line = match line.find("//") {
        Some(at) => &line[..at],
        None => line,
    };
    // A string's contents are not paths (a message may say `crate::x`).
    let mut in_string = false;
    for c in line.chars() {
        if c == '"' {
            in_string = !in_string;
            code.push(c);
        } else if !in_string {
            code.push(c);
        }
    }
    code.push('\n');
}

/// The module path of a file under `src` (`gang/ops.rs` is `gang::ops`, `gang/mod.rs` is
/// `gang`).
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Every path `code` names from the crate root, as absolute module paths (the segments after
/// `crate`, resolved from `super`), each with its items when it ends in a `{…}` group; `true`
/// for a path written from `super` (which an inline module's `super` may have resolved to the
/// wrong place: one naming nothing known is left alone).
fn paths_in(code: &str, module: &[String]) -> Vec<(Vec<String>, bool)> {
    let bytes = code.as_bytes();
    let mut paths = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let head = if !starts_word {
            None
        } else if rest.starts_with("crate::") {
            Some((Vec::new(), "crate::".len()))
        } else if rest.starts_with("super::") {
            let mut base = module.to_vec();
            let mut len = 0;
            while code[i + len..].starts_with("super::") {
                base.pop();
                len += "super::".len();
            }
            Some((base, len))
        } else {
            None
        };
        let Some((base, len)) = head else {
            i += 1;
            continue;
        };
        let from_super = len > 0 && code[i..].starts_with("super::");
        let (tails, used) = tails_at(&code[i + len..]);
        for tail in tails {
            let mut path = base.clone();
            path.extend(tail);
            paths.push((path, from_super));
        }
        i += len + used.max(1);
    }
    paths
}

/// The paths written at the start of `s` (`a::b::{c, d::e}` is `a::b::c` and `a::b::d::e`),
/// and how many bytes they take.
fn tails_at(s: &str) -> (Vec<Vec<String>>, usize) {
    let mut segments = Vec::new();
    let mut at = 0;
    loop {
        let word: String = s[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !word.is_empty() {
            at += word.len();
            segments.push(word);
            if s[at..].starts_with("::") {
                at += 2;
                continue;
            }
            return (vec![segments], at);
        }
        if s[at..].starts_with('{') {
            let mut depth = 0;
            let mut end = at;
            for (k, c) in s[at..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = at + k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let mut all = Vec::new();
            for item in split_top_level(&s[at + 1..end]) {
                let (tails, _) = tails_at(item.trim());
                for tail in tails {
                    let mut path = segments.clone();
                    path.extend(tail);
                    all.push(path);
                }
            }
            return (all, end + 1);
        }
        return (vec![segments], at);
    }
}

fn split_top_level(s: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (k, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&s[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    items.push(&s[start..]);
    items.into_iter().filter(|i| !i.trim().is_empty()).collect()
}

/// The names the crate root re-exports, each with the module path it comes from.
fn root_exports(lib: &str) -> BTreeMap<String, Vec<String>> {
    let mut exports = BTreeMap::new();
    for statement in code_of(lib).split(';') {
        let statement = statement.trim();
        let Some(path) = statement.strip_prefix("pub use ") else {
            continue;
        };
        for full in tails_at(path).0 {
            if let Some((name, module)) = full.split_last() {
                exports.insert(name.clone(), module.to_vec());
            }
        }
    }
    exports
}

/// Every import of the sources under `src` that runs upward.
fn upward_imports(src: &Path) -> Vec<Upward> {
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let exports = root_exports(&lib);
    let scheduler_exports = fs::read_to_string(src.join("scheduler/mod.rs"))
        .map(|text| root_exports(&text.replace("pub(crate) use ", "pub use ")))
        .unwrap_or_default();
    let mut found = Vec::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).unwrap();
        let name = relative.to_string_lossy().into_owned();
        if name.ends_with("_tests.rs") || name == "lib.rs" {
            continue;
        }
        let module = module_of(relative);
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for (mut path, from_super) in paths_in(&code, &module) {
            if let Some(from) = path.first().and_then(|name| exports.get(name)) {
                path = from.clone();
            }
            if path.len() >= 2 && path[0] == "scheduler" {
                if let Some(from) = scheduler_exports.get(&path[1]) {
                    path = [vec!["scheduler".to_owned()], from.clone()].concat();
                }
            }
            let known = path.first().is_some_and(|m| floor_of(LAYERS, m).is_some());
            if from_super && !known {
                continue;
            }
            if let Some(upward) = check(&name, &module, &path) {
                found.push(upward);
            }
        }
    }
    found.sort_by(|a, b| (&a.file, &a.to).cmp(&(&b.file, &b.to)));
    found.dedup();
    found
}

/// Whether the import of `path` by `module` (in `file`) runs upward.
fn check(file: &str, module: &[String], path: &[String]) -> Option<Upward> {
    let (Some(from), Some(to)) = (module.first(), path.first()) else {
        return None;
    };
    let layer =
        |m: &str| floor_of(LAYERS, m).unwrap_or_else(|| panic!("{m} (in {file}) is in no layer"));
    if from != to {
        return (layer(to) > layer(from)).then(|| Upward {
            file: file.to_owned(),
            from: from.clone(),
            to: to.clone(),
        });
    }
    if from != "scheduler" || module.len() < 2 || path.len() < 2 {
        return None;
    }
    let (inner_from, inner_to) = (&module[1], &path[1]);
    let floor = |m: &str| floor_of(SCHEDULER_FLOORS, m);
    // Items scheduler/mod.rs re-exports are named by their module's path in the sources; a
    // name that is no module of scheduler's (a re-exported type) is judged where it is used.
    let (Some(a), Some(b)) = (floor(inner_from), floor(inner_to)) else {
        assert!(
            floor(inner_from).is_some(),
            "scheduler::{inner_from} (in {file}) is on no floor of SCHEDULER_FLOORS"
        );
        return None;
    };
    (b > a).then(|| Upward {
        file: file.to_owned(),
        from: format!("scheduler::{inner_from}"),
        to: format!("scheduler::{inner_to}"),
    })
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src")
}

#[test]
fn every_import_of_the_core_runs_downward() {
    let upward = upward_imports(&core_src());
    assert!(
        upward.is_empty(),
        "imports that run upward:\n{}",
        upward
            .iter()
            .map(|u| format!("  {}: {} imports {}", u.file, u.from, u.to))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The witness: the same reading finds an upward import, through a root re-export, through
/// `super`, inside a `{…}` group, and between two of scheduler's floors; and ignores one in a
/// comment, a string and a test module.
#[test]
fn an_upward_import_is_found() {
    let dir = std::env::temp_dir().join(format!("gangway-layers-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for sub in ["vocabulary", "gang", "scheduler/steps"] {
        fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let write = |name: &str, text: &str| fs::write(dir.join(name), text).unwrap();
    write(
        "lib.rs",
        "pub use scheduler::{Scheduler, Node};\npub use vocabulary::Pod;\n",
    );
    write(
        "vocabulary/pod.rs",
        "use crate::Pod;\nuse super::super::{time::Time, Scheduler};\n\
         // use crate::gang::Groups;\nconst S: &str = \"crate::queue::X\";\n\
         #[cfg(test)]\nmod tests {\n    use crate::gang::Groups;\n}\n",
    );
    write("gang/ops.rs", "fn f() { crate::waiting::x(); }\n");
    write("gang/ops_tests.rs", "use crate::scheduler::Scheduler;\n");
    write(
        "scheduler/steps/cycle.rs",
        "use super::super::{cache::CacheState, locked::Driver};\n",
    );
    let found = upward_imports(&dir);
    let _ = fs::remove_dir_all(&dir);
    let found: Vec<(&str, &str, &str)> = found
        .iter()
        .map(|u| (u.file.as_str(), u.from.as_str(), u.to.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "scheduler/steps/cycle.rs",
                "scheduler::steps",
                "scheduler::locked"
            ),
            ("vocabulary/pod.rs", "vocabulary", "scheduler"),
        ]
    );
}
