//! Three placements an embedder might write, each picking the first node by name that has
//! room for the pod (a simpler bin packing than gangway's `ResourceFit`), and one plausible
//! mistake in each of the first two:
//!
//! - [`FirstFit`] declares the events after which a pod it turned away may fit
//!   ([`Placement::requeue_on`]). Its author thought only of new nodes: a pod that found no room
//!   waits for the queue's 5-minute leftover flush after a pod is deleted or a reservation
//!   released, though it fits at once — the lost event of I7, which gangway-check finds.
//! - [`RememberedRoom`] keeps what it thinks each node has free, so as not to sum up a node's
//!   pods at every cycle, and takes a fresh look only when nothing fits. Its copy goes stale:
//!   a released reservation is not in it, a pod placed elsewhere is. gangway-check finds it
//!   answering twice differently for one pod on one cache, and placing a pod on a full node.
//! - [`FirstFit::corrected`] declares every event that can free or add room, and reads the
//!   cache it is given each time: gangway-check verifies it.

use gangsched::queue::EventKind;
use gangsched::scheduler::{CacheState, Placement};
use gangsched::sync::Mutex;
use gangsched::{Pod, Resources, Status};

/// The plugin named in the statuses of the pods these placements turn away.
pub const PLUGIN: &str = "FirstFit";

/// The first node by name with room for the pod, on `cache`.
fn first_fit(pod: &Pod, cache: &CacheState) -> Result<String, Status> {
    cache
        .nodes()
        .find(|node| pod.requests().fits_in(&node.free()))
        .map(|node| node.name().to_owned())
        .ok_or_else(|| Status::unschedulable("no node has room for the pod").with_plugin(PLUGIN))
}

/// First fit, retrying a pod it turned away on `requeue_on`.
#[derive(Clone, Copy, Debug)]
pub struct FirstFit {
    requeue_on: &'static [EventKind],
}

impl FirstFit {
    /// The mistake: a pod that found no room is retried only when a node is added.
    pub const fn only_new_nodes() -> FirstFit {
        FirstFit {
            requeue_on: &[EventKind::NodeAdd],
        }
    }

    /// Retried whenever room may have appeared: a pod deleted or a reservation released, a
    /// node added or changed.
    pub const fn corrected() -> FirstFit {
        FirstFit {
            requeue_on: &[
                EventKind::AssignedPodDelete,
                EventKind::NodeAdd,
                EventKind::NodeUpdate,
            ],
        }
    }
}

impl Placement for FirstFit {
    fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status> {
        first_fit(pod, cache)
    }

    fn requeue_on(&self) -> &'static [EventKind] {
        self.requeue_on
    }
}

/// First fit over a remembered copy of each node's free room, looked at afresh only when
/// nothing fits (see the module docs). Its hints are right; its memory is the mistake.
#[derive(Debug, Default)]
pub struct RememberedRoom {
    free: Mutex<Vec<(String, Resources)>>,
}

impl RememberedRoom {
    /// A placement that has not looked at any cache yet.
    pub fn new() -> RememberedRoom {
        RememberedRoom::default()
    }
}

impl Placement for RememberedRoom {
    fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status> {
        let mut free = self.free.lock();
        let fits = |free: &[(String, Resources)]| {
            free.iter()
                .position(|(_, room)| pod.requests().fits_in(room))
        };
        let at = match fits(&free) {
            Some(at) => at,
            None => {
                // Nothing fits in the copy: look at the cache again.
                *free = cache
                    .nodes()
                    .map(|node| (node.name().to_owned(), node.free()))
                    .collect();
                fits(&free).ok_or_else(|| {
                    Status::unschedulable("no node has room for the pod").with_plugin(PLUGIN)
                })?
            }
        };
        let (node, room) = &mut free[at];
        *room = room.saturating_sub(pod.requests());
        Ok(node.clone())
    }

    fn requeue_on(&self) -> &'static [EventKind] {
        FirstFit::corrected().requeue_on
    }
}
