//! [`QueueState::check`]: the queue's indexes against the places recorded for its pods.

use std::collections::BTreeMap;

use super::{QueuePlace, QueueState};

impl QueueState {
    /// Verifies I4 — each known pod is in exactly one place, and every index agrees with the
    /// place recorded for the pod — plus the gated count and the event log's bounds.
    pub fn check(&self) -> Result<(), String> {
        let mut active = 0;
        let mut gated = 0;
        // In id order, so that the violation reported is the same whatever the table's order.
        for (id, slot) in self.ids_in_order() {
            let Some(info) = self.slots.get(slot as usize).and_then(Option::as_ref) else {
                return Err(format!("pod {id} filed in empty slot {slot}"));
            };
            if info.id() != id {
                return Err(format!("pod {} filed under {id}", info.id()));
            }
            let place = self.places[slot as usize];
            let indexed = match place {
                QueuePlace::Active(key) => {
                    active += 1;
                    self.active.contains(&(key, id.clone()))
                }
                QueuePlace::Backoff(t) => self.backoff.key_of(slot) == Some(t),
                QueuePlace::ErrorBackoff(t) => self.error_backoff.key_of(slot) == Some(t),
                QueuePlace::Unschedulable => self.pool.contains(slot),
                QueuePlace::InFlight => self.in_flight.contains_key(id),
            };
            if !indexed {
                return Err(format!("pod {id} is {place:?} but not indexed there (I4)"));
            }
            let elsewhere = [
                self.backoff.key_of(slot).is_some(),
                self.error_backoff.key_of(slot).is_some(),
                self.pool.contains(slot),
            ]
            .into_iter()
            .filter(|&filed| filed)
            .count();
            let expected = usize::from(matches!(
                place,
                QueuePlace::Backoff(_) | QueuePlace::ErrorBackoff(_) | QueuePlace::Unschedulable
            ));
            if elsewhere != expected {
                return Err(format!("pod {id} is filed in {elsewhere} places (I4)"));
            }
            if info.gated_by().is_some() {
                if place != QueuePlace::Unschedulable {
                    return Err(format!("gated pod {id} is {place:?}"));
                }
                gated += 1;
            }
            // A scoped move leaves out the pods its hints skip; one with no rejector would be
            // moved by any event, so none may be parked.
            if place == QueuePlace::Unschedulable && !info.has_rejectors() {
                return Err(format!("pod {id} is parked with no rejecting plugin"));
            }
        }
        let used = self.slots.iter().filter(|s| s.is_some()).count();
        if used != self.ids.len()
            || used + self.free.len() != self.slots.len()
            || self.places.len() != self.slots.len()
        {
            return Err(format!(
                "{used} slots used, {} pods known, {} slots free of {}",
                self.ids.len(),
                self.free.len(),
                self.slots.len()
            ));
        }
        self.backoff.check()?;
        self.error_backoff.check()?;
        self.pool.check()?;
        if let Some(gates) = &self.gates {
            gates.check(&self.pool, &self.slots)?;
        }
        if let Some(leftover) = &self.leftover {
            leftover.check(&self.pool, &self.slots)?;
        }
        if let Some(groups) = &self.groups {
            groups.check(&self.slots, &self.places)?;
        }
        for (name, placed, indexed) in [
            ("active", active, self.active.len()),
            ("gated", gated, self.gated),
        ] {
            if placed != indexed {
                return Err(format!(
                    "{indexed} pods indexed as {name}, {placed} placed there (I4)"
                ));
            }
        }
        for id in self.in_flight.keys() {
            if self.place(id).is_some_and(|p| p != QueuePlace::InFlight) {
                return Err(format!("pod {id} is in flight and queued at once (I4)"));
            }
        }
        let mut starts: BTreeMap<u64, u32> = BTreeMap::new();
        for flight in self.in_flight.values() {
            *starts.entry(flight.since).or_default() += 1;
        }
        if !starts.iter().eq(self.flight_starts.iter()) {
            return Err("the attempts' starts are not counted as they are in flight".into());
        }
        if self.in_flight.is_empty() && !self.events.is_empty() {
            return Err("events are kept with no pod in flight".into());
        }
        Ok(())
    }
}
