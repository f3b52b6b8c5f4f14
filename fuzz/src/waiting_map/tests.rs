//! Replays of the committed inputs, and the witnesses that the checks find planted flaws.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::*;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn read(path: &Path) -> Vec<Op> {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    decode(&bytes).unwrap_or_else(|| panic!("{}: does not decode", path.display()))
}

/// Each seed round-trips, fits `-max_len`, and passes every check.
#[test]
fn seeds_round_trip_fit_and_pass() {
    for (name, ops) in seeds() {
        let bytes = encode(&ops);
        assert!(
            bytes.len() <= 128,
            "{name} is {} bytes, over -max_len",
            bytes.len()
        );
        assert!(ops.len() <= MAX_OPS, "{name} has too many ops");
        assert_eq!(decode(&bytes).as_ref(), Some(&ops), "{name}");
        if let Err(failure) = run(&ops, None) {
            panic!("{name}: {failure}");
        }
    }
}

/// Every kind of op, every way of rejecting, and both variants of each batch appear in the
/// seeds.
#[test]
fn seeds_walk_every_op_kind() {
    let mut seen = BTreeSet::new();
    for (_, ops) in seeds() {
        for op in ops {
            seen.insert(match op {
                Op::Add { .. } => "add".to_owned(),
                Op::Allow { .. } => "allow".to_owned(),
                Op::Reject { how, .. } => format!("reject {}", how.to_byte() % 4),
                Op::AllowAll { deferred, .. } => format!("allow all {deferred}"),
                Op::RejectAll { deferred, .. } => format!("reject all {deferred}"),
                Op::Advance { .. } => "advance".to_owned(),
                Op::Expire { .. } => "expire".to_owned(),
                Op::Query { .. } => "query".to_owned(),
            });
        }
    }
    assert_eq!(seen.len(), 13, "seen: {seen:?}");
}

/// Any bytes decode, and what decodes encodes back to bytes that decode the same.
#[test]
fn every_byte_string_is_an_input() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for len in 0..200 {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let ops = decode(&bytes).expect("every byte string decodes");
        let normal: Vec<Op> = ops.iter().map(normalized).collect();
        assert_eq!(decode(&encode(&normal)), Some(normal.clone()));
        if let Err(failure) = run(&ops, None) {
            panic!("random input {len}: {failure}");
        }
    }
}

/// `op` with each one-byte choice in the form [`encode`] writes (the same meaning).
fn normalized(op: &Op) -> Op {
    let mut op = op.clone();
    match &mut op {
        Op::Allow { ticket, .. } => *ticket = TicketChoice::from_byte(ticket.to_byte()),
        Op::Reject { ticket, how, .. } => {
            *ticket = TicketChoice::from_byte(ticket.to_byte());
            *how = How::from_byte(how.to_byte());
        }
        _ => {}
    }
    op
}

#[test]
fn committed_seeds_are_the_listed_ones() {
    let on_disk = crate::committed_files("seeds/waiting_map");
    let listed = seeds();
    assert_eq!(
        on_disk.len(),
        listed.len(),
        "regenerate with write_waiting_map_seeds"
    );
    for (name, ops) in listed {
        let path = dir("seeds/waiting_map").join(name);
        assert_eq!(
            read(&path),
            ops,
            "{name}: regenerate with write_waiting_map_seeds"
        );
    }
}

/// Replays every committed input: the seeds and the regressions (inputs that once failed).
#[test]
fn committed_waiting_map_inputs_replay() {
    for path in crate::committed_files("seeds/waiting_map")
        .into_iter()
        .chain(crate::committed_files("regressions/waiting_map"))
    {
        if let Err(failure) = run(&read(&path), None) {
            panic!("{}: {failure}", path.display());
        }
    }
}

/// The witnesses: each file in `witnesses/waiting_map/` is named after a plantable flaw
/// (`<Flaw>` or `<Flaw>.<anything>`) and is an input the fuzzer found with that flaw planted
/// (`GANGWAY_FUZZ_FLAW`, fuzz/README.md). On the real map it passes every check; with the
/// flaw planted the checks fail, naming the invariant the flaw breaks.
#[test]
fn witnesses_find_their_planted_flaws() {
    let witnesses = crate::committed_files("witnesses/waiting_map");
    assert!(!witnesses.is_empty(), "no witness committed");
    let mut found_flaws = BTreeSet::new();
    for path in witnesses {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let name = file.split('.').next().unwrap();
        let flaw = flaw_named(name).unwrap_or_else(|| panic!("{file}: no plantable flaw {name}"));
        let (_, breaks) = PLANTABLE.iter().find(|(f, _)| *f == flaw).unwrap();
        let ops = read(&path);
        if let Err(failure) = run(&ops, None) {
            panic!("{file} fails without its flaw: {failure}");
        }
        let failure =
            run(&ops, Some(flaw)).expect_err(&format!("{file}: the checks miss {flaw:?}"));
        assert!(
            failure.what.contains(breaks),
            "{file}: expected {breaks}, found {failure}"
        );
        found_flaws.insert(format!("{flaw:?}"));
    }
    assert_eq!(found_flaws.len(), PLANTABLE.len(), "a flaw with no witness");
}

/// Writes `seeds/waiting_map/` from [`seeds`].
#[test]
#[ignore = "writes files: run to regenerate the seed corpus"]
fn write_waiting_map_seeds() {
    let dir = dir("seeds/waiting_map");
    fs::create_dir_all(&dir).unwrap();
    for (name, ops) in seeds() {
        fs::write(dir.join(name), encode(&ops)).unwrap();
    }
}

/// Prints the ops of the input in `GANGWAY_FUZZ_INPUT` (a file) and what the run finds, with
/// the flaw `GANGWAY_FUZZ_FLAW` planted if set: `cargo test -q -- --ignored --nocapture
/// trace_waiting_map_input`.
#[test]
#[ignore = "a tool: prints GANGWAY_FUZZ_INPUT and its verdict"]
fn trace_waiting_map_input() {
    let path = std::env::var("GANGWAY_FUZZ_INPUT").expect("GANGWAY_FUZZ_INPUT=<file>");
    let flaw = std::env::var(FLAW_VAR)
        .ok()
        .map(|name| flaw_named(&name).expect("a waiting map flaw"));
    let ops = read(Path::new(&path));
    for (i, op) in ops.iter().enumerate() {
        println!("{i:2} {op:?}");
    }
    match run(&ops, flaw) {
        Ok(()) => println!("passes"),
        Err(failure) => println!("FAILS: {failure}"),
    }
}

/// The shard of each universe pod (the seeds' "across shards" assumes distinct ones).
#[test]
fn universe_pods_fall_in_distinct_shards() {
    let map = gangsched::WaitingPods::new();
    let shards: BTreeSet<usize> = (0..gangway_model::waiting_lockstep::PODS)
        .map(|pod| {
            let id = gangway_model::waiting_lockstep::pod_id(pod);
            gangsched::checking::waiting_shard_of(&map, &id)
        })
        .collect();
    println!("shards: {shards:?}");
    assert_eq!(
        shards.len(),
        usize::from(gangway_model::waiting_lockstep::PODS),
        "{shards:?}"
    );
}

/// Which seeds fail with each plantable flaw planted (a survey, for choosing witnesses).
#[test]
#[ignore = "a survey: prints which seeds find each flaw"]
fn survey_waiting_map_flaws_on_seeds() {
    for (flaw, breaks) in PLANTABLE {
        let found: Vec<String> = seeds()
            .into_iter()
            .filter_map(|(name, ops)| run(&ops, Some(flaw)).err().map(|f| format!("{name}: {f}")))
            .collect();
        println!("{flaw:?} ({breaks}): {found:#?}");
    }
}
