use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::{GroupKey, Labels, Resources, Toleration};
use crate::sync::Arc;
use crate::time::Time;

/// A pod's uid: the key of every gangway map. Cheap to clone (one shared allocation) and
/// hashed once, when built: a lookup hashes one word and, when the id it looks for was cloned
/// from the stored one (the common case of a lookup that finds its pod), compares without
/// reading the uid's bytes.
#[derive(Clone)]
pub struct PodId {
    /// A hash of the uid, fixed when the id is built.
    hash: u64,
    uid: Arc<str>,
}

impl PartialEq for PodId {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && (Arc::ptr_eq(&self.uid, &other.uid) || self.uid == other.uid)
    }
}

impl Eq for PodId {}

/// Feeds the hash fixed at construction (a function of the uid, so equal ids hash alike).
impl Hash for PodId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// Orders as the uid string.
impl Ord for PodId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.uid, &other.uid) {
            return std::cmp::Ordering::Equal;
        }
        self.uid.cmp(&other.uid)
    }
}

impl PartialOrd for PodId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PodId {
    #[cfg(feature = "checking")]
    /// An equal id in an allocation of its own (its hash kept).
    pub(crate) fn fresh_copy(&self) -> PodId {
        PodId {
            hash: self.hash,
            uid: Arc::from(&*self.uid),
        }
    }

    /// How many handles share this id's allocation (tests of [`FreshCopies`]).
    ///
    /// [`FreshCopies`]: crate::symmetry::FreshCopies
    #[cfg(all(test, feature = "checking"))]
    pub(crate) fn handles(&self) -> usize {
        Arc::strong_count(&self.uid)
    }

    /// A pod id from its uid.
    pub fn new(uid: impl Into<Arc<str>>) -> PodId {
        let uid = uid.into();
        let mut hasher = DefaultHasher::new();
        uid.hash(&mut hasher);
        PodId {
            hash: hasher.finish(),
            uid,
        }
    }

    /// The uid.
    pub fn as_str(&self) -> &str {
        &self.uid
    }

    /// The hash fixed when the id was built (what the waiting map spreads its shards by).
    pub(crate) fn fixed_hash(&self) -> u64 {
        self.hash
    }
}

impl From<&str> for PodId {
    fn from(uid: &str) -> Self {
        PodId::new(uid)
    }
}

impl From<String> for PodId {
    fn from(uid: String) -> Self {
        PodId::new(uid)
    }
}

impl fmt::Debug for PodId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.uid, f)
    }
}

impl fmt::Display for PodId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.uid)
    }
}

/// The part of a pod that gang scheduling reads: identity, priority, the scheduling group it
/// names, when it was created, its resource requests and, once observed bound, its node. Immutable and cheap to clone (one `Arc`); build it with
/// [`Pod::new`] and the `with_*` methods.
///
/// ```
/// use gangsched::{Pod, Time};
/// let pod = Pod::new("uid-1", "default", "trainer-0")
///     .with_priority(100)
///     .with_group("trainer")
///     .with_creation_time(Time::from_secs(3));
/// assert_eq!(pod.group(), Some("trainer"));
/// assert_eq!(pod.full_name(), "default/trainer-0");
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pod(Arc<PodFields>);

/// Hashes the pod's whole content, through the hash computed once when the pod was built or
/// last changed (a pod is immutable behind its `Arc`): a model checker's fingerprint of a
/// queue hashes every pod it holds at every step.
impl Hash for Pod {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.content_hash);
    }
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct PodFields {
    id: PodId,
    namespace: Box<str>,
    name: Box<str>,
    priority: i32,
    /// The group's key (namespace from this pod), built once.
    group: Option<GroupKey>,
    created: Time,
    requests: Resources,
    /// Labels, node selector and tolerations; `None` when the pod has none (one word in every
    /// pod rather than three collections).
    terms: Option<Box<PodTerms>>,
    node: Option<Box<str>>,
    /// A hash of every field above ([`PodFields::seal`]): last, so it orders nothing that the
    /// fields do not.
    content_hash: u64,
}

impl PodFields {
    /// Computes `content_hash` from the fields (the derived hash of them all, the hash itself
    /// zeroed first; the std hasher with its fixed keys: the same on every run, as a model
    /// checker's fingerprints need).
    fn seal(&mut self) {
        self.content_hash = 0;
        let mut hasher = DefaultHasher::new();
        self.hash(&mut hasher);
        self.content_hash = hasher.finish();
    }
}

/// What a pod says about where it may run, and its labels.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct PodTerms {
    labels: Labels,
    node_selector: Labels,
    tolerations: Vec<Toleration>,
}

/// The terms of a pod that has none.
static NO_TERMS: PodTerms = PodTerms {
    labels: Labels::new(),
    node_selector: Labels::new(),
    tolerations: Vec::new(),
};

impl Pod {
    /// A pod with priority 0, no scheduling group, created at [`Time::ZERO`].
    pub fn new(id: impl Into<PodId>, namespace: &str, name: &str) -> Pod {
        let mut fields = PodFields {
            id: id.into(),
            namespace: namespace.into(),
            name: name.into(),
            priority: 0,
            group: None,
            created: Time::ZERO,
            requests: Resources::ZERO,
            terms: None,
            node: None,
            content_hash: 0,
        };
        fields.seal();
        Pod(Arc::new(fields))
    }

    /// This pod with `priority` (higher is scheduled first).
    pub fn with_priority(self, priority: i32) -> Pod {
        self.modify(|f| f.priority = priority)
    }

    /// This pod, naming the pod group `group` in its own namespace
    /// (`spec.schedulingGroup.podGroupName`).
    pub fn with_group(self, group: &str) -> Pod {
        self.modify(|f| f.group = Some(GroupKey::new(&f.namespace, group)))
    }

    /// This pod, naming the group `key` names — sharing `key` itself, so pods built for one
    /// group hold one copy of its name and compare their group with a pointer. A pod names a
    /// group in its own namespace: a `key` from another namespace contributes only its name
    /// (the same as [`with_group`](Pod::with_group)`(key.name())`).
    pub fn with_group_key(self, key: &GroupKey) -> Pod {
        self.modify(|f| {
            f.group = Some(if key.namespace() == &*f.namespace {
                key.clone()
            } else {
                GroupKey::new(&f.namespace, key.name())
            })
        })
    }

    /// This pod, created at `created`.
    pub fn with_creation_time(self, created: Time) -> Pod {
        self.modify(|f| f.created = created)
    }

    /// This pod, requesting `requests` (the sum over its containers) from the node it runs on.
    pub fn with_requests(self, requests: Resources) -> Pod {
        self.modify(|f| f.requests = requests)
    }

    /// This pod with the labels `labels` (`metadata.labels`), replacing any it had.
    pub fn with_labels(self, labels: Labels) -> Pod {
        self.modify_terms(|t| t.labels = labels)
    }

    /// This pod with its label `key` set to `value`.
    pub fn with_label(self, key: &str, value: &str) -> Pod {
        self.modify_terms(|t| {
            t.labels.insert(key, value);
        })
    }

    /// This pod, placed only on nodes whose labels match `selector` (`spec.nodeSelector`,
    /// see [`Labels::matches`]); the default placement keeps to it.
    pub fn with_node_selector(self, selector: Labels) -> Pod {
        self.modify_terms(|t| t.node_selector = selector)
    }

    /// This pod, tolerating `toleration` (`spec.tolerations[]`): it may be placed on nodes
    /// with the taints it matches.
    pub fn with_toleration(self, toleration: Toleration) -> Pod {
        self.modify_terms(|t| t.tolerations.push(toleration))
    }

    /// This pod, bound to `node` (`spec.nodeName`): how a pod observed bound in the cluster
    /// arrives. The scheduler's own pods do not carry it until they are observed bound.
    pub fn with_node(self, node: &str) -> Pod {
        self.modify(|f| f.node = Some(node.into()))
    }

    #[cfg(feature = "checking")]
    /// This pod under another uid and name, every other field kept (a
    /// [`PodRenaming`](crate::symmetry::PodRenaming)'s image).
    pub(crate) fn renamed(self, id: PodId, name: &str) -> Pod {
        self.modify(|f| {
            f.id = id;
            f.name = name.into();
        })
    }

    #[cfg(feature = "checking")]
    /// An equal pod in allocations of its own, under `id` and `group` (equal copies of its
    /// own id and key): a [`FreshCopies`](crate::symmetry::FreshCopies) image.
    pub(crate) fn fresh_copy(&self, id: PodId, group: Option<GroupKey>) -> Pod {
        debug_assert!(id == self.0.id && group == self.0.group);
        Pod(Arc::new(PodFields {
            id,
            group,
            ..(*self.0).clone()
        }))
    }

    /// How many handles share this pod's allocation (tests of
    /// [`FreshCopies`](crate::symmetry::FreshCopies)).
    #[cfg(all(test, feature = "checking"))]
    pub(crate) fn handles(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    fn modify(mut self, change: impl FnOnce(&mut PodFields)) -> Pod {
        let fields = Arc::make_mut(&mut self.0);
        change(fields);
        fields.seal();
        self
    }

    fn modify_terms(self, change: impl FnOnce(&mut PodTerms)) -> Pod {
        self.modify(|f| {
            let terms = f.terms.get_or_insert_with(Default::default);
            change(terms);
            if **terms == NO_TERMS {
                f.terms = None;
            }
        })
    }

    fn terms(&self) -> &PodTerms {
        self.0.terms.as_deref().unwrap_or(&NO_TERMS)
    }

    /// The uid.
    pub fn id(&self) -> &PodId {
        &self.0.id
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.0.namespace
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// `namespace/name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.0.namespace, self.0.name)
    }

    /// The priority.
    pub fn priority(&self) -> i32 {
        self.0.priority
    }

    /// The pod group this pod names, if any.
    pub fn group(&self) -> Option<&str> {
        self.0.group.as_ref().map(GroupKey::name)
    }

    /// The key of the pod group this pod names (in its own namespace), if any.
    pub fn group_key(&self) -> Option<&GroupKey> {
        self.0.group.as_ref()
    }

    /// When the pod was created.
    pub fn creation_time(&self) -> Time {
        self.0.created
    }

    /// The resources the pod requests; [`Resources::ZERO`] unless set with
    /// [`with_requests`](Pod::with_requests).
    pub fn requests(&self) -> &Resources {
        &self.0.requests
    }

    /// The pod's labels (none unless set with [`with_labels`](Pod::with_labels)).
    pub fn labels(&self) -> &Labels {
        &self.terms().labels
    }

    /// The labels a node must have for the pod to run there (empty: any node).
    pub fn node_selector(&self) -> &Labels {
        &self.terms().node_selector
    }

    /// The taints the pod tolerates.
    pub fn tolerations(&self) -> &[Toleration] {
        &self.terms().tolerations
    }

    /// The node the pod is bound to (`spec.nodeName`), if it was observed bound.
    pub fn node(&self) -> Option<&str> {
        self.0.node.as_deref()
    }
}

impl fmt::Debug for Pod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Pod");
        d.field("id", &self.0.id).field(
            "name",
            &format_args!("{}/{}", self.0.namespace, self.0.name),
        );
        if self.0.priority != 0 {
            d.field("priority", &self.0.priority);
        }
        if let Some(group) = &self.0.group {
            d.field("group", &group.name());
        }
        let requests = self.requests();
        if !requests.is_zero() {
            d.field("requests", &format_args!("{requests}"));
        }
        let terms = self.terms();
        if !terms.labels.is_empty() {
            d.field("labels", &terms.labels);
        }
        if !terms.node_selector.is_empty() {
            d.field("node_selector", &terms.node_selector);
        }
        if !terms.tolerations.is_empty() {
            d.field("tolerations", &terms.tolerations);
        }
        if let Some(node) = &self.0.node {
            d.field("node", node);
        }
        d.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash_of(pod: &Pod) -> u64 {
        let mut hasher = DefaultHasher::new();
        pod.hash(&mut hasher);
        hasher.finish()
    }

    /// Two ids whose stored hashes collide are still told apart by their uids.
    #[test]
    fn ids_with_colliding_hashes_are_told_apart_by_their_uids() {
        let colliding = |uid: &str| PodId {
            hash: 7,
            uid: Arc::from(uid),
        };
        assert_ne!(colliding("a"), colliding("b"));
        assert_eq!(colliding("a"), colliding("a"));
        assert_ne!(PodId::from("a"), PodId::from("b"));
    }

    /// A pod's hash is computed when it is built and again at each change: a changed pod
    /// hashes unlike the pod it came from, and like an equal pod built another way.
    #[test]
    fn a_changed_pod_hashes_as_its_new_content() {
        let pod = Pod::new("u", "ml", "p");
        let changed = pod.clone().with_priority(7);
        assert_ne!(hash_of(&pod), hash_of(&changed));
        let built = Pod::new("u", "ml", "p").with_group("g").with_priority(7);
        let other_order = Pod::new("u", "ml", "p").with_priority(7).with_group("g");
        assert_eq!(built, other_order);
        assert_eq!(hash_of(&built), hash_of(&other_order));
        assert_ne!(hash_of(&changed), hash_of(&built));
    }

    #[test]
    fn a_shared_group_key_names_the_group_in_the_pods_own_namespace() {
        let key = GroupKey::new("ml", "trainer");
        let pod = Pod::new("u", "ml", "p").with_group_key(&key);
        assert_eq!(pod.group_key(), Some(&key));
        assert_eq!(pod, Pod::new("u", "ml", "p").with_group("trainer"));
        let elsewhere = Pod::new("v", "web", "q").with_group_key(&key);
        assert_eq!(
            elsewhere.group_key(),
            Some(&GroupKey::new("web", "trainer"))
        );
    }

    #[test]
    fn ids_order_as_their_uid_strings() {
        let uids = [
            "",
            "a",
            "a\u{0}",
            "0000000a-0001-4000-8000-000000000009",
            "0000000a-0001-4000-8000-00000000000a",
            "0000000a-0002-4000-8000-000000000001",
            "0000000a-0002-4000-8000",
            "0000000a-0002-4000",
            "0000000a-0002-400",
            "0000000a-0002-40",
            "0000000a-0002-4",
            "0000000b",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "é-uid-with-a-multibyte-prefix-xx",
        ];
        for a in uids {
            for b in uids {
                assert_eq!(
                    PodId::from(a).cmp(&PodId::from(b)),
                    a.cmp(b),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn ids_built_apart_from_one_uid_are_equal_and_hash_alike() {
        use std::hash::BuildHasher;
        let hasher = crate::fast_hash::BuildFastHasher::default();
        let (a, b) = (PodId::from("uid-7"), PodId::from(String::from("uid-7")));
        assert_eq!(a, b);
        assert_eq!(hasher.hash_one(&a), hasher.hash_one(&b));
        assert_eq!(a, a.clone());
        assert_ne!(a, PodId::from("uid-8"));
        let mut seen = std::collections::HashSet::new();
        for i in 0..10_000 {
            assert!(
                seen.insert(PodId::new(format!("uid-{i}")).hash),
                "hash collision"
            );
        }
    }

    #[test]
    fn labels_selector_and_tolerations_are_kept_and_none_costs_nothing() {
        use crate::Toleration;
        let pod = Pod::new("a", "ml", "p");
        assert!(pod.labels().is_empty() && pod.node_selector().is_empty());
        assert!(pod.tolerations().is_empty() && pod.0.terms.is_none());
        let placed = pod
            .clone()
            .with_label("app", "trainer")
            .with_node_selector(Labels::new().with("acc", "h100"))
            .with_toleration(Toleration::exists("nvidia.com/gpu"));
        assert_eq!(placed.labels().get("app"), Some("trainer"));
        assert_eq!(placed.node_selector().get("acc"), Some("h100"));
        assert_eq!(placed.tolerations(), [Toleration::exists("nvidia.com/gpu")]);
        assert_ne!(placed, pod);
        // Emptied again, it is the plain pod: equal, and no terms kept.
        let emptied = placed
            .with_labels(Labels::new())
            .with_node_selector(Labels::new());
        let plain = Pod::new("a", "ml", "p").with_toleration(Toleration::exists("nvidia.com/gpu"));
        assert_eq!(emptied, plain);
        let none = Pod::new("a", "ml", "p")
            .with_label("x", "y")
            .with_labels(Labels::new());
        assert!(none.0.terms.is_none());
        assert_eq!(none, pod);
    }

    #[test]
    fn requests_and_node_default_to_none_and_are_set_by_the_builders() {
        let pod = Pod::new("a", "ml", "p");
        assert_eq!(*pod.requests(), Resources::ZERO);
        assert_eq!(pod.node(), None);
        let bound = pod
            .clone()
            .with_requests(Resources::new(500, 1 << 30))
            .with_node("n1");
        assert_eq!(*bound.requests(), Resources::new(500, 1 << 30));
        assert_eq!(bound.node(), Some("n1"));
        assert_ne!(bound, pod);
        assert_eq!(
            *pod.requests(),
            Resources::ZERO,
            "the original is untouched"
        );
        assert_eq!(
            format!("{bound:?}"),
            r#"Pod { id: "a", name: ml/p, requests: cpu 500m, memory 1Gi, node: "n1" }"#
        );
        assert_eq!(format!("{pod:?}"), r#"Pod { id: "a", name: ml/p }"#);
    }
}
