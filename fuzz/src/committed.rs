//! The committed inputs' tests every target shares (test builds only): the seed files equal
//! the listed seeds, every seed and regression replays clean, and every witness passes without
//! its flaw and fails with it. One copy for the five targets.

use std::collections::BTreeSet;
use std::fmt::{Debug, Display};
use std::path::{Path, PathBuf};

/// The committed inputs in `dir` (relative to fuzz/), sorted; none if it does not exist.
pub(crate) fn committed_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries.map(|e| e.expect("readable").path()).collect(),
        Err(_) => Vec::new(),
    };
    files.retain(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"));
    files.sort();
    files
}

/// `seeds/<target>/` holds exactly the `listed` seeds, each as `read` gives it back.
pub(crate) fn assert_seeds_committed<T: PartialEq + Debug>(
    target: &str,
    listed: Vec<(&str, T)>,
    read: impl Fn(&Path) -> T,
) {
    let dir = format!("seeds/{target}");
    let regenerate = format!("regenerate with write_{target}_seeds");
    assert_eq!(committed_files(&dir).len(), listed.len(), "{regenerate}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    for (name, seed) in listed {
        assert_eq!(read(&dir.join(name)), seed, "{name}: {regenerate}");
    }
}

/// Every committed seed and regression of `target` passes `run`.
pub(crate) fn replay_committed<E: Display>(target: &str, run: impl Fn(&Path) -> Result<(), E>) {
    for path in committed_files(&format!("seeds/{target}"))
        .into_iter()
        .chain(committed_files(&format!("regressions/{target}")))
    {
        if let Err(failure) = run(&path) {
            panic!("{}: {failure}", path.display());
        }
    }
}

/// The witnesses of `target`: each file in `witnesses/<target>/` is named after one of its
/// plantable `flaws` (`<Flaw>` or `<Flaw>.<anything>`) and is an input the fuzzer found with
/// that flaw planted. `run` passes it without the flaw, and fails it with the flaw in the way
/// `expected` recognizes (naming the invariant the flaw breaks). Returns the flaws witnessed.
pub(crate) fn check_witnesses<F: Copy + Debug, E: Display>(
    target: &str,
    flaws: impl IntoIterator<Item = F> + Clone,
    run: impl Fn(&Path, Option<F>) -> Result<(), E>,
    expected: impl Fn(F, &E) -> bool,
) -> BTreeSet<String> {
    let witnesses = committed_files(&format!("witnesses/{target}"));
    assert!(!witnesses.is_empty(), "no witness committed");
    let mut witnessed = BTreeSet::new();
    for path in witnesses {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let name = file.split('.').next().unwrap();
        let flaw = crate::plantable::flaw_named(flaws.clone(), name)
            .unwrap_or_else(|| panic!("{file}: no plantable flaw {name}"));
        if let Err(failure) = run(&path, None) {
            panic!("{file} fails without its flaw: {failure}");
        }
        match run(&path, Some(flaw)) {
            Ok(()) => panic!("{file}: the checks miss {flaw:?}"),
            Err(failure) => assert!(
                expected(flaw, &failure),
                "{file}: not the failure {flaw:?} should cause: {failure}"
            ),
        }
        witnessed.insert(format!("{flaw:?}"));
    }
    witnessed
}

/// Pseudo-random byte strings for the "any bytes are an input" tests: `count` of them, the
/// i-th `i % 200` bytes long, from a xorshift generator started at `seed` (the same strings on
/// every run).
pub(crate) fn pseudo_random_inputs(seed: u64, count: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut x = seed;
    (0..count).map(move |i| {
        (0..i % 200)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    })
}
