use super::Resources;

/// A cluster node as the scheduler's cache sees it: a name and what it can hold.
///
/// ```
/// use gangsched::scheduler::Node;
/// use gangsched::Resources;
/// let node = Node::new("node-a", Resources::new(4000, 16 << 30));
/// assert_eq!(node.name(), "node-a");
/// assert_eq!(node.capacity(), Resources::new(4000, 16 << 30));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    name: Box<str>,
    capacity: Resources,
}

impl Node {
    /// A node called `name` with `capacity` allocatable resources.
    pub fn new(name: &str, capacity: Resources) -> Node {
        Node {
            name: name.into(),
            capacity,
        }
    }

    /// The node's name (unique in a cache).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node's allocatable resources.
    pub fn capacity(&self) -> Resources {
        self.capacity
    }
}
