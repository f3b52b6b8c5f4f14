//! The nodes of a [`CacheState`](super::CacheState) by class and fill, so that placing a pod
//! costs what its candidates are, not the cluster's size (issue #23: with thousands of nodes,
//! scanning every node for every pod was nearly half of a run).
//!
//! A *class* is the nodes that are the same for placement: equal capacity, labels and taints
//! (deleted nodes are left out: nothing is placed there). Within a class, nodes with the same
//! requested resources form a *bucket*: for any pod they pass or fail the same filters for the
//! same reasons and have the same score, so placement looks at the bucket's first name only
//! and the failure message counts its nodes at once. A class keeps its buckets by free CPU,
//! tightest first, so those without room for a pod's CPU request are never looked at.
//!
//! Derived data: the cache builds the index at the [`add_node`](super::CacheState::add_node)
//! that brings it to [`NodeIndex::BUILD_FROM`] nodes (or when a checker asks,
//! [`build_node_index`](crate::checking::build_node_index)), keeps it in step with every
//! transition from then on, and leaves it out of its equality, hash and `Debug`
//! ([`NodeIndexSlot`]). [`NodeIndex::check`] compares it with the nodes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::hash::{Hash, Hasher};

use super::cache::{CacheState, NodeEntry};
use crate::sync::Arc;
use crate::Labels;
use crate::{Resources, Taint};

/// What makes nodes the same for placement, apart from what is requested on them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ClassKey {
    capacity: Resources,
    labels: Labels,
    taints: Vec<Taint>,
}

impl ClassKey {
    /// The class of `entry`.
    fn of(entry: &NodeEntry) -> ClassKey {
        ClassKey {
            capacity: entry.capacity.clone(),
            labels: entry.labels.clone(),
            taints: entry.taints.clone(),
        }
    }

    /// Whether `entry` is of this class (without building its key).
    fn holds(&self, entry: &NodeEntry) -> bool {
        self.capacity == entry.capacity
            && self.labels == entry.labels
            && self.taints == entry.taints
    }
}

/// A bucket's key: the free CPU millis of its nodes (capacity minus requested, saturating),
/// then what is requested on each. Ascending: the tightest buckets first.
type BucketKey = (u64, Resources);

/// The nodes of one class, by what is requested on them.
#[derive(Clone, Debug)]
pub(super) struct Class {
    key: ClassKey,
    /// How many nodes the class has (the sum of its buckets' sizes).
    nodes: usize,
    /// Each bucket's node names, in order; no bucket is empty.
    buckets: BTreeMap<BucketKey, BTreeSet<Arc<str>>>,
}

impl Class {
    /// The capacity of each of the class's nodes.
    pub(super) fn capacity(&self) -> &Resources {
        &self.key.capacity
    }

    /// The labels of each of the class's nodes.
    pub(super) fn labels(&self) -> &Labels {
        &self.key.labels
    }

    /// The taints of each of the class's nodes, in their order.
    pub(super) fn taints(&self) -> &[Taint] {
        &self.key.taints
    }

    /// How many nodes the class has.
    pub(super) fn node_count(&self) -> usize {
        self.nodes
    }

    /// The buckets whose nodes have at least `cpu_millis` CPU free, tightest first: what is
    /// requested on their nodes, and the first of their names.
    pub(super) fn with_free_cpu(
        &self,
        cpu_millis: u64,
    ) -> impl Iterator<Item = (&Resources, &Arc<str>)> + '_ {
        // `Resources::ZERO` is the least `Resources`: the range starts at the first bucket
        // with that much CPU free.
        self.buckets
            .range((cpu_millis, Resources::ZERO)..)
            .map(|((_, requested), names)| (requested, names.first().expect("no empty bucket")))
    }

    /// Every bucket: what is requested on its nodes, and how many they are.
    pub(super) fn buckets(&self) -> impl Iterator<Item = (&Resources, usize)> + '_ {
        self.buckets
            .iter()
            .map(|((_, requested), names)| (requested, names.len()))
    }

    /// The key of the bucket of the class's nodes with `requested` on them.
    fn bucket_key(&self, requested: Resources) -> BucketKey {
        let free = self
            .key
            .capacity
            .cpu_millis
            .saturating_sub(requested.cpu_millis);
        (free, requested)
    }

    /// Files `name` under `requested`.
    fn file(&mut self, name: Arc<str>, requested: Resources) {
        let key = self.bucket_key(requested);
        let fresh = self.buckets.entry(key).or_default().insert(name);
        debug_assert!(fresh, "node filed twice");
        self.nodes += 1;
    }

    /// Takes `name`, filed under `requested`, out.
    fn unfile(&mut self, name: &str, requested: Resources) {
        let key = self.bucket_key(requested);
        if let Some(names) = self.buckets.get_mut(&key) {
            let filed = names.remove(name);
            debug_assert!(filed, "node {name} not filed as its entry says");
            self.nodes -= usize::from(filed);
            if names.is_empty() {
                self.buckets.remove(&key);
            }
        } else {
            debug_assert!(false, "node {name} not filed as its entry says");
        }
    }
}

/// The live nodes of a cache by class and bucket (see the module's documentation).
#[derive(Clone, Debug, Default)]
pub(super) struct NodeIndex {
    /// The classes by id; none is empty.
    classes: BTreeMap<u32, Class>,
    /// Each class's id by its key.
    ids: BTreeMap<ClassKey, u32>,
    /// Each live node's class id, keyed by its name (the shared name the buckets hold).
    class_of: BTreeMap<Arc<str>, u32>,
    /// The id the next new class gets.
    next_id: u32,
}

impl NodeIndex {
    /// The node count from which a cache builds its index: below it, scanning every node is
    /// as fast, and cloning the cache (the model checker does it for every state) stays cheap.
    pub(super) const BUILD_FROM: usize = 64;

    /// The index of `nodes` (a cache's).
    pub(super) fn build(nodes: &BTreeMap<Arc<str>, NodeEntry>) -> NodeIndex {
        let mut index = NodeIndex::default();
        for (name, entry) in nodes {
            index.insert(name, entry);
        }
        index
    }

    /// How many live nodes there are.
    pub(super) fn len(&self) -> usize {
        self.class_of.len()
    }

    /// The classes, in no particular order.
    pub(super) fn classes(&self) -> impl Iterator<Item = &Class> + '_ {
        self.classes.values()
    }

    /// Files the node `name`, as `entry` is now; a deleted node is not filed.
    pub(super) fn insert(&mut self, name: &Arc<str>, entry: &NodeEntry) {
        if entry.deleted {
            return;
        }
        let id = self.class_id(entry);
        let class = self.classes.get_mut(&id).expect("every id has its class");
        class.file(Arc::clone(name), entry.requested.clone());
        let fresh = self.class_of.insert(Arc::clone(name), id).is_none();
        debug_assert!(fresh, "node {name} filed twice");
    }

    /// The id of `entry`'s class, made if it is new.
    fn class_id(&mut self, entry: &NodeEntry) -> u32 {
        let key = ClassKey::of(entry);
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.next_id;
        self.next_id += 1;
        let class = Class {
            key: key.clone(),
            nodes: 0,
            buckets: BTreeMap::new(),
        };
        self.classes.insert(id, class);
        self.ids.insert(key, id);
        id
    }

    /// Takes the node `name` out, filed as `entry` is now; returns the shared name it was
    /// filed under (`None` for a deleted node, never filed).
    pub(super) fn remove(&mut self, name: &str, entry: &NodeEntry) -> Option<Arc<str>> {
        if entry.deleted {
            return None;
        }
        let (name, id) = self.class_of.remove_entry(name)?;
        let class = self.classes.get_mut(&id).expect("every id has its class");
        class.unfile(&name, entry.requested.clone());
        if class.nodes == 0 {
            let class = self.classes.remove(&id).expect("found above");
            self.ids.remove(&class.key);
        }
        Some(name)
    }

    /// Moves the node `name` from the bucket of `was` (what was requested on it) to that of
    /// what `entry` has requested now — its capacity, labels and taints unchanged.
    pub(super) fn requested_changed(&mut self, name: &str, was: Resources, entry: &NodeEntry) {
        if entry.deleted {
            return;
        }
        let Some((name, &id)) = self.class_of.get_key_value(name) else {
            debug_assert!(false, "live node {name} not filed");
            return;
        };
        let class = self.classes.get_mut(&id).expect("every id has its class");
        class.unfile(name, was);
        class.file(Arc::clone(name), entry.requested.clone());
    }

    /// Verifies the index against `nodes` (its cache's): every live node filed once, in the
    /// class of its capacity, labels and taints and the bucket of what is requested on it;
    /// nothing else filed; no empty class or bucket; every count right. The error describes
    /// the first difference found.
    pub(super) fn check(&self, nodes: &BTreeMap<Arc<str>, NodeEntry>) -> Result<(), String> {
        let mut live = 0;
        for (name, entry) in nodes.iter().filter(|(_, e)| !e.deleted) {
            live += 1;
            let Some(id) = self.class_of.get(name) else {
                return Err(format!("node index: node {name} is not filed"));
            };
            let class = self
                .classes
                .get(id)
                .ok_or_else(|| format!("node index: node {name} is filed in missing class {id}"))?;
            if !class.key.holds(entry) {
                return Err(format!(
                    "node index: node {name} is filed in a class of other capacity, labels \
                     or taints"
                ));
            }
            let key = class.bucket_key(entry.requested.clone());
            if !class.buckets.get(&key).is_some_and(|b| b.contains(name)) {
                return Err(format!(
                    "node index: node {name} is not in the bucket of its requested {}",
                    entry.requested
                ));
            }
        }
        if self.class_of.len() != live {
            return Err(format!(
                "node index: {} nodes filed, {live} live nodes",
                self.class_of.len()
            ));
        }
        let mut filed = 0;
        for (id, class) in &self.classes {
            let in_buckets: usize = class.buckets.values().map(BTreeSet::len).sum();
            if class.buckets.values().any(BTreeSet::is_empty) || in_buckets == 0 {
                return Err(format!(
                    "node index: class {id} has an empty bucket or none"
                ));
            }
            if in_buckets != class.nodes {
                return Err(format!(
                    "node index: class {id} counts {} nodes but holds {in_buckets}",
                    class.nodes
                ));
            }
            if self.ids.get(&class.key) != Some(id) {
                return Err(format!("node index: class {id} is not found by its key"));
            }
            filed += in_buckets;
        }
        if filed != live || self.ids.len() != self.classes.len() {
            return Err(format!(
                "node index: {filed} nodes in buckets, {live} live nodes; {} keys for {} \
                 classes",
                self.ids.len(),
                self.classes.len()
            ));
        }
        Ok(())
    }
}

/// A cache's [`NodeIndex`], or none yet. Derived data, so it takes no part in the cache's
/// identity: any two slots are equal, hashing one writes nothing (and the cache's `Debug`
/// leaves it out) — two caches with the same nodes and pods are equal (the model checker
/// relies on it) whether or not either has built its index. Cloning an unbuilt slot copies
/// nothing.
#[derive(Clone, Default)]
pub(super) struct NodeIndexSlot(Option<Box<NodeIndex>>);

impl NodeIndexSlot {
    /// The index, if it is built.
    pub(super) fn get(&self) -> Option<&NodeIndex> {
        self.0.as_deref()
    }

    /// Builds the index of `nodes` (replacing any).
    pub(super) fn build(&mut self, nodes: &BTreeMap<Arc<str>, NodeEntry>) {
        self.0 = Some(Box::new(NodeIndex::build(nodes)));
    }

    /// [`NodeIndex::insert`], if the index is built.
    pub(super) fn insert(&mut self, name: &Arc<str>, entry: &NodeEntry) {
        if let Some(index) = &mut self.0 {
            index.insert(name, entry);
        }
    }

    /// [`NodeIndex::remove`], if the index is built.
    pub(super) fn remove(&mut self, name: &str, entry: &NodeEntry) -> Option<Arc<str>> {
        self.0.as_mut()?.remove(name, entry)
    }

    /// [`NodeIndex::requested_changed`], if the index is built.
    pub(super) fn requested_changed(&mut self, name: &str, was: Resources, entry: &NodeEntry) {
        if let Some(index) = &mut self.0 {
            index.requested_changed(name, was, entry);
        }
    }
}

/// Always true: the index is derived from the nodes, which the cache compares.
impl PartialEq for NodeIndexSlot {
    fn eq(&self, _: &NodeIndexSlot) -> bool {
        true
    }
}

impl Eq for NodeIndexSlot {}

/// Writes nothing, as equal slots must hash alike.
impl Hash for NodeIndexSlot {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl CacheState {
    /// Builds the node index now, whatever the node count, and keeps it from then on (a cache
    /// builds it by itself once it holds [`NodeIndex::BUILD_FROM`] nodes).
    pub(crate) fn build_node_index(&mut self) {
        self.index.build(&self.nodes);
    }

    /// The node index, if it is built.
    pub(super) fn node_index(&self) -> Option<&NodeIndex> {
        self.index.get()
    }
}

/// The nodes, pods and assumed pods; not the node index (derived from the nodes).
impl fmt::Debug for CacheState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheState")
            .field("nodes", &self.nodes)
            .field("pods", &self.pods)
            .field("assumed", &self.assumed)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::Node;
    #[cfg(feature = "checking")]
    use crate::symmetry::{PodRenaming, Renamed};
    use crate::Pod;
    use crate::{Taint, TaintEffect};

    fn cache(nodes: usize) -> CacheState {
        let mut cache = CacheState::new();
        for i in 0..nodes {
            let node = Node::new(&format!("n{i:02}"), Resources::new(4000, 4000));
            cache.add_node(node).unwrap();
        }
        cache
    }

    #[test]
    fn built_at_the_threshold_and_kept_out_of_equality_hash_and_debug() {
        use std::hash::BuildHasher;
        let mut small = cache(NodeIndex::BUILD_FROM - 1);
        assert!(small.node_index().is_none());
        let mut indexed = small.clone();
        indexed.build_node_index();
        let hasher = std::hash::RandomState::new();
        assert_eq!(small, indexed);
        assert_eq!(hasher.hash_one(&small), hasher.hash_one(&indexed));
        assert_eq!(format!("{small:?}"), format!("{indexed:?}"));
        let last = Node::new("n99", Resources::new(4000, 4000));
        small.add_node(last).unwrap();
        assert_eq!(
            small.node_index().map(NodeIndex::len),
            Some(NodeIndex::BUILD_FROM)
        );
        small.check().unwrap();
    }

    /// Once built, the index is kept up to date node by node, never built again: a rebuild on
    /// every node added past the threshold gives the same index at a full walk's cost each
    /// time (issue #43: that mutant of `add_node`'s condition was missed). The index stays in
    /// its allocation; a rebuilt one would be in a new one, made while the old one still held
    /// its own.
    #[test]
    fn an_index_built_is_updated_in_place_not_built_again() {
        let mut cache = cache(NodeIndex::BUILD_FROM);
        let built: *const NodeIndex = cache.node_index().expect("built");
        cache
            .add_node(Node::new("n99", Resources::new(4000, 4000)))
            .unwrap();
        let after: *const NodeIndex = cache.node_index().expect("kept");
        assert!(std::ptr::eq(built, after), "the index was built again");
        assert_eq!(
            cache.node_index().map(NodeIndex::len),
            Some(NodeIndex::BUILD_FROM + 1)
        );
        cache.check().unwrap();
    }

    #[test]
    fn one_class_per_capacity_labels_and_taints_one_bucket_per_fill() {
        let mut c = cache(4);
        c.build_node_index();
        let taint = Taint::new("spot", "", TaintEffect::NoSchedule);
        c.update_node(Node::new("n03", Resources::new(4000, 4000)).with_taint(taint))
            .unwrap();
        let pod = Pod::new("p", "ns", "p").with_requests(Resources::new(1000, 1000));
        c.assume(&pod, "n01").unwrap();
        let index = c.node_index().unwrap();
        let mut shapes: Vec<Vec<usize>> = index
            .classes()
            .map(|class| class.buckets().map(|(_, nodes)| nodes).collect())
            .collect();
        shapes.sort();
        // Untainted: n01 (3000 free) before n00 and n02 (4000 free); tainted: n03.
        assert_eq!(shapes, [vec![1], vec![1, 2]]);
        c.remove_pod(pod.id()).unwrap();
        c.remove_node("n03").unwrap();
        let index = c.node_index().unwrap();
        assert_eq!((index.classes().count(), index.len()), (1, 3));
        c.check().unwrap();
    }

    /// A class names the capacity, labels and taints its nodes share and how many they are, and
    /// offers the buckets with enough CPU free, tightest first, each by its first node: what a
    /// placement over many nodes reads instead of every node (issue #43: no unit test placed on
    /// 64 nodes, so none read these).
    #[test]
    fn a_class_names_its_nodes_shape_and_offers_its_buckets_tightest_first() {
        let mut c = cache(4);
        c.build_node_index();
        let taint = Taint::new("spot", "", TaintEffect::NoSchedule);
        let spot = Node::new("n03", Resources::new(2000, 2000))
            .with_taint(taint.clone())
            .with_label("pool", "spot");
        c.update_node(spot).unwrap();
        let pod = Pod::new("p", "ns", "p").with_requests(Resources::new(1000, 1000));
        c.assume(&pod, "n01").unwrap();
        let index = c.node_index().unwrap();
        let (plain, spot): (Vec<&Class>, Vec<&Class>) =
            index.classes().partition(|class| class.taints().is_empty());
        let (plain, spot) = (plain[0], spot[0]);
        assert_eq!(
            (plain.capacity(), plain.labels(), plain.node_count()),
            (&Resources::new(4000, 4000), &Labels::new(), 3)
        );
        assert_eq!(
            (
                spot.capacity(),
                spot.labels(),
                spot.taints(),
                spot.node_count()
            ),
            (
                &Resources::new(2000, 2000),
                &Labels::new().with("pool", "spot"),
                &[taint][..],
                1
            )
        );
        let offered = |class: &Class, cpu| -> Vec<(Resources, String)> {
            class
                .with_free_cpu(cpu)
                .map(|(requested, name)| (requested.clone(), name.to_string()))
                .collect()
        };
        assert_eq!(
            offered(plain, 2000),
            [
                (Resources::new(1000, 1000), "n01".to_owned()),
                (Resources::ZERO, "n00".to_owned())
            ]
        );
        assert_eq!(offered(plain, 3500), [(Resources::ZERO, "n00".to_owned())]);
        assert_eq!(offered(spot, 2001), []);
    }

    #[cfg(feature = "checking")]
    #[test]
    fn renaming_keeps_an_index_true_to_the_renamed_nodes() {
        let mut c = cache(3);
        c.build_node_index();
        let pod = Pod::new("p", "ns", "p").with_requests(Resources::new(1000, 1000));
        c.assume(&pod, "n01").unwrap();
        let renamed = c.renamed(&PodRenaming::default());
        assert!(renamed.node_index().is_some());
        renamed.check().unwrap();
    }

    /// The witness that [`CacheState::check`] verifies the index: a transition the index
    /// missed, or a node filed twice, is reported.
    #[test]
    fn a_stale_index_fails_the_check() {
        let mut c = cache(3);
        c.build_node_index();
        // An assume the index misses.
        let before = c.index.0.take();
        let pod = Pod::new("p", "ns", "p").with_requests(Resources::new(1000, 1000));
        c.assume(&pod, "n01").unwrap();
        c.index.0 = before;
        let err = c.check().unwrap_err();
        assert!(
            err.starts_with("node index: node n01 is not in the bucket"),
            "{err}"
        );

        let mut c = cache(3);
        c.build_node_index();
        let index = c.index.0.as_mut().unwrap();
        let class = index.classes.values_mut().next().unwrap();
        class.file(Arc::from("n02"), Resources::new(1, 1));
        let err = c.check().unwrap_err();
        assert!(
            err.starts_with("node index: 4 nodes in buckets, 3 live"),
            "{err}"
        );

        // An empty bucket beside the full one (the counts still right).
        let mut c = cache(3);
        c.build_node_index();
        let index = c.index.0.as_mut().unwrap();
        let class = index.classes.values_mut().next().unwrap();
        class
            .buckets
            .insert((1, Resources::new(1, 1)), BTreeSet::new());
        let err = c.check().unwrap_err();
        assert!(
            err.starts_with("node index: class 0 has an empty bucket or none"),
            "{err}"
        );
    }

    /// A node whose labels, taints or capacity changed behind the index's back stays filed in
    /// its old class; the check finds each (a class matched on any one of the three would pass
    /// two of them: found by mutation testing, issue #43).
    #[test]
    fn the_check_finds_a_node_filed_in_a_class_of_other_labels_taints_or_capacity() {
        let taint = Taint::new("spot", "", TaintEffect::NoSchedule);
        let changes = [
            Node::new("n01", Resources::new(4000, 4000)).with_label("zone", "a"),
            Node::new("n01", Resources::new(4000, 4000)).with_taint(taint),
            Node::new("n01", Resources::new(8000, 4000)),
        ];
        for changed in changes {
            let mut c = cache(3);
            c.build_node_index();
            let before = c.index.0.take();
            c.update_node(changed.clone()).unwrap();
            c.index.0 = before;
            let err = c.check().unwrap_err();
            assert!(
                err.starts_with("node index: node n01 is filed in a class of other"),
                "{changed:?}: {err}"
            );
        }
    }
}
