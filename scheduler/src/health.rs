//! What `/healthz` and `/readyz` report: whether this replica leads, whether its watches have
//! listed everything once, and whether it has finished the placements a crashed predecessor
//! recorded. Shared by the tasks that learn each (atomics: no lock).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The replica's state, as the health endpoints read it. Clones share it.
#[derive(Clone, Debug, Default)]
pub struct Health(Arc<Flags>);

#[derive(Debug, Default)]
struct Flags {
    connected: AtomicBool,
    leading: AtomicBool,
    recovered: AtomicBool,
    nodes_synced: AtomicBool,
    pod_groups_synced: AtomicBool,
    pods_synced: AtomicBool,
}

/// A resource the scheduler watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    /// Nodes.
    Nodes,
    /// PodGroups.
    PodGroups,
    /// Pods.
    Pods,
}

impl Health {
    /// The API server answered.
    pub fn set_connected(&self) {
        self.0.connected.store(true, Ordering::SeqCst);
    }

    /// This replica leads (or runs without leader election).
    pub fn set_leading(&self) {
        self.0.leading.store(true, Ordering::SeqCst);
    }

    /// Recorded placements are finished.
    pub fn set_recovered(&self) {
        self.0.recovered.store(true, Ordering::SeqCst);
    }

    /// `what` has been listed in full.
    pub fn set_synced(&self, what: Watched) {
        self.flag(what).store(true, Ordering::SeqCst);
    }

    fn flag(&self, what: Watched) -> &AtomicBool {
        match what {
            Watched::Nodes => &self.0.nodes_synced,
            Watched::PodGroups => &self.0.pod_groups_synced,
            Watched::Pods => &self.0.pods_synced,
        }
    }

    /// `None` when ready: connected, and either standing by as a follower or leading with
    /// every watch synced and recorded placements finished; else what it still waits for.
    pub fn not_ready(&self) -> Option<&'static str> {
        let f = &self.0;
        let load = |b: &AtomicBool| b.load(Ordering::SeqCst);
        if !load(&f.connected) {
            return Some("api server not reached yet");
        }
        if !load(&f.leading) {
            return None;
        }
        if !load(&f.recovered) {
            return Some("finishing recorded placements");
        }
        [
            ("nodes not listed yet", &f.nodes_synced),
            ("pod groups not listed yet", &f.pod_groups_synced),
            ("pods not listed yet", &f.pods_synced),
        ]
        .into_iter()
        .find(|(_, synced)| !load(synced))
        .map(|(why, _)| why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_once_leading_synced_and_recovered_or_standing_by() {
        let health = Health::default();
        assert_eq!(health.not_ready(), Some("api server not reached yet"));
        health.set_connected();
        assert_eq!(health.not_ready(), None, "a follower stands by, ready");
        health.set_leading();
        assert_eq!(health.not_ready(), Some("finishing recorded placements"));
        health.set_recovered();
        health.set_synced(Watched::Nodes);
        health.set_synced(Watched::Pods);
        assert_eq!(health.not_ready(), Some("pod groups not listed yet"));
        health.set_synced(Watched::PodGroups);
        assert_eq!(health.not_ready(), None);
    }
}
