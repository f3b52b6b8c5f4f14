use std::fmt;
use std::time::Duration;

/// Formats a [`Duration`] exactly as Go's `time.Duration.String` does (`5m0s`, `1.5s`,
/// `250ms`, `1h2m3.5s`, `0s`), so that messages match kube-scheduler's word for word — for
/// example "rejected due to timeout after waiting 5m0s at plugin GangScheduling".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration(pub Duration);

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Go's Duration is an int64 of nanoseconds; longer values saturate like Go's would.
        let nanos = u64::try_from(self.0.as_nanos())
            .unwrap_or(u64::MAX)
            .min(i64::MAX as u64);
        if nanos == 0 {
            return f.write_str("0s");
        }
        if nanos < 1_000_000_000 {
            // Below one second Go picks the largest unit that keeps a non-zero integer part.
            let (unit, scale) = match nanos {
                n if n < 1_000 => ("ns", 1),
                n if n < 1_000_000 => ("µs", 1_000),
                _ => ("ms", 1_000_000),
            };
            return write!(f, "{}{unit}", fraction(nanos, scale));
        }
        let hours = nanos / 3_600_000_000_000;
        let minutes = nanos / 60_000_000_000 % 60;
        let seconds = fraction(nanos % 60_000_000_000, 1_000_000_000);
        if hours > 0 {
            write!(f, "{hours}h{minutes}m{seconds}s")
        } else if minutes > 0 {
            write!(f, "{minutes}m{seconds}s")
        } else {
            write!(f, "{seconds}s")
        }
    }
}

/// `value / scale` with Go's fraction rule: as many decimals as needed, trailing zeros dropped.
fn fraction(value: u64, scale: u64) -> String {
    let whole = value / scale;
    let mut rest = value % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let mut digits = scale.ilog10() as usize;
    while rest.is_multiple_of(10) {
        rest /= 10;
        digits -= 1;
    }
    format!("{whole}.{rest:0digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(d: Duration) -> String {
        GoDuration(d).to_string()
    }

    #[test]
    fn matches_go() {
        assert_eq!(go(Duration::ZERO), "0s");
        assert_eq!(go(Duration::from_nanos(1)), "1ns");
        assert_eq!(go(Duration::from_nanos(1_100)), "1.1µs");
        assert_eq!(go(Duration::from_millis(250)), "250ms");
        assert_eq!(go(Duration::from_micros(2_500)), "2.5ms");
        assert_eq!(go(Duration::from_secs(2)), "2s");
        assert_eq!(go(Duration::from_millis(1_500)), "1.5s");
        assert_eq!(go(Duration::from_secs(300)), "5m0s");
        assert_eq!(go(Duration::from_secs(900)), "15m0s");
        assert_eq!(go(Duration::from_millis(3_723_500)), "1h2m3.5s");
        assert_eq!(go(Duration::from_nanos(60_000_000_001)), "1m0.000000001s");
        assert_eq!(go(Duration::MAX), "2562047h47m16.854775807s");
    }

    /// Each unit from its first whole value, as Go's: 1000ns is `1µs`, 1000µs `1ms` (found
    /// missing by mutation testing, issue #43: `<` turned `<=` at either boundary printed
    /// `1000ns` and `1000µs`).
    #[test]
    fn a_unit_starts_at_its_first_whole_value() {
        assert_eq!(go(Duration::from_nanos(999)), "999ns");
        assert_eq!(go(Duration::from_micros(1)), "1µs");
        assert_eq!(go(Duration::from_nanos(999_999)), "999.999µs");
        assert_eq!(go(Duration::from_millis(1)), "1ms");
    }
}
