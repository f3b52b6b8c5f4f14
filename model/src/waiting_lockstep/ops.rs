//! The ops, the universe they name, and the one-byte choices inside them.

use std::time::Duration;

use gangsched::{Cause, PluginName, PodId};

/// How many pods the universe has: `p0`..`p5`. Small on purpose, so that re-adds and
/// decisions of pods already decided happen often.
pub const PODS: u8 = 6;
/// The plugins a pod can wait for.
pub const PLUGINS: [&str; 3] = ["A", "B", "C"];
/// Waits are multiples of this, from 0 to [`WAIT_STEPS`] steps (20m): 6 steps is the 15m cap.
pub const WAIT_STEP: Duration = Duration::from_secs(150);
/// The largest wait, in [`WAIT_STEP`]s (a wait index is taken modulo one more than this).
pub const WAIT_STEPS: u8 = 8;
/// The clock steps an op can take (index modulo their number): none, a nudge, just short of a
/// wait step, one and two steps (deadline ties, "exactly at the deadline"), the cap.
pub const STEPS: [Duration; 6] = [
    Duration::ZERO,
    Duration::from_nanos(1),
    Duration::from_nanos(150_000_000_000 - 1),
    WAIT_STEP,
    Duration::from_secs(300),
    Duration::from_secs(15 * 60),
];
/// The causes a rejection for a cause, or a batch rejection, can name (index modulo their
/// number).
pub const CAUSES: [Cause; 6] = [
    Cause::Preempted,
    Cause::GangFailed,
    Cause::ShutDown,
    Cause::Rejected,
    Cause::TimedOut,
    Cause::Deleted,
];

/// Which registration of a pod an allow or a reject names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TicketChoice {
    /// No registration (`None`): whichever is waiting.
    Any,
    /// The pod's most recent registration (the current one if it is waiting).
    Latest,
    /// One of the pod's registrations so far (index modulo their number): often stale.
    Past(u8),
}

impl TicketChoice {
    /// The choice byte `b` names: `b % 8` below 4 [`Any`](Self::Any), 4–5
    /// [`Latest`](Self::Latest), 6–7 [`Past`](Self::Past)`(b >> 3)`.
    pub fn from_byte(b: u8) -> TicketChoice {
        match b % 8 {
            0..=3 => TicketChoice::Any,
            4 | 5 => TicketChoice::Latest,
            _ => TicketChoice::Past(b >> 3),
        }
    }

    /// A byte that [`from_byte`](Self::from_byte) turns back into this choice.
    pub fn to_byte(self) -> u8 {
        match self {
            TicketChoice::Any => 0,
            TicketChoice::Latest => 4,
            TicketChoice::Past(i) => 6 | (i.min(31) << 3),
        }
    }
}

/// How a single pod is rejected — each way a real API call with its own status and cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// A plugin's rejection: `Unschedulable` with the message, attributed to the plugin,
    /// [`Cause::Rejected`] (`WaitingPods::reject`, `WaitingPod::reject`, `WaitingRef::reject`).
    Reject,
    /// A preemption: an `Error` attributed to the plugin, [`Cause::Preempted`]
    /// (`WaitingPods::preempt`, `WaitingPod::preempt`).
    Preempt,
    /// `Unschedulable` with the message, attributed to the plugin, for
    /// `CAUSES[index % CAUSES.len()]` (`WaitingPods::reject_for`, or a registration's through
    /// `checking::reject_registration`; `WaitingState::reject`).
    For(u8),
    /// The pod was deleted: "removed", no plugin, [`Cause::Deleted`] (`WaitingPods::remove`).
    /// A delete names the pod, not a registration: the ticket choice is ignored.
    Remove,
}

impl How {
    /// The way byte `b` names: `b % 4` is the way, `b >> 2` the cause index of
    /// [`For`](Self::For).
    pub fn from_byte(b: u8) -> How {
        match b % 4 {
            0 => How::Reject,
            1 => How::Preempt,
            2 => How::For(b >> 2),
            _ => How::Remove,
        }
    }

    /// A byte that [`from_byte`](Self::from_byte) turns back into this way.
    pub fn to_byte(self) -> u8 {
        match self {
            How::Reject => 0,
            How::Preempt => 1,
            How::For(cause) => 2 | ((cause % CAUSES.len() as u8) << 2),
            How::Remove => 3,
        }
    }

    /// The way [`How::For`] names `cause` (one of [`CAUSES`]).
    pub fn for_cause(cause: Cause) -> How {
        let index = CAUSES.iter().position(|c| *c == cause).unwrap_or(0);
        How::For(index as u8)
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for TicketChoice {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(TicketChoice::from_byte(u8::arbitrary(u)?))
    }

    fn size_hint(_: usize) -> (usize, Option<usize>) {
        (1, Some(1))
    }
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for How {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(How::from_byte(u8::arbitrary(u)?))
    }

    fn size_hint(_: usize) -> (usize, Option<usize>) {
        (1, Some(1))
    }
}

/// One operation on the real waiting map and the model. Pods, plugins, waits, steps and causes
/// are small indexes, taken modulo, so shrinking keeps them meaningful. With the `arbitrary`
/// feature, cargo-fuzz generates these directly (the `waiting_map` target); each choice inside
/// is one byte.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Op {
    /// Adds pod `pod % PODS` (a new object each time) waiting for each `(plugin, wait)`:
    /// plugin [`plugin`]`(plugin)`, wait [`wait`]`(wait)`. Any list, so no plugin and a
    /// plugin named twice happen too.
    Add {
        /// Universe index.
        pod: u8,
        /// Plugin and wait indexes.
        waits: Vec<(u8, u8)>,
    },
    /// Clears a plugin of one registration of a pod.
    Allow {
        /// Universe index.
        pod: u8,
        /// Which registration.
        ticket: TicketChoice,
        /// Plugin index.
        plugin: u8,
    },
    /// Rejects one registration of a pod, the way `how` says, with message "no room `msg`".
    Reject {
        /// Universe index.
        pod: u8,
        /// Which registration.
        ticket: TicketChoice,
        /// Plugin index (the rejecting plugin).
        plugin: u8,
        /// Message index.
        msg: u8,
        /// Which call, status and cause.
        how: How,
    },
    /// Clears a plugin for all the pods named or none (`allow_all`; repeats included);
    /// `deferred`: its decisions held back, then delivered (`checking::allow_all_deferred`).
    AllowAll {
        /// Universe indexes.
        pods: Vec<u8>,
        /// Plugin index.
        plugin: u8,
        /// Through the deferred variant.
        deferred: bool,
    },
    /// Rejects every pod named that is waiting (`reject_all`), `Unschedulable` "no room `msg`"
    /// attributed to the plugin, for `CAUSES[cause]`; `deferred`: as two deferred batches (the
    /// first half of `pods`, then the rest) appended and delivered together, as the gang
    /// plugin appends a gang's rejections.
    RejectAll {
        /// Universe indexes.
        pods: Vec<u8>,
        /// Plugin index.
        plugin: u8,
        /// Message index.
        msg: u8,
        /// Cause index.
        cause: u8,
        /// Through the deferred variant.
        deferred: bool,
    },
    /// Moves the clock by `STEPS[step]` without expiring anything.
    Advance {
        /// Step index.
        step: u8,
    },
    /// Moves the clock by `STEPS[step]`, then expires at the new time.
    Expire {
        /// Step index.
        step: u8,
    },
    /// Looks pod `pod % PODS` up in both.
    Query {
        /// Universe index.
        pod: u8,
    },
    /// Adds pod `pod % PODS` (a new object each time) waiting for plugin
    /// [`plugin`]`(plugin)` with no deadline (`add_untimed`: the plugin owns the timeout, as
    /// the Hardened gang does), so `expire` must pass it over.
    AddUntimed {
        /// Universe index.
        pod: u8,
        /// Plugin index.
        plugin: u8,
    },
}

/// Universe pod `index % PODS`'s id: `p<index>`.
pub fn pod_id(index: u8) -> PodId {
    PodId::from(format!("p{}", index % PODS))
}

/// Plugin `index % 3`.
pub fn plugin(index: u8) -> PluginName {
    PluginName::new_static(PLUGINS[usize::from(index) % PLUGINS.len()])
}

/// Wait `index % 9` steps of [`WAIT_STEP`].
pub fn wait(index: u8) -> Duration {
    WAIT_STEP * u32::from(index % (WAIT_STEPS + 1))
}

/// Clock step `STEPS[index % 6]`.
pub fn step(index: u8) -> Duration {
    STEPS[usize::from(index) % STEPS.len()]
}

/// Cause `CAUSES[index % 6]`.
pub fn cause(index: u8) -> Cause {
    CAUSES[usize::from(index) % CAUSES.len()]
}

/// The message of a rejection with message index `msg`.
pub fn message(msg: u8) -> String {
    format!("no room {msg}")
}
