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
                Op::AddUntimed { .. } => "add untimed".to_owned(),
            });
        }
    }
    assert_eq!(seen.len(), 14, "seen: {seen:?}");
}

/// Any bytes decode, and what decodes encodes back to bytes that decode the same.
#[test]
fn every_byte_string_is_an_input() {
    for (len, bytes) in
        crate::committed::pseudo_random_inputs(0x9e37_79b9_7f4a_7c15, 200).enumerate()
    {
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
    crate::committed::assert_seeds_committed("waiting_map", seeds(), read);
}

/// Replays every committed input: the seeds and the regressions (inputs that once failed).
#[test]
fn committed_waiting_map_inputs_replay() {
    crate::committed::replay_committed("waiting_map", |path| run(&read(path), None));
}

/// The witnesses: each file in `witnesses/waiting_map/` is named after a plantable flaw
/// (`<Flaw>` or `<Flaw>.<anything>`) and is an input the fuzzer found with that flaw planted
/// (`GANGWAY_FUZZ_FLAW`, fuzz/README.md). On the real map it passes every check; with the
/// flaw planted the checks fail, naming the invariant the flaw breaks.
#[test]
fn witnesses_find_their_planted_flaws() {
    let flaws = PLANTABLE.iter().map(|(f, _)| *f);
    let breaks = |flaw| PLANTABLE.iter().find(|(f, _)| *f == flaw).unwrap().1;
    let witnessed = crate::committed::check_witnesses(
        "waiting_map",
        flaws,
        |path, flaw| run(&read(path), flaw),
        |flaw, failure: &Failure| failure.what.contains(breaks(flaw)),
    );
    assert_eq!(witnessed.len(), PLANTABLE.len(), "a flaw with no witness");
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
