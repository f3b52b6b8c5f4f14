//! Renaming pods consistently across the pure states, for symmetry reduction.
//!
//! Members of a gang that differ only in their names are interchangeable: a model checker that
//! has explored a state need not explore the same state with two such members' names swapped.
//! To recognise it, the checker maps every state to a representative — the state with its pods
//! renamed into a canonical order — and every pure state of the core can be renamed by a
//! [`PodRenaming`] through [`Renamed`]. A renaming replaces every occurrence of a pod (its
//! [`PodId`], and the name inside each stored [`Pod`]) by its image, and nothing else: free
//! text such as a rejection reason that quotes a pod's name is left as it is.
//!
//! ```
//! use gangsched::checking::symmetry::{PodRenaming, Renamed};
//! use gangsched::{Pod, PodId, WaitingState};
//! use std::time::Duration;
//! use gangsched::Time;
//!
//! let a0 = Pod::new("a-0", "ns", "a-0").with_group("a");
//! let a1 = Pod::new("a-1", "ns", "a-1").with_group("a");
//! let mut waiting: WaitingState<()> = WaitingState::new();
//! waiting.add(a0.clone(), [("GangScheduling".into(), Duration::from_secs(300))], Time::ZERO, ()).unwrap();
//!
//! // Swap the two members: the waiting pod is now a-1.
//! let swap = PodRenaming::new([(a0.id().clone(), a1.clone()), (a1.id().clone(), a0.clone())]).unwrap();
//! let renamed = waiting.renamed(&swap);
//! assert!(renamed.get(&PodId::from("a-1")).is_some() && renamed.get(&PodId::from("a-0")).is_none());
//! ```

use std::collections::{BTreeMap, BTreeSet};

pub use crate::fresh_copies::FreshCopies;
use crate::sync::Arc;
use crate::{GroupKey, Pod, PodGroup, PodId};

/// A permutation of pods: each renamed pod's image, given as the pod it becomes. Pods it does
/// not mention keep their names. Renaming a whole state with one permutation keeps every
/// invariant the state had (I1–I8 are stated over pods, never over particular names).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodRenaming {
    images: BTreeMap<PodId, (PodId, Box<str>)>,
}

/// Why a set of pairs is not a renaming.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenamingError {
    /// The same pod was given two images.
    #[error("pod {0} renamed twice")]
    RenamedTwice(PodId),
    /// Two pods were given the same image.
    #[error("two pods renamed to {0}")]
    SameImage(PodId),
    /// An image is not itself renamed, so two pods would end up with its name.
    #[error("{0} is an image but is not renamed: not a permutation")]
    NotAPermutation(PodId),
}

impl PodRenaming {
    /// The renaming that changes nothing.
    pub fn identity() -> PodRenaming {
        PodRenaming::default()
    }

    /// The renaming that gives each pod `from` the uid and name of `to`. The pairs must form a
    /// permutation of the pods they mention: every image is itself renamed, no pod twice.
    pub fn new(
        pairs: impl IntoIterator<Item = (PodId, Pod)>,
    ) -> Result<PodRenaming, RenamingError> {
        let mut images = BTreeMap::new();
        let mut targets = BTreeSet::new();
        for (from, to) in pairs {
            if !targets.insert(to.id().clone()) {
                return Err(RenamingError::SameImage(to.id().clone()));
            }
            let image = (to.id().clone(), Box::from(to.name()));
            if images.insert(from.clone(), image).is_some() {
                return Err(RenamingError::RenamedTwice(from));
            }
        }
        if let Some(stray) = targets.iter().find(|id| !images.contains_key(*id)) {
            return Err(RenamingError::NotAPermutation(stray.clone()));
        }
        images.retain(|from, (to, _)| from != to);
        Ok(PodRenaming { images })
    }

    /// Whether nothing is renamed.
    pub fn is_identity(&self) -> bool {
        self.images.is_empty()
    }

    /// The image of `id`.
    pub fn id(&self, id: &PodId) -> PodId {
        self.images
            .get(id)
            .map_or_else(|| id.clone(), |(to, _)| to.clone())
    }

    /// `pod` under its image's uid and name, every other field kept.
    pub fn pod(&self, pod: &Pod) -> Pod {
        match self.images.get(pod.id()) {
            Some((id, name)) => pod.clone().renamed(id.clone(), name),
            None => pod.clone(),
        }
    }
}

/// What a walk over a pure state ([`Renamed`]) replaces: every pod id and pod, and every
/// group key and node name. A [`PodRenaming`] replaces pods by their images and keeps the
/// rest; [`FreshCopies`] replaces every one of them by an equal copy in an allocation of its
/// own, so that a model checker's threads never share a reference count.
pub trait Relabel {
    /// The image of `id`.
    fn id(&self, id: &PodId) -> PodId;

    /// The image of `pod` (its id's image, with the same or renamed name).
    fn pod(&self, pod: &Pod) -> Pod;

    /// The image of a group key: itself unless the relabeling copies keys.
    fn group_key(&self, key: &GroupKey) -> GroupKey {
        key.clone()
    }

    /// The image of a node name: itself unless the relabeling copies names.
    fn node(&self, name: &Arc<str>) -> Arc<str> {
        Arc::clone(name)
    }

    /// Whether every image is its source, the very value: a walk may return a plain clone.
    fn is_identity(&self) -> bool {
        false
    }
}

impl Relabel for PodRenaming {
    fn id(&self, id: &PodId) -> PodId {
        PodRenaming::id(self, id)
    }

    fn pod(&self, pod: &Pod) -> Pod {
        PodRenaming::pod(self, pod)
    }

    fn is_identity(&self) -> bool {
        PodRenaming::is_identity(self)
    }
}

/// A state that can be renamed: the same state with every pod replaced by its image.
pub trait Renamed {
    /// This state with each pod (and, for a relabeling that copies them, each group key and
    /// node name) replaced by its image under `renaming`.
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> Self;
}

impl Renamed for PodId {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> PodId {
        renaming.id(self)
    }
}

impl Renamed for Pod {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> Pod {
        renaming.pod(self)
    }
}

/// A PodGroup with its key's image under `renaming`.
pub(crate) fn relabel_pod_group<R: Relabel + ?Sized>(group: &PodGroup, renaming: &R) -> PodGroup {
    group.with_key(renaming.group_key(group.key()))
}

impl<T: Renamed + Ord> Renamed for BTreeSet<T> {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> BTreeSet<T> {
        self.iter().map(|x| x.renamed(renaming)).collect()
    }
}

impl<K: Renamed + Ord, V: Renamed> Renamed for BTreeMap<K, V> {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> BTreeMap<K, V> {
        self.iter()
            .map(|(k, v)| (k.renamed(renaming), v.renamed(renaming)))
            .collect()
    }
}

impl<T: Renamed> Renamed for Option<T> {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> Option<T> {
        self.as_ref().map(|x| x.renamed(renaming))
    }
}

impl<T: Renamed> Renamed for Vec<T> {
    fn renamed<R: Relabel + ?Sized>(&self, renaming: &R) -> Vec<T> {
        self.iter().map(|x| x.renamed(renaming)).collect()
    }
}

/// Permutations of three pods for the components' renaming tests.
#[cfg(test)]
pub(crate) mod permutations {
    use super::PodRenaming;
    use crate::Pod;

    /// All six permutations of three pods: pod `i` becomes pod `perm[i]`.
    pub(crate) const ALL: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];

    /// The renaming that gives `pods[i]` the name of `pods[perm[i]]`.
    pub(crate) fn renaming(pods: &[Pod; 3], perm: [usize; 3]) -> PodRenaming {
        let pairs = (0..3).map(|i| (pods[i].id().clone(), pods[perm[i]].clone()));
        PodRenaming::new(pairs).expect("a permutation")
    }

    /// The permutation that undoes `perm`.
    pub(crate) fn inverse(perm: [usize; 3]) -> [usize; 3] {
        let mut inv = [0; 3];
        for (i, &j) in perm.iter().enumerate() {
            inv[j] = i;
        }
        inv
    }

    /// Renaming `state` by each permutation of `pods` and then by its inverse gives `state`
    /// back; the identity, given outright or as fixed points, changes nothing.
    pub(crate) fn assert_round_trips<T>(state: &T, pods: &[Pod; 3])
    where
        T: super::Renamed + PartialEq + std::fmt::Debug,
    {
        for perm in ALL {
            let there = state.renamed(&renaming(pods, perm));
            let back = there.renamed(&renaming(pods, inverse(perm)));
            assert_eq!(&back, state, "{perm:?}");
        }
        assert_eq!(&state.renamed(&PodRenaming::identity()), state);
        let fixed = renaming(pods, [0, 1, 2]);
        assert!(fixed.is_identity());
        assert_eq!(&state.renamed(&fixed), state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> Pod {
        Pod::new(name, "ns", name).with_group("a").with_priority(3)
    }

    #[test]
    fn a_swap_renames_ids_and_pods_and_keeps_other_fields() {
        let (a, b, c) = (pod("a-0"), pod("a-1"), pod("a-2"));
        let swap =
            PodRenaming::new([(a.id().clone(), b.clone()), (b.id().clone(), a.clone())]).unwrap();
        assert_eq!(swap.id(a.id()), *b.id());
        assert_eq!(swap.id(c.id()), *c.id());
        let renamed = swap.pod(&a);
        assert_eq!((renamed.id(), renamed.name()), (b.id(), "a-1"));
        assert_eq!((renamed.priority(), renamed.group()), (3, Some("a")));
        let set: BTreeSet<PodId> = [a.id().clone(), c.id().clone()].into();
        let want: BTreeSet<PodId> = [b.id().clone(), c.id().clone()].into();
        assert_eq!(set.renamed(&swap), want);
    }

    #[test]
    fn only_permutations_are_renamings() {
        let (a, b, c) = (pod("a-0"), pod("a-1"), pod("a-2"));
        assert_eq!(
            PodRenaming::new([(a.id().clone(), b.clone())]),
            Err(RenamingError::NotAPermutation(b.id().clone()))
        );
        assert_eq!(
            PodRenaming::new([(a.id().clone(), c.clone()), (b.id().clone(), c.clone())]),
            Err(RenamingError::SameImage(c.id().clone()))
        );
        assert_eq!(
            PodRenaming::new([(a.id().clone(), a.clone()), (a.id().clone(), b.clone())]),
            Err(RenamingError::RenamedTwice(a.id().clone()))
        );
        let identity = PodRenaming::new([(a.id().clone(), a.clone())]).unwrap();
        assert!(identity.is_identity());
    }
}
