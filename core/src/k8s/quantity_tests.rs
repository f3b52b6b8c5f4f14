use super::quantity::resource_amount;
use super::{quantity_milli_value, quantity_value, QuantityError};

/// What a quantity reads as in whole units and in thousandths.
type Expect = (Result<u64, QuantityError>, Result<u64, QuantityError>);

const I64_MAX: u64 = i64::MAX as u64;

fn ok(value: u64, milli: u64) -> Expect {
    (Ok(value), Ok(milli))
}

fn both(error: QuantityError) -> Expect {
    (Err(error.clone()), Err(error))
}

fn check(table: &[(&str, Expect)]) {
    for (quantity, (value, milli)) in table {
        assert_eq!(&quantity_value(quantity), value, "value of {quantity:?}");
        assert_eq!(
            &quantity_milli_value(quantity),
            milli,
            "milli value of {quantity:?}"
        );
    }
}

#[test]
fn the_forms_manifests_use() {
    check(&[
        ("500m", ok(1, 500)),
        ("2", ok(2, 2000)),
        ("0", ok(0, 0)),
        ("1Gi", ok(1 << 30, 1000 << 30)),
        ("128974848", ok(128_974_848, 128_974_848_000)),
        ("129e6", ok(129_000_000, 129_000_000_000)),
        ("129E6", ok(129_000_000, 129_000_000_000)),
        ("123Mi", ok(128_974_848, 128_974_848_000)),
        ("1k", ok(1000, 1_000_000)),
        ("1.5", ok(2, 1500)),
        ("0.5", ok(1, 500)),
        ("1.5Gi", ok(1_610_612_736, 1_610_612_736_000)),
        ("0.5Ki", ok(512, 512_000)),
        ("4Ti", ok(4 << 40, 4000 << 40)),
        ("2Pi", ok(2 << 50, 2000 << 50)),
        (
            "1Ei",
            (Ok(1 << 60), Err(QuantityError::TooLarge("1Ei".into()))),
        ),
        ("3M", ok(3_000_000, 3_000_000_000)),
        ("3G", ok(3_000_000_000, 3_000_000_000_000)),
        ("3T", ok(3_000_000_000_000, 3_000_000_000_000_000)),
        ("3P", ok(3_000_000_000_000_000, 3_000_000_000_000_000_000)),
        ("100u", ok(1, 1)),
        ("100n", ok(1, 1)),
    ]);
}

#[test]
fn signs_points_and_exponents() {
    check(&[
        ("+1", ok(1, 1000)),
        ("-0", ok(0, 0)),
        ("-0.000m", ok(0, 0)),
        ("1.", ok(1, 1000)),
        (".5", ok(1, 500)),
        ("0001.2500", ok(2, 1250)),
        ("1e3", ok(1000, 1_000_000)),
        ("1e+3", ok(1000, 1_000_000)),
        ("1e-3", ok(1, 1)),
        ("25e-4", ok(1, 3)),
        ("1.5e1", ok(15, 15_000)),
        ("0e999999999999999999999", ok(0, 0)),
        ("1e-999999999999999999999", ok(1, 1)),
        ("10000000000000000000000000000000e-31", ok(1, 1000)),
        ("1.0000000000000000000000000000000000000000", ok(1, 1000)),
        ("0.00000000000000000000000000000000000000001", ok(1, 1)),
    ]);
}

#[test]
fn fractions_round_up_to_whole_units_and_millis() {
    check(&[
        ("1m", ok(1, 1)),
        ("999m", ok(1, 999)),
        ("1001m", ok(2, 1001)),
        ("0.1m", ok(1, 1)),
        ("0.0001", ok(1, 1)),
        ("1.0001", ok(2, 1001)),
        ("2.000", ok(2, 2000)),
        ("100.5", ok(101, 100_500)),
        ("0.1Ki", ok(103, 102_400)),             // 102.4 bytes
        ("1.1Mi", ok(1_153_434, 1_153_433_600)), // 1153433.6 bytes
    ]);
}

#[test]
fn the_largest_values_are_2_to_the_63_minus_1() {
    let too_large = |q: &str| QuantityError::TooLarge(q.into());
    check(&[
        (
            "9223372036854775807",
            (Ok(I64_MAX), Err(too_large("9223372036854775807"))),
        ),
        (
            "9223372036854775808",
            both(too_large("9223372036854775808")),
        ),
        ("9223372036854775807m", ok(9_223_372_036_854_776, I64_MAX)),
        (
            "9223372036854775808m",
            (
                Ok(9_223_372_036_854_776),
                Err(too_large("9223372036854775808m")),
            ),
        ),
        ("9223372036854775.807", ok(9_223_372_036_854_776, I64_MAX)),
        ("7Ei", (Ok(7 << 60), Err(too_large("7Ei")))),
        ("8Ei", both(too_large("8Ei"))),
        ("9E", (Ok(9_000_000_000_000_000_000), Err(too_large("9E")))),
        ("10E", both(too_large("10E"))),
        ("1e19", both(too_large("1e19"))),
        (
            "1e999999999999999999999",
            both(too_large("1e999999999999999999999")),
        ),
        (
            "123456789012345678901234567890",
            both(too_large("123456789012345678901234567890")),
        ),
    ]);
}

#[test]
fn negatives_are_refused() {
    let negative = |q: &str| both(QuantityError::Negative(q.into()));
    check(&[
        ("-1", negative("-1")),
        ("-500m", negative("-500m")),
        ("-0.001m", negative("-0.001m")),
        ("-1Gi", negative("-1Gi")),
    ]);
}

#[test]
fn malformed_numbers_and_unknown_suffixes_are_refused() {
    let malformed = |q: &str| both(QuantityError::Malformed(q.into()));
    let suffix = |q: &str, s: &str| {
        both(QuantityError::UnknownSuffix {
            quantity: q.into(),
            suffix: s.into(),
        })
    };
    check(&[
        ("", malformed("")),
        ("-", malformed("-")),
        ("+", malformed("+")),
        (".", malformed(".")),
        ("m", malformed("m")),
        ("Gi", malformed("Gi")),
        ("--1", malformed("--1")),
        (" 1", malformed(" 1")),
        ("١", malformed("١")),
        ("12x", suffix("12x", "x")),
        ("1K", suffix("1K", "K")),
        ("1KiB", suffix("1KiB", "KiB")),
        ("1 Gi", suffix("1 Gi", " Gi")),
        ("1Gi ", suffix("1Gi ", "Gi ")),
        ("1e", suffix("1e", "e")),
        ("1e+", suffix("1e+", "e+")),
        ("1e3.5", suffix("1e3.5", "e3.5")),
        ("1mm", suffix("1mm", "mm")),
        ("1.2.3", suffix("1.2.3", ".3")),
        ("0x10", suffix("0x10", "x10")),
        ("5é", suffix("5é", "é")),
    ]);
}

#[test]
fn each_resource_is_read_in_its_unit() {
    let not_whole = |q: &str| Err(QuantityError::NotWhole(q.to_owned()));
    let table = [
        ("cpu", "1.5", Ok(1500)),
        ("cpu", "0.0001", Ok(1)),
        ("memory", "1.5", Ok(2)),
        ("memory", "1Gi", Ok(1 << 30)),
        ("ephemeral-storage", "0.5", Ok(1)),
        ("hugepages-2Mi", "1.5", Ok(2)),
        ("nvidia.com/gpu", "8", Ok(8)),
        ("nvidia.com/gpu", "8.0", Ok(8)),
        ("nvidia.com/gpu", "2000m", Ok(2)),
        ("nvidia.com/gpu", "0.5Ki", Ok(512)),
        ("nvidia.com/gpu", "0", Ok(0)),
        ("nvidia.com/gpu", "500m", not_whole("500m")),
        ("nvidia.com/gpu", "1.5", not_whole("1.5")),
        ("nvidia.com/gpu", "1.0000000001", not_whole("1.0000000001")),
        ("pods", "110", Ok(110)),
        ("pods", "1e-3", not_whole("1e-3")),
        (
            "nvidia.com/gpu",
            "-1",
            Err(QuantityError::Negative("-1".into())),
        ),
    ];
    for (name, quantity, amount) in table {
        assert_eq!(
            resource_amount(name, quantity),
            amount,
            "{name}: {quantity}"
        );
    }
    assert_eq!(
        QuantityError::NotWhole("500m".into()).to_string(),
        r#"quantity "500m" is not a whole number"#
    );
}

#[test]
fn errors_quote_the_quantity() {
    let shown = |q: &str| quantity_value(q).unwrap_err().to_string();
    assert_eq!(shown("12x"), r#"quantity "12x" has an unknown suffix "x""#);
    assert_eq!(shown("-1"), r#"quantity "-1" is negative"#);
    assert_eq!(shown("1e30"), r#"quantity "1e30" is too large"#);
    assert_eq!(shown(""), r#"quantity "" is not a number"#);
}

#[test]
fn every_short_string_parses_without_panic_and_consistently() {
    let alphabet: Vec<char> = "09.+-eEkmMGiKnu x".chars().collect();
    let mut strings = vec![String::new()];
    for _ in 0..4 {
        let longer: Vec<String> = strings
            .iter()
            .filter(|s| s.chars().count() == strings.last().map_or(0, |l| l.chars().count()))
            .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
            .collect();
        strings.extend(longer);
    }
    for q in &strings {
        match (quantity_value(q), quantity_milli_value(q)) {
            (Ok(value), Ok(milli)) => assert_eq!(value, milli.div_ceil(1000), "{q:?}"),
            (Ok(_), Err(e)) => assert!(matches!(e, QuantityError::TooLarge(_)), "{q:?}"),
            (Err(a), Err(b)) => assert_eq!(a, b, "{q:?}"),
            (Err(e), Ok(_)) => panic!("{q:?}: value fails ({e}) but milli value does not"),
        }
    }
}

/// The fuzz target `k8s_objects`'s find (fuzz/regressions/k8s_objects/
/// capped-exponent-misreads-long-quantities): the exponent saturated at ±10^6 before the
/// digits moved it, so more than a million digits shifted the value by the excess.
#[test]
fn capped_exponent_misreads_long_quantities() {
    let zeros = |n| "0".repeat(n);
    let q = format!("0.{}1e99999999999", zeros(1_000_000));
    assert!(matches!(
        quantity_value(&q),
        Err(QuantityError::TooLarge(_))
    ));
    let q = format!("0.{}1e1000005", zeros(999_999));
    assert_eq!(quantity_value(&q), Ok(100_000));
    let q = format!("1{}e-1000005", zeros(1_000_010));
    assert_eq!(quantity_value(&q), Ok(100_000));
    let q = format!("0.{}1e1000001", zeros(1_000_000));
    assert_eq!(quantity_value(&q), Ok(1));
}

/// The planted parser (the `k8s_objects` fuzz target's witness) is the real one but for its
/// flaw: it reads what the real one reads, and lets through what only the flaw lets through —
/// a value from 2^63 up, bounded by its digits alone.
#[cfg(feature = "checking")]
#[test]
fn the_planted_parser_differs_from_the_real_one_by_its_flaw_alone() {
    use super::quantity::{planted_quantity_milli_value, planted_quantity_value, QuantityFlaw};
    let flaw = QuantityFlaw::TooLargeByDigitsOnly;
    for q in ["5", "250m", "2Gi", "1.5"] {
        assert_eq!(planted_quantity_value(q, flaw), quantity_value(q), "{q}");
        assert_eq!(
            planted_quantity_milli_value(q, flaw),
            quantity_milli_value(q),
            "{q}"
        );
    }
    let past = "9223372036854775808"; // 2^63
    assert!(matches!(
        quantity_value(past),
        Err(QuantityError::TooLarge(_))
    ));
    assert!(
        planted_quantity_value(past, flaw).is_ok(),
        "the flaw lets 2^63 through"
    );
}
