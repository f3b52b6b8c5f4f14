//! Replays of the committed `gang_plugin` inputs, and the witnesses that the checks find the
//! planted flaws.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn read(path: &Path) -> Input {
    Input::decode(&fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// Each seed round-trips, fits `-max_len`, and passes every check.
#[test]
fn gang_plugin_seeds_round_trip_fit_and_pass() {
    for (name, input) in seeds() {
        let bytes = input.encode();
        assert!(bytes.len() <= 128, "{name} is longer than -max_len");
        assert_eq!(Input::decode(&bytes), input, "{name}");
        if let Err(failure) = run(&input, None) {
            panic!("{name}: {failure}");
        }
    }
}

/// Every kind of op and both modes appear in the seeds.
#[test]
fn gang_plugin_seeds_walk_every_op_kind_and_mode() {
    let seeds = seeds();
    let kinds: std::collections::BTreeSet<[u8; 4]> = seeds
        .iter()
        .flat_map(|(_, input)| input.ops.iter())
        .map(|op| {
            let bytes = gangway_model::gang::lockstep::encode(std::slice::from_ref(op));
            bytes[..4].try_into().expect("a variant")
        })
        .collect();
    assert_eq!(kinds.len(), 15, "op kinds seen: {kinds:?}");
    for mode in [Mode::Hardened, Mode::Upstream] {
        assert!(seeds.iter().any(|(_, i)| i.setup.mode == mode), "{mode:?}");
    }
}

/// Any bytes decode, and what decodes encodes back to bytes that decode the same.
#[test]
fn every_byte_string_is_a_gang_plugin_input() {
    for bytes in crate::committed::pseudo_random_inputs(0x9e37_79b9_7f4a_7c15, 200) {
        let input = Input::decode(&bytes);
        assert_eq!(Input::decode(&input.encode()), input);
        assert!(input.setup.pod_groups().len() <= gangway_model::gang::lockstep::MAX_PODS);
    }
}

#[test]
fn committed_gang_plugin_seeds_are_the_listed_ones() {
    let listed = seeds().into_iter().map(|(n, i)| (n, i.encode())).collect();
    crate::committed::assert_seeds_committed("gang_plugin", listed, |path| {
        fs::read(path).expect("listed seed")
    });
}

/// Replays every committed input: the seeds and the regressions (inputs that once failed).
#[test]
fn committed_gang_plugin_inputs_replay() {
    crate::committed::replay_committed("gang_plugin", |path| run(&read(path), None));
}

/// The witnesses: each file in `witnesses/gang_plugin/` is named after a plantable flaw
/// (`<Flaw>` or `<Flaw>.<anything>`) and is an input the fuzzer found with that flaw planted
/// (`GANGWAY_FUZZ_FLAW`, fuzz/README.md). On the real plugin it passes every check; with the
/// flaw planted the lockstep fails, at the comparison [`PLANTABLE`] names.
#[test]
fn gang_plugin_witnesses_find_their_planted_flaws() {
    let fails = |flaw| PLANTABLE.iter().find(|(f, ..)| *f == flaw).unwrap().1;
    crate::committed::check_witnesses(
        "gang_plugin",
        PLANTABLE.iter().map(|(f, ..)| *f),
        |path, flaw| run(&read(path), flaw),
        |flaw, failure: &Failure| failure.contains(&format!(": {} ", fails(flaw))),
    );
}

/// Writes `seeds/gang_plugin/` from [`seeds`].
#[test]
#[ignore = "writes files: run to regenerate the seed corpus"]
fn write_gang_plugin_seeds() {
    let dir = dir("seeds/gang_plugin");
    fs::create_dir_all(&dir).unwrap();
    for (name, input) in seeds() {
        fs::write(dir.join(name), input.encode()).unwrap();
    }
}

/// Prints the input in `GANGWAY_FUZZ_INPUT` (a file) and what the lockstep says of it, with
/// the flaw `GANGWAY_FUZZ_FLAW` planted if set:
/// `cargo test -q -- --ignored --nocapture trace_gang_plugin_input`.
#[test]
#[ignore = "a tool: prints GANGWAY_FUZZ_INPUT's ops and its failure"]
fn trace_gang_plugin_input() {
    let path = std::env::var("GANGWAY_FUZZ_INPUT").expect("GANGWAY_FUZZ_INPUT=<file>");
    let flaw = std::env::var(FLAW_VAR)
        .ok()
        .map(|name| flaw_named(&name).expect("a flaw"));
    let input = read(Path::new(&path));
    println!("{:?} pods in {:?}", input.setup, input.setup.pod_groups());
    for op in &input.ops {
        println!("  {op:?}");
    }
    match run(&input, flaw) {
        Ok(()) => println!("passes"),
        Err(failure) => println!("FAILS: {failure}"),
    }
}

/// Which seeds fail with each plantable flaw planted (a survey, for choosing witnesses).
#[test]
#[ignore = "a survey: prints which seeds find each flaw"]
fn survey_gang_flaws_on_seeds() {
    for (flaw, fails, _) in PLANTABLE {
        let found: Vec<&str> = seeds()
            .into_iter()
            .filter(|(_, input)| run(input, Some(flaw)).is_err_and(|f| f.contains(fails)))
            .map(|(name, _)| name)
            .collect();
        println!("{flaw:?}: {found:?}");
    }
}
