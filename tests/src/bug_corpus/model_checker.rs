//! Finding a corpus bug with the model checker: the bug planted in the core's own steps
//! ([`Flaw`]) or gang operations ([`GangFlaw`]), the checker's breadth-first walk run until it
//! discovers the property the bug breaks, the time it took and the counterexample's timeline.

use std::time::{Duration, Instant};

use gangsched::checking::{Flaw, GangFlaw};
use gangsched::{GangCycle, Mode};
use gangway_check::{discover, timeline, ClusterConfig, GangProtocol, Preset};

/// A flaw the model checker can plant: in the driver's steps or in the gang plugin's
/// operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planted {
    /// In the driver's steps.
    Step(Flaw),
    /// In the gang plugin's operations.
    Gang(GangFlaw),
}

/// Where the model checker looks: a preset, a mode, a gang cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Where {
    /// The cluster.
    pub preset: Preset,
    /// The mode.
    pub mode: Mode,
    /// The gang cycle.
    pub cycle: GangCycle,
}

/// What the model checker found.
#[derive(Clone, Debug)]
pub struct Found {
    /// How long the walk took to the discovery.
    pub elapsed: Duration,
    /// The counterexample, as `gangway check` prints it.
    pub timeline: String,
    /// Its number of steps.
    pub steps: usize,
}

impl Where {
    /// The cluster the model checker explores here.
    pub fn config(self) -> ClusterConfig {
        let mut config = self.preset.config(self.mode);
        config.gang_cycle = self.cycle;
        config
    }
}

/// The model of `config` with `planted` in it.
pub fn model(planted: Planted, config: ClusterConfig) -> GangProtocol {
    let mut model = GangProtocol::new(config);
    match planted {
        Planted::Step(flaw) => model.flaw = Some(flaw),
        Planted::Gang(flaw) => model.gang_flaw = Some(flaw),
    }
    model
}

/// The model checker's shortest counterexample to `property` with `planted` in `config`, if
/// it has one (two threads, as CI's machines have).
pub fn find(planted: Planted, config: ClusterConfig, property: &'static str) -> Option<Found> {
    let model = model(planted, config);
    let started = Instant::now();
    let path = discover(&model, property, 2)?;
    let elapsed = started.elapsed();
    let steps = path.len().saturating_sub(1);
    let timeline = timeline(&model, property, path).to_string();
    Some(Found {
        elapsed,
        timeline,
        steps,
    })
}
