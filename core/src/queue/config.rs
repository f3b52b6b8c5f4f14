use std::time::Duration;

use super::QueuedPodInfo;
use crate::Time;

/// The scheduling queue's timing, kube-scheduler 1.36's defaults unless changed: start from
/// [`QueueConfig::DEFAULT`] (or `default()`) — or [`QueueConfig::BEFORE_1_33`] for the rules
/// of older releases — and change what differs with the `with_*` methods.
///
/// ```
/// use std::time::Duration;
/// use gangsched::QueueConfig;
///
/// const FAST: QueueConfig = QueueConfig::DEFAULT.with_initial_backoff(Duration::from_millis(5));
/// assert_eq!(FAST.max_backoff, Duration::from_secs(10));
/// // 1.36 pops from the backoff queue and compares backoffs in 1-second windows.
/// assert!(FAST.pop_from_backoff);
/// assert_eq!(FAST.ordering_window, Some(Duration::from_secs(1)));
/// // Millisecond backoffs want exact comparisons: a 1 s window would round them away.
/// const EXACT: QueueConfig = FAST.with_ordering_window(None);
/// assert!(EXACT.pop_from_backoff);
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueConfig {
    /// The first backoff after a failure (upstream `podInitialBackoffSeconds`, 1 s).
    pub initial_backoff: Duration,
    /// The longest backoff (upstream `podMaxBackoffSeconds`, 10 s).
    pub max_backoff: Duration,
    /// How long a pod may sit in the unschedulable pool before a flush retries it (5 min).
    pub max_in_unschedulable: Duration,
    /// The backoff ordering window (kube-scheduler 1.33 on, with `SchedulerPopFromBackoffQ`):
    /// backoff expiries and `now` are truncated to it before comparing, and a pod whose
    /// expiry equals the truncated `now` still backs off. 1 s by default; `None` compares
    /// exactly, a backoff ending at `now` over (before 1.33: `boTime.After(now)`); a zero
    /// window truncates nothing but keeps a backoff ending at `now` (1.33 on with the gate
    /// off, [`POP_FROM_BACKOFF_OFF`](Self::POP_FROM_BACKOFF_OFF): `!boTime.Before(now)`).
    pub ordering_window: Option<Duration>,
    /// Whether a pop with an empty active queue takes the pod backing off for a rejection
    /// whose backoff ends first (ties in the active queue's order) — never one in the error
    /// backoff. kube-scheduler 1.36's `SchedulerPopFromBackoffQ`, which also brings the 1 s
    /// [`ordering_window`](Self::ordering_window). On by default; off, only the active queue
    /// pops, as before 1.33.
    pub pop_from_backoff: bool,
    /// Whether a pod group's member (a pod naming a group) that comes back from a failed
    /// attempt backs off whatever happened during the attempt, instead of waiting in the
    /// unschedulable pool for an event its rejector cares about: kube-scheduler 1.36 with the
    /// gang gates (`GenericWorkload`), whose queue has no event-based requeueing for pod
    /// groups yet (`determineSchedulingHintForInFlightPod`). Off by default: together with
    /// [`pop_from_backoff`](Self::pop_from_backoff) it makes kube-scheduler retry a member
    /// that cannot fit over and over while nothing else is active (its pop takes the member
    /// straight back out of backoff) — a busy loop a virtual-time driver settling at one
    /// instant never leaves. `gangway differential` measures it with the rule on
    /// (upstream/traces/group_member_backs_off.jsonl). A member gated by PreEnqueue still
    /// waits for its gate.
    pub group_members_back_off: bool,
    /// Whether an update of a pod in flight is replayed for every pod in flight, not just that
    /// one: kube-scheduler keeps one list of in-flight events (`addEventsIfPodInFlight` pushes
    /// onto it, `clusterEventsForPod` returns every event since a pod was popped), so a pod
    /// handed back hears another pod's update, and its rejectors' hints decide, given that
    /// other pod. (An activation stays the activated pod's own: a wildcard naming a pod is for
    /// that pod alone.) On by default — measured by `gangway differential --corpus` on the
    /// fuzz corpus; off, an update is replayed only for the pod it concerns: fewer retries,
    /// I7 kept for hints that only requeue a pod on its own update.
    pub shared_in_flight_events: bool,
    /// Whether a wildcard event — the leftover flush's `UnschedulableTimeout` above all —
    /// moves a pod a PreEnqueue plugin gated, so its gate is checked again, whatever the gate
    /// registered for: kubernetes#139162, which is not in v1.36.3. Off by default, as
    /// v1.36.3's `movePodsToActiveOrBackoffQueue` has it (a gated pod moves only for an event
    /// its gate registered, and a wildcard matches no registration): a gated pod is never
    /// retried by the flush, stays stale, and every later flush announces
    /// `UnschedulableTimeout` again to the pods in flight (docs/races.md). On, a gated pod the
    /// flush leaves gated is flushed at that time (its timestamp kept), so it is retried once
    /// per [`max_in_unschedulable`](Self::max_in_unschedulable).
    pub wildcards_move_gated: bool,
    /// Whether a gang handed back whole with one backoff (Hardened, H2) backs off up to
    /// [`max_backoff`](Self::max_backoff) × √(members handed back) instead of `max_backoff`:
    /// kube-scheduler 1.37's rule for a pod group in its queue (`calculateBackoffDuration` in
    /// `backend/queue/backoff_queue.go`: "the max backoff time longer than for individual
    /// containers, while still being reasonably long"), since each of the group's retries
    /// places every member. Off by default: 1.36's queue has no group entry, and a pod backs
    /// off at most `max_backoff`.
    pub group_backoff_scales_with_size: bool,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::DEFAULT
    }
}

impl QueueConfig {
    /// kube-scheduler 1.36's defaults with the gang gates on: 1 s initial backoff, 10 s at
    /// most, 5 minutes in the unschedulable pool, a pop from the backoff queue when the active
    /// queue is empty and the 1-second ordering window that comes with it
    /// (`SchedulerPopFromBackoffQ`, on by default since 1.33) — the rules `gangway
    /// differential` measures equal to kube-scheduler's own queue. One rule of the gang gates
    /// is left off, [`group_members_back_off`](Self::group_members_back_off) (see there why).
    pub const DEFAULT: QueueConfig = QueueConfig {
        initial_backoff: Duration::from_secs(1),
        max_backoff: Duration::from_secs(10),
        max_in_unschedulable: Duration::from_secs(5 * 60),
        ordering_window: Some(Duration::from_secs(1)),
        pop_from_backoff: true,
        group_members_back_off: false,
        shared_in_flight_events: true,
        wildcards_move_gated: false,
        group_backoff_scales_with_size: false,
    };

    /// kube-scheduler's queue before 1.33: the defaults' timing, but only the active queue pops
    /// and backoffs are compared exactly (a backoff ending at `now` is over, as 1.32's
    /// `isPodBackingoff` has it: `boTime.After(now)`).
    pub const BEFORE_1_33: QueueConfig = QueueConfig::DEFAULT
        .with_ordering_window(None)
        .with_pop_from_backoff(false);

    /// kube-scheduler 1.36 with `SchedulerPopFromBackoffQ` off: only the active queue pops and
    /// nothing is truncated, but — unlike [`BEFORE_1_33`](Self::BEFORE_1_33) — a backoff ending
    /// exactly at `now` still holds: v1.36.3's `isPodBackingoff` is `!boTime.Before(now)`
    /// whether the gate is on or off (`backend/queue/backoff_queue.go`; `alignToWindow` is the
    /// identity when it is off). A zero [`ordering_window`](Self::ordering_window).
    pub const POP_FROM_BACKOFF_OFF: QueueConfig = QueueConfig::DEFAULT
        .with_ordering_window(Some(Duration::ZERO))
        .with_pop_from_backoff(false);

    /// This configuration with the first backoff `backoff`.
    pub const fn with_initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// This configuration with the longest backoff `backoff`.
    pub const fn with_max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// This configuration letting a pod sit `max` in the unschedulable pool before a flush.
    pub const fn with_max_in_unschedulable(mut self, max: Duration) -> Self {
        self.max_in_unschedulable = max;
        self
    }

    /// This configuration with the ordering window `window` (`None`: compare exactly).
    pub const fn with_ordering_window(mut self, window: Option<Duration>) -> Self {
        self.ordering_window = window;
        self
    }

    /// This configuration popping from the backoff queue when the active queue is empty, or
    /// not (see [`pop_from_backoff`](Self::pop_from_backoff)).
    pub const fn with_pop_from_backoff(mut self, pop: bool) -> Self {
        self.pop_from_backoff = pop;
        self
    }

    /// This configuration backing off a failed pod group member whatever happened, or not
    /// (see [`group_members_back_off`](Self::group_members_back_off)).
    pub const fn with_group_members_back_off(mut self, back_off: bool) -> Self {
        self.group_members_back_off = back_off;
        self
    }

    /// This configuration replaying an in-flight pod's update for every pod in flight, or
    /// only for that pod (see
    /// [`shared_in_flight_events`](Self::shared_in_flight_events)).
    pub const fn with_shared_in_flight_events(mut self, shared: bool) -> Self {
        self.shared_in_flight_events = shared;
        self
    }

    /// This configuration moving gated pods on wildcard events (kubernetes#139162), or not (see
    /// [`wildcards_move_gated`](Self::wildcards_move_gated)).
    pub const fn with_wildcards_move_gated(mut self, moves: bool) -> Self {
        self.wildcards_move_gated = moves;
        self
    }

    /// This configuration capping a gang's one backoff at `max_backoff` × √(its members), as
    /// kube-scheduler 1.37 caps a pod group's, or not (see
    /// [`group_backoff_scales_with_size`](Self::group_backoff_scales_with_size)).
    pub const fn with_group_backoff_scales_with_size(mut self, scales: bool) -> Self {
        self.group_backoff_scales_with_size = scales;
        self
    }

    /// The backoff after `failures` counted failures
    /// ([`QueuedPodInfo::backoff_count`]): zero before the first, then the initial backoff
    /// doubled once per earlier failure, capped at the maximum.
    pub fn backoff_duration(&self, failures: u32) -> Duration {
        let Some(doublings) = failures.checked_sub(1) else {
            return Duration::ZERO;
        };
        let factor = 1u32.checked_shl(doublings).unwrap_or(u32::MAX);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }

    /// When `info`'s backoff ends: its last failure plus [`backoff_duration`](Self::backoff_duration),
    /// truncated to the ordering window if there is one — or `None` if it has none to serve:
    /// it has not failed yet, or backoff is off (`max_backoff` zero), where kube-scheduler's
    /// `getBackoffTime` answers the zero time, before every `now`.
    pub fn backoff_expiry(&self, info: &QueuedPodInfo) -> Option<Time> {
        self.backoff_clock().expiry(info)
    }

    /// The backoff timing in whole nanoseconds, for the queue's hot paths.
    pub(super) fn backoff_clock(&self) -> BackoffClock {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        BackoffClock {
            initial: nanos(self.initial_backoff),
            max: nanos(self.max_backoff),
            window: self.ordering_window.map(nanos),
            pre_enqueue_at_backoff: self.pop_from_backoff,
            group_scaled: self.group_backoff_scales_with_size,
        }
    }

    /// Whether `info` is still backing off at `now`: it has a
    /// [`backoff_expiry`](Self::backoff_expiry), after `now` (with an ordering window: not
    /// before the truncated `now`).
    pub fn is_backing_off(&self, info: &QueuedPodInfo, now: Time) -> bool {
        self.backoff_expiry(info)
            .is_some_and(|expiry| self.backs_off_until(expiry, now))
    }

    /// Whether a pod whose backoff ends at `expiry` is still backing off at `now`.
    pub fn backs_off_until(&self, expiry: Time, now: Time) -> bool {
        self.backoff_clock().backs_off_until(expiry, now)
    }

    /// The first time at which a pod whose backoff ends at `expiry` no longer backs off:
    /// `expiry` itself, or with an ordering window the start of the window after `expiry`'s
    /// (with a zero window, a nanosecond after `expiry`).
    pub fn backoff_ends(&self, expiry: Time) -> Time {
        self.backoff_clock().ends(expiry)
    }
}

/// [`QueueConfig`]'s backoff rules in whole nanoseconds (what [`Time`] holds), computed once:
/// a cluster event applies them to every pod it moves, and `Duration`'s seconds-and-nanos
/// arithmetic was a sixth of that walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct BackoffClock {
    initial: u64,
    max: u64,
    window: Option<u64>,
    /// With [`QueueConfig::pop_from_backoff`] (1.36's `SchedulerPopFromBackoffQ`), PreEnqueue
    /// runs when a pod enters backoff and not when it leaves (`moveToBackoffQ`;
    /// `moveToActiveQ` with `movesFromBackoffQ`); otherwise when it leaves.
    pub(super) pre_enqueue_at_backoff: bool,
    /// [`QueueConfig::group_backoff_scales_with_size`].
    group_scaled: bool,
}

impl BackoffClock {
    /// See [`QueueConfig::backoff_expiry`].
    pub(super) fn expiry(&self, info: &QueuedPodInfo) -> Option<Time> {
        self.expiry_capped(info, self.max)
    }

    /// The expiry of `info` as one of `size` members of a gang handed back with one backoff:
    /// as [`expiry`](Self::expiry), capped at max × √size when the group rule is on.
    pub(super) fn expiry_in_group(&self, info: &QueuedPodInfo, size: usize) -> Option<Time> {
        if !self.group_scaled || size <= 1 {
            return self.expiry(info);
        }
        // Whole nanoseconds, as upstream's time.Duration(float64(max) * math.Sqrt(size)).
        let cap = (self.max as f64 * (size as f64).sqrt()).min(u64::MAX as f64) as u64;
        self.expiry_capped(info, cap)
    }

    fn expiry_capped(&self, info: &QueuedPodInfo, cap: u64) -> Option<Time> {
        let doublings = info.backoff_count().checked_sub(1)?;
        if self.max == 0 {
            return None;
        }
        let backoff = self
            .initial
            .saturating_mul(1u64.checked_shl(doublings).unwrap_or(u64::MAX))
            .min(cap);
        Some(self.align(Time::from_nanos(
            info.timestamp().as_nanos().saturating_add(backoff),
        )))
    }

    /// See [`QueueConfig::backs_off_until`].
    pub(super) fn backs_off_until(&self, expiry: Time, now: Time) -> bool {
        match self.window {
            None => expiry > now,
            Some(_) => expiry >= self.align(now),
        }
    }

    /// See [`QueueConfig::backoff_ends`].
    pub(super) fn ends(&self, expiry: Time) -> Time {
        match self.window {
            // A zero window keeps a backoff ending now: it is over a nanosecond later.
            Some(0) => Time::from_nanos(expiry.as_nanos().saturating_add(1)),
            Some(w) => Time::from_nanos(self.align(expiry).as_nanos().saturating_add(w)),
            None => expiry,
        }
    }

    fn align(&self, t: Time) -> Time {
        match self.window {
            Some(w) if w != 0 => Time::from_nanos(t.as_nanos() / w * w),
            _ => t,
        }
    }
}
