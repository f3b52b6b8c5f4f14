//! What a queue state is to a model checker: its contents — each pod's record and place, the
//! pods in flight, the recorded events, the cycle count — not how its indexes happen to be laid
//! out (slots, heaps, the group index).

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};

use super::QueueState;

impl PartialEq for QueueState {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.entries().eq(other.entries())
            && self.in_flight == other.in_flight
            && self.events == other.events
            && self.next_seq == other.next_seq
            && self.cycle == other.cycle
            && self.closed == other.closed
            && self.flaw == other.flaw
    }
}

impl Eq for QueueState {}

impl Hash for QueueState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.config.hash(state);
        self.ids.len().hash(state);
        for entry in self.entries() {
            entry.hash(state);
        }
        self.in_flight.hash(state);
        self.events.hash(state);
        self.next_seq.hash(state);
        self.cycle.hash(state);
        self.closed.hash(state);
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
