//! Kubernetes quantities from structured parts, and the exact oracle they are checked against.
//!
//! A quantity is generated as its parts — an optional junk prefix, a sign, integer digits, a
//! decimal point, fractional digits, and a suffix (decimal SI, binary SI, a decimal exponent,
//! or junk that is none of these) — and the string is those parts written out. [`expect`]
//! computes what `quantity_value` and `quantity_milli_value` must return from the parts alone,
//! by the contract `core/src/k8s/quantity.rs` documents (Kubernetes' `resource.Quantity`
//! grammar and rounding): the value `digits × 10^exponent × 2^binary`, computed exactly in
//! big-integer arithmetic, times 1 or 1000, rounded up to a whole unit; zero for any zero
//! (`-0` too); an error for no digit (`Malformed`), an unknown suffix (`UnknownSuffix`), a
//! value below zero (`Negative`) or above 2^63 − 1 (`TooLarge`). Nothing here parses a
//! quantity string.

use super::bytes::Bytes;

/// Digit strings a part may be: the boundaries of the contract (2^63 − 1 and 2^63 in units
/// and in thousandths, 2^64) and ordinary values.
pub const DIGITS: [&str; 15] = [
    "0",
    "1",
    "5",
    "9",
    "10",
    "999",
    "1000",
    "1000000",
    "1000001",
    "9223372036854775807",
    "9223372036854775808",
    "9223372036854775",
    "18446744073709551616",
    "99999999999999999999999",
    "807",
];

/// The lengths of generated digit strings.
const GENERATED: [usize; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 18, 19, 20, 40];

/// The runs of zeros a digit string may start with: around the 19 digits of 2^63, and past a
/// million (beyond any exponent cap a parser might saturate at).
const ZERO_RUNS: [usize; 8] = [1, 2, 3, 18, 19, 20, 1_000_000, 1_000_001];

/// Decimal SI suffixes and their powers of ten.
pub const DECIMAL: [(&str, i32); 9] = [
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];

/// Binary SI suffixes and their powers of two.
pub const BINARY: [(&str, u32); 6] = [
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

/// Suffixes that are none of Kubernetes' (case, spacing, a unit, a broken exponent).
const JUNK: [&str; 16] = [
    "x", "K", "ki", " Gi", "Gi ", "mi", "e", "E+", "e-", "iB", "e3.5", "Kib", "MB", "EE", "e+-1",
    "\u{b5}",
];

/// What may stand before the sign: not a sign, digit or point, so there is no number.
const PREFIXES: [&str; 4] = [" ", "x", "\u{a0}", "Gi"];

/// A sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    /// None written.
    None,
    /// `+`.
    Plus,
    /// `-`.
    Minus,
}

impl Sign {
    fn text(self) -> &'static str {
        match self {
            Sign::None => "",
            Sign::Plus => "+",
            Sign::Minus => "-",
        }
    }

    fn of(bits: u8) -> Sign {
        match bits & 3 {
            2 => Sign::Plus,
            3 => Sign::Minus,
            _ => Sign::None,
        }
    }
}

/// A quantity's suffix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Suffix {
    /// None.
    None,
    /// A decimal SI suffix: its text and power of ten.
    Decimal(&'static str, i32),
    /// A binary SI suffix: its text and power of two.
    Binary(&'static str, u32),
    /// A decimal exponent: `e` or `E`, a sign, digits.
    Exponent(char, Sign, String),
    /// Something that is no suffix.
    Junk(String),
}

/// A quantity as its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    /// Before the sign (empty, or something that makes the string no number).
    pub prefix: &'static str,
    /// The sign.
    pub sign: Sign,
    /// Integer digits (ASCII), possibly none.
    pub int: String,
    /// Whether a decimal point follows them.
    pub point: bool,
    /// Fractional digits (after the point; none without one).
    pub frac: String,
    /// The suffix.
    pub suffix: Suffix,
}

impl Parts {
    /// The quantity as written.
    pub fn text(&self) -> String {
        let suffix = match &self.suffix {
            Suffix::None => String::new(),
            Suffix::Decimal(s, _) | Suffix::Binary(s, _) => (*s).to_owned(),
            Suffix::Exponent(e, sign, digits) => format!("{e}{}{digits}", sign.text()),
            Suffix::Junk(s) => s.clone(),
        };
        let point = if self.point { "." } else { "" };
        let (prefix, sign, int, frac) = (self.prefix, self.sign.text(), &self.int, &self.frac);
        format!("{prefix}{sign}{int}{point}{frac}{suffix}")
    }

    /// Reads a quantity's parts: a header byte (bits 0–1 the sign: none, none, `+`, `-`; bit 2
    /// a point; bit 3 no integer digits; bit 4 fractional digits, after a point; bits 5–7 all
    /// set: a junk prefix, from the next byte), the digit strings ([`digits`]), then the
    /// suffix ([`suffix`]).
    pub fn read(b: &mut Bytes<'_>) -> Parts {
        let head = b.byte();
        let prefix = if head >> 5 == 7 {
            b.pick(&PREFIXES)
        } else {
            ""
        };
        let int = if head & 8 == 0 {
            digits(b)
        } else {
            String::new()
        };
        let point = head & 4 != 0;
        let frac = if point && head & 16 != 0 {
            digits(b)
        } else {
            String::new()
        };
        // A long run of fractional zeros comes after no integer (`0.000…01`): a nonzero
        // integer before it would make a number of a million significant digits, which the
        // oracle's arithmetic is not built for.
        let int = if frac.len() > 1000 && int.bytes().any(|d| d != b'0') {
            "0".to_owned()
        } else {
            int
        };
        let sign = Sign::of(head);
        // Junk written straight after an empty, unsigned number could be the number itself:
        // `+3` is no junk suffix but the quantity 3.
        let bare = prefix.is_empty() && sign == Sign::None && int.is_empty() && !point;
        Parts {
            prefix,
            sign,
            int,
            point,
            frac,
            suffix: suffix(b, bare),
        }
    }
}

/// A digit string: a byte `d`, whose low 5 bits pick one of [`DIGITS`] (0–14), a run of zeros
/// ([`ZERO_RUNS`], by the next byte) before another digit string (15), or a generated string of
/// a length from [`GENERATED`] whose digits come from the next byte (16–31).
fn digits(b: &mut Bytes<'_>) -> String {
    digits_at(b, 0)
}

fn digits_at(b: &mut Bytes<'_>, depth: usize) -> String {
    let d = usize::from(b.byte() & 31);
    match d {
        0..=14 => DIGITS[d].to_owned(),
        15 if depth == 0 => {
            let mut s = "0".repeat(b.pick(&ZERO_RUNS));
            s.push_str(&digits_at(b, 1));
            s
        }
        15 => "0".to_owned(),
        _ => {
            let len = GENERATED[d - 16];
            let mut x = (u64::from(b.byte()) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    char::from(b'0' + (x % 10) as u8)
                })
                .collect()
        }
    }
}

/// A suffix: a byte `s` whose low 3 bits pick none (0, 1), decimal SI (2, `s >> 3` picks),
/// binary SI (3), an exponent (4, 5: bit 3 `E` for `e`, bits 4–5 its sign, then a digit
/// string), junk from [`JUNK`] (6) or raw junk (7: a length byte, then that many bytes as
/// text; raw junk that is in fact a suffix is taken as that suffix, and raw junk that would
/// continue the number before it — a digit or point, or a sign after a `bare` number, one
/// with nothing written before the suffix — is led by an `x`).
fn suffix(b: &mut Bytes<'_>, bare: bool) -> Suffix {
    let s = b.byte();
    let index = usize::from(s >> 3);
    match s & 7 {
        2 => {
            let (text, exp) = DECIMAL[index % DECIMAL.len()];
            Suffix::Decimal(text, exp)
        }
        3 => {
            let (text, exp) = BINARY[index % BINARY.len()];
            Suffix::Binary(text, exp)
        }
        4 | 5 => {
            let e = if s & 8 == 0 { 'e' } else { 'E' };
            Suffix::Exponent(e, Sign::of(s >> 4), digits(b))
        }
        6 => Suffix::Junk(JUNK[index % JUNK.len()].to_owned()),
        7 => {
            let len = b.below(8);
            let raw: Vec<u8> = (0..len).map(|_| b.byte()).collect();
            let mut text = String::from_utf8_lossy(&raw).into_owned();
            let continues_the_number =
                |c: char| c.is_ascii_digit() || c == '.' || (bare && (c == '+' || c == '-'));
            if text.starts_with(continues_the_number) {
                text.insert(0, 'x');
            }
            classify(text)
        }
        _ => Suffix::None,
    }
}

/// `text` as the suffix the grammar says it is (`<suffix> ::= <binarySI> | <decimalExponent>
/// | <decimalSI>`, the exponent `e|E` then a signed number), or junk.
fn classify(text: String) -> Suffix {
    if text.is_empty() {
        return Suffix::None;
    }
    if let Some(&(s, exp)) = DECIMAL.iter().find(|(s, _)| *s == text) {
        return Suffix::Decimal(s, exp);
    }
    if let Some(&(s, exp)) = BINARY.iter().find(|(s, _)| *s == text) {
        return Suffix::Binary(s, exp);
    }
    let mut chars = text.chars();
    if let Some(e @ ('e' | 'E')) = chars.next() {
        let rest = chars.as_str();
        let (sign, digits) = match rest.as_bytes().first() {
            Some(b'+') => (Sign::Plus, &rest[1..]),
            Some(b'-') => (Sign::Minus, &rest[1..]),
            _ => (Sign::None, rest),
        };
        if !digits.is_empty() && digits.bytes().all(|d| d.is_ascii_digit()) {
            return Suffix::Exponent(e, sign, digits.to_owned());
        }
    }
    Suffix::Junk(text)
}

/// What a quantity function must return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// This value.
    Value(u64),
    /// `QuantityError::Malformed`.
    Malformed,
    /// `QuantityError::UnknownSuffix` with this suffix.
    UnknownSuffix(String),
    /// `QuantityError::Negative`.
    Negative,
    /// `QuantityError::TooLarge`.
    TooLarge,
}

/// The largest Kubernetes quantity, 2^63 − 1.
const MAX: u128 = i64::MAX as u128;

/// Exponents are saturated here: far beyond any digit string an input can hold, so the
/// value's fate (too large, or a fraction of one) is the same for any exponent past it.
const EXPONENT_SATURATION: i128 = 1_000_000_000_000_000_000_000_000_000_000;

/// What the quantity `parts` writes is worth, times `10^scale` (0 for `quantity_value`, 3 for
/// `quantity_milli_value`), rounded up, per the documented contract; and whether that is exact
/// (no fraction rounded away), which whole-unit resources require.
pub fn expect(parts: &Parts, scale: i128) -> (Expect, bool) {
    if !parts.prefix.is_empty() || (parts.int.is_empty() && parts.frac.is_empty()) {
        return (Expect::Malformed, false);
    }
    let (ten, two) = match &parts.suffix {
        Suffix::Junk(s) => return (Expect::UnknownSuffix(s.clone()), false),
        Suffix::None => (0, 0),
        Suffix::Decimal(_, exp) => (i128::from(*exp), 0),
        Suffix::Binary(_, exp) => (0, *exp),
        Suffix::Exponent(_, sign, digits) => {
            let magnitude = digits.bytes().fold(0i128, |n, d| {
                (n * 10 + i128::from(d - b'0')).min(EXPONENT_SATURATION)
            });
            (
                if *sign == Sign::Minus {
                    -magnitude
                } else {
                    magnitude
                },
                0,
            )
        }
    };
    let mut n = Big::decimal(&format!("{}{}", parts.int, parts.frac));
    if n.is_zero() {
        return (Expect::Value(0), true);
    }
    if parts.sign == Sign::Minus {
        return (Expect::Negative, false);
    }
    for _ in 0..two {
        n.mul_small(2);
    }
    let frac_len = i128::try_from(parts.frac.len()).expect("a short string");
    let exp = ten - frac_len + scale;
    let (value, exact) = if exp >= 0 {
        if exp > 40 {
            return (Expect::TooLarge, true);
        }
        for _ in 0..exp {
            n.mul_small(10);
        }
        (n.to_u128(), true)
    } else if -exp >= n.decimal_digits() {
        (Some(1), false) // strictly between 0 and 1
    } else {
        let mut rounded = false;
        for _ in 0..-exp {
            rounded |= n.div_small(10) != 0;
        }
        (n.to_u128().map(|v| v + u128::from(rounded)), !rounded)
    };
    match value {
        Some(v) if v <= MAX => (Expect::Value(v as u64), exact),
        _ => (Expect::TooLarge, exact),
    }
}

/// An unsigned big integer, little-endian base-2^32 limbs: only what [`expect`] needs.
#[derive(Clone, Debug)]
struct Big(Vec<u32>);

impl Big {
    /// The number ASCII digits `s` spell (none: 0).
    fn decimal(s: &str) -> Big {
        let mut n = Big(Vec::new());
        for chunk in s.as_bytes().chunks(9) {
            let value = chunk.iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
            n.mul_small(10u32.pow(chunk.len() as u32));
            n.add_small(value);
        }
        n
    }

    fn is_zero(&self) -> bool {
        self.0.iter().all(|&l| l == 0)
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let p = u64::from(*limb) * u64::from(m) + carry;
            *limb = p as u32;
            carry = p >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn add_small(&mut self, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            if carry == 0 {
                return;
            }
            let s = u64::from(*limb) + carry;
            *limb = s as u32;
            carry = s >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// Divides in place; the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / u64::from(d)) as u32;
            rem = cur % u64::from(d);
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        rem as u32
    }

    fn to_u128(&self) -> Option<u128> {
        let significant = self.0.iter().rposition(|&l| l != 0).map_or(0, |i| i + 1);
        if significant > 4 {
            return None;
        }
        Some(
            self.0[..significant]
                .iter()
                .rev()
                .fold(0u128, |v, &l| (v << 32) | u128::from(l)),
        )
    }

    /// How many decimal digits the number has (0 for zero).
    fn decimal_digits(&self) -> i128 {
        let mut n = self.clone();
        let mut count = 0;
        while !n.is_zero() {
            n.div_small(10);
            count += 1;
        }
        count
    }
}

/// A quantity function under test: `quantity_value` or `quantity_milli_value` (or their planted
/// variants).
pub type QuantityFn = fn(&str) -> Result<u64, gangsched::k8s::QuantityError>;

/// Checks `value` (`quantity_value`, scale 0) and `milli` (`quantity_milli_value`, scale 3) on
/// the quantity `parts` writes against [`expect`]: the same value, or the same error holding
/// the quantity as written (and, for an unknown suffix, the suffix).
pub fn check(parts: &Parts, value: QuantityFn, milli: QuantityFn) -> Result<(), String> {
    use gangsched::k8s::QuantityError as E;
    let text = parts.text();
    for (name, f, scale) in [
        ("quantity_value", value, 0),
        ("quantity_milli_value", milli, 3),
    ] {
        let (expected, _) = expect(parts, scale);
        let got = f(&text);
        let agrees = match (&expected, &got) {
            (Expect::Value(v), Ok(g)) => v == g,
            (Expect::Malformed, Err(E::Malformed(q)))
            | (Expect::Negative, Err(E::Negative(q)))
            | (Expect::TooLarge, Err(E::TooLarge(q))) => *q == text,
            (Expect::UnknownSuffix(s), Err(E::UnknownSuffix { quantity, suffix })) => {
                *quantity == text && suffix == s
            }
            _ => false,
        };
        if !agrees {
            return Err(format!(
                "quantity contract: {name}({}) is {:?}, expected {expected:?}",
                short(&text),
                got.map_err(|e| kind_of(&e))
            ));
        }
    }
    Ok(())
}

/// `text` quoted, a long run of one character shown by its length.
pub fn short(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let run = chars[i..].iter().take_while(|&&c| c == chars[i]).count();
        if run > 8 {
            out.push_str(&format!("{{{}×{run}}}", chars[i].escape_debug()));
        } else {
            out.extend(chars[i..i + run].iter().flat_map(|c| c.escape_debug()));
        }
        i += run;
    }
    format!("\"{out}\"")
}

fn kind_of(e: &gangsched::k8s::QuantityError) -> &'static str {
    super::checks::kind(e)
}
