use std::collections::BTreeSet;

use crate::{PluginName, Pod, PodId, Time};

/// A pod as the scheduling queue keeps it: the pod, when it entered the queue or last failed,
/// how often it was tried, and which plugins rejected it last time (so that only their
/// queueing hints decide when it is worth trying again).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueuedPodInfo {
    pod: Pod,
    timestamp: Time,
    initial_attempt: Option<Time>,
    attempts: u32,
    unschedulable_plugins: BTreeSet<PluginName>,
    pending_plugins: BTreeSet<PluginName>,
    gated_by: Option<PluginName>,
    flushed_at: Option<Time>,
}

impl QueuedPodInfo {
    /// A pod entering the queue at `now`, never tried.
    pub fn new(pod: Pod, now: Time) -> QueuedPodInfo {
        QueuedPodInfo {
            pod,
            timestamp: now,
            initial_attempt: None,
            attempts: 0,
            unschedulable_plugins: BTreeSet::new(),
            pending_plugins: BTreeSet::new(),
            gated_by: None,
            flushed_at: None,
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
        self.initial_attempt
    }

    /// How many times it was popped.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The plugins that found it unschedulable last time.
    pub fn unschedulable_plugins(&self) -> &BTreeSet<PluginName> {
        &self.unschedulable_plugins
    }

    /// The plugins that left it pending last time.
    pub fn pending_plugins(&self) -> &BTreeSet<PluginName> {
        &self.pending_plugins
    }

    /// The PreEnqueue plugin that gates it, while it is gated.
    pub fn gated_by(&self) -> Option<&PluginName> {
        self.gated_by.as_ref()
    }

    /// Whether any plugin rejected it (unschedulable or pending) last time.
    pub fn has_rejectors(&self) -> bool {
        !self.unschedulable_plugins.is_empty() || !self.pending_plugins.is_empty()
    }

    /// Since when the leftover flush counts the pod as parked: its timestamp, or its last
    /// flush if that left it where it was (upstream's `FlushTimestamp`).
    pub fn parked_since(&self) -> Time {
        self.flushed_at
            .map_or(self.timestamp, |f| f.max(self.timestamp))
    }

    pub(super) fn set_flushed_at(&mut self, now: Time) {
        self.flushed_at = Some(now);
    }

    pub(super) fn set_pod(&mut self, pod: Pod) {
        self.pod = pod;
    }

    pub(super) fn set_timestamp(&mut self, now: Time) {
        self.timestamp = now;
    }

    pub(super) fn set_gated_by(&mut self, plugin: Option<PluginName>) {
        self.gated_by = plugin;
    }

    /// Gated by PreEnqueue `plugin`, which also counts as a rejector so its hints apply.
    pub(super) fn gate(&mut self, plugin: PluginName) {
        self.unschedulable_plugins.insert(plugin.clone());
        self.gated_by = Some(plugin);
    }

    pub(super) fn mark_activated(&mut self, now: Time) {
        self.initial_attempt.get_or_insert(now);
    }

    /// Popped: one more attempt; last attempt's verdicts are cleared.
    pub(super) fn start_attempt(&mut self) {
        self.attempts = self.attempts.saturating_add(1);
        self.unschedulable_plugins.clear();
        self.pending_plugins.clear();
    }
}
