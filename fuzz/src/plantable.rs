//! The witness mechanism every target shares: which deliberate bug a run plants, named by
//! [`FLAW_VAR`] and read once. One copy for the four targets that plant flaws.

use std::fmt::Debug;

use gangsched::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that plants a flaw in a fuzz target (a name of its `PLANTABLE`).
pub const FLAW_VAR: &str = "GANGWAY_FUZZ_FLAW";

/// The plantable flaw named `name` (its `Debug` name) among `flaws`, if there is one.
pub fn flaw_named<F: Copy + Debug>(flaws: impl IntoIterator<Item = F>, name: &str) -> Option<F> {
    flaws.into_iter().find(|flaw| format!("{flaw:?}") == name)
}

/// The flaw a target plants, chosen once at start-up: 0 none, else 1 + its index in the
/// target's list.
pub struct FlawChoice(AtomicU64);

impl FlawChoice {
    /// No flaw chosen yet.
    pub const fn new() -> FlawChoice {
        FlawChoice(AtomicU64::new(0))
    }

    /// Reads [`FLAW_VAR`] for `target`, whose plantable flaws are `flaws`. Panics on a name
    /// that is not one of them, listing those that are.
    pub fn read<F: Copy + Debug>(&self, target: &str, flaws: impl IntoIterator<Item = F>) {
        let Ok(name) = std::env::var(FLAW_VAR) else {
            return;
        };
        let names: Vec<String> = flaws.into_iter().map(|f| format!("{f:?}")).collect();
        let Some(index) = names.iter().position(|n| *n == name) else {
            panic!("{FLAW_VAR}={name}: not one of {}", names.join(", "))
        };
        self.0.store(index as u64 + 1, Ordering::Relaxed);
        eprintln!("{target}: {name} planted ({FLAW_VAR})");
    }

    /// The flaw [`read`](Self::read) chose among `flaws` (the same list), if any.
    pub fn get<F>(&self, flaws: impl IntoIterator<Item = F>) -> Option<F> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            n => flaws.into_iter().nth(n as usize - 1),
        }
    }
}

impl Default for FlawChoice {
    fn default() -> FlawChoice {
        FlawChoice::new()
    }
}
