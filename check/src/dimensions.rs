//! `gangway check`'s per-dimension flags: start from a preset, change any dimension.

use std::str::FromStr;

use gangsched::GangCycle;
use serde::Serialize;

use super::cluster::ClusterConfig;

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

/// One gang on the command line: `N` (N members, all needed) or `N/MIN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GangSpec {
    /// Members.
    pub members: u32,
    /// Min count.
    pub min: u32,
}

impl FromStr for GangSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<GangSpec, String> {
        let number = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("{t:?} is not a number of pods"))
        };
        let (members, min) = match s.split_once('/') {
            Some((m, min)) => (number(m)?, number(min)?),
            None => (number(s)?, number(s)?),
        };
        if min == 0 || min > members || members > 8 {
            return Err(format!(
                "gang {s:?}: need 1 ≤ min count ≤ members ≤ 8 (MEMBERS or MEMBERS/MIN)"
            ));
        }
        Ok(GangSpec { members, min })
    }
}

/// Overrides for a preset's cluster, one flag per dimension.
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[derive(Clone, Debug, Default)]
pub struct Dimensions {
    /// Gangs, comma separated: MEMBERS or MEMBERS/MIN each (e.g. `2,3/2`).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "GANGS")
    )]
    pub gangs: Option<Vec<GangSpec>>,
    /// Nodes, comma separated: how many pods each has room for (e.g. `2,1`).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "ROOM")
    )]
    pub nodes: Option<Vec<u32>>,
    /// Whether pods arrive one by one, interleaved with everything else.
    #[cfg_attr(feature = "clap", arg(long, value_name = "BOOL"))]
    pub arrivals: Option<bool>,
    /// How many permit deadlines may pass.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub timeouts: Option<u8>,
    /// How many pods may be deleted.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub deletes: Option<u8>,
    /// How many binds may fail.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub bind_failures: Option<u8>,
    /// How many leftover flushes of the unschedulable pool may run.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub flushes: Option<u8>,
    /// How many times a PodGroup's min count may change (by one, down or up).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub group_updates: Option<u8>,
    /// How many times a Permit plugin beside the gang's may reject the pod at Permit.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub permit_rejections: Option<u8>,
    /// How gangs are scheduled: `barrier` (each member reserves and waits at Permit) or
    /// `pod-group` (a gang placed in one cycle, all or nothing; checks I9 and progress without
    /// timeouts too).
    #[cfg_attr(feature = "clap", arg(long, value_name = "CYCLE", value_parser = crate::parse_gang_cycle))]
    pub gang_cycle: Option<GangCycle>,
    /// How many pod-group cycles may hand their gang back (pod-group cycle only).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub retries: Option<u8>,
}

impl Dimensions {
    /// `config` with every given dimension changed. Fails on a cluster with no gang or no
    /// node, or a node with no room.
    pub fn apply(&self, mut config: ClusterConfig) -> Result<ClusterConfig, String> {
        if let Some(gangs) = &self.gangs {
            config.gangs = gangs.iter().map(|g| (g.members, g.min)).collect();
        }
        if let Some(nodes) = &self.nodes {
            config.nodes = nodes.clone();
        }
        if config.gangs.is_empty() || config.gangs.len() > 26 {
            return Err("a cluster needs 1 to 26 gangs".to_owned());
        }
        if config.nodes.is_empty() || config.nodes.contains(&0) {
            return Err("a cluster needs at least one node, each with room for a pod".to_owned());
        }
        config.arrivals = self.arrivals.unwrap_or(config.arrivals);
        config.timeouts = self.timeouts.unwrap_or(config.timeouts);
        config.deletes = self.deletes.unwrap_or(config.deletes);
        config.bind_failures = self.bind_failures.unwrap_or(config.bind_failures);
        config.flushes = self.flushes.unwrap_or(config.flushes);
        config.group_updates = self.group_updates.unwrap_or(config.group_updates);
        config.permit_rejections = self.permit_rejections.unwrap_or(config.permit_rejections);
        config.gang_cycle = self.gang_cycle.unwrap_or(config.gang_cycle);
        config.retries = self.retries.unwrap_or(config.retries);
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use gangsched::{GangCycle, Mode};

    use super::{gang_cycle_name, parse_gang_cycle, Dimensions, GangSpec};
    use crate::Preset;

    #[test]
    fn gang_cycle_names_parse_back() {
        for cycle in [GangCycle::PermitBarrier, GangCycle::PodGroup] {
            assert_eq!(parse_gang_cycle(gang_cycle_name(cycle)), Ok(cycle));
        }
        assert!(parse_gang_cycle("gang")
            .unwrap_err()
            .contains("barrier or pod-group"));
    }

    #[test]
    fn gangs_parse_as_members_or_members_and_min() {
        let spec = |s: &str| s.parse::<GangSpec>();
        assert_eq!(spec("3"), Ok(GangSpec { members: 3, min: 3 }));
        assert_eq!(spec("3/2"), Ok(GangSpec { members: 3, min: 2 }));
        for bad in ["0", "2/3", "3/0", "9", "x", "2/", ""] {
            assert!(spec(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn given_dimensions_change_the_preset_and_the_rest_stays() {
        let dims = Dimensions {
            gangs: Some(vec![GangSpec { members: 3, min: 2 }]),
            timeouts: Some(0),
            ..Dimensions::default()
        };
        let base = Preset::Medium.config(Mode::Upstream);
        let config = dims.apply(base.clone()).expect("valid");
        assert_eq!(config.gangs, vec![(3, 2)]);
        assert_eq!(config.timeouts, 0);
        assert_eq!((config.nodes, config.deletes), (base.nodes, base.deletes));
        assert_eq!(config.mode, Mode::Upstream);
    }

    #[test]
    fn a_cluster_without_room_is_refused() {
        let base = Preset::Tiny.config(Mode::Hardened);
        for nodes in [vec![], vec![2, 0]] {
            let dims = Dimensions {
                nodes: Some(nodes.clone()),
                ..Dimensions::default()
            };
            let e = dims.apply(base.clone()).expect_err("no room");
            assert!(e.contains("at least one node"), "{nodes:?}: {e}");
        }
    }
}
