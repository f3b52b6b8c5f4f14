use crate::{PluginName, Pod};

/// An error returned from [`WaitingPods::add`](super::WaitingPods::add) and
/// [`WaitingState::add`](super::WaitingState::add). Each variant hands the pod back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddError {
    /// The pod is already waiting; a pod waits at most once at a time.
    #[error("pod {} is already waiting", .0.id())]
    AlreadyWaiting(Pod),
    /// No plugin asked the pod to wait, so there is nothing to wait for.
    #[error("pod {} has no plugin to wait for", .0.id())]
    NothingToWaitFor(Pod),
    /// The same plugin was named twice in one registration.
    #[error("plugin {plugin} is named twice for pod {}", .pod.id())]
    DuplicatePlugin {
        /// The pod, handed back.
        pod: Pod,
        /// The plugin named twice.
        plugin: PluginName,
    },
}

impl AddError {
    /// The pod that could not be added.
    pub fn into_pod(self) -> Pod {
        match self {
            AddError::AlreadyWaiting(pod)
            | AddError::NothingToWaitFor(pod)
            | AddError::DuplicatePlugin { pod, .. } => pod,
        }
    }
}
