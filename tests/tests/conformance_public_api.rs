//! The embedder's API is pinned, and the checkers' seams stay out of it.
//!
//! - `gangsched`'s public API in its default build is `core/public-api.txt`, listed by
//!   cargo-public-api's `public-api` library from rustdoc's JSON: any change to it shows here as
//!   a diff, to be looked at and committed (`GANGWAY_BLESS=1` rewrites the file).
//! - The default build carries none of the checkers' seams: no planted flaw, no flaw check, no
//!   renaming, no fresh copy, no `checking` module — read from the same JSON with the private
//!   items in. Its witness: the build with the `checking` feature has every one of them.
//!
//! rustdoc's JSON output is unstable: the stable toolchain (1.95, format 57, which
//! `public-api` 0.52 reads) is asked for it with `RUSTC_BOOTSTRAP=1`, for this one build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Names of the seams that only the `checking` feature may compile (lowercase; matched
/// against each listed item's lowercase line).
const SEAMS: [&str; 9] = [
    "flaw",
    "planted",
    "renamed",
    "relabel",
    "fresh_cop",
    "freshcop",
    "symmetry",
    "gangsched::checking",
    "unrecorded",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// rustdoc's JSON for `gangsched` with `features`, with its private items if `private`, in a
/// target directory of its own (so the runs neither wait on each other nor on the test run's).
fn rustdoc_json(features: &str, private: bool) -> PathBuf {
    let target = workspace().join("target/public-api").join(format!(
        "{}-{}",
        if features.is_empty() {
            "default"
        } else {
            features
        },
        if private { "private" } else { "public" }
    ));
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(workspace())
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTDOCFLAGS")
        .args(["rustdoc", "-q", "-p", "gangsched", "--lib", "--target-dir"])
        .arg(&target);
    if !features.is_empty() {
        cargo.args(["--features", features]);
    }
    cargo.args(["--", "-Z", "unstable-options", "--output-format", "json"]);
    if private {
        cargo.arg("--document-private-items");
    }
    let status = cargo.status().expect("cargo runs");
    assert!(status.success(), "cargo rustdoc failed: {status}");
    target.join("doc/gangsched.json")
}

/// The items of the crate the JSON describes, one line each, as cargo-public-api prints them
/// (blanket impls left out: they say nothing of this crate).
fn listing(json: &Path) -> Vec<String> {
    let api = public_api::Builder::from_rustdoc_json(json)
        .omit_blanket_impls(true)
        .build()
        .unwrap_or_else(|e| {
            panic!(
                "public-api cannot read {}: {e} (it reads rustdoc's JSON format 57, Rust 1.95's)",
                json.display()
            )
        });
    api.items().map(|item| item.to_string()).collect()
}

/// The lines of `listing` that name a checker's seam. The crate's private `planted!` macro is
/// not one: without the `checking` feature it expands to `false` at every site and asks
/// nothing (`core/src/lib.rs`).
fn seams_in(listing: &[String]) -> Vec<&String> {
    listing
        .iter()
        .filter(|line| *line != "pub macro gangsched::planted!")
        .filter(|line| {
            let line = line.to_lowercase();
            SEAMS.iter().any(|seam| line.contains(seam))
        })
        .collect()
}

/// The lines only in `a` (`-`) and only in `b` (`+`), in order.
fn difference(a: &[String], b: &[String]) -> Vec<String> {
    let (in_a, in_b): (std::collections::BTreeSet<_>, std::collections::BTreeSet<_>) =
        (a.iter().collect(), b.iter().collect());
    let gone = a
        .iter()
        .filter(|l| !in_b.contains(l))
        .map(|l| format!("- {l}"));
    let new = b
        .iter()
        .filter(|l| !in_a.contains(l))
        .map(|l| format!("+ {l}"));
    gone.chain(new).collect()
}

#[test]
fn the_embedders_api_is_the_committed_listing() {
    let path = workspace().join("core/public-api.txt");
    let listed = listing(&rustdoc_json("", false));
    if std::env::var_os("GANGWAY_BLESS").is_some() {
        std::fs::write(&path, listed.join("\n") + "\n").unwrap();
        return;
    }
    let committed: Vec<String> = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    let changed = difference(&committed, &listed);
    assert!(
        changed.is_empty(),
        "gangsched's public API changed from core/public-api.txt ({} lines); if that is \
         meant, run `GANGWAY_BLESS=1 cargo test -p gangway-tests --test \
         conformance_public_api` and commit the file:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

#[test]
fn the_default_build_has_no_checker_seams_and_the_checking_build_has_them_all() {
    let default = listing(&rustdoc_json("", true));
    let seams = seams_in(&default);
    assert!(
        seams.is_empty(),
        "the default build of gangsched carries checker seams:\n{}",
        seams
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The witness: the same reading of the build with the feature finds every kind of seam.
    let checking = listing(&rustdoc_json("checking", true));
    let found = seams_in(&checking);
    for seam in SEAMS {
        assert!(
            found.iter().any(|line| line.to_lowercase().contains(seam)),
            "no {seam:?} in the checking build: the list of seams is stale"
        );
    }
    for flaw in [
        "scheduler::flaw::Flaw",
        "gang::flaw::GangFlaw",
        "queue::flaw::QueueFlaw",
        "waiting::flaw::WaitingFlaw",
    ] {
        assert!(
            found.iter().any(|line| line.contains(flaw)),
            "{flaw} is not in the checking build"
        );
    }
}

/// The comparison reports a line gone and a line new (the listing check's own witness).
#[test]
fn a_changed_listing_is_reported() {
    let old = ["pub fn a()".to_owned(), "pub fn b()".to_owned()];
    let new = ["pub fn a()".to_owned(), "pub fn c()".to_owned()];
    assert_eq!(difference(&old, &new), ["- pub fn b()", "+ pub fn c()"]);
    assert!(difference(&old, &old).is_empty());
}
