//! Renaming a [`WaitingState`]: every pod under its image, in the map and in the deadline index.

use super::{WaitingEntry, WaitingState};
use crate::symmetry::{Relabel, Renamed};

/// The entry of the pod's image: the stored pod renamed; its ticket, pending plugins (with their
/// deadlines) and latch kept, so it still has at least one pending plugin, none twice.
impl<L: Clone> Renamed for WaitingEntry<L> {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> WaitingEntry<L> {
        let WaitingEntry {
            pod,
            ticket,
            pending,
            latch,
        } = self;
        WaitingEntry {
            pod: renaming.pod(pod),
            ticket: *ticket,
            pending: pending.clone(),
            latch: latch.clone(),
        }
    }
}

/// The waiting map with every pod renamed — its key, its stored pod and its deadline-index
/// entry alike; tickets, deadlines and latches kept. Keeps what [`WaitingState::check`]
/// verifies: each pod is filed under its own id, and the index holds exactly one entry per pod
/// with a deadline, its earliest.
impl<L: Clone> Renamed for WaitingState<L> {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> WaitingState<L> {
        let WaitingState {
            pods,
            deadlines,
            next_ticket,
        } = self;
        WaitingState {
            pods: pods
                .iter()
                .map(|(id, entry)| (renaming.id(id), entry.renamed(renaming)))
                .collect(),
            deadlines: deadlines
                .iter()
                .map(|(deadline, id)| (*deadline, renaming.id(id)))
                .collect(),
            next_ticket: *next_ticket,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::symmetry::permutations;
    use crate::symmetry::PodRenaming;
    use crate::waiting::{AllowOutcome, Cause, Decided};
    use crate::{Pod, PodId, Status, Time};

    const MIN: Duration = Duration::from_secs(60);
    const GANG: &str = "GangScheduling";

    /// Members a-0, a-1, a-2 of gang "a", told apart by priority so that an image keeps its
    /// source's other fields and is not simply the pod of that name.
    fn pods() -> [Pod; 3] {
        let mut i = 0;
        ["a-0", "a-1", "a-2"].map(|name| {
            i += 1;
            Pod::new(name, "ns", name).with_group("a").with_priority(i)
        })
    }

    /// The renaming that gives pod `i` the name of pod `perm[i]`.
    fn renaming(perm: [usize; 3]) -> PodRenaming {
        permutations::renaming(&pods(), perm)
    }

    fn waits(list: &[(&'static str, Duration)]) -> Vec<(crate::PluginName, Duration)> {
        list.iter().map(|&(p, w)| (p.into(), w)).collect()
    }

    /// One run of adds, allows, an expiry, a rejection and re-adds on `p`; the final state and
    /// every pod decided on the way. Ends with all three waiting, each under another deadline
    /// (one moved by an allow), and one ticket per registration.
    fn run(p: &[Pod; 3]) -> (WaitingState<u32>, Vec<Decided<u32>>) {
        let t0 = Time::from_secs(10);
        let mut s = WaitingState::new();
        let mut decided = Vec::new();
        let t = s
            .add(
                p[0].clone(),
                waits(&[(GANG, 5 * MIN), ("Quota", 2 * MIN)]),
                t0,
                0,
            )
            .unwrap();
        s.add(p[1].clone(), waits(&[(GANG, 3 * MIN)]), t0, 1)
            .unwrap();
        s.add_untimed(p[2].clone(), GANG.into(), 2).unwrap();
        let outcome = s.allow(p[0].id(), Some(t), "Quota");
        assert_eq!(outcome, AllowOutcome::StillPending);
        decided.extend(s.expire(t0 + 3 * MIN));
        let t1 = t0 + 3 * MIN;
        s.add(p[1].clone(), waits(&[(GANG, 4 * MIN)]), t1, 3)
            .unwrap();
        decided.extend(s.reject(
            p[2].id(),
            None,
            Status::unschedulable("gang a failed"),
            Cause::Rejected,
        ));
        let w = waits(&[(GANG, MIN), ("Quota", 6 * MIN)]);
        s.add(p[2].clone(), w, t1, 4).unwrap();
        let outcome = s.allow(p[2].id(), None, GANG);
        assert_eq!(outcome, AllowOutcome::StillPending);
        assert!(s.allow_all(&[p[0].id().clone(), "z".into()], GANG).is_err());
        s.check().unwrap();
        assert_eq!((s.len(), decided.len()), (3, 2));
        (s, decided)
    }

    fn rename_decided(d: &Decided<u32>, g: &PodRenaming) -> Decided<u32> {
        Decided {
            pod: g.pod(&d.pod),
            ..d.clone()
        }
    }

    #[test]
    fn renaming_a_run_is_the_run_on_the_renamed_pods() {
        let p = pods();
        let (first, first_decided) = run(&p);
        for perm in permutations::ALL {
            let g = renaming(perm);
            let (second, second_decided) = run(&p.clone().map(|pod| g.pod(&pod)));
            let renamed = first.renamed(&g);
            assert_eq!(renamed, second, "renaming by {perm:?}");
            renamed.check().unwrap();
            let decided: Vec<_> = first_decided
                .iter()
                .map(|d| rename_decided(d, &g))
                .collect();
            assert_eq!(decided, second_decided, "decisions renamed by {perm:?}");
            if perm != [0, 1, 2] {
                assert_ne!(renamed, first, "{perm:?} moves the deadlines");
            }
        }
    }

    #[test]
    fn renaming_an_entry_renames_its_pod_only() {
        let p = pods();
        let (state, _) = run(&p);
        let g = renaming([1, 2, 0]);
        let entry = state.get(p[0].id()).unwrap();
        let image = entry.renamed(&g);
        assert_eq!(image.pod(), &g.pod(&p[0]));
        assert_eq!(image.pod().priority(), p[0].priority());
        assert_eq!(
            (image.ticket(), image.pending(), image.latch()),
            (entry.ticket(), entry.pending(), entry.latch())
        );
        assert_eq!(state.renamed(&g).get(p[1].id()), Some(&image));
    }

    #[test]
    fn renaming_back_and_the_identity_give_the_original() {
        let (state, _) = run(&pods());
        permutations::assert_round_trips(&state, &pods());
        let empty: WaitingState<u32> = WaitingState::new();
        assert_eq!(empty.renamed(&renaming([2, 0, 1])), empty);
    }

    /// The witnesses that the tests above can fail: renamings that forget the deadline index or
    /// the stored pods are told apart from the run on the renamed pods, and `check` rejects them.
    #[test]
    fn a_renaming_that_forgets_a_part_is_caught() {
        let p = pods();
        let (first, _) = run(&p);
        let g = renaming([1, 0, 2]);
        let (second, _) = run(&p.clone().map(|pod| g.pod(&pod)));

        let forgot_deadlines = WaitingState {
            deadlines: first.deadlines.clone(),
            ..first.renamed(&g)
        };
        assert_ne!(forgot_deadlines, second);
        assert!(forgot_deadlines.check().is_err());

        let keys_only = WaitingState {
            pods: first
                .pods
                .iter()
                .map(|(id, entry)| (g.id(id), entry.clone()))
                .collect(),
            ..first.renamed(&g)
        };
        assert_ne!(keys_only, second);
        let err = keys_only.check().unwrap_err();
        assert!(err.contains("is filed under"), "{err}");

        let a0: PodId = p[0].id().clone();
        assert_ne!(first.get(&a0), second.get(&a0));
    }
}
