//! Renaming the queue's pods, for symmetry reduction ([`crate::symmetry`]).

use super::state::Recorded;
use super::{ClusterEvent, Popped, QueueState, QueuedPodInfo};
use crate::symmetry::{relabel_pod_group, Relabel, Renamed};

/// The record with its pod renamed; its times, attempts, rejectors and gate kept.
impl Renamed for QueuedPodInfo {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> QueuedPodInfo {
        let mut info = self.clone();
        info.set_pod(self.pod().renamed(renaming));
        info
    }
}

/// The event with the pods and PodGroups it carries relabeled; node names (owned strings) kept.
impl Renamed for ClusterEvent {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> ClusterEvent {
        let pod = |p: &crate::Pod| p.renamed(renaming);
        match self {
            ClusterEvent::UnscheduledPodAdd(p) => ClusterEvent::UnscheduledPodAdd(pod(p)),
            ClusterEvent::UnscheduledPodUpdate { old, new } => ClusterEvent::UnscheduledPodUpdate {
                old: pod(old),
                new: pod(new),
            },
            ClusterEvent::AssignedPodAdd(p) => ClusterEvent::AssignedPodAdd(pod(p)),
            ClusterEvent::AssignedPodDelete(p) => ClusterEvent::AssignedPodDelete(pod(p)),
            ClusterEvent::PodGroupAdd(g) => {
                ClusterEvent::PodGroupAdd(relabel_pod_group(g, renaming))
            }
            ClusterEvent::PodGroupUpdate { old, new } => ClusterEvent::PodGroupUpdate {
                old: relabel_pod_group(old, renaming),
                new: relabel_pod_group(new, renaming),
            },
            ClusterEvent::NodeAdd(_)
            | ClusterEvent::NodeUpdate(_)
            | ClusterEvent::NodeDelete(_)
            | ClusterEvent::ForceActivate
            | ClusterEvent::UnschedulableTimeout
            | ClusterEvent::BackoffComplete => self.clone(),
        }
    }
}

/// The queue with every pod renamed: its index, its records, the active queue (rebuilt, since
/// its order breaks sort-key ties by pod id), the pods in flight and the recorded events.
/// Slots, places, the backoff heaps and pool (keyed by slot), counters and times are kept;
/// the group index is dropped.
impl Renamed for QueueState {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> QueueState {
        if renaming.is_identity() {
            return self.clone();
        }
        let mut q = self.clone();
        // Renaming may relabel groups; the index is rebuilt when next needed.
        q.groups = None;
        q.ids = self
            .ids
            .iter()
            .map(|(id, &slot)| (id.renamed(renaming), slot))
            .collect();
        for info in q.slots.iter_mut().flatten() {
            *info = info.renamed(renaming);
        }
        q.active = self
            .active
            .iter()
            .map(|(key, id)| (*key, id.renamed(renaming)))
            .collect();
        q.in_flight = self
            .in_flight
            .iter()
            .map(|(id, flight)| (id.renamed(renaming), flight.clone()))
            .collect();
        q.events = self
            .events
            .iter()
            .map(|r| Recorded {
                seq: r.seq,
                event: r.event.renamed(renaming),
                target: r.target.renamed(renaming),
            })
            .collect();
        q
    }
}

/// A queue record with the pod left out: timestamp, attempts (with the rejections and the
/// consecutive errors), marks, initial attempt, last flush, rejecting plugins, pending plugins,
/// gate.
pub type AnonymousRecord<'a> = (
    crate::Time,
    (u32, u8, u8),
    u8,
    crate::Time,
    crate::Time,
    Vec<&'a str>,
    Vec<&'a str>,
    Option<&'a str>,
);

impl QueuedPodInfo {
    /// Everything the record says except which pod it is, for ordering interchangeable pods
    /// canonically (two members with equal anonymous records are in the same place in the
    /// queue's history).
    pub(crate) fn anonymous(&self) -> AnonymousRecord<'_> {
        (
            self.timestamp(),
            (
                self.attempts(),
                self.unschedulable_count,
                self.consecutive_errors,
            ),
            self.marks,
            self.initial_attempt,
            self.flushed_at,
            plugin_names(&self.unschedulable_plugins),
            plugin_names(&self.pending_plugins),
            self.gated_by.as_ref().map(|p| p.as_str()),
        )
    }
}

fn plugin_names(names: &crate::PluginNames) -> Vec<&str> {
    names.iter().map(|p| p.as_str()).collect()
}

impl QueueState {
    /// For a pod in flight, the sequence number of the first cluster event recorded during
    /// its attempt (those are replayed when it comes back, I7); `None` if it is not in flight.
    /// A fact about the pod that does not depend on its name, for ordering pods canonically.
    pub fn in_flight_since(&self, id: &crate::PodId) -> Option<u64> {
        self.in_flight.get(id).map(|f| f.since)
    }

    /// The sequence numbers of the recorded cluster events that carry pod `id` or target it:
    /// where the pod appears in the history pods in flight will replay.
    pub fn recorded_naming(&self, id: &crate::PodId) -> Vec<u64> {
        let names = |r: &Recorded| {
            let carried = match &r.event {
                ClusterEvent::UnscheduledPodAdd(p)
                | ClusterEvent::AssignedPodAdd(p)
                | ClusterEvent::AssignedPodDelete(p)
                | ClusterEvent::UnscheduledPodUpdate { new: p, .. } => Some(p.id()),
                _ => None,
            };
            carried == Some(id) || r.target.as_ref() == Some(id)
        };
        self.events
            .iter()
            .filter(|r| names(r))
            .map(|r| r.seq)
            .collect()
    }
}

/// The pod's record renamed; the cycle number kept.
impl Renamed for Popped {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Popped {
        Popped {
            info: self.info.renamed(r),
            cycle: self.cycle,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;
    use std::collections::BTreeMap;
    use std::hash::{Hash, Hasher};

    use super::*;
    use crate::queue::{EventKind, NoPlugins, PluginSet, QueueConfig, QueuePlace};
    use crate::symmetry::PodRenaming;
    use crate::PodGroup;
    use crate::{Pod, PodId, QueueingHint, Time};

    const NODE: &str = "NodeResourcesFit";

    fn pods() -> Vec<Pod> {
        (0..3)
            .map(|i| Pod::new(format!("a-{i}"), "ns", &format!("a-{i}")).with_group("a"))
            .collect()
    }

    fn id(s: &str) -> PodId {
        PodId::from(s)
    }

    /// A record's anonymous form leaves out only which pod it is: two members with one
    /// history have one, and a rejecting or pending plugin tells them apart (the model
    /// checker's symmetry orders interchangeable pods by it).
    #[test]
    fn the_anonymous_record_is_the_history_without_the_name() {
        let [a, b, _] = <[Pod; 3]>::try_from(pods()).unwrap();
        let plain = QueuedPodInfo::new(a.clone(), Time::ZERO);
        assert_eq!(
            plain.anonymous(),
            QueuedPodInfo::new(b, Time::ZERO).anonymous()
        );
        let rejected = QueuedPodInfo::new(a.clone(), Time::ZERO).rejected_by(NODE);
        assert_ne!(rejected.anonymous(), plain.anonymous());
        assert_eq!(rejected.anonymous().5, [NODE]);
        let pending = QueuedPodInfo::new(a, Time::ZERO).pending_on("Volumes");
        assert_eq!(pending.anonymous().6, ["Volumes"]);
        assert_ne!(pending.anonymous(), plain.anonymous());
        assert_ne!(
            QueuedPodInfo::new(pods()[0].clone(), Time::from_secs(1)).anonymous(),
            plain.anonymous()
        );
    }

    /// Where a pod stands in the history kept for the attempts in flight: since when its own
    /// attempt runs, and which recorded events carry it or target it.
    #[test]
    fn a_pod_s_place_in_the_recorded_history() {
        let queue_all = |_: &Pod, _: &ClusterEvent| Ok(QueueingHint::Queue);
        let p = PluginSet::new()
            .with_hint(NODE, EventKind::AssignedPodDelete, queue_all)
            .with_hint(NODE, EventKind::UnscheduledPodUpdate, queue_all);
        let [a, b, c] = <[Pod; 3]>::try_from(pods()).unwrap();
        let mut q = QueueState::new(QueueConfig::default());
        for pod in [&a, &b, &c] {
            q.add(pod.clone(), Time::ZERO, &p).unwrap();
        }
        let deleted = |pod: &Pod| ClusterEvent::AssignedPodDelete(pod.clone());
        assert_eq!(q.pop().unwrap().info.id(), a.id());
        q.move_all_to_active_or_backoff(deleted(&Pod::new("x", "ns", "x")), None, Time::ZERO, &p);
        assert_eq!(q.pop().unwrap().info.id(), b.id());
        let updated = ClusterEvent::UnscheduledPodUpdate {
            old: c.clone(),
            new: c.clone().with_priority(5),
        };
        q.move_all_to_active_or_backoff(updated, None, Time::ZERO, &p);
        q.move_all_to_active_or_backoff(deleted(&a), None, Time::ZERO, &p);
        q.activate(std::slice::from_ref(b.id()), Time::ZERO, &p);
        // Recorded: 0 x deleted, 1 c updated, 2 a deleted, 3 b activated (its target).
        assert_eq!(q.in_flight_since(a.id()), Some(0));
        assert_eq!(q.in_flight_since(b.id()), Some(1));
        assert_eq!(q.in_flight_since(c.id()), None, "queued, not in flight");
        assert_eq!(q.recorded_naming(a.id()), [2]);
        assert_eq!(q.recorded_naming(b.id()), [3]);
        assert_eq!(q.recorded_naming(c.id()), [1]);
        assert!(q.recorded_naming(&id("x")).len() == 1);
    }

    /// A rotation a-0 → a-1 → a-2 → a-0.
    fn rotation(pods: &[Pod]) -> PodRenaming {
        let n = pods.len();
        PodRenaming::new((0..n).map(|i| (pods[i].id().clone(), pods[(i + 1) % n].clone()))).unwrap()
    }

    /// The inverse rotation a-1 → a-0, a-2 → a-1, a-0 → a-2.
    fn inverse_rotation(pods: &[Pod]) -> PodRenaming {
        let n = pods.len();
        PodRenaming::new((0..n).map(|i| (pods[(i + 1) % n].id().clone(), pods[i].clone()))).unwrap()
    }

    /// Swaps a-0 and a-1.
    fn swap(pods: &[Pod]) -> PodRenaming {
        PodRenaming::new([
            (pods[0].id().clone(), pods[1].clone()),
            (pods[1].id().clone(), pods[0].clone()),
        ])
        .unwrap()
    }

    /// NodeResourcesFit says a deleted pod may free room; nothing depends on pod names.
    fn plugins() -> PluginSet {
        PluginSet::new().with_hint(NODE, EventKind::AssignedPodDelete, |_, _| {
            Ok(QueueingHint::Queue)
        })
    }

    fn hash(q: &QueueState) -> u64 {
        let mut h = DefaultHasher::new();
        q.hash(&mut h);
        h.finish()
    }

    /// One step, on pods named by their index.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Add(usize, u64),
        Pop,
        /// Hands the pod in flight back, rejected by NodeResourcesFit, at this second.
        HandBack(usize, u64),
        /// A deletion of the bound pod's copy: a pod event that frees room.
        PodDeleted(usize),
        Activate(usize),
        Flush(u64),
        Delete(usize),
        Done(usize),
    }

    /// Applies `op` to `q` on `pods` (pops are handled by the caller).
    fn apply(q: &mut QueueState, pods: &[Pod], op: Op, p: &PluginSet) {
        let secs = Time::from_secs;
        match op {
            Op::Add(i, t) => assert!(q.add(pods[i].clone(), secs(t), p).unwrap()),
            Op::Pop => unreachable!("popped in lockstep"),
            Op::HandBack(i, t) => {
                let info = q.info(pods[i].id()).unwrap().clone().rejected_by(NODE);
                q.add_unschedulable_if_not_present(info, secs(t), p)
                    .unwrap();
            }
            Op::PodDeleted(i) => {
                let event = ClusterEvent::AssignedPodDelete(pods[i].clone());
                q.move_all_to_active_or_backoff(event, None, secs(1), p);
            }
            Op::Activate(i) => {
                q.activate(&[pods[i].id().clone()], secs(1), p);
            }
            Op::Flush(t) => {
                q.flush_backoff_completed(secs(t), p);
            }
            Op::Delete(i) => assert!(q.delete(pods[i].id())),
            Op::Done(i) => assert!(q.done(pods[i].id())),
        }
    }

    /// Runs `ops` on `pods` and, in lockstep, on their images under `g` (a pop of the first
    /// queue's pod is matched by a pop of its image, which is tied with the second's head),
    /// checking after every step that the renamed first queue is the second. Returns how many
    /// steps had two or more pods tied at the head.
    fn lockstep(g: &PodRenaming, ops: &[Op]) -> usize {
        let p = plugins();
        let pods = pods();
        let images: Vec<Pod> = pods.iter().map(|pod| g.pod(pod)).collect();
        let mut first = QueueState::new(QueueConfig::default());
        let mut second = QueueState::new(QueueConfig::default());
        let mut tied = 0;
        for &op in ops {
            if let Op::Pop = op {
                let a = first.pop().unwrap();
                let b = second.pop_tied(&g.id(a.info.id())).unwrap();
                assert_eq!((a.info.renamed(g), a.cycle), (b.info, b.cycle));
            } else {
                apply(&mut first, &pods, op, &p);
                apply(&mut second, &images, op, &p);
            }
            let renamed = first.renamed(g);
            assert_eq!(renamed, second, "after {op:?}");
            assert_eq!(hash(&renamed), hash(&second));
            for q in [&first, &second, &renamed] {
                q.check().unwrap();
            }
            assert!(renamed.active_order().eq(second.active_order()));
            assert!(renamed.heads().eq(second.heads()));
            tied += usize::from(first.heads().count() >= 2);
        }
        tied
    }

    fn script() -> Vec<Op> {
        use Op::*;
        vec![
            Add(0, 0),
            Add(1, 0),
            Add(2, 0),
            Pop,
            Pop,
            // a-0 is parked; a-1 is still in flight when a pod event moves a-0 to backoff,
            // and when a-1 is activated: both are recorded for a-1's attempt.
            HandBack(0, 1),
            PodDeleted(2),
            Activate(1),
            HandBack(1, 1),
            // Both back off until 2 s and come back tied, behind a-2.
            Flush(2),
            Pop,
            Delete(0),
            Delete(2),
            Done(2),
            Pop,
            Done(1),
        ]
    }

    #[test]
    fn renaming_commutes_with_every_step() {
        let pods = pods();
        for g in [swap(&pods), rotation(&pods), inverse_rotation(&pods)] {
            assert!(lockstep(&g, &script()) >= 3);
        }
    }

    #[test]
    fn a_renamed_queue_keeps_its_events_places_and_slots() {
        let p = plugins();
        let pods = pods();
        let mut q = QueueState::new(QueueConfig::default());
        for (i, t) in [(0, 0), (1, 0), (2, 0)] {
            apply(&mut q, &pods, Op::Add(i, t), &p);
        }
        q.pop().unwrap();
        apply(&mut q, &pods, Op::Activate(0), &p);
        apply(&mut q, &pods, Op::PodDeleted(1), &p);
        let g = rotation(&pods);
        let r = q.renamed(&g);
        r.check().unwrap();
        assert_eq!(r.place(&id("a-1")), Some(QueuePlace::InFlight));
        assert_eq!(r.info(&id("a-1")).unwrap().pod().name(), "a-1");
        assert_eq!(
            r.active_order().collect::<Vec<_>>(),
            [&id("a-0"), &id("a-2")]
        );
        let slots = BTreeMap::from([(id("a-0"), 2), (id("a-1"), 0), (id("a-2"), 1)]);
        let filed: BTreeMap<PodId, u32> =
            r.ids.iter().map(|(id, &slot)| (id.clone(), slot)).collect();
        assert_eq!(filed, slots);
        let events: Vec<_> = r.events.iter().map(|e| (&e.event, &e.target)).collect();
        let deleted = ClusterEvent::AssignedPodDelete(pods[2].clone());
        assert_eq!(
            events,
            [
                (&ClusterEvent::ForceActivate, &Some(id("a-1"))),
                (&deleted, &None)
            ]
        );
        assert_eq!(r.in_flight.keys().collect::<Vec<_>>(), [&id("a-1")]);
    }

    #[test]
    fn renaming_back_gives_the_original() {
        let p = plugins();
        let pods = pods();
        let mut q = QueueState::new(QueueConfig::default());
        for op in [Op::Add(0, 0), Op::Add(1, 0), Op::Add(2, 0)] {
            apply(&mut q, &pods, op, &p);
        }
        q.pop().unwrap();
        apply(&mut q, &pods, Op::PodDeleted(1), &p);
        for (g, inverse) in [
            (rotation(&pods), inverse_rotation(&pods)),
            (swap(&pods), swap(&pods)),
        ] {
            let back = q.renamed(&g).renamed(&inverse);
            assert_eq!(back, q);
            assert!(back.active_order().eq(q.active_order()));
            assert_ne!(q.renamed(&g), q);
        }
        assert_eq!(q.renamed(&PodRenaming::identity()), q);
    }

    #[test]
    fn events_rename_their_pods_only() {
        let pods = pods();
        let g = rotation(&pods);
        let update = ClusterEvent::UnscheduledPodUpdate {
            old: pods[0].clone(),
            new: pods[2].clone(),
        };
        assert_eq!(
            update.renamed(&g),
            ClusterEvent::UnscheduledPodUpdate {
                old: pods[1].clone(),
                new: pods[0].clone(),
            }
        );
        let add = ClusterEvent::UnscheduledPodAdd(pods[1].clone());
        assert_eq!(
            add.renamed(&g),
            ClusterEvent::UnscheduledPodAdd(pods[2].clone())
        );
        let group = ClusterEvent::PodGroupAdd(PodGroup::gang("ns", "a", 3).unwrap());
        let node = ClusterEvent::NodeAdd("a-0".into());
        for event in [group, node, ClusterEvent::ForceActivate] {
            assert_eq!(event.renamed(&g), event);
        }
    }

    /// a-0 and a-2 tied at the head (added in the other order), "late" behind them.
    fn tied_queue() -> QueueState {
        let mut q = QueueState::new(QueueConfig::default());
        for pod in [
            Pod::new("a-2", "ns", "a-2"),
            Pod::new("a-0", "ns", "a-0"),
            Pod::new("late", "ns", "late"),
        ] {
            let t = if pod.name() == "late" { 1 } else { 0 };
            q.add(pod, Time::from_secs(t), &NoPlugins).unwrap();
        }
        q
    }

    #[test]
    fn heads_lists_the_pods_tied_with_the_first() {
        let mut q = QueueState::new(QueueConfig::default());
        assert_eq!(q.heads().count(), 0);
        assert!(q.pop_tied(&id("a-0")).is_none());
        q.add(
            Pod::new("a-1", "ns", "a-1").with_priority(5),
            Time::ZERO,
            &NoPlugins,
        )
        .unwrap();
        assert_eq!(q.heads().collect::<Vec<_>>(), [&id("a-1")]);
        let q = tied_queue();
        assert_eq!(q.heads().collect::<Vec<_>>(), [&id("a-0"), &id("a-2")]);
        assert_eq!(q.active_len(), 3);
    }

    #[test]
    fn pop_tied_pops_any_head_and_nothing_else() {
        let mut q = tied_queue();
        let before = q.clone();
        // Behind the heads, unknown, or in flight: nothing changes.
        assert!(q.pop_tied(&id("late")).is_none());
        assert!(q.pop_tied(&id("nobody")).is_none());
        assert_eq!(q, before);
        assert!(q.active_order().eq(before.active_order()));
        let popped = q.pop_tied(&id("a-2")).unwrap();
        assert_eq!((popped.info.id(), popped.cycle), (&id("a-2"), 1));
        assert_eq!(popped.info.attempts(), 1);
        assert_eq!(q.place(&id("a-2")), Some(QueuePlace::InFlight));
        assert!(q.pop_tied(&id("a-2")).is_none());
        assert_eq!(q.heads().collect::<Vec<_>>(), [&id("a-0")]);
        q.check().unwrap();
        // `pop` still takes the first head.
        let mut p = tied_queue();
        assert_eq!(p.pop().unwrap().info.id(), &id("a-0"));
        assert_eq!(q.pop().unwrap().info.id(), &id("a-0"));
        assert_eq!(q.pop().unwrap().info.id(), &id("late"));
        assert!(q.pop().is_none());
        q.check().unwrap();
    }
}
