//! The `gangway` command's parts: the protocol model checker over the core's real states and
//! driver steps ([`check`]), the workload simulator that runs the real scheduler ([`simulate`]),
//! and the Go anchor's workloads through the real gang plugin and waiting map
//! ([`bench`](mod@bench)); the same trace through kube-scheduler's own queue and gangway's
//! ([`differential`]); output files are checked before a run ([`output`]).

#![deny(missing_docs)]

pub mod bench;
pub mod check;
pub mod differential;
pub mod output;
pub mod simulate;

use gangsched::GangCycle;

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

/// Parses `--gang-cycle` (`gangway check`, `gangway simulate`): `barrier` is
/// [`GangCycle::PermitBarrier`], `pod-group` is [`GangCycle::PodGroup`].
pub fn parse_gang_cycle(s: &str) -> Result<GangCycle, String> {
    match s {
        "barrier" => Ok(GangCycle::PermitBarrier),
        "pod-group" => Ok(GangCycle::PodGroup),
        _ => Err(format!("{s:?}: the gang cycle is barrier or pod-group")),
    }
}

/// The name `--gang-cycle` gives `cycle` (the inverse of [`parse_gang_cycle`]).
pub fn gang_cycle_name(cycle: GangCycle) -> &'static str {
    match cycle {
        GangCycle::PodGroup => "pod-group",
        _ => "barrier",
    }
}

#[cfg(test)]
mod tests {
    use super::{gang_cycle_name, parse_count, parse_gang_cycle};

    #[test]
    fn gang_cycle_names_parse_back() {
        for cycle in [
            gangsched::GangCycle::PermitBarrier,
            gangsched::GangCycle::PodGroup,
        ] {
            assert_eq!(parse_gang_cycle(gang_cycle_name(cycle)), Ok(cycle));
        }
        assert!(parse_gang_cycle("gang")
            .unwrap_err()
            .contains("barrier or pod-group"));
    }

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
