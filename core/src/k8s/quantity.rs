use super::QuantityError;

/// The value of a Kubernetes quantity in whole units, rounded up: what Go's
/// `Quantity.Value()` returns, e.g. a `memory` request in bytes.
///
/// The grammar is Kubernetes' own: an optional sign, digits with an optional decimal point
/// (`1`, `1.5`, `1.`, `.5`), then one suffix — decimal SI (`n`, `u`, `m`, none, `k`, `M`, `G`,
/// `T`, `P`, `E`), binary SI (`Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei`) or a decimal exponent (`e3`,
/// `E-2`, `e+6`). The arithmetic is exact (no floating point) and any fraction of a unit rounds
/// up, as Kubernetes rounds a quantity up rather than to nothing: `1.5` bytes is 2 bytes.
///
/// Errors: [`Malformed`](QuantityError::Malformed) without a digit (`""`, `"-"`, `"."`, `"m"`),
/// [`UnknownSuffix`](QuantityError::UnknownSuffix) (`12x`, `1K`, `1 Gi`),
/// [`Negative`](QuantityError::Negative) below zero (`-0` is zero), and
/// [`TooLarge`](QuantityError::TooLarge) above 2^63 − 1, the largest Kubernetes quantity.
/// Go's parser also accepts a bare sign or point as zero and caps a too large value; this one
/// reports both.
///
/// ```
/// use gangsched::k8s::{quantity_value, QuantityError};
/// assert_eq!(quantity_value("128974848"), Ok(128_974_848));
/// assert_eq!(quantity_value("129e6"), Ok(129_000_000));
/// assert_eq!(quantity_value("123Mi"), Ok(128_974_848));
/// assert_eq!(quantity_value("1.5"), Ok(2)); // rounded up to whole bytes
/// assert!(matches!(quantity_value("12x"), Err(QuantityError::UnknownSuffix { .. })));
/// ```
pub fn quantity_value(quantity: &str) -> Result<u64, QuantityError> {
    parse::<UNPLANTED>(quantity, 0).map(|(value, _)| value)
}

/// The value of a Kubernetes quantity in thousandths, rounded up: what Go's
/// `Quantity.MilliValue()` returns, e.g. a `cpu` request in millicores.
///
/// Same grammar, rounding and errors as [`quantity_value`]; the value is 1000 times larger, so
/// [`TooLarge`](QuantityError::TooLarge) starts above 2^63 − 1 thousandths.
///
/// ```
/// use gangsched::k8s::quantity_milli_value;
/// assert_eq!(quantity_milli_value("500m"), Ok(500));
/// assert_eq!(quantity_milli_value("2"), Ok(2000));
/// assert_eq!(quantity_milli_value("0.1"), Ok(100));
/// assert_eq!(quantity_milli_value("0.0001"), Ok(1)); // rounded up to whole millicores
/// ```
pub fn quantity_milli_value(quantity: &str) -> Result<u64, QuantityError> {
    parse::<UNPLANTED>(quantity, 3).map(|(value, _)| value)
}

/// A deliberate bug in the quantity parser, planted only by a checker (through
/// [`planted_quantity_value`] and [`planted_quantity_milli_value`]) to show that its checks find
/// it: a witness. Only with the `checking` feature.
#[cfg(feature = "checking")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QuantityFlaw {
    /// The bound is checked by the number of digits alone (at most 19), so a value from 2^63
    /// up to 10^19 − 1 passes: the contract's `TooLarge` above 2^63 − 1 is broken (`8Ei`,
    /// `9223372036854775808`).
    TooLargeByDigitsOnly,
}

/// No flaw: what production parses with.
const UNPLANTED: u8 = 0;
/// [`QuantityFlaw::TooLargeByDigitsOnly`].
#[cfg(feature = "checking")]
const TOO_LARGE_BY_DIGITS_ONLY: u8 = 1;

/// Whether a parse with `FLAW` checks the bound by its digits only: with the `checking`
/// feature, for [`QuantityFlaw::TooLargeByDigitsOnly`]; never without it.
const fn bounds_by_digits_only<const FLAW: u8>() -> bool {
    #[cfg(feature = "checking")]
    let planted = FLAW == TOO_LARGE_BY_DIGITS_ONLY;
    #[cfg(not(feature = "checking"))]
    let planted = false;
    planted
}

/// [`quantity_value`] with `flaw` planted in the real parser.
#[cfg(feature = "checking")]
pub fn planted_quantity_value(quantity: &str, flaw: QuantityFlaw) -> Result<u64, QuantityError> {
    match flaw {
        QuantityFlaw::TooLargeByDigitsOnly => parse::<TOO_LARGE_BY_DIGITS_ONLY>(quantity, 0),
    }
    .map(|(value, _)| value)
}

/// [`quantity_milli_value`] with `flaw` planted in the real parser.
#[cfg(feature = "checking")]
pub fn planted_quantity_milli_value(
    quantity: &str,
    flaw: QuantityFlaw,
) -> Result<u64, QuantityError> {
    match flaw {
        QuantityFlaw::TooLargeByDigitsOnly => parse::<TOO_LARGE_BY_DIGITS_ONLY>(quantity, 3),
    }
    .map(|(value, _)| value)
}

/// The amount of the resource `name` a quantity stands for, in the unit the conversions count
/// it in: millicores for `cpu`; bytes, rounded up, for `memory`, `ephemeral-storage` and
/// `hugepages-<size>`; whole units for every other resource (extended resources such as
/// `nvidia.com/gpu`, `pods`), where a fraction is [`QuantityError::NotWhole`], as the API server
/// refuses one.
pub(super) fn resource_amount(name: &str, quantity: &str) -> Result<u64, QuantityError> {
    if name == "cpu" {
        quantity_milli_value(quantity)
    } else if name == "memory" || name == "ephemeral-storage" || name.starts_with("hugepages-") {
        quantity_value(quantity)
    } else {
        match parse::<UNPLANTED>(quantity, 0)? {
            (value, true) => Ok(value),
            (_, false) => Err(QuantityError::NotWhole(quantity.to_owned())),
        }
    }
}

/// Exponents beyond this (either way) behave alike: saturating here keeps the arithmetic in
/// range for any input, and no string is long enough for its digits to bring a value this far
/// out back into range (a cap of a million once misread quantities of more than a million
/// digits: `0.{10^6 zeros}1e99999999999` as 1, not too large).
const EXPONENT_CAP: i64 = 1 << 61;

/// Digits in `i64::MAX`.
const MAX_DIGITS: i64 = 19;

/// The quantity times `10^scale`, rounded up, and whether that is exact (no fraction was
/// rounded away). `FLAW` is [`UNPLANTED`] but for a checker's witness.
fn parse<const FLAW: u8>(quantity: &str, scale: i64) -> Result<(u64, bool), QuantityError> {
    let (negative, unsigned) = match quantity.as_bytes().first() {
        Some(b'-') => (true, &quantity[1..]),
        Some(b'+') => (false, &quantity[1..]),
        _ => (false, quantity),
    };
    let (int, rest) = split_digits(unsigned);
    let (frac, suffix) = match rest.strip_prefix('.') {
        Some(after_point) => split_digits(after_point),
        None => ("", rest),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(QuantityError::Malformed(quantity.to_owned()));
    }
    let Some((exp10, exp2)) = suffix_exponents(suffix) else {
        return Err(QuantityError::UnknownSuffix {
            quantity: quantity.to_owned(),
            suffix: suffix.to_owned(),
        });
    };

    // The value is `digits × 10^exp × 2^exp2`, `digits` an integer without leading zeros.
    let mut digits: Vec<u8> = int
        .bytes()
        .chain(frac.bytes())
        .map(|d| d - b'0')
        .skip_while(|&d| d == 0)
        .collect();
    if digits.is_empty() {
        return Ok((0, true));
    }
    if negative {
        return Err(QuantityError::Negative(quantity.to_owned()));
    }
    let mut exp = exp10
        .saturating_sub(count(frac.len()))
        .saturating_add(scale);
    while digits.last() == Some(&0) {
        digits.pop();
        exp = exp.saturating_add(1);
    }
    multiply(&mut digits, 1u64 << exp2);

    let too_large = || QuantityError::TooLarge(quantity.to_owned());
    let int_digits = count(digits.len()).saturating_add(exp);
    if int_digits > MAX_DIGITS {
        return Err(too_large());
    }
    let (value, exact) = if int_digits <= 0 {
        (1, false) // a nonzero fraction of one, rounded up
    } else if exp >= 0 {
        // At most 19 digits: fits in a u64.
        let zeros = std::iter::repeat_n(0, usize::try_from(exp).unwrap_or(0));
        (decimal(digits.iter().copied().chain(zeros)), true)
    } else {
        let split = usize::try_from(int_digits).unwrap_or(0).min(digits.len());
        let (whole, fraction) = digits.split_at(split);
        let rounded = fraction.iter().any(|&d| d != 0);
        (
            decimal(whole.iter().copied()) + u64::from(rounded),
            !rounded,
        )
    };
    if value > i64::MAX as u64 && !bounds_by_digits_only::<FLAW>() {
        return Err(too_large());
    }
    Ok((value, exact))
}

/// The leading ASCII digits of `s`, and the rest.
fn split_digits(s: &str) -> (&str, &str) {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    s.split_at(n)
}

/// A length as an `i64` exponent.
fn count(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// The decimal and binary exponents a suffix stands for, or `None` if it is not one.
fn suffix_exponents(suffix: &str) -> Option<(i64, u32)> {
    let decimal = match suffix {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "" => 0,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        "Ki" => return Some((0, 10)),
        "Mi" => return Some((0, 20)),
        "Gi" => return Some((0, 30)),
        "Ti" => return Some((0, 40)),
        "Pi" => return Some((0, 50)),
        "Ei" => return Some((0, 60)),
        _ => return Some((exponent(suffix)?, 0)),
    };
    Some((decimal, 0))
}

/// The exponent of `e<signed integer>` / `E<signed integer>`, saturated at ±[`EXPONENT_CAP`].
fn exponent(suffix: &str) -> Option<i64> {
    let signed = suffix.strip_prefix(['e', 'E'])?;
    let (negative, digits) = match signed.as_bytes().first() {
        Some(b'-') => (true, &signed[1..]),
        Some(b'+') => (false, &signed[1..]),
        _ => (false, signed),
    };
    if digits.is_empty() || !digits.bytes().all(|d| d.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits
        .bytes()
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        })
        .min(EXPONENT_CAP);
    Some(if negative { -magnitude } else { magnitude })
}

/// `digits` (most significant first) times `factor`, in place.
fn multiply(digits: &mut Vec<u8>, factor: u64) {
    if factor == 1 {
        return;
    }
    let mut carry: u128 = 0;
    for d in digits.iter_mut().rev() {
        let product = u128::from(*d) * u128::from(factor) + carry;
        *d = (product % 10) as u8;
        carry = product / 10;
    }
    let mut head = Vec::new();
    while carry > 0 {
        head.push((carry % 10) as u8);
        carry /= 10;
    }
    head.reverse();
    digits.splice(0..0, head);
}

/// The number the decimal digits spell (at most 19 of them, or it saturates).
fn decimal(digits: impl Iterator<Item = u8>) -> u64 {
    digits.fold(0u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d))
    })
}
