use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::fast_hash::BuildFastHasher;
use crate::sync::{Arc, Mutex};
use crate::{Pod, PodId};

/// An error returned from [`Binder::bind`]: the pod was not bound.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    /// The binding was refused or could not be written (the API server's answer).
    #[error("bind failed: {0}")]
    Failed(String),
    /// The binder panicked; the panic was caught at the call and its message kept.
    #[error("binder panicked: {0}")]
    Panicked(String),
    /// The pod is already bound (to `node`); a pod is bound at most once.
    #[error("pod {pod} is already bound to node {node}")]
    AlreadyBound {
        /// The pod.
        pod: PodId,
        /// The node it is bound to.
        node: String,
    },
}

/// Writes a pod's binding to a node — the Bind step, the last of a binding cycle. Called
/// from binding workers, concurrently, outside every gangway lock.
pub trait Binder: Send + Sync {
    /// Binds `pod` to `node`; `Ok` once the binding is recorded.
    fn bind(&self, pod: &Pod, node: &str) -> Result<(), BindError>;
}

/// Any `Fn(&Pod, &str) -> Result<(), BindError>` is a binder.
impl<F> Binder for F
where
    F: Fn(&Pod, &str) -> Result<(), BindError> + Send + Sync,
{
    fn bind(&self, pod: &Pod, node: &str) -> Result<(), BindError> {
        self(pod, node)
    }
}

type FailureRule = dyn Fn(&Pod, &str) -> bool + Send + Sync;

/// The default binder: records bindings in memory, as a stand-in for the API server. Clones
/// share the same bindings. A pod is bound at most once; binding it again is
/// [`BindError::AlreadyBound`]. [`with_failures`](InMemoryBinder::with_failures) injects
/// failures.
///
/// ```
/// use gangsched::scheduler::{Binder, InMemoryBinder};
/// use gangsched::Pod;
///
/// let binder = InMemoryBinder::new().with_failures(|pod, _| pod.name() == "unlucky");
/// binder.bind(&Pod::new("a", "ml", "lucky"), "n1").unwrap();
/// assert!(binder.bind(&Pod::new("b", "ml", "unlucky"), "n1").is_err());
/// assert_eq!(binder.bindings().len(), 1);
/// ```
#[derive(Clone, Default)]
pub struct InMemoryBinder {
    /// By pod id, hashed: a simulated run binds and looks up a million pods here.
    bindings: Arc<Mutex<HashMap<PodId, String, BuildFastHasher>>>,
    fail: Option<Arc<FailureRule>>,
}

impl InMemoryBinder {
    /// A binder with no bindings that never fails.
    pub fn new() -> InMemoryBinder {
        InMemoryBinder::default()
    }

    /// This binder (sharing its bindings), failing every bind for which `fail(pod, node)` is
    /// true with [`BindError::Failed`]; such a pod stays unbound. Replaces an earlier rule.
    pub fn with_failures(
        mut self,
        fail: impl Fn(&Pod, &str) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.fail = Some(Arc::new(fail));
        self
    }

    /// Every binding so far: pod → node, in pod id order.
    pub fn bindings(&self) -> BTreeMap<PodId, String> {
        let bindings = self.bindings.lock();
        bindings
            .iter()
            .map(|(id, node)| (id.clone(), node.clone()))
            .collect()
    }

    /// The node `id` is bound to, if any.
    pub fn binding(&self, id: &PodId) -> Option<String> {
        self.bindings.lock().get(id).cloned()
    }

    /// Whether `id` has been bound (without copying its node's name).
    pub fn is_bound(&self, id: &PodId) -> bool {
        self.bindings.lock().contains_key(id)
    }
}

impl Binder for InMemoryBinder {
    /// Checks for an earlier binding first, then asks the failure rule (outside the lock).
    fn bind(&self, pod: &Pod, node: &str) -> Result<(), BindError> {
        if let Some(bound) = self.binding(pod.id()) {
            return Err(BindError::AlreadyBound {
                pod: pod.id().clone(),
                node: bound,
            });
        }
        if self.fail.as_ref().is_some_and(|fail| fail(pod, node)) {
            return Err(BindError::Failed(format!(
                "injected failure binding pod {} to node {node}",
                pod.id()
            )));
        }
        let mut bindings = self.bindings.lock();
        if let Some(bound) = bindings.get(pod.id()) {
            // Another worker bound it while the rule ran.
            return Err(BindError::AlreadyBound {
                pod: pod.id().clone(),
                node: bound.clone(),
            });
        }
        bindings.insert(pod.id().clone(), node.to_owned());
        Ok(())
    }
}

impl fmt::Debug for InMemoryBinder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryBinder")
            .field("bindings", &self.bindings.lock().len())
            .field("fails", &self.fail.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(id: &str) -> Pod {
        Pod::new(id, "ml", id)
    }

    #[test]
    fn binds_once_and_clones_share_bindings() {
        let binder = InMemoryBinder::new();
        let other = binder.clone();
        binder.bind(&pod("a"), "n1").unwrap();
        other.bind(&pod("b"), "n2").unwrap();
        let err = other.bind(&pod("a"), "n2").unwrap_err();
        assert_eq!(
            err,
            BindError::AlreadyBound {
                pod: "a".into(),
                node: "n1".into()
            }
        );
        assert_eq!(err.to_string(), "pod a is already bound to node n1");
        let expected: BTreeMap<PodId, String> =
            [("a".into(), "n1".into()), ("b".into(), "n2".into())].into();
        assert_eq!(binder.bindings(), expected);
        assert_eq!(binder.binding(&"b".into()).as_deref(), Some("n2"));
        assert_eq!(binder.binding(&"c".into()), None);
    }

    #[test]
    fn injected_failures_leave_the_pod_unbound() {
        let binder = InMemoryBinder::new().with_failures(|_, node| node == "bad");
        let err = binder.bind(&pod("a"), "bad").unwrap_err();
        assert!(matches!(err, BindError::Failed(_)));
        assert_eq!(
            err.to_string(),
            "bind failed: injected failure binding pod a to node bad"
        );
        assert!(binder.bindings().is_empty());
        binder.bind(&pod("a"), "good").unwrap();
        assert_eq!(binder.binding(&"a".into()).as_deref(), Some("good"));
        assert!(format!("{binder:?}").contains("fails: true"));
    }

    #[test]
    fn closures_are_binders() {
        let refuse = |pod: &Pod, _: &str| -> Result<(), BindError> {
            Err(BindError::Failed(format!("no room for {}", pod.id())))
        };
        let binder: Box<dyn Binder> = Box::new(refuse);
        assert_eq!(
            binder.bind(&pod("a"), "n1").unwrap_err().to_string(),
            "bind failed: no room for a"
        );
    }
}
