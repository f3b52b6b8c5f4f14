//! The PodGroup object: a group's key and its policy.

use super::GroupKey;

/// How a pod group is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Policy {
    /// Members are scheduled one by one, like ordinary pods; no gate, no wait.
    Basic,
    /// All or nothing: at least `min_count` members must be placed before any of them binds.
    Gang {
        /// The quorum; at least 1.
        min_count: u32,
    },
}

/// A PodGroup object: `scheduling.k8s.io` `PodGroup { namespace, name, policy }`. Build it with
/// [`PodGroup::new`], which refuses a gang of `min_count` 0.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodGroup {
    key: GroupKey,
    policy: Policy,
}

impl PodGroup {
    /// A pod group; fails on an empty namespace or name, or a gang with `min_count` 0.
    pub fn new(namespace: &str, name: &str, policy: Policy) -> Result<PodGroup, PodGroupError> {
        if namespace.is_empty() {
            return Err(PodGroupError::EmptyNamespace);
        }
        if name.is_empty() {
            return Err(PodGroupError::EmptyName);
        }
        if policy == (Policy::Gang { min_count: 0 }) {
            return Err(PodGroupError::ZeroMinCount(GroupKey::new(namespace, name)));
        }
        Ok(PodGroup {
            key: GroupKey::new(namespace, name),
            policy,
        })
    }

    /// A gang of `min_count` in `namespace`.
    pub fn gang(namespace: &str, name: &str, min_count: u32) -> Result<PodGroup, PodGroupError> {
        PodGroup::new(namespace, name, Policy::Gang { min_count })
    }

    #[cfg(feature = "checking")]
    /// The same PodGroup under `key`, an equal key (a [`Relabel`](crate::symmetry::Relabel)
    /// copying keys).
    pub(crate) fn with_key(&self, key: GroupKey) -> PodGroup {
        debug_assert_eq!(key, self.key);
        PodGroup {
            key,
            policy: self.policy,
        }
    }

    /// The group's key.
    pub fn key(&self) -> &GroupKey {
        &self.key
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The quorum of a gang; `None` for a Basic group.
    pub fn min_count(&self) -> Option<u32> {
        match self.policy {
            Policy::Basic => None,
            Policy::Gang { min_count } => Some(min_count),
        }
    }
}

/// An error returned from [`PodGroup::new`](PodGroup::new).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PodGroupError {
    /// The namespace is empty.
    #[error("pod group namespace is empty")]
    EmptyNamespace,
    /// The name is empty.
    #[error("pod group name is empty")]
    EmptyName,
    /// A gang needs at least one member.
    #[error("pod group {0} is a gang with min count 0")]
    ZeroMinCount(GroupKey),
}
