use std::fmt;

use super::PluginName;
use crate::sync::Arc;

/// The outcome code of a plugin or of the framework — kube-scheduler's vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Code {
    /// The plugin ran and the pod may go on.
    Success,
    /// An internal or unexpected error; the pod is retried after a backoff.
    Error,
    /// The pod does not fit now; a cluster event may make it fit.
    Unschedulable,
    /// The pod does not fit, and preemption would not help.
    UnschedulableAndUnresolvable,
    /// The pod must wait at Permit until allowed, rejected or timed out.
    Wait,
    /// The plugin has nothing to do for this pod.
    Skip,
    /// The pod is waiting for something external (a gate); retried as soon as it changes.
    Pending,
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A plugin's or the framework's verdict: a [`Code`], reasons, and the plugin that produced it.
///
/// A permit decision is a `Status`: `Success` when a waiting pod is allowed, `Unschedulable`
/// with the rejecting plugin when it is rejected or timed out. Cloning one does not allocate:
/// a gang rejected as a whole shares one status among its members' decisions and latches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Status {
    code: Code,
    /// `None` when there is no reason (never an empty slice), so `Success` holds nothing.
    reasons: Option<Arc<[String]>>,
    plugin: Option<PluginName>,
}

impl Status {
    /// A status with `code` and no reason.
    pub fn new(code: Code) -> Status {
        Status {
            code,
            reasons: None,
            plugin: None,
        }
    }

    /// A `Success` status. Does not allocate.
    pub fn success() -> Status {
        Status::new(Code::Success)
    }

    /// A status with `code` and one reason.
    pub fn with_reason(code: Code, reason: impl Into<String>) -> Status {
        Status {
            code,
            reasons: Some(Arc::from([reason.into()])),
            plugin: None,
        }
    }

    /// An `Unschedulable` status with one reason.
    pub fn unschedulable(reason: impl Into<String>) -> Status {
        Status::with_reason(Code::Unschedulable, reason)
    }

    /// This status with `reason` after its reasons (upstream's `AppendReason`).
    pub fn with_appended_reason(mut self, reason: impl Into<String>) -> Status {
        let mut reasons = self.reasons().to_vec();
        reasons.push(reason.into());
        self.reasons = Some(Arc::from(reasons));
        self
    }

    /// This status, attributed to `plugin`.
    pub fn with_plugin(mut self, plugin: impl Into<PluginName>) -> Status {
        self.plugin = Some(plugin.into());
        self
    }

    /// The code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The reasons, in order.
    pub fn reasons(&self) -> &[String] {
        self.reasons.as_deref().unwrap_or(&[])
    }

    /// The reasons joined with ", ", as upstream's `Message()`.
    pub fn message(&self) -> String {
        self.reasons().join(", ")
    }

    /// The plugin that produced this status, if any.
    pub fn plugin(&self) -> Option<&PluginName> {
        self.plugin.as_ref()
    }

    /// Whether the code is `Success`.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// Whether the code is `Wait`.
    pub fn is_wait(&self) -> bool {
        self.code == Code::Wait
    }

    /// Whether the code is `Skip`.
    pub fn is_skip(&self) -> bool {
        self.code == Code::Skip
    }

    /// Whether the pod was rejected: `Unschedulable`, `UnschedulableAndUnresolvable` or
    /// `Pending` (upstream's `IsRejected`). Errors are not rejections.
    pub fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable | Code::Pending
        )
    }
}

impl Default for Status {
    fn default() -> Self {
        Status::success()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        if !self.reasons().is_empty() {
            write!(f, ": {}", self.message())?;
        }
        if let Some(plugin) = &self.plugin {
            write!(f, " (plugin {plugin})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejections_are_the_upstream_three_and_each_other_predicate_its_one_code() {
        let rejected = [
            Code::Unschedulable,
            Code::UnschedulableAndUnresolvable,
            Code::Pending,
        ];
        for code in [
            Code::Success,
            Code::Error,
            Code::Unschedulable,
            Code::UnschedulableAndUnresolvable,
            Code::Wait,
            Code::Skip,
            Code::Pending,
        ] {
            let status = Status::new(code);
            assert_eq!(status.is_rejected(), rejected.contains(&code), "{code}");
            assert_eq!(status.is_success(), code == Code::Success, "{code}");
            assert_eq!(status.is_wait(), code == Code::Wait, "{code}");
            assert_eq!(status.is_skip(), code == Code::Skip, "{code}");
        }
    }

    #[test]
    fn message_and_display() {
        let s = Status::unschedulable("a")
            .with_plugin("GangScheduling")
            .clone();
        assert_eq!(s.message(), "a");
        assert_eq!(s.plugin().map(PluginName::as_str), Some("GangScheduling"));
        assert_eq!(s.to_string(), "Unschedulable: a (plugin GangScheduling)");
        assert_eq!(Status::success().to_string(), "Success");
        assert!(Status::default().is_success());
        assert!(Status::new(Code::Wait).is_wait() && Status::new(Code::Skip).is_skip());
    }
}
