//! The pod-group cycle's pop: a sibling of a popped gang member taken into flight with it
//! (kube-scheduler 1.36's `PopSpecificPod`).

use super::{Popped, QueuePlace, QueuePlugins, QueueState};
use crate::{PodId, Time};

impl QueueState {
    /// Takes the queued pod `id` into flight for its gang's pod-group cycle, as
    /// kube-scheduler 1.36's `PopSpecificPod` does: a pod in the unschedulable pool or backing
    /// off is activated first (its PreEnqueue gates run again, so a gated pod stays where it
    /// is), then an active pod leaves the active queue and its attempt begins, counted as a
    /// pop's. `None`, changing nothing, for a pod in flight already or not in the queue; `None`
    /// after activating it for one its gates keep out (I4: every pod stays in one place).
    pub fn pop_specific(
        &mut self,
        id: &PodId,
        now: Time,
        plugins: &dyn QueuePlugins,
    ) -> Option<Popped> {
        match self.place(id)? {
            QueuePlace::Active(_) => {}
            QueuePlace::Unschedulable | QueuePlace::Backoff(_) | QueuePlace::ErrorBackoff(_) => {
                // Upstream's unexported `activate`: no event is recorded for it.
                self.activate(std::slice::from_ref(id), now, plugins);
            }
            QueuePlace::InFlight => return None,
        }
        matches!(self.place(id), Some(QueuePlace::Active(_))).then(|| self.start_attempt(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{NoPlugins, QueueConfig};
    use crate::Pod;

    fn queue_with(pods: &[&str]) -> QueueState {
        let mut q = QueueState::new(QueueConfig::default());
        for name in pods {
            q.add(Pod::new(*name, "ml", name), Time::ZERO, &NoPlugins)
                .unwrap();
        }
        q
    }

    #[test]
    fn an_active_sibling_is_taken_into_flight_out_of_turn() {
        let mut q = queue_with(&["a", "b", "c"]);
        let c = PodId::new("c");
        let popped = q.pop_specific(&c, Time::ZERO, &NoPlugins).unwrap();
        assert_eq!(popped.info.id(), &c);
        assert_eq!(popped.info.attempts(), 1);
        assert_eq!(q.place(&c), Some(QueuePlace::InFlight));
        assert_eq!(q.active_len(), 2);
        q.check().unwrap();
    }

    #[test]
    fn a_sibling_backing_off_or_parked_is_activated_then_taken() {
        let mut q = queue_with(&["a", "b"]);
        let (a, b) = (PodId::new("a"), PodId::new("b"));
        for id in [&a, &b] {
            q.pop_specific(id, Time::ZERO, &NoPlugins).unwrap();
        }
        // One back to backoff (an error), one parked by a plugin's rejection.
        q.hand_back(&a, None, Time::ZERO, &NoPlugins).unwrap();
        q.hand_back(&b, Some("NodeResourcesFit".into()), Time::ZERO, &NoPlugins)
            .unwrap();
        assert_ne!(q.place(&a), Some(QueuePlace::InFlight));
        assert_ne!(q.place(&b), Some(QueuePlace::InFlight));
        for id in [&a, &b] {
            let popped = q.pop_specific(id, Time::ZERO, &NoPlugins).unwrap();
            assert_eq!(popped.info.attempts(), 2);
            assert_eq!(q.place(id), Some(QueuePlace::InFlight));
        }
        q.check().unwrap();
    }

    #[test]
    fn a_pod_in_flight_or_unknown_is_not_taken() {
        let mut q = queue_with(&["a"]);
        let a = PodId::new("a");
        q.pop_specific(&a, Time::ZERO, &NoPlugins).unwrap();
        let before = q.clone();
        assert!(q.pop_specific(&a, Time::ZERO, &NoPlugins).is_none());
        assert!(q
            .pop_specific(&PodId::new("nobody"), Time::ZERO, &NoPlugins)
            .is_none());
        assert_eq!(q, before);
    }
}
