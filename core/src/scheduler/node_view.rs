//! One node of a [`CacheState`](super::CacheState), borrowed.

use super::cache::NodeEntry;
use super::Node;
use crate::{Labels, PodId};
use crate::{Resources, Taint};

/// One node as the cache accounts for it, borrowed from a [`CacheState`](super::CacheState).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeView<'a> {
    name: &'a str,
    entry: &'a NodeEntry,
}

impl<'a> NodeView<'a> {
    pub(super) fn new(name: &'a str, entry: &'a NodeEntry) -> NodeView<'a> {
        NodeView { name, entry }
    }

    /// The node's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The node's allocatable resources.
    pub fn capacity(&self) -> &'a Resources {
        &self.entry.capacity
    }

    /// The node's labels.
    pub fn labels(&self) -> &'a Labels {
        &self.entry.labels
    }

    /// The node's taints.
    pub fn taints(&self) -> &'a [Taint] {
        &self.entry.taints
    }

    /// The sum of the requests of the pods assumed on or bound to this node (I5). It exceeds
    /// the capacity only if pods observed bound
    /// ([`CacheState::add_bound`](super::CacheState::add_bound)) overcommit it.
    pub fn requested(&self) -> &'a Resources {
        &self.entry.requested
    }

    /// What is left: capacity minus requested, zero where overcommitted.
    pub fn free(&self) -> Resources {
        self.entry.capacity.saturating_sub(&self.entry.requested)
    }

    /// The pods assumed on or bound to this node, in id order.
    pub fn pods(&self) -> impl Iterator<Item = &'a PodId> + 'a {
        self.entry.pods.iter()
    }

    /// How many pods are assumed on or bound to this node.
    pub fn pod_count(&self) -> usize {
        self.entry.pods.len()
    }

    /// The node itself, owned.
    pub fn to_node(&self) -> Node {
        let node = Node::new(self.name, self.entry.capacity.clone());
        let node = node.with_labels(self.entry.labels.clone());
        self.entry
            .taints
            .iter()
            .fold(node, |node, taint| node.with_taint(taint.clone()))
    }
}
