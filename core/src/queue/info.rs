use crate::{PluginName, PluginNames, Pod, PodId, Time};

/// `QueuedPodInfo::marks`: the pod was let into the active queue once.
const ACTIVATED: u8 = 1;
/// `QueuedPodInfo::marks`: a leftover flush left the pod where it was.
const FLUSHED: u8 = 2;

/// A pod as the scheduling queue keeps it: the pod, when it entered the queue or last failed,
/// how often it was tried, and which plugins rejected it last time (so that only their
/// queueing hints decide when it is worth trying again).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueuedPodInfo {
    pod: Pod,
    timestamp: Time,
    /// Meaningful when `ACTIVATED` is set, else zero (two `Option<Time>` would cost 16 bytes
    /// more per queued pod, read by every cluster event).
    initial_attempt: Time,
    attempts: u32,
    unschedulable_plugins: PluginNames,
    pending_plugins: PluginNames,
    gated_by: Option<PluginName>,
    /// Meaningful when `FLUSHED` is set, else zero.
    flushed_at: Time,
    marks: u8,
}

impl QueuedPodInfo {
    /// A pod entering the queue at `now`, never tried.
    pub fn new(pod: Pod, now: Time) -> QueuedPodInfo {
        QueuedPodInfo {
            pod,
            timestamp: now,
            initial_attempt: Time::ZERO,
            attempts: 0,
            unschedulable_plugins: PluginNames::new(),
            pending_plugins: PluginNames::new(),
            gated_by: None,
            flushed_at: Time::ZERO,
            marks: 0,
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
        self.gated_by.as_ref()
    }

    /// Whether any plugin rejected it (unschedulable or pending) last time.
    pub fn has_rejectors(&self) -> bool {
        !self.unschedulable_plugins.is_empty() || !self.pending_plugins.is_empty()
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
        self.gated_by = plugin;
    }

    /// Gated by PreEnqueue `plugin`, which also counts as a rejector so its hints apply.
    pub(super) fn gate(&mut self, plugin: PluginName) {
        self.unschedulable_plugins.insert(plugin.clone());
        self.gated_by = Some(plugin);
    }

    pub(super) fn mark_activated(&mut self, now: Time) {
        if self.marks & ACTIVATED == 0 {
            self.initial_attempt = now;
            self.marks |= ACTIVATED;
        }
    }

    /// Popped: one more attempt; last attempt's verdicts are cleared.
    pub(super) fn start_attempt(&mut self) {
        self.attempts = self.attempts.saturating_add(1);
        self.unschedulable_plugins.clear();
        self.pending_plugins.clear();
    }
}
