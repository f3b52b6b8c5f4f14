//! Durations on the command line as Go (and so kube-scheduler) writes them: `30s`, `5m`,
//! `1h30m`, `1.5s`, `250ms`.

use std::time::Duration;

/// Parses a Go duration: one or more decimal numbers, each with a unit (`h`, `m`, `s`, `ms`,
/// `us`, `µs`, `ns`), no sign. Refused with a message that names the text.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let refuse = || format!("{text:?} is not a duration like 30s, 5m or 1h30m");
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(refuse());
    }
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(refuse)?;
        let number: f64 = rest[..number_len].parse().map_err(|_| refuse())?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(refuse()),
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).map_err(|_| refuse())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_go_durations() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn refuses_what_is_not_one() {
        for bad in ["", "5", "soon", "-5s", "5x", "s"] {
            let error = parse_duration(bad).unwrap_err();
            assert!(error.contains("not a duration"), "{bad}: {error}");
        }
    }
}
