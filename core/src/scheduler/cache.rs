use std::collections::{BTreeMap, BTreeSet};

use super::{Node, NodeView, Resources, Taint};
use crate::sync::{Arc, Mutex};
use crate::{Labels, Pod, PodId};

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
    pub(super) pods: BTreeSet<PodId>,
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CacheState {
    pub(super) nodes: BTreeMap<Arc<str>, NodeEntry>,
    pub(super) pods: BTreeMap<PodId, PodEntry>,
    /// The pods whose phase is `Assumed`: an index.
    pub(super) assumed: BTreeSet<PodId>,
}

impl CacheState {
    /// An empty cache: no nodes, no pods.
    pub fn new() -> CacheState {
        CacheState::default()
    }

    /// Adds `node` with nothing requested on it. A node of the same name → error handing
    /// `node` back; nothing changes.
    pub fn add_node(&mut self, node: Node) -> Result<(), AddNodeError> {
        if self.nodes.contains_key(node.name()) {
            return Err(AddNodeError::Duplicate(node));
        }
        let entry = NodeEntry {
            capacity: node.capacity().clone(),
            labels: node.labels().clone(),
            taints: node.taints().to_vec(),
            requested: Resources::ZERO,
            pods: BTreeSet::new(),
        };
        self.nodes.insert(node.shared_name().clone(), entry);
        Ok(())
    }

    /// Replaces the capacity, labels and taints of the node of `node`'s name, keeping the pods
    /// on it and what they request (I5 holds: the requests are theirs; a smaller capacity may
    /// leave the node overcommitted, as an observed binding can). Returns whether anything
    /// changed — an informer's resync of the same node is a no-op. Unknown node → error
    /// handing `node` back.
    pub fn update_node(&mut self, node: Node) -> Result<bool, UpdateNodeError> {
        let Some(entry) = self.nodes.get_mut(node.name()) else {
            return Err(UpdateNodeError::UnknownNode(node));
        };
        let same = entry.capacity == *node.capacity()
            && entry.labels == *node.labels()
            && entry.taints == node.taints();
        if !same {
            entry.capacity = node.capacity().clone();
            entry.labels = node.labels().clone();
            entry.taints = node.taints().to_vec();
        }
        Ok(!same)
    }

    /// Removes the node `name` and drops the pods assumed on or bound to it from the cache
    /// (keeping I5: no pod on an unknown node); returns those pods in id order.
    pub fn remove_node(&mut self, name: &str) -> Result<Vec<PodId>, RemoveNodeError> {
        let entry = self
            .nodes
            .remove(name)
            .ok_or_else(|| RemoveNodeError::UnknownNode(name.to_owned()))?;
        for id in &entry.pods {
            self.pods.remove(id);
            self.assumed.remove(id);
        }
        Ok(entry.pods.into_iter().collect())
    }

    /// The node `name`, if it is in the cache.
    pub fn node(&self, name: &str) -> Option<NodeView<'_>> {
        let (name, entry) = self.nodes.get_key_value(name)?;
        Some(NodeView::new(name, entry))
    }

    /// Every node, in name order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeView<'_>> + '_ {
        self.nodes
            .iter()
            .map(|(name, entry)| NodeView::new(name, entry))
    }

    /// How many nodes are in the cache.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
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
        if !self.nodes.contains_key(node) {
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
        if !self.nodes.contains_key(node) {
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

    /// Verifies the node part of I5: each node's requested resources are the (saturating) sum
    /// of its pods' requests; each pod is on exactly the node it names, and that node is in
    /// the cache; the assumed index lists exactly the assumed pods. The error describes the
    /// first violation found.
    pub fn check(&self) -> Result<(), String> {
        for (id, entry) in &self.pods {
            let Some(node) = self.nodes.get(&entry.node) else {
                return Err(format!("pod {id} is on unknown node {} (I5)", entry.node));
            };
            if !node.pods.contains(id) {
                return Err(format!(
                    "pod {id} names node {} but is not on it (I5)",
                    entry.node
                ));
            }
            if (entry.phase == PodPhase::Assumed) != self.assumed.contains(id) {
                return Err(format!(
                    "pod {id} is {:?} but indexed otherwise",
                    entry.phase
                ));
            }
        }
        if let Some(id) = self.assumed.iter().find(|id| !self.pods.contains_key(*id)) {
            return Err(format!(
                "pod {id} is indexed as assumed but not in the cache"
            ));
        }
        for (name, node) in &self.nodes {
            let mut sum = Resources::ZERO;
            for id in &node.pods {
                match self.pods.get(id) {
                    Some(entry) if entry.node == *name => sum = &sum + &entry.requests,
                    Some(entry) => {
                        return Err(format!(
                            "pod {id} is on node {name} but names node {} (I5)",
                            entry.node
                        ))
                    }
                    None => return Err(format!("unknown pod {id} is on node {name} (I5)")),
                }
            }
            if sum != node.requested {
                return Err(format!(
                    "node {name} has {} requested but its pods request {sum} (I5)",
                    node.requested
                ));
            }
        }
        Ok(())
    }

    /// Puts a pod that is not in the cache on `node`, which exists, adding its requests there.
    fn place(&mut self, id: PodId, node: &str, requests: Resources, phase: PodPhase) {
        let Some((name, _)) = self.nodes.get_key_value(node) else {
            return;
        };
        let node = Arc::clone(name);
        let entry = self.nodes.get_mut(&node).expect("found above");
        entry.requested = &entry.requested + &requests;
        entry.pods.insert(id.clone());
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
            node.pods.remove(id);
            node.requested = if node.requested.is_saturated() {
                // A saturated sum cannot be undone by subtraction: add up what is left.
                node.pods
                    .iter()
                    .filter_map(|p| self.pods.get(p))
                    .fold(Resources::ZERO, |sum, p| &sum + &p.requests)
            } else {
                node.requested.saturating_sub(&removed.requests)
            };
        }
        Some(removed)
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
