use std::cmp::Ordering;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::Pod;
use crate::sync::Arc;

/// Names a pod group: its namespace and name. A pod belongs to the group named by its
/// [`Pod::group`] in its own namespace.
///
/// Cheap to clone (one shared allocation, built once per pod by [`Pod::with_group`]), hashed
/// once when built, and ordered by (namespace, name): the registry finds a group with one hash
/// lookup, and two keys cloned from one another compare equal without reading their bytes.
#[derive(Clone)]
pub struct GroupKey(Arc<KeyFields>);

struct KeyFields {
    namespace: Box<str>,
    name: Box<str>,
    /// A hash of (namespace, name), fixed when the key is built.
    hash: u64,
}

impl GroupKey {
    /// The key of group `name` in `namespace`.
    pub fn new(namespace: &str, name: &str) -> GroupKey {
        let mut hasher = DefaultHasher::new();
        (namespace, name).hash(&mut hasher);
        GroupKey(Arc::new(KeyFields {
            namespace: namespace.into(),
            name: name.into(),
            hash: hasher.finish(),
        }))
    }

    /// The key of the group `pod` names, if it names one (a clone of the pod's own key).
    pub fn of(pod: &Pod) -> Option<GroupKey> {
        pod.group_key().cloned()
    }

    /// The hash fixed when the key was built (what the registry spreads its shards by).
    /// How many handles share this key's allocation (tests of
    /// [`FreshCopies`](crate::symmetry::FreshCopies)).
    #[cfg(all(test, feature = "checking"))]
    pub(crate) fn handles(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    pub(crate) fn fixed_hash(&self) -> u64 {
        self.0.hash
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.0.namespace
    }

    /// The group's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }
}

impl PartialEq for GroupKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.hash == other.0.hash
                && self.0.namespace == other.0.namespace
                && self.0.name == other.0.name)
    }
}

impl Eq for GroupKey {}

/// Orders by namespace, then name.
impl Ord for GroupKey {
    fn cmp(&self, other: &Self) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        (&self.0.namespace, &self.0.name).cmp(&(&other.0.namespace, &other.0.name))
    }
}

impl PartialOrd for GroupKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Feeds the hash fixed at construction (a function of namespace and name, so equal keys hash
/// alike).
impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl fmt::Debug for GroupKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.0.namespace, self.0.name)
    }
}

impl fmt::Display for GroupKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.0.namespace, self.0.name)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn keys_compare_by_namespace_then_name_and_equal_keys_hash_alike() {
        let a = GroupKey::new("ml", "a");
        let b = GroupKey::new("ml", "b");
        let other_ns = GroupKey::new("aa", "z");
        assert!(a < b && other_ns < a);
        assert_eq!(a, GroupKey::new("ml", "a"), "equal without sharing");
        assert_ne!(GroupKey::new("ml/", "a"), GroupKey::new("ml", "/a"));
        let mut map: HashMap<GroupKey, u32, crate::fast_hash::BuildFastHasher> = HashMap::default();
        map.insert(a.clone(), 1);
        map.insert(b, 2);
        assert_eq!(map.get(&GroupKey::new("ml", "a")), Some(&1));
        assert_eq!(map.get(&other_ns), None);
    }

    /// Two keys whose stored hashes collide are still told apart by namespace and name; and
    /// the stored hash is what a hasher is fed, so different keys land apart in a table.
    #[test]
    fn equality_reads_the_names_and_hashing_the_stored_hash() {
        let colliding = |namespace: &str, name: &str| {
            GroupKey(Arc::new(KeyFields {
                namespace: namespace.into(),
                name: name.into(),
                hash: 7,
            }))
        };
        assert_ne!(colliding("ml", "a"), colliding("ml", "b"));
        assert_ne!(colliding("ml", "a"), colliding("ai", "a"));
        assert_eq!(colliding("ml", "a"), colliding("ml", "a"));
        let build = crate::fast_hash::BuildFastHasher::default();
        use std::hash::BuildHasher;
        let (a, b) = (GroupKey::new("ml", "a"), GroupKey::new("ml", "b"));
        assert_ne!(build.hash_one(&a), build.hash_one(&b));
        assert_eq!(build.hash_one(&a), build.hash_one(GroupKey::new("ml", "a")));
    }

    #[test]
    fn a_pod_carries_its_group_key() {
        let pod = Pod::new("u", "ml", "p-0").with_group("g");
        assert_eq!(GroupKey::of(&pod), Some(GroupKey::new("ml", "g")));
        assert_eq!(pod.group(), Some("g"));
        assert_eq!(GroupKey::of(&Pod::new("v", "ml", "q")), None);
    }
}
