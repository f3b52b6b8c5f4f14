//! Replays of the committed `queue_moves` inputs and the seeds' round trip.

use std::fs;
use std::path::Path;

use super::*;

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn seeds_round_trip_and_pass() {
    for (name, input) in seeds() {
        assert!(
            encode(&input).len() <= 128,
            "{name} is longer than -max_len"
        );
        assert_eq!(decode(&encode(&input)).as_ref(), Some(&input), "{name}");
        queue_moves(&input);
    }
}

/// The seeds turn on every rule of the setup byte between them.
#[test]
fn the_seeds_turn_on_every_setup_rule() {
    let on = seeds()
        .iter()
        .fold(0, |bits, (_, input)| bits | input.setup.0);
    assert_eq!(on, 0x7f, "setup bits no seed turns on: {:#04x}", !on & 0x7f);
}

#[test]
fn committed_seeds_are_the_listed_ones() {
    crate::committed::assert_seeds_committed("queue_moves", seeds(), |path| {
        decode(&read(path)).expect("a seed decodes")
    });
}

/// Replays every committed input: the seeds and the regressions (crashes once found, kept so
/// they stay fixed). Inputs that do not decode are skipped, as the target skips them.
#[test]
fn committed_inputs_replay() {
    crate::committed::replay_committed("queue_moves", |path| {
        let Some(input) = decode(&read(path)) else {
            return Ok(());
        };
        std::panic::catch_unwind(|| queue_moves(&input)).map_err(|_| format!("fails: {input:?}"))
    });
}

/// The witnesses: each file in `witnesses/queue_moves/` is named after a plantable flaw and is
/// an input the fuzzer found with that flaw planted (`GANGWAY_FUZZ_FLAW`, fuzz/README.md). On
/// the real queue it passes every check; with the flaw planted the checks fail, naming the
/// invariant the flaw breaks.
#[test]
fn queue_moves_witnesses_find_their_planted_flaws() {
    let flaws = PLANTABLE.iter().map(|(f, _)| *f);
    let breaks = |flaw| PLANTABLE.iter().find(|(f, _)| *f == flaw).unwrap().1;
    let witnessed = crate::committed::check_witnesses(
        "queue_moves",
        flaws,
        |path, flaw| run(&decode(&read(path)).expect("a witness decodes"), flaw),
        |flaw, failure: &String| failure.contains(&format!("{}:", breaks(flaw))),
    );
    assert_eq!(witnessed.len(), PLANTABLE.len(), "a flaw with no witness");
}

/// Writes `seeds/queue_moves/` from [`seeds`].
#[test]
#[ignore = "writes files: run to regenerate the seed corpus"]
fn write_queue_moves_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/queue_moves");
    fs::create_dir_all(&dir).unwrap();
    for (name, input) in seeds() {
        fs::write(dir.join(name), encode(&input)).unwrap();
    }
}

/// Each rule a seed turns on matters to it: run without that rule, the seed takes the queue
/// elsewhere (some pod's place or record after some op differs — the configuration itself is
/// not compared), so the seed walks the rule's own path.
#[test]
fn each_setup_seed_needs_its_rules() {
    use gangway_model::queue::lockstep::Lockstep;
    let states = |setup: Setup, ops: &[Op]| {
        let mut l = Lockstep::new(setup.config());
        runnable(ops)
            .map(|op| {
                l.step(&op).expect("a seed passes");
                let pods = l.state.pods();
                pods.map(|(id, place, info)| (id.clone(), place, info.clone()))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    for (name, input) in seeds() {
        for bit in (0..7).map(|b| 1u8 << b).filter(|b| input.setup.0 & b != 0) {
            let without = Setup(input.setup.0 & !bit);
            assert_ne!(
                states(input.setup, &input.ops),
                states(without, &input.ops),
                "{name} runs the same without setup bit {bit:#04x}"
            );
        }
    }
}

/// Which seeds fail with each plantable flaw planted (a survey, for choosing witnesses).
#[test]
#[ignore = "a survey: prints which seeds each flaw fails"]
fn survey_queue_moves_flaws() {
    for (flaw, _) in PLANTABLE {
        for (name, input) in seeds() {
            if let Err(failure) = run(&input, Some(flaw)) {
                println!("{flaw:?} fails {name}: {failure}");
            }
        }
    }
}
