//! The checker's entry point for an embedder's own parts: a preset cluster (or one changed
//! dimension by dimension), a mode, a gang cycle, the embedder's placement and Permit plugins,
//! and the search — run, and reported as `gangway check` reports.

use gangsched::scheduler::Placement;
use gangsched::{GangCycle, Mode, PermitPlugins};

use super::cluster::ClusterConfig;
use super::dimensions::Dimensions;
use super::plugins::Plugins;
use super::protocol::GangProtocol;
use super::run::{check_with, CheckReport, Preset, Search};

/// A check to run: see the crate docs for a whole example.
///
/// ```
/// use gangway_check::{Check, Preset};
/// use gangsched::Mode;
///
/// let report = Check::new(Preset::Tiny, Mode::Hardened).run()?;
/// assert!(report.all_hold(), "{report}");
/// # Ok::<(), gangway_check::CheckError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a check does nothing until run"]
pub struct Check {
    preset: Preset,
    model: GangProtocol,
    threads: usize,
    search: Search,
}

/// Why a check was not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// A dimension that cannot be checked (a gang of 0, more than 8 members, no node…).
    #[error("{0}")]
    Dimensions(String),
    /// Symmetry reduction takes a gang's members as interchangeable, which an embedder's
    /// plugin need not: search breadth first or depth first instead.
    #[error(
        "symmetric search needs gangway's own parts: an embedder's plugin may tell members apart"
    )]
    SymmetryWithPlugins,
}

impl Check {
    /// `preset`'s cluster in `mode`, with gangway's own parts, breadth first on 2 threads.
    pub fn new(preset: Preset, mode: Mode) -> Check {
        Check {
            preset,
            model: GangProtocol::new(preset.config(mode)),
            threads: 2,
            search: Search::Bfs,
        }
    }

    /// The preset's cluster with `dimensions` changed.
    pub fn dimensions(mut self, dimensions: &Dimensions) -> Result<Check, CheckError> {
        self.model.config = dimensions
            .apply(self.model.config.clone())
            .map_err(CheckError::Dimensions)?;
        Ok(self)
    }

    /// Checks `config` instead of the preset's cluster (the report still names the preset).
    pub fn cluster(mut self, config: ClusterConfig) -> Check {
        self.model.config = config;
        self
    }

    /// Gangs scheduled by `cycle`: the Permit barrier (the default) or the pod-group cycle.
    pub fn gang_cycle(mut self, cycle: GangCycle) -> Check {
        self.model.config.gang_cycle = cycle;
        self
    }

    /// The embedder's `placement`, named `name` in the report, in gangway's
    /// [`ResourceFit`](gangsched::scheduler::ResourceFit)'s place: run in every scheduling
    /// cycle, its queueing hints ([`Placement::requeue_on`]) in the queue's, and held to its
    /// contract ([`Plugins`]).
    pub fn placement(mut self, name: &str, placement: impl Placement + 'static) -> Check {
        self.model.plugins = self.model.plugins.placement(name, placement);
        self
    }

    /// The embedder's Permit `plugins`, beside the gang's, folded in the mode's order.
    pub fn permit_plugins(mut self, plugins: PermitPlugins) -> Check {
        self.model.plugins = self.model.plugins.permit_plugins(plugins);
        self
    }

    /// How many Permits an embedder's plugin may turn a pod away at on one path (2 by default:
    /// see [`Plugins`]).
    pub fn denials(mut self, denials: u8) -> Check {
        self.model.plugins = self.model.plugins.denials(denials);
        self
    }

    /// Checks I9 with the Permit barrier too (the pod-group cycle always does; progress
    /// without timeouts is checked in both).
    pub fn hold_and_wait(mut self, on: bool) -> Check {
        self.model.hold_and_wait = on;
        self
    }

    /// Checker threads (at least 1).
    pub fn threads(mut self, threads: usize) -> Check {
        self.threads = threads.max(1);
        self
    }

    /// How the checker walks the state space.
    pub fn search(mut self, search: Search) -> Check {
        self.search = search;
        self
    }

    /// The model this check explores.
    pub fn model(&self) -> &GangProtocol {
        &self.model
    }

    /// Explores every state and checks every property: the report says which hold, with a
    /// timeline for each counterexample.
    pub fn run(self) -> Result<CheckReport, CheckError> {
        if self.search == Search::Symmetric && !self.model.plugins.are_gangways() {
            return Err(CheckError::SymmetryWithPlugins);
        }
        Ok(check_with(
            self.model,
            self.preset,
            self.threads,
            self.search,
        ))
    }
}

/// The embedder's parts as a whole: [`Plugins`] built apart, then given to a check.
impl Check {
    /// The check with `plugins` in place of its parts.
    pub fn plugins(mut self, plugins: Plugins) -> Check {
        self.model.plugins = plugins;
        self
    }
}
