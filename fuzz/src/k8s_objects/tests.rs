//! Replays of the committed `k8s_objects` inputs, the oracle's own checks, and the witnesses
//! that the checks find the planted flaws.

use std::fs;
use std::path::{Path, PathBuf};

use super::bytes::Bytes;
use super::quantity::{expect, Expect, Parts, Sign, Suffix};
use super::*;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Pseudo-random byte strings of every length up to 200: each runs clean.
#[test]
fn random_k8s_objects_inputs_pass() {
    let mut kinds = std::collections::BTreeMap::new();
    for bytes in crate::committed::pseudo_random_inputs(0x2545_f491_4f6c_dd1d, 4000) {
        let outcome = run(&bytes, None).unwrap_or_else(|f| panic!("{bytes:?}: {f}"));
        let what = match &outcome.converted {
            None => "quantities".to_owned(),
            Some(Err(_)) => format!("{:?} refused by serde", outcome.kind),
            Some(Ok(c)) if c == "converts" => format!("{:?} converts", outcome.kind),
            Some(Ok(_)) => format!("{:?} conversion error", outcome.kind),
        };
        *kinds.entry(what).or_insert(0) += 1;
    }
    println!("{kinds:#?}");
}

fn parts(int: &str, frac: Option<&str>, suffix: Suffix) -> Parts {
    Parts {
        prefix: "",
        sign: Sign::None,
        int: int.to_owned(),
        point: frac.is_some(),
        frac: frac.unwrap_or_default().to_owned(),
        suffix,
    }
}

/// The oracle on the contract's own examples (`core/src/k8s/quantity.rs`'s docs) and its
/// boundaries.
#[test]
fn the_oracle_computes_the_documented_examples() {
    use Expect::*;
    let exp = |d: &str| Suffix::Exponent('e', Sign::None, d.to_owned());
    let cases = [
        (
            parts("128974848", None, Suffix::None),
            0,
            Value(128_974_848),
        ),
        (parts("129", None, exp("6")), 0, Value(129_000_000)),
        (
            parts("123", None, Suffix::Binary("Mi", 20)),
            0,
            Value(128_974_848),
        ),
        (parts("1", Some("5"), Suffix::None), 0, Value(2)),
        (parts("500", None, Suffix::Decimal("m", -3)), 3, Value(500)),
        (parts("0", Some("1"), Suffix::None), 3, Value(100)),
        (parts("0", Some("0001"), Suffix::None), 3, Value(1)),
        (parts("", Some(""), Suffix::None), 0, Malformed),
        (
            parts("12", None, Suffix::Junk("x".into())),
            0,
            UnknownSuffix("x".into()),
        ),
        (parts("1", None, exp("30")), 0, TooLarge),
        (parts("8", None, Suffix::Binary("Ei", 60)), 0, TooLarge),
        (
            parts("7", None, Suffix::Binary("Ei", 60)),
            0,
            Value(7 << 60),
        ),
        (
            parts("9223372036854775807", None, Suffix::None),
            0,
            Value(i64::MAX as u64),
        ),
        (
            parts("9223372036854775808", None, Suffix::None),
            0,
            TooLarge,
        ),
        (
            parts("9223372036854775", Some("807"), Suffix::None),
            3,
            Value(i64::MAX as u64),
        ),
        (
            parts("9223372036854775", Some("8071"), Suffix::None),
            3,
            TooLarge,
        ),
        (
            parts("1", None, Suffix::Exponent('E', Sign::Minus, "99".into())),
            0,
            Value(1),
        ),
    ];
    for (p, scale, want) in cases {
        assert_eq!(expect(&p, scale).0, want, "{}", p.text());
    }
    let negative = Parts {
        sign: Sign::Minus,
        ..parts("0", Some("0"), Suffix::None)
    };
    assert_eq!(expect(&negative, 0).0, Expect::Value(0), "-0 is zero");
    let negative = Parts {
        sign: Sign::Minus,
        ..parts("0", Some("5"), Suffix::None)
    };
    assert_eq!(expect(&negative, 0).0, Expect::Negative);
}

/// Found by the target's generator in its first random runs (fuzz/README.md, "Findings"):
/// the parser saturated a decimal exponent at ±10^6 and then added the digit count, so a
/// quantity with more than a million digits was misread — `0.{10^6 zeros}1e<huge>` as 1 (not
/// too large), `0.{10^6 − 1 zeros}1e1000005` as 1 (not 100000). Fixed: the saturation point is
/// beyond any string's length (`core/src/k8s/quantity.rs`, `EXPONENT_CAP`).
#[test]
fn capped_exponent_misreads_long_quantities() {
    let path = dir("regressions/k8s_objects/capped-exponent-misreads-long-quantities");
    if let Err(failure) = run(&read(&path), None) {
        panic!("{failure}");
    }
    let q = format!("0.{}1e1000005", "0".repeat(999_999));
    assert_eq!(gangsched::k8s::quantity_value(&q), Ok(100_000));
}

/// Found by CI's 60 s run: the generator wrote an empty, unsigned number and then raw junk
/// `+3`, and the oracle, reading the parts, expected `Malformed` for what is the quantity
/// `+3` — 3, as the parser (and Go's) rightly says. The harness was wrong, not the parser:
/// raw junk after a bare number no longer starts with a sign.
#[test]
fn signed_raw_junk_read_as_no_number() {
    let path = dir("regressions/k8s_objects/signed-raw-junk-read-as-no-number");
    if let Err(failure) = run(&read(&path), None) {
        panic!("{failure}");
    }
    // A bare number, then raw junk (suffix selector 7) of the two bytes `+3`.
    let mut bytes = Bytes::new(&[8, 7, 2, b'+', b'3']);
    let p = Parts::read(&mut bytes);
    assert_eq!(p.text(), "x+3");
    assert_eq!(expect(&p, 0).0, Expect::Malformed);
    assert_eq!(gangsched::k8s::quantity_value("+3"), Ok(3));
}

/// Each seed fits `-max_len` and runs clean; the test prints what each came to.
#[test]
fn k8s_objects_seeds_fit_and_pass() {
    for (name, bytes) in seeds() {
        assert!(bytes.len() <= 128, "{name} is longer than -max_len");
        let outcome = run(&bytes, None).unwrap_or_else(|f| panic!("{name}: {f}"));
        println!("{name}: {outcome:?}");
    }
}

#[test]
fn committed_k8s_objects_seeds_are_the_listed_ones() {
    crate::committed::assert_seeds_committed("k8s_objects", seeds(), read);
}

/// Replays every committed input: the seeds and the regressions (inputs that once failed).
#[test]
fn committed_k8s_objects_inputs_replay() {
    crate::committed::replay_committed("k8s_objects", |path| run(&read(path), None).map(drop));
}

/// The witnesses: each file in `witnesses/k8s_objects/` is named after a plantable flaw and is
/// an input the fuzzer found with that flaw planted (`GANGWAY_FUZZ_FLAW`). It passes on the
/// real parser; with the flaw planted the checks fail, naming the property [`PLANTABLE`] says.
#[test]
fn k8s_objects_witnesses_find_their_planted_flaws() {
    let property = |flaw| PLANTABLE.iter().find(|(f, _)| *f == flaw).unwrap().1;
    crate::committed::check_witnesses(
        "k8s_objects",
        PLANTABLE.iter().map(|(f, _)| *f),
        |path, flaw| run(&read(path), flaw).map(drop),
        |flaw, failure: &String| failure.starts_with(property(flaw)),
    );
}

/// Writes `seeds/k8s_objects/` from [`seeds`].
#[test]
#[ignore = "writes files: run to regenerate the seed corpus"]
fn write_k8s_objects_seeds() {
    let dir = dir("seeds/k8s_objects");
    fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in seeds() {
        fs::write(dir.join(name), bytes).unwrap();
    }
}

/// Prints the JSON the input in `GANGWAY_FUZZ_INPUT` (a file) generates, its quantities, and
/// what the checks say (with `GANGWAY_FUZZ_FLAW` planted if set):
/// `cargo test -q -- --ignored --nocapture trace_k8s_objects_input`.
#[test]
#[ignore = "a tool: prints GANGWAY_FUZZ_INPUT's object and its failure"]
fn trace_k8s_objects_input() {
    let path = std::env::var("GANGWAY_FUZZ_INPUT").expect("GANGWAY_FUZZ_INPUT=<file>");
    let flaw = std::env::var(FLAW_VAR)
        .ok()
        .map(|name| flaw_named(&name).expect("a flaw"));
    let bytes = read(Path::new(&path));
    let (kind, value, quantities) = generate(&bytes);
    println!("{kind:?}");
    if let Some(value) = value {
        println!("{}", serde_json::to_string_pretty(&value).unwrap());
    }
    for q in &quantities {
        println!("quantity {}", quantity::short(&q.text()));
    }
    println!("{:?}", run(&bytes, flaw));
}
