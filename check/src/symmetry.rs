//! Symmetry reduction: members of a gang are interchangeable, so a state and the same state
//! with two members' names swapped behave alike, and the checker need explore only one of
//! them. [`representative`] renames each gang's members into a canonical order; the depth-first
//! checker skips any state whose representative it has seen.
//!
//! This is sound only for a model whose transitions do not depend on members' names: the
//! symmetric [`GangProtocol`](super::GangProtocol) pops any member of the first gang tied at
//! the head of the queue (not only the smallest name, as the core's queue does) and lets a
//! gang's members arrive in any order. `symmetry_tests.rs` checks that property on random
//! walks, and that the exact model does not have it.

use std::collections::BTreeMap;

use gangsched::checking::symmetry::{PodRenaming, Relabel, Renamed};
use gangsched::checking::{anonymous_record, AnonymousRecord};
use gangsched::queue::QueuePlace;
use gangsched::scheduler::PodPhase;
use gangsched::waiting::Ticket;
use gangsched::{PodId, Time};

use super::cluster::{Cluster, Stage};
use super::home::Home;
use super::shared::Shared;

/// The cluster with every pod replaced by its image (built on this thread): the core's pure states through their own
/// [`Renamed`] impls, and the model's own records of each pod. Free text (a gang attempt's
/// failure reason, the I3 message) keeps the names it quotes.
impl Renamed for Cluster {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> Cluster {
        Cluster {
            groups: Shared::new(self.groups.renamed(renaming)),
            waiting: Shared::new(self.waiting.renamed(renaming)),
            cache: Shared::new(self.cache.renamed(renaming)),
            queue: Shared::new(self.queue.renamed(renaming)),
            driver: Shared::new(self.driver.renamed(renaming)),
            cycle: Shared::new(self.cycle.renamed(renaming)),
            stages: Shared::new(
                self.stages
                    .iter()
                    .map(|(id, stage)| (id.renamed(renaming), *stage))
                    .collect(),
            ),
            pods: Shared::new(self.pods.renamed(renaming)),
            now: self.now,
            budget: self.budget,
            partial: self.partial.clone(),
            timed_out: self.timed_out,
            held: self.held.renamed(renaming),
            plugin_fault: self.plugin_fault.clone(),
            home: Home::here(),
        }
    }
}

/// A pod's place in the queue (kind and time) and its record without its name.
type QueueSignature<'a> = (u8, Option<Time>, AnonymousRecord<'a>);

/// What the state says about one pod, without its name: its stage, its place and record in
/// the queue, its waiting entry, its node reservation, its place in its group.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Signature<'a> {
    stage: Stage,
    queue: Option<QueueSignature<'a>>,
    in_flight_since: Option<u64>,
    recorded: Vec<u64>,
    waiting: Option<(Ticket, Vec<Time>)>,
    node: Option<(&'a str, bool)>,
    group: (bool, bool, bool, bool),
    held: bool,
}

fn signature<'a>(s: &'a Cluster, id: &PodId) -> Signature<'a> {
    let queue = s.queue.place(id).map(|place| {
        let (kind, at) = match place {
            QueuePlace::Active(key) => (0, Some(key.time)),
            QueuePlace::Backoff(until) => (1, Some(until)),
            QueuePlace::ErrorBackoff(until) => (2, Some(until)),
            QueuePlace::Unschedulable => (3, None),
            QueuePlace::InFlight => (4, None),
        };
        let info = s.queue.info(id).expect("a queued pod has a record");
        (kind, at, anonymous_record(info))
    });
    let waiting = s.waiting.get(id).map(|entry| {
        let deadlines = entry.pending().iter().map(|p| p.deadline).collect();
        (entry.ticket(), deadlines)
    });
    let node = s
        .cache
        .pod_node(id)
        .map(|node| (node, s.cache.phase(id) == Some(PodPhase::Assumed)));
    let group = s
        .groups
        .state_of(s.pod(id))
        .filter(|g| g.pod(id).is_some())
        .map_or((false, false, false, false), |g| {
            let waits = g.waits_in_attempt(id);
            (
                true,
                g.assumed().contains(id),
                g.assigned().contains(id),
                waits,
            )
        });
    Signature {
        stage: s.stage(id),
        queue,
        in_flight_since: s.queue.in_flight_since(id),
        recorded: s.queue.recorded_naming(id),
        waiting,
        node,
        group,
        held: s.held.contains(id),
    }
}

/// The state with each gang's members renamed so that, member by member in name order, their
/// name-free signatures ascend (members with equal signatures keep their relative order). Two states
/// that differ only by a permutation of interchangeable members mostly share a representative;
/// when they do not, the checker explores both, which costs time but never soundness.
pub fn representative(s: &Cluster) -> Cluster {
    let mut gangs: BTreeMap<Option<&str>, Vec<&PodId>> = BTreeMap::new();
    for pod in s.pods.values() {
        gangs.entry(pod.group()).or_default().push(pod.id());
    }
    let mut pairs = Vec::new();
    for members in gangs.into_values() {
        let mut by_signature: Vec<(Signature, &PodId)> =
            members.iter().map(|id| (signature(s, id), *id)).collect();
        by_signature.sort();
        for ((_, from), to) in by_signature.into_iter().zip(&members) {
            pairs.push((from.clone(), s.pod(to).clone()));
        }
    }
    let renaming = PodRenaming::new(pairs).expect("a permutation of each gang's members");
    if renaming.is_identity() {
        s.clone()
    } else {
        s.renamed(&renaming)
    }
}
