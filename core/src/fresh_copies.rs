//! Equal copies of a pure state in allocations of its own, for a model checker's threads.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::symmetry::Relabel;
use crate::sync::Arc;
use crate::{GroupKey, Pod, PodId};

/// A relabeling whose every image equals its source but lives in an allocation of its own:
/// renaming a state with it ([`Renamed`](crate::symmetry::Renamed)) gives an equal state that
/// shares no pod id, pod, group key or node name with the original.
///
/// Ids, pods, keys and names are cheap to clone because clones share one reference-counted
/// allocation. Two threads cloning the same one contend on its count: a model checker whose
/// threads work on states derived from one initial state spends most of a second core
/// passing those counts' cache lines back and forth. Each checker thread keeps its own
/// `FreshCopies` and copies a state handed over by another thread once; everything it derives
/// from the copy then touches only its own counts.
///
/// Each distinct value is copied once and the copy reused, so every occurrence of a pod in
/// the copied states is one allocation (and compares by pointer). Not `Sync`: one per thread.
///
/// ```
/// use gangsched::checking::symmetry::{FreshCopies, Renamed};
/// use gangsched::{Pod, WaitingState, Time};
/// use std::time::Duration;
///
/// let pod = Pod::new("a-0", "ns", "a-0").with_group("a");
/// let mut waiting: WaitingState<()> = WaitingState::new();
/// let timeout = [("GangScheduling".into(), Duration::from_secs(300))];
/// waiting.add(pod, timeout, Time::ZERO, ()).unwrap();
///
/// let copies = FreshCopies::new();
/// assert_eq!(waiting.renamed(&copies), waiting);
/// ```
#[derive(Debug, Default)]
pub struct FreshCopies {
    ids: RefCell<BTreeMap<PodId, PodId>>,
    pods: RefCell<BTreeMap<Pod, Pod>>,
    keys: RefCell<BTreeMap<GroupKey, GroupKey>>,
    nodes: RefCell<BTreeMap<Arc<str>, Arc<str>>>,
}

impl FreshCopies {
    /// No copies made yet.
    pub fn new() -> FreshCopies {
        FreshCopies::default()
    }

    /// How many distinct values (ids, pods, keys, node names) have been copied.
    pub fn len(&self) -> usize {
        self.ids.borrow().len()
            + self.pods.borrow().len()
            + self.keys.borrow().len()
            + self.nodes.borrow().len()
    }

    /// Whether nothing has been copied yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The copy of `value` in `copies`, made by `copy` the first time `value` is met.
fn copy_of<T: Ord + Clone>(copies: &RefCell<BTreeMap<T, T>>, value: &T, copy: impl Fn() -> T) -> T {
    if let Some(found) = copies.borrow().get(value) {
        return found.clone();
    }
    let made = copy();
    copies.borrow_mut().insert(value.clone(), made.clone());
    made
}

impl Relabel for FreshCopies {
    fn id(&self, id: &PodId) -> PodId {
        copy_of(&self.ids, id, || id.fresh_copy())
    }

    fn pod(&self, pod: &Pod) -> Pod {
        copy_of(&self.pods, pod, || {
            let group = pod.group_key().map(|key| self.group_key(key));
            pod.fresh_copy(self.id(pod.id()), group)
        })
    }

    fn group_key(&self, key: &GroupKey) -> GroupKey {
        copy_of(&self.keys, key, || {
            GroupKey::new(key.namespace(), key.name())
        })
    }

    fn node(&self, name: &Arc<str>) -> Arc<str> {
        copy_of(&self.nodes, name, || Arc::from(&**name))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::gang::Groups;
    use crate::queue::{EventKind, PluginSet, QueueConfig, QueueState};
    use crate::scheduler::{CacheState, Node};
    use crate::symmetry::Renamed;
    use crate::PodGroup;
    use crate::Resources;
    use crate::{ClusterEvent, QueueingHint, Time, WaitingState};

    /// A state of every component over the same pods, and the PodGroup event it recorded.
    #[derive(Clone, Debug, PartialEq)]
    struct Everything {
        groups: Groups,
        waiting: WaitingState<()>,
        cache: CacheState,
        queue: QueueState,
    }

    impl Renamed for Everything {
        fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Everything {
            Everything {
                groups: self.groups.renamed(r),
                waiting: self.waiting.renamed(r),
                cache: self.cache.renamed(r),
                queue: self.queue.renamed(r),
            }
        }
    }

    fn pods() -> Vec<Pod> {
        (0..3)
            .map(|i| Pod::new(format!("a-{i}"), "ns", &format!("a-{i}")).with_group("a"))
            .collect()
    }

    /// Members in every place: grouped (one assumed and waiting), on a node, queued (one in
    /// flight when a PodGroup event is recorded for it).
    fn everything(pods: &[Pod], group: &PodGroup) -> Everything {
        let mut groups = Groups::new();
        groups.add_group(group.clone()).unwrap();
        for pod in pods {
            groups.add_pod(pod.clone(), false).unwrap();
        }
        groups.assume(&pods[0]).unwrap();
        let timeout = Duration::from_secs(300);
        groups.change_of(&pods[0], |s| {
            s.wait_in_attempt(pods[0].id(), Time::ZERO, timeout)
        });
        let mut waiting = WaitingState::new();
        let timeout = [("GangScheduling".into(), Duration::from_secs(300))];
        waiting
            .add(pods[0].clone(), timeout, Time::ZERO, ())
            .unwrap();
        let mut cache = CacheState::new();
        cache
            .add_node(Node::new("n1", Resources::new(4000, 4000)))
            .unwrap();
        cache.assume(&pods[0], "n1").unwrap();
        let plugins = PluginSet::new().with_hint("Gang", EventKind::PodGroupAdd, |_, _| {
            Ok(QueueingHint::Queue)
        });
        let mut queue = QueueState::new(QueueConfig::default());
        for pod in pods {
            queue.add(pod.clone(), Time::ZERO, &plugins).unwrap();
        }
        queue.pop().unwrap();
        let event = ClusterEvent::PodGroupAdd(group.clone());
        queue.move_all_to_active_or_backoff(event, None, Time::from_secs(1), &plugins);
        Everything {
            groups,
            waiting,
            cache,
            queue,
        }
    }

    /// Whether a copy of `everything(pods, group)` made with `relabel` still holds any of the
    /// originals' allocations: once the original state and `relabel` are gone, each of the
    /// test's pods, ids, keys must be held by the test alone.
    fn copy_holds_an_original<R: Relabel>(relabel: R) -> bool {
        let pods = pods();
        let group = PodGroup::gang("ns", "a", 3).unwrap();
        let original = everything(&pods, &group);
        let copy = original.renamed(&relabel);
        assert_eq!(copy, original);
        drop((original, relabel));
        let held_here = |n: usize, what: &str| {
            assert!(n >= 1, "{what}");
            n > 1
        };
        pods.iter().any(|pod| {
            held_here(pod.handles(), "pod")
                || held_here(pod.id().handles(), "id")
                || held_here(pod.group_key().unwrap().handles(), "pod's key")
        }) || held_here(group.key().handles(), "group's key")
    }

    #[test]
    fn a_copy_is_equal_and_shares_nothing_with_its_original() {
        assert!(!copy_holds_an_original(FreshCopies::new()));
    }

    /// Witness: a relabeling that copies pods but keeps group keys leaves the copy holding the
    /// original keys, and the check above sees it.
    #[test]
    fn a_copy_that_keeps_group_keys_is_caught() {
        struct KeysKept(FreshCopies);
        impl Relabel for KeysKept {
            fn id(&self, id: &PodId) -> PodId {
                self.0.id(id)
            }
            fn pod(&self, pod: &Pod) -> Pod {
                self.0.pod(pod)
            }
        }
        assert!(copy_holds_an_original(KeysKept(FreshCopies::new())));
    }

    #[test]
    fn each_value_is_copied_once() {
        let pods = pods();
        let copies = FreshCopies::new();
        let first = copies.pod(&pods[1]);
        let again = copies.pod(&first);
        assert_eq!(first.handles(), again.handles());
        assert!(
            first.handles() >= 3,
            "the pool, first and again share one pod"
        );
        assert_eq!(copies.id(pods[1].id()).handles(), first.id().handles());
        // a-1's id and pod, and the key "a".
        assert_eq!(copies.len(), 3);
    }

    /// `len` counts each distinct value copied, of every kind, node names included; `is_empty`
    /// says whether there is none.
    #[test]
    fn it_counts_every_distinct_value_it_copied() {
        let copies = FreshCopies::new();
        assert!(copies.is_empty());
        assert_eq!(copies.len(), 0);
        let node: Arc<str> = Arc::from("n-1");
        copies.node(&node);
        copies.node(&node);
        assert!(!copies.is_empty());
        assert_eq!(copies.len(), 1, "one node name");
        copies.pod(&pods()[0]);
        assert_eq!(copies.len(), 4, "and a pod, its id and its group key");
    }
}
