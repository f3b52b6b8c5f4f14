//! What a queue state is to a model checker: its contents — each pod's record and place, the
//! pods in flight, the recorded events, the cycle count — not how its indexes happen to be laid
//! out (slots, heaps, the group index) nor the order of the hash table that finds each pod's
//! slot: the pods are compared and hashed as a set.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};

use super::QueueState;
use crate::fast_hash::hash_unordered;

impl PartialEq for QueueState {
    fn eq(&self, other: &Self) -> bool {
        let same = self.config == other.config
            && self.same_pods(other)
            && self.in_flight == other.in_flight
            && self.events == other.events
            && self.next_seq == other.next_seq
            && self.cycle == other.cycle
            && self.closed == other.closed;
        // A checker's queue with a bug planted is another queue.
        #[cfg(feature = "checking")]
        let same = same && self.flaw == other.flaw;
        same
    }
}

impl Eq for QueueState {}

impl QueueState {
    /// Whether `other` knows the same pods, each in the same place with an equal record.
    fn same_pods(&self, other: &Self) -> bool {
        self.ids.len() == other.ids.len()
            && self.entries().all(|(id, place, info)| {
                other.ids.get(id).is_some_and(|&slot| {
                    other.places[slot as usize] == place && other.info_at(slot) == info
                })
            })
    }
}

impl Hash for QueueState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.config.hash(state);
        self.ids.len().hash(state);
        hash_unordered(self.entries()).hash(state);
        self.in_flight.hash(state);
        self.events.hash(state);
        self.next_seq.hash(state);
        self.cycle.hash(state);
        self.closed.hash(state);
        #[cfg(feature = "checking")]
        self.flaw.hash(state);
    }
}

impl fmt::Debug for QueueState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueState")
            .field("config", &self.config)
            .field(
                "pods",
                &self
                    .entries()
                    .map(|(id, place, info)| (id, (place, info)))
                    .collect::<BTreeMap<_, _>>(),
            )
            .field("in_flight", &self.in_flight)
            .field("events", &self.events)
            .field("next_seq", &self.next_seq)
            .field("cycle", &self.cycle)
            .field("closed", &self.closed)
            .finish()
    }
}
