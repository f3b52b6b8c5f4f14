//! Labels: the key/value pairs Kubernetes puts on pods and nodes, and a pod's node selector.

use std::collections::BTreeMap;
use std::fmt;

use crate::sync::Arc;

/// A set of labels (`key → value`), on a [`Pod`](crate::Pod) or a
/// [`Node`](crate::scheduler::Node), or a pod's node selector. Keys are unique and kept in
/// order; cloning shares one allocation (cheap for the model checker's states), and an empty
/// set allocates nothing.
///
/// A node selector is matched as kube-scheduler's NodeAffinity does for `spec.nodeSelector`:
/// a node matches when it has every selector key with exactly the selector's value
/// ([`matches`](Labels::matches)).
///
/// ```
/// use gangsched::Labels;
/// let node = Labels::from_iter([("accelerator", "h100"), ("zone", "a")]);
/// assert_eq!(node.get("zone"), Some("a"));
/// assert!(Labels::from_iter([("accelerator", "h100")]).matches(&node));
/// assert!(!Labels::from_iter([("accelerator", "a100")]).matches(&node));
/// assert!(Labels::new().matches(&node), "an empty selector matches every node");
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Labels(Option<Arc<BTreeMap<Box<str>, Box<str>>>>);

impl Labels {
    /// No labels.
    pub const fn new() -> Labels {
        Labels(None)
    }

    /// These labels with `key` set to `value` (replacing a value already there).
    pub fn with(mut self, key: &str, value: &str) -> Labels {
        self.insert(key, value);
        self
    }

    /// Sets `key` to `value`, returning the value it replaces.
    pub fn insert(&mut self, key: &str, value: &str) -> Option<String> {
        let map = Arc::make_mut(self.0.get_or_insert_with(Default::default));
        map.insert(key.into(), value.into()).map(String::from)
    }

    /// The value of `key`, if it is set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.as_deref()?.get(key).map(|v| &**v)
    }

    /// Every label, by key in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.0
            .as_deref()
            .into_iter()
            .flatten()
            .map(|(k, v)| (&**k, &**v))
    }

    /// How many labels there are.
    pub fn len(&self) -> usize {
        self.0.as_deref().map_or(0, BTreeMap::len)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `labels` has every label of `self` (read as a node selector) with the same
    /// value. An empty selector matches everything.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.is_empty()
            || self
                .iter()
                .all(|(key, value)| labels.get(key) == Some(value))
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for Labels {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Labels {
        let mut labels = Labels::new();
        for (key, value) in pairs {
            labels.insert(key.as_ref(), value.as_ref());
        }
        labels
    }
}

/// `{key: value, …}`, by key.
impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// `key=value,key=value` (Kubernetes' selector syntax), by key.
impl fmt::Display for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, value)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{key}={value}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_replaces_and_clones_share_until_changed() {
        let mut a = Labels::new().with("zone", "a");
        let b = a.clone();
        assert_eq!(a.insert("zone", "b"), Some("a".to_owned()));
        assert_eq!(a.get("zone"), Some("b"));
        assert_eq!(b.get("zone"), Some("a"), "the clone is untouched");
        assert_eq!(a.insert("rack", "7"), None);
        assert_eq!(a.len(), 2);
        assert_eq!(a.to_string(), "rack=7,zone=b");
        assert_eq!(format!("{a:?}"), r#"{"rack": "7", "zone": "b"}"#);
        assert!(Labels::new().is_empty() && Labels::new().get("x").is_none());
    }

    #[test]
    fn a_selector_matches_only_nodes_with_every_label_equal() {
        let node = Labels::from_iter([("gpu", "h100"), ("zone", "a")]);
        assert!(Labels::from_iter([("gpu", "h100"), ("zone", "a")]).matches(&node));
        assert!(!Labels::from_iter([("gpu", "h100"), ("zone", "b")]).matches(&node));
        assert!(!Labels::from_iter([("rack", "1")]).matches(&node));
        assert!(!Labels::from_iter([("gpu", "")]).matches(&Labels::new()));
        assert!(Labels::new().matches(&Labels::new()));
    }
}
