use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in monotonic time: nanoseconds since the origin of the [`Clock`](super::Clock)
/// that produced it.
///
/// `Time` is plain data (`Copy`, `Ord`, `Hash`), so a deadline can live in a pure state struct,
/// a model checker can invent it, and a test can pass any value it likes. Arithmetic saturates
/// instead of overflowing: `Time::MAX` is "never".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

impl Time {
    /// The origin of the timeline.
    pub const ZERO: Time = Time(0);
    /// The end of the timeline; a deadline of `MAX` never passes.
    pub const MAX: Time = Time(u64::MAX);

    /// The time `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Time {
        Time(nanos)
    }

    /// The time `millis` milliseconds after the origin.
    pub const fn from_millis(millis: u64) -> Time {
        Time(millis.saturating_mul(1_000_000))
    }

    /// The time `secs` seconds after the origin.
    pub const fn from_secs(secs: u64) -> Time {
        Time(secs.saturating_mul(1_000_000_000))
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// How long after `earlier` this time is; zero if it is not later.
    pub fn saturating_duration_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// This time plus `d`, or `None` past the end of the timeline.
    pub fn checked_add(self, d: Duration) -> Option<Time> {
        let nanos = u64::try_from(d.as_nanos()).ok()?;
        self.0.checked_add(nanos).map(Time)
    }

    /// This time plus `d`, capped at [`Time::MAX`].
    pub fn saturating_add(self, d: Duration) -> Time {
        self.checked_add(d).unwrap_or(Time::MAX)
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    /// Saturating: a sum past the end of the timeline is [`Time::MAX`].
    fn add(self, d: Duration) -> Time {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturating: an earlier minus a later time is zero.
    fn sub(self, earlier: Time) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Time::MAX {
            return f.write_str("never");
        }
        write!(f, "t+{}", super::GoDuration(Duration::from_nanos(self.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Time::from_secs(1) - Time::from_secs(2), Duration::ZERO);
        assert_eq!(
            Time::from_secs(3) - Time::from_secs(1),
            Duration::from_secs(2)
        );
        assert_eq!(Time::ZERO.checked_add(Duration::MAX), None);
        let mut t = Time::from_millis(5);
        t += Duration::from_millis(5);
        assert_eq!(t, Time::from_nanos(10_000_000));
    }

    #[test]
    fn display() {
        assert_eq!(Time::from_millis(1500).to_string(), "t+1.5s");
        assert_eq!(Time::MAX.to_string(), "never");
    }
}
