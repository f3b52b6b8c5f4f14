use std::collections::{BTreeMap, BTreeSet};

use super::node_index::{NodeIndex, NodeIndexSlot};
use super::pod_table::PodTable;
use super::{Node, NodeView};
use crate::sync::{Arc, Mutex};
use crate::{Labels, Pod, PodId};
use crate::{Resources, Taint};

/// Where a pod in the cache stands: reserved by the scheduler, or observed bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum PodPhase {
    /// Reserved on a node by a scheduling cycle ([`CacheState::assume`]); not yet bound.
    Assumed,
    /// Bound to its node: binding finished, or the pod was observed bound.
    Bound,
}

/// A pod dropped from the cache by [`CacheState::remove_pod`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RemovedPod {
    /// The node it was on; its requests were released there.
    pub node: String,
    /// Whether it was assumed or bound.
    pub phase: PodPhase,
}

/// Why a node could not be added ([`CacheState::add_node`],
/// [`Scheduler::add_node`](super::Scheduler::add_node)). Nothing changed; the node is handed
/// back ([`into_node`](AddNodeError::into_node)).
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddNodeError {
    /// A node of that name is already in the cache.
    #[error("node {} already exists", .0.name())]
    Duplicate(Node),
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(Node),
}

impl AddNodeError {
    /// The node that could not be added.
    pub fn into_node(self) -> Node {
        match self {
            AddNodeError::Duplicate(node) | AddNodeError::ShutDown(node) => node,
        }
    }
}

/// Why a node could not be updated ([`CacheState::update_node`],
/// [`Scheduler::update_node`](super::Scheduler::update_node)). Nothing changed; the node is
/// handed back ([`into_node`](UpdateNodeError::into_node)).
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UpdateNodeError {
    /// No node of that name is in the cache.
    #[error("unknown node {}", .0.name())]
    UnknownNode(Node),
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(Node),
}

impl UpdateNodeError {
    /// The node that could not be updated.
    pub fn into_node(self) -> Node {
        match self {
            UpdateNodeError::UnknownNode(node) | UpdateNodeError::ShutDown(node) => node,
        }
    }
}

/// Why a node could not be removed ([`CacheState::remove_node`],
/// [`Scheduler::delete_node`](super::Scheduler::delete_node)). Nothing changed.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RemoveNodeError {
    /// No node of that name is in the cache.
    #[error("unknown node {0}")]
    UnknownNode(String),
    /// The scheduler was shut down.
    #[error("scheduler is shut down")]
    ShutDown(String),
}

/// An error returned from [`CacheState::assume`]. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssumeError {
    /// The pod is already assumed (on `node`); forget it first.
    #[error("pod {pod} is already assumed on node {node}")]
    AlreadyAssumed {
        /// The pod.
        pod: PodId,
        /// The node it is assumed on.
        node: String,
    },
    /// The pod is already bound (to `node`).
    #[error("pod {pod} is already bound to node {node}")]
    AlreadyBound {
        /// The pod.
        pod: PodId,
        /// The node it is bound to.
        node: String,
    },
    /// No node called `node` is in the cache.
    #[error("pod {pod} cannot be assumed on unknown node {node}")]
    UnknownNode {
        /// The pod.
        pod: PodId,
        /// The node asked for.
        node: String,
    },
}

/// An error returned from [`CacheState::finish_binding`]. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FinishBindingError {
    /// The pod is not in the cache (never assumed, forgotten or removed).
    #[error("pod {0} is not assumed")]
    UnknownPod(PodId),
    /// The pod is already bound (to `node`).
    #[error("pod {pod} is already bound to node {node}")]
    AlreadyBound {
        /// The pod.
        pod: PodId,
        /// The node it is bound to.
        node: String,
    },
}

/// An error returned from [`CacheState::add_bound`]. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddBoundError {
    /// The pod names no node ([`Pod::node`] is `None`), so it is not bound.
    #[error("pod {0} names no node")]
    NoNode(PodId),
    /// The pod names a node that is not in the cache.
    #[error("pod {pod} is bound to unknown node {node}")]
    UnknownNode {
        /// The pod.
        pod: PodId,
        /// The node it names.
        node: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct NodeEntry {
    pub(super) capacity: Resources,
    pub(super) labels: Labels,
    pub(super) taints: Vec<Taint>,
    /// The sum of `pods`' requests, saturating (I5).
    pub(super) requested: Resources,
    /// Shared with the cache's clones until one side changes it (the pod-group cycle's
    /// snapshot copies a node's pods only when it places a member there).
    pub(super) pods: Arc<BTreeSet<PodId>>,
    /// The node was deleted while pods were on it: kube-scheduler's cache keeps such a node's
    /// pods (their own deletes may still be on their way) but schedules nothing there, and a
    /// node of the name that comes back has them again. Gone with its last pod.
    pub(super) deleted: bool,
}

/// A pod's entry. Its node's name is shared with the node's key (one allocation per node, not
/// one per pod), so cloning the cache — the model checker does it for every state it
/// generates — copies no strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct PodEntry {
    pub(super) node: Arc<str>,
    pub(super) requests: Resources,
    pub(super) phase: PodPhase,
}

/// kube-scheduler's cache of node reservations as pure data: the nodes with their capacity,
/// what is requested on each and by which pods, and each pod's node, requests and phase
/// ([`PodPhase::Assumed`] or [`PodPhase::Bound`]). Every transition is a `&mut self` method;
/// [`Cache`] is this behind one lock.
///
/// Keeps the node part of I5 — each node's reservations equal the assumed + bound pods on it:
/// a node's requested resources are the sum of its pods' requests, each pod is on exactly the
/// node it names, and no pod is on an unknown node. [`check`](CacheState::check) verifies it.
/// Bad input (unknown nodes and pods, duplicates) is a typed error or a no-op, never a panic.
///
/// ```
/// use gangsched::scheduler::{CacheState, Node, PodPhase};
/// use gangsched::{Pod, Resources};
///
/// let mut cache = CacheState::new();
/// cache.add_node(Node::new("n1", Resources::new(4000, 8 << 30))).unwrap();
/// let pod = Pod::new("uid-1", "ml", "trainer-0").with_requests(Resources::new(1000, 1 << 30));
/// cache.assume(&pod, "n1").unwrap();
/// assert_eq!(cache.node("n1").unwrap().free(), Resources::new(3000, 7 << 30));
/// cache.finish_binding(pod.id()).unwrap();
/// assert_eq!(cache.phase(pod.id()), Some(PodPhase::Bound));
/// cache.check().unwrap();
/// ```
///
/// From 64 nodes on, the cache also keeps its nodes by class and fill
/// for placement (`node_index.rs`): derived data, left out of its equality, hash and `Debug`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct CacheState {
    pub(super) nodes: BTreeMap<Arc<str>, NodeEntry>,
    /// Every assumed and bound pod, by id: a hash table (`pod_table.rs`).
    pub(super) pods: PodTable,
    /// The pods whose phase is `Assumed`: an index.
    pub(super) assumed: BTreeSet<PodId>,
    /// The live nodes by class and fill, once built: an index.
    pub(super) index: NodeIndexSlot,
}

impl CacheState {
    /// An empty cache: no nodes, no pods.
    pub fn new() -> CacheState {
        CacheState::default()
    }

    /// Adds `node` with nothing requested on it — or, if a node of its name was deleted with
    /// pods still on it ([`remove_node`](Self::remove_node)), brings it back with them, as
    /// kube-scheduler's cache does. A node of the same name → error handing `node` back;
    /// nothing changes.
    pub fn add_node(&mut self, node: Node) -> Result<(), AddNodeError> {
        if let Some(entry) = self.nodes.get_mut(node.name()) {
            if !entry.deleted {
                return Err(AddNodeError::Duplicate(node));
            }
            // Back before the pods left on it went: they are there again (I5).
            entry.capacity = node.capacity().clone();
            entry.labels = node.labels().clone();
            entry.taints = node.taints().to_vec();
            entry.deleted = false;
            self.index.insert(node.shared_name(), entry);
        } else {
            let entry = NodeEntry {
                capacity: node.capacity().clone(),
                labels: node.labels().clone(),
                taints: node.taints().to_vec(),
                requested: Resources::ZERO,
                pods: Arc::default(),
                deleted: false,
            };
            self.index.insert(node.shared_name(), &entry);
            self.nodes.insert(node.shared_name().clone(), entry);
        }
        // `nodes.len()` bounds the live count from above: count only past the threshold.
        if self.index.get().is_none()
            && self.nodes.len() >= NodeIndex::BUILD_FROM
            && self.node_count() >= NodeIndex::BUILD_FROM
        {
            self.build_node_index();
        }
        Ok(())
    }

    /// Replaces the capacity, labels and taints of the node of `node`'s name, keeping the pods
    /// on it and what they request (I5 holds: the requests are theirs; a smaller capacity may
    /// leave the node overcommitted, as an observed binding can). Returns whether anything
    /// changed — an informer's resync of the same node is a no-op. Unknown node → error
    /// handing `node` back.
    pub fn update_node(&mut self, node: Node) -> Result<bool, UpdateNodeError> {
        let Some(entry) = self.nodes.get_mut(node.name()).filter(|e| !e.deleted) else {
            return Err(UpdateNodeError::UnknownNode(node));
        };
        let same = entry.capacity == *node.capacity()
            && entry.labels == *node.labels()
            && entry.taints == node.taints();
        if !same {
            let filed = self.index.remove(node.name(), entry);
            entry.capacity = node.capacity().clone();
            entry.labels = node.labels().clone();
            entry.taints = node.taints().to_vec();
            if let Some(name) = filed {
                self.index.insert(&name, entry);
            }
        }
        Ok(!same)
    }

    /// Removes the node `name`: nothing is placed there any more and it is no longer listed
    /// ([`node`](Self::node), [`nodes`](Self::nodes), [`node_count`](Self::node_count)).
    /// The pods assumed on or bound to it stay, with their requests, until they are removed
    /// or forgotten one by one — their deletes come on their own — as kube-scheduler's cache
    /// keeps them (`RemoveNode`): if the node comes back first it has them again, and is
    /// never overcommitted by a cache that forgot them. Returns those pods in id order.
    pub fn remove_node(&mut self, name: &str) -> Result<Vec<PodId>, RemoveNodeError> {
        let entry = self
            .nodes
            .get_mut(name)
            .filter(|e| !e.deleted)
            .ok_or_else(|| RemoveNodeError::UnknownNode(name.to_owned()))?;
        let pods: Vec<PodId> = entry.pods.iter().cloned().collect();
        self.index.remove(name, entry);
        if pods.is_empty() {
            self.nodes.remove(name);
        } else {
            entry.deleted = true;
        }
        Ok(pods)
    }

    /// The node `name`, if it is in the cache.
    pub fn node(&self, name: &str) -> Option<NodeView<'_>> {
        let (name, entry) = self.nodes.get_key_value(name)?;
        (!entry.deleted).then(|| NodeView::new(name, entry))
    }

    /// Every node, in name order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeView<'_>> + '_ {
        self.nodes
            .iter()
            .filter(|(_, entry)| !entry.deleted)
            .map(|(name, entry)| NodeView::new(name, entry))
    }

    /// How many nodes are in the cache (not counting deleted ones that still hold pods).
    pub fn node_count(&self) -> usize {
        match self.index.get() {
            Some(index) => index.len(),
            None => self.nodes.values().filter(|e| !e.deleted).count(),
        }
    }

    /// Reserves `pod.requests()` for `pod` on `node` (the Reserve step). Does not check that
    /// the pod fits — placement does — so only this and [`add_bound`](CacheState::add_bound)
    /// grow a node's requested resources, and only `add_bound` beyond its capacity when
    /// placement is respected. Keeps I5. Errors change nothing.
    pub fn assume(&mut self, pod: &Pod, node: &str) -> Result<(), AssumeError> {
        if let Some(entry) = self.pods.get(pod.id()) {
            let (pod, node) = (pod.id().clone(), entry.node.to_string());
            return Err(match entry.phase {
                PodPhase::Assumed => AssumeError::AlreadyAssumed { pod, node },
                PodPhase::Bound => AssumeError::AlreadyBound { pod, node },
            });
        }
        if self.node(node).is_none() {
            return Err(AssumeError::UnknownNode {
                pod: pod.id().clone(),
                node: node.to_owned(),
            });
        }
        self.place(
            pod.id().clone(),
            node,
            pod.requests().clone(),
            PodPhase::Assumed,
        );
        Ok(())
    }

    /// Releases an assumed pod's reservation (Unreserve, or a failed binding) and returns the
    /// node it was on. A bound or unknown pod is left alone: `None`. Keeps I5.
    pub fn forget(&mut self, id: &PodId) -> Option<String> {
        if !self.assumed.contains(id) {
            return None;
        }
        self.unplace(id).map(|entry| entry.node.to_string())
    }

    /// Marks an assumed pod bound: its binding succeeded. Its reservation stays.
    pub fn finish_binding(&mut self, id: &PodId) -> Result<(), FinishBindingError> {
        let entry = self
            .pods
            .get_mut(id)
            .ok_or_else(|| FinishBindingError::UnknownPod(id.clone()))?;
        if entry.phase == PodPhase::Bound {
            return Err(FinishBindingError::AlreadyBound {
                pod: id.clone(),
                node: entry.node.to_string(),
            });
        }
        entry.phase = PodPhase::Bound;
        self.assumed.remove(id);
        Ok(())
    }

    /// Records a pod observed bound to `pod.node()`. The observation is the truth: afterwards
    /// the pod is bound there with `pod.requests()`. An assumed pod on that node becomes bound;
    /// one assumed or bound elsewhere (or with other requests) is moved, its old reservation
    /// released; a pod already bound there with the same requests is a no-op. The node may end
    /// up overcommitted. Keeps I5. Errors change nothing.
    pub fn add_bound(&mut self, pod: &Pod) -> Result<(), AddBoundError> {
        let id = pod.id();
        let node = pod
            .node()
            .ok_or_else(|| AddBoundError::NoNode(id.clone()))?;
        if self.node(node).is_none() {
            return Err(AddBoundError::UnknownNode {
                pod: id.clone(),
                node: node.to_owned(),
            });
        }
        let requests = pod.requests();
        if let Some(entry) = self.pods.get_mut(id) {
            if *entry.node == *node && entry.requests == *requests {
                entry.phase = PodPhase::Bound;
                self.assumed.remove(id);
                return Ok(());
            }
            self.unplace(id);
        }
        self.place(id.clone(), node, requests.clone(), PodPhase::Bound);
        Ok(())
    }

    /// Drops a pod (deleted from the cluster), assumed or bound, releasing its reservation;
    /// `None` if it is not in the cache. Keeps I5.
    pub fn remove_pod(&mut self, id: &PodId) -> Option<RemovedPod> {
        self.unplace(id).map(|entry| RemovedPod {
            node: entry.node.to_string(),
            phase: entry.phase,
        })
    }

    /// The pod's phase, if it is in the cache.
    pub fn phase(&self, id: &PodId) -> Option<PodPhase> {
        self.pods.get(id).map(|entry| entry.phase)
    }

    /// The node the pod is assumed on or bound to, if it is in the cache.
    pub fn pod_node(&self, id: &PodId) -> Option<&str> {
        self.pods.get(id).map(|entry| &*entry.node)
    }

    /// The requests reserved for the pod, if it is in the cache.
    pub fn pod_requests(&self, id: &PodId) -> Option<&Resources> {
        self.pods.get(id).map(|entry| &entry.requests)
    }

    /// The assumed pods, in id order.
    pub fn assumed(&self) -> impl Iterator<Item = &PodId> + '_ {
        self.assumed.iter()
    }

    /// How many pods are bound.
    pub fn bound_count(&self) -> usize {
        self.pods.len() - self.assumed.len()
    }

    /// How many pods are assumed.
    pub fn assumed_count(&self) -> usize {
        self.assumed.len()
    }

    /// Puts a pod that is not in the cache on `node`, which exists, adding its requests there.
    fn place(&mut self, id: PodId, node: &str, requests: Resources, phase: PodPhase) {
        let Some((name, _)) = self.nodes.get_key_value(node) else {
            return;
        };
        let node = Arc::clone(name);
        let entry = self.nodes.get_mut(&node).expect("found above");
        let was = std::mem::replace(&mut entry.requested, Resources::ZERO);
        entry.requested = &was + &requests;
        self.index.requested_changed(&node, was, entry);
        Arc::make_mut(&mut entry.pods).insert(id.clone());
        if phase == PodPhase::Assumed {
            self.assumed.insert(id.clone());
        }
        self.pods.insert(
            id,
            PodEntry {
                node,
                requests,
                phase,
            },
        );
    }

    /// Takes a pod out of the cache, releasing its requests on its node.
    fn unplace(&mut self, id: &PodId) -> Option<PodEntry> {
        let removed = self.pods.remove(id)?;
        self.assumed.remove(id);
        if let Some(node) = self.nodes.get_mut(&removed.node) {
            Arc::make_mut(&mut node.pods).remove(id);
            let now = if node.requested.is_saturated() {
                // A saturated sum cannot be undone by subtraction: add up what is left.
                node.pods
                    .iter()
                    .filter_map(|p| self.pods.get(p))
                    .fold(Resources::ZERO, |sum, p| &sum + &p.requests)
            } else {
                node.requested.saturating_sub(&removed.requests)
            };
            let was = std::mem::replace(&mut node.requested, now);
            self.index.requested_changed(&removed.node, was, node);
            if node.deleted && node.pods.is_empty() {
                self.nodes.remove(&removed.node);
            }
        }
        Some(removed)
    }

    /// A planted flaw's second release ([`Flaw::BindFailureReleasesTwice`]): `requests` taken
    /// off `node`'s requested resources again, though no pod leaves it — breaks I5.
    ///
    /// [`Flaw::BindFailureReleasesTwice`]: super::flaw::Flaw::BindFailureReleasesTwice
    #[cfg(feature = "checking")]
    pub(crate) fn release_again(&mut self, node: &str, requests: &Resources) {
        if let Some(entry) = self.nodes.get_mut(node) {
            let now = entry.requested.saturating_sub(requests);
            let was = std::mem::replace(&mut entry.requested, now);
            self.index.requested_changed(node, was, entry);
        }
    }

    /// Test-only corruption: puts `pod` on `node` (which must exist) without adding its
    /// requests there — the witness that [`check`](CacheState::check) finds a broken I5.
    #[cfg(test)]
    pub(super) fn place_unaccounted(&mut self, pod: &Pod, node: &str) {
        self.place(pod.id().clone(), node, Resources::ZERO, PodPhase::Assumed);
        if let Some(entry) = self.pods.get_mut(pod.id()) {
            entry.requests = pod.requests().clone();
        }
    }

    /// Test-only corruption: makes the pod name `node` without moving it there.
    #[cfg(test)]
    pub(super) fn rename_pod_node(&mut self, id: &PodId, node: &str) {
        if let Some(entry) = self.pods.get_mut(id) {
            entry.node = Arc::from(node);
        }
    }
}

/// A [`CacheState`] behind one lock, shared by the scheduling cycle, the binding workers and
/// the event handlers; clones share the same cache. Each method is one critical section, so
/// each keeps I5 as its [`CacheState`] counterpart does. Nothing is called back under the lock
/// except the closures handed to [`with`](Cache::with) and [`with_mut`](Cache::with_mut).
#[derive(Clone, Debug, Default)]
pub struct Cache {
    state: Arc<Mutex<CacheState>>,
}

impl Cache {
    /// An empty cache.
    pub fn new() -> Cache {
        Cache::default()
    }

    /// A cache holding `state`.
    pub fn from_state(state: CacheState) -> Cache {
        Cache {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// Runs `f` on the state under the lock (e.g. placement); `f` must not touch this cache.
    pub fn with<R>(&self, f: impl FnOnce(&CacheState) -> R) -> R {
        f(&self.state.lock())
    }

    /// Runs `f` on the state, mutably, under the lock — one critical section for several
    /// transitions; `f` must not touch this cache.
    pub fn with_mut<R>(&self, f: impl FnOnce(&mut CacheState) -> R) -> R {
        f(&mut self.state.lock())
    }

    /// A copy of the state.
    pub fn snapshot(&self) -> CacheState {
        self.with(CacheState::clone)
    }

    /// [`CacheState::add_node`].
    pub fn add_node(&self, node: Node) -> Result<(), AddNodeError> {
        self.with_mut(|s| s.add_node(node))
    }

    /// [`CacheState::remove_node`].
    pub fn remove_node(&self, name: &str) -> Result<Vec<PodId>, RemoveNodeError> {
        self.with_mut(|s| s.remove_node(name))
    }

    /// [`CacheState::assume`].
    pub fn assume(&self, pod: &Pod, node: &str) -> Result<(), AssumeError> {
        self.with_mut(|s| s.assume(pod, node))
    }

    /// [`CacheState::forget`].
    pub fn forget(&self, id: &PodId) -> Option<String> {
        self.with_mut(|s| s.forget(id))
    }

    /// [`CacheState::finish_binding`].
    pub fn finish_binding(&self, id: &PodId) -> Result<(), FinishBindingError> {
        self.with_mut(|s| s.finish_binding(id))
    }

    /// [`CacheState::add_bound`].
    pub fn add_bound(&self, pod: &Pod) -> Result<(), AddBoundError> {
        self.with_mut(|s| s.add_bound(pod))
    }

    /// [`CacheState::remove_pod`].
    pub fn remove_pod(&self, id: &PodId) -> Option<RemovedPod> {
        self.with_mut(|s| s.remove_pod(id))
    }

    /// [`CacheState::phase`].
    pub fn phase(&self, id: &PodId) -> Option<PodPhase> {
        self.with(|s| s.phase(id))
    }

    /// [`CacheState::pod_node`], owned.
    pub fn pod_node(&self, id: &PodId) -> Option<String> {
        self.with(|s| s.pod_node(id).map(str::to_owned))
    }

    /// [`CacheState::check`].
    pub fn check(&self) -> Result<(), String> {
        self.with(CacheState::check)
    }
}
