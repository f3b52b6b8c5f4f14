//! The `gangway` command's parts: the protocol model checker over the core's real states and
//! driver steps (`gangway check`, the `gangway-check` library's front end), the workload
//! simulator that runs the real scheduler ([`simulate`]),
//! and the Go anchor's workloads through the real gang plugin and waiting map
//! ([`bench`](mod@bench)); the same trace through kube-scheduler's own queue and gangway's
//! ([`differential`]); output files are checked before a run ([`output`]).

#![deny(missing_docs)]

pub mod bench;
pub mod differential;
pub mod output;
pub mod simulate;

pub use gangway_check::{gang_cycle_name, parse_gang_cycle};

/// Parses a count flag (`--threads`, `--scale`, `--workers`, `--nodes`): a whole number, 1 or
/// more. As a clap value parser, a 0 fails as `invalid value '0' for '--threads <THREADS>':
/// must be at least 1`.
pub fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn counts_are_whole_numbers_from_one() {
        assert_eq!(parse_count("1"), Ok(1));
        assert_eq!(parse_count("64"), Ok(64));
        assert_eq!(parse_count("0"), Err("must be at least 1".to_owned()));
        for bad in ["-1", "1.5", "x", ""] {
            assert!(
                parse_count(bad).unwrap_err().contains("not a whole number"),
                "{bad:?}"
            );
        }
    }
}
