use crate::sync::Arc;
use crate::Labels;
use crate::{Resources, Taint};

/// A cluster node as the scheduler's cache sees it: a name, what it can hold, its labels
/// (which a pod's node selector is matched against) and its taints (which a pod must
/// tolerate).
///
/// ```
/// use gangsched::scheduler::Node;
/// use gangsched::Resources;
/// let node = Node::new("node-a", Resources::new(4000, 16 << 30).with_extended("nvidia.com/gpu", 8))
///     .with_label("accelerator", "h100");
/// assert_eq!(node.name(), "node-a");
/// assert_eq!(node.capacity().extended("nvidia.com/gpu"), 8);
/// assert_eq!(node.labels().get("accelerator"), Some("h100"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    name: Arc<str>,
    capacity: Resources,
    labels: Labels,
    taints: Vec<Taint>,
}

impl Node {
    /// A node called `name` with `capacity` allocatable resources and no labels.
    pub fn new(name: &str, capacity: Resources) -> Node {
        Node {
            name: name.into(),
            capacity,
            labels: Labels::new(),
            taints: Vec::new(),
        }
    }

    /// This node with `taint` added (`spec.taints[]`): pods that do not tolerate it are kept
    /// off by the default placement when its effect filters.
    pub fn with_taint(mut self, taint: Taint) -> Node {
        self.taints.push(taint);
        self
    }

    /// The node's taints, in the order given.
    pub fn taints(&self) -> &[Taint] {
        &self.taints
    }

    /// This node with the labels `labels` (`metadata.labels`), replacing any it had.
    pub fn with_labels(mut self, labels: Labels) -> Node {
        self.labels = labels;
        self
    }

    /// This node with its label `key` set to `value`.
    pub fn with_label(mut self, key: &str, value: &str) -> Node {
        self.labels.insert(key, value);
        self
    }

    /// The node's name (unique in a cache).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node's allocatable resources.
    pub fn capacity(&self) -> &Resources {
        &self.capacity
    }

    /// The node's labels.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// The name, shared (the cache keys its node by it).
    pub(super) fn shared_name(&self) -> &Arc<str> {
        &self.name
    }
}
