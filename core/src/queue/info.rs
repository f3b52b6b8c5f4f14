use crate::{PluginName, PluginNames, Pod, PodId, Time};

/// `QueuedPodInfo::marks`: the pod was let into the active queue once.
const ACTIVATED: u8 = 1;
/// `QueuedPodInfo::marks`: a leftover flush left the pod where it was.
const FLUSHED: u8 = 2;
/// `QueuedPodInfo::marks`: `pending_plugins` is not empty.
const PENDING: u8 = 4;

/// A pod as the scheduling queue keeps it: the pod, when it entered the queue or last failed,
/// how often it was tried, and which plugins rejected it last time (so that only their
/// queueing hints decide when it is worth trying again).
///
/// Laid out for the walk a cluster event makes over the unschedulable pool: all it reads of a
/// pod that one plugin rejected — the pod, its timestamp and attempts, the marks and the
/// unschedulable plugins — is in the first cache line; the second is read only when a mark
/// says so (gated, pending plugins). `gated` is a `bool` so that `Option<QueuedPodInfo>` (a
/// queue slot) keeps its tag in the first line too: the compiler stores it in the largest
/// niche, and a `bool` has more spare values than `gated_by`'s tag.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct QueuedPodInfo {
    pub(super) pod: Pod,
    pub(super) timestamp: Time,
    pub(super) attempts: u32,
    /// Attempts a plugin rejected (upstream's `UnschedulableCount`), saturating: the backoff
    /// is capped long before it could matter.
    pub(super) unschedulable_count: u8,
    /// Attempts in a row that failed with an error (`ConsecutiveErrorsCount`), saturating;
    /// zero again after a rejection.
    pub(super) consecutive_errors: u8,
    /// `ACTIVATED`, `FLUSHED`, `PENDING`.
    pub(super) marks: u8,
    /// `gated_by` is set.
    pub(super) gated: bool,
    pub(super) unschedulable_plugins: PluginNames,
    // The second cache line.
    pub(super) pending_plugins: PluginNames,
    pub(super) gated_by: Option<PluginName>,
    /// Meaningful when `ACTIVATED` is set, else zero (two `Option<Time>` would cost 16 bytes
    /// more per queued pod).
    pub(super) initial_attempt: Time,
    /// Meaningful when `FLUSHED` is set, else zero.
    pub(super) flushed_at: Time,
}

impl QueuedPodInfo {
    /// A pod entering the queue at `now`, never tried.
    pub fn new(pod: Pod, now: Time) -> QueuedPodInfo {
        QueuedPodInfo {
            pod,
            timestamp: now,
            attempts: 0,
            unschedulable_count: 0,
            consecutive_errors: 0,
            marks: 0,
            gated: false,
            unschedulable_plugins: PluginNames::new(),
            pending_plugins: PluginNames::new(),
            gated_by: None,
            initial_attempt: Time::ZERO,
            flushed_at: Time::ZERO,
        }
    }

    /// This info, recording that `plugin` found the pod unschedulable in its last attempt.
    pub fn rejected_by(mut self, plugin: impl Into<PluginName>) -> QueuedPodInfo {
        self.unschedulable_plugins.insert(plugin.into());
        self
    }

    /// This info, recording that `plugin` left the pod pending (waiting for something external)
    /// in its last attempt.
    pub fn pending_on(mut self, plugin: impl Into<PluginName>) -> QueuedPodInfo {
        self.pending_plugins.insert(plugin.into());
        self.marks |= PENDING;
        self
    }

    /// The pod.
    pub fn pod(&self) -> &Pod {
        &self.pod
    }

    /// The pod's uid.
    pub fn id(&self) -> &PodId {
        self.pod.id()
    }

    /// When the pod entered the queue, or last failed.
    pub fn timestamp(&self) -> Time {
        self.timestamp
    }

    /// When the pod was first let into the active queue.
    pub fn initial_attempt(&self) -> Option<Time> {
        (self.marks & ACTIVATED != 0).then_some(self.initial_attempt)
    }

    /// How many times it was popped.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The plugins that found it unschedulable last time.
    pub fn unschedulable_plugins(&self) -> &PluginNames {
        &self.unschedulable_plugins
    }

    /// The plugins that left it pending last time.
    pub fn pending_plugins(&self) -> &PluginNames {
        &self.pending_plugins
    }

    /// The PreEnqueue plugin that gates it, while it is gated.
    pub fn gated_by(&self) -> Option<&PluginName> {
        if !self.gated {
            return None;
        }
        self.gated_by.as_ref()
    }

    /// Whether a plugin left it pending last time (`pending_plugins` is not empty).
    pub fn has_pending_plugins(&self) -> bool {
        self.marks & PENDING != 0
    }

    /// Whether any plugin rejected it (unschedulable or pending) last time.
    pub fn has_rejectors(&self) -> bool {
        !self.unschedulable_plugins.is_empty() || self.has_pending_plugins()
    }

    /// Since when the leftover flush counts the pod as parked: its timestamp, or its last
    /// flush if that left it where it was (upstream's `FlushTimestamp`).
    pub fn parked_since(&self) -> Time {
        (self.marks & FLUSHED != 0)
            .then_some(self.flushed_at)
            .map_or(self.timestamp, |f| f.max(self.timestamp))
    }

    pub(super) fn set_flushed_at(&mut self, now: Time) {
        self.flushed_at = now;
        self.marks |= FLUSHED;
    }

    pub(super) fn set_pod(&mut self, pod: Pod) {
        self.pod = pod;
    }

    pub(super) fn set_timestamp(&mut self, now: Time) {
        self.timestamp = now;
    }

    pub(super) fn set_gated_by(&mut self, plugin: Option<PluginName>) {
        self.gated = plugin.is_some();
        self.gated_by = plugin;
    }

    /// Gated by PreEnqueue `plugin`, which also counts as a rejector so its hints apply.
    pub(super) fn gate(&mut self, plugin: PluginName) {
        self.unschedulable_plugins.insert(plugin.clone());
        self.set_gated_by(Some(plugin));
    }

    pub(super) fn mark_activated(&mut self, now: Time) {
        if self.marks & ACTIVATED == 0 {
            self.initial_attempt = now;
            self.marks |= ACTIVATED;
        }
    }

    /// Attempts a plugin rejected (kube-scheduler's `UnschedulableCount`).
    pub fn unschedulable_count(&self) -> u8 {
        self.unschedulable_count
    }

    /// Attempts in a row that failed with an error (kube-scheduler's
    /// `ConsecutiveErrorsCount`): zero after a rejection.
    pub fn consecutive_errors(&self) -> u8 {
        self.consecutive_errors
    }

    /// The failures the backoff doubles over, as kube-scheduler 1.36 counts them: the
    /// consecutive errors if the last failure was one, else the rejections — not the attempts
    /// (a pod rejected three times that then fails with an error backs off 1 s, not 8).
    pub fn backoff_count(&self) -> u32 {
        u32::from(if self.consecutive_errors > 0 {
            self.consecutive_errors
        } else {
            self.unschedulable_count
        })
    }

    /// An attempt failed: rejected by a plugin (it names rejectors or pending plugins) or
    /// with an error (it names none), counted as kube-scheduler's
    /// `AddUnschedulableIfNotPresent` counts it.
    pub(super) fn count_failure(&mut self) {
        if self.has_rejectors() {
            self.unschedulable_count = self.unschedulable_count.saturating_add(1);
            self.consecutive_errors = 0;
        } else {
            self.consecutive_errors = self.consecutive_errors.saturating_add(1);
        }
    }

    /// Popped: one more attempt; last attempt's verdicts are cleared.
    pub(super) fn start_attempt(&mut self) {
        self.attempts = self.attempts.saturating_add(1);
        self.unschedulable_plugins.clear();
        self.pending_plugins.clear();
        self.marks &= !PENDING;
    }
}

#[cfg(test)]
mod tests {
    use super::super::state_tests::{fail_unschedulable, plugins, pod};
    use super::super::{QueueConfig, QueueState};
    use super::*;

    /// A pod left pending names its plugin and counts as rejected; its next attempt clears
    /// both, and keeps the pod's other marks (kube-scheduler's `PendingPlugins`).
    #[test]
    fn a_pending_plugin_is_kept_until_the_next_attempt() {
        let mut info = QueuedPodInfo::new(pod("a", 0), Time::ZERO).pending_on("Volumes");
        assert!(info.has_pending_plugins() && info.has_rejectors());
        let names: Vec<&str> = info.pending_plugins().iter().map(|p| p.as_str()).collect();
        assert_eq!(names, ["Volumes"]);
        info.mark_activated(Time::from_secs(3));
        info.set_flushed_at(Time::from_secs(4));
        info.start_attempt();
        assert!(!info.has_pending_plugins() && !info.has_rejectors());
        assert!(info.pending_plugins().is_empty());
        assert_eq!(info.initial_attempt(), Some(Time::from_secs(3)));
        assert_eq!(info.parked_since(), Time::from_secs(4));
    }

    /// The first time a pod is let into the active queue is its initial attempt (upstream's
    /// `InitialAttemptTimestamp`, which the scheduling latency metrics start from); a gated pod
    /// has none yet, and a pod that fails and comes back keeps its first.
    #[test]
    fn the_initial_attempt_is_when_the_pod_was_first_let_in() {
        let p = plugins();
        let mut q = QueueState::new(QueueConfig::default());
        q.add(pod("a", 1), Time::from_secs(5), &p).unwrap();
        assert!(!q.add(pod("gated-b", 0), Time::from_secs(5), &p).unwrap());
        let info = |q: &QueueState, name: &str| q.info(&PodId::from(name)).unwrap().clone();
        assert_eq!(info(&q, "a").initial_attempt(), Some(Time::from_secs(5)));
        assert_eq!(info(&q, "gated-b").initial_attempt(), None);
        q.update(pod("gated-b", 0), pod("gated-b", 1), Time::from_secs(7), &p);
        assert_eq!(
            info(&q, "gated-b").initial_attempt(),
            Some(Time::from_secs(7))
        );
        fail_unschedulable(&mut q, "a", Time::from_secs(8), &p);
        q.activate(&[PodId::from("a")], Time::from_secs(9), &p);
        assert_eq!(info(&q, "a").initial_attempt(), Some(Time::from_secs(5)));
    }
}
