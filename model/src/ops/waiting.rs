//! The waiting map's decisions as values ([`Call`]: allow, reject in its four ways, the
//! batches, expire) and what a real map under test must do with them ([`Subject`]: the pure
//! [`WaitingState`] and the sharded [`WaitingPods`](gangsched::WaitingPods) each run a call
//! through their own API), as the lockstep (`model/src/waiting_lockstep/`) drives them beside
//! the model.

use std::borrow::Cow;
use std::time::Duration;

use gangsched::waiting::Ticket;
use gangsched::{AddError, Cause, Decision, PluginName, Pod, PodId, Status, Time, WaitingState};

use crate::waiting::{ModelDecision, ModelEntry};

/// One decision call, its pods and registrations resolved (the lockstep's
/// [`Op`](crate::waiting_lockstep::Op) translated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// Clear `plugin` of pod `id` (registration `ticket`, or whichever waits).
    Allow {
        /// The pod.
        id: PodId,
        /// The registration, if one is named.
        ticket: Option<Ticket>,
        /// The plugin.
        plugin: PluginName,
    },
    /// Reject pod `id` (registration `ticket`, or whichever waits) the way `rejection` says.
    Reject {
        /// The pod.
        id: PodId,
        /// The registration, if one is named.
        ticket: Option<Ticket>,
        /// The call, its status and cause.
        rejection: Rejection,
    },
    /// Clear `plugin` for every pod of `ids`, all or none.
    AllowAll {
        /// The pods, repeats included.
        ids: Vec<PodId>,
        /// The plugin.
        plugin: PluginName,
        /// Through the deferred variant.
        deferred: bool,
    },
    /// Reject every waiting pod of each batch, `Unschedulable` with `message` attributed to
    /// `plugin`, for `cause`: one batch, or (deferred) two appended and delivered together.
    RejectAll {
        /// One batch, or two.
        batches: Vec<Vec<PodId>>,
        /// The rejecting plugin.
        plugin: PluginName,
        /// The message.
        message: String,
        /// The cause.
        cause: Cause,
        /// Through the deferred variant.
        deferred: bool,
    },
    /// Time out every pod due at `now`.
    Expire {
        /// The time.
        now: Time,
    },
}

/// How a single pod is rejected, resolved: each a real call with its documented status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// A plugin's rejection (`reject`): `Unschedulable` `message` from `plugin`,
    /// [`Cause::Rejected`].
    Reject {
        /// The rejecting plugin.
        plugin: PluginName,
        /// The message.
        message: String,
    },
    /// A preemption (`preempt`): `checking::preemption_status`, [`Cause::Preempted`].
    Preempt {
        /// The plugin it is attributed to.
        plugin: PluginName,
        /// The message.
        message: String,
    },
    /// `reject_for`: `status`, for `cause`.
    For {
        /// The status.
        status: Status,
        /// The cause.
        cause: Cause,
    },
    /// A delete (`remove`): "removed", no plugin, [`Cause::Deleted`]; names no registration.
    Remove,
}

impl Rejection {
    /// The status the pod is decided with.
    pub fn status(&self) -> Status {
        match self {
            Rejection::Reject { plugin, message } => {
                Status::unschedulable(message.as_str()).with_plugin(plugin.clone())
            }
            Rejection::Preempt { plugin, message } => {
                gangsched::checking::preemption_status(plugin.clone(), message)
            }
            Rejection::For { status, .. } => status.clone(),
            Rejection::Remove => Status::unschedulable("removed"),
        }
    }

    /// The cause the pod is decided for.
    pub fn cause(&self) -> Cause {
        match self {
            Rejection::Reject { .. } => Cause::Rejected,
            Rejection::Preempt { .. } => Cause::Preempted,
            Rejection::For { cause, .. } => *cause,
            Rejection::Remove => Cause::Deleted,
        }
    }
}

/// What a decision call answered, as far as its API tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `WaitingState::allow`: not waiting, still pending, or allowed by this call.
    Allow(AllowKind),
    /// A call that says only whether it decided (`WaitingPods::allow`, `reject`, `remove`…).
    Decided(bool),
    /// `allow_all`: how many it allowed, or the pod named that is not waiting.
    Batch(Result<usize, PodId>),
    /// `reject_all`, `expire`: how many it decided.
    Count(usize),
}

/// The three answers of `allow` (the model's `ModelAllow` without its decision).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllowKind {
    /// No such pod (or registration) waits; nothing changed.
    NotWaiting,
    /// The plugin is cleared (or was not pending); another is still pending.
    StillPending,
    /// That was the last pending plugin: allowed by this call.
    Allowed,
}

impl Answer {
    /// Whether this answer (the real map's) says what `model` (the model's, for the same call)
    /// says: equal, or — for a call that tells only whether it decided — deciding exactly when
    /// the model's allow was [`AllowKind::Allowed`].
    pub fn agrees_with(&self, model: &Answer) -> bool {
        match (self, model) {
            (Answer::Decided(decided), Answer::Allow(kind)) => {
                *decided == (*kind == AllowKind::Allowed)
            }
            (real, model) => real == model,
        }
    }
}

/// One decision a call made, as the real map reported or delivered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The pod, the status, the cause.
    pub decision: Decision,
    /// The registration decided, when the API names it (the pure state's decisions, a
    /// removed pod's handle); a sink's decision names none.
    pub ticket: Option<Ticket>,
}

impl Delivered {
    /// `decision`, its registration not named.
    pub fn untold(decision: Decision) -> Delivered {
        Delivered {
            decision,
            ticket: None,
        }
    }
}

/// What a call did: its answer and its decisions, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The call's answer.
    pub answer: Answer,
    /// The decisions it made — returned by the pure state, delivered to the sink by the map.
    pub delivered: Vec<Delivered>,
}

/// What one registration must show, from the model: still waiting as its entry says, or
/// decided as its decision says.
#[derive(Clone, Copy, Debug)]
pub enum Expect<'a> {
    /// It waits: this pod, these pending plugins.
    Waiting(&'a ModelEntry),
    /// It was decided so.
    Decided(&'a ModelDecision),
}

/// The real waiting map under test. The driver resolves each op, runs it on the model, then on
/// the subject, and compares; the subject compares what only its API shows.
pub trait Subject {
    /// Registers `pod` waiting for each of `waits` from `now`: its ticket, or the error.
    fn add(
        &mut self,
        pod: Pod,
        waits: Vec<(PluginName, Duration)>,
        now: Time,
    ) -> Result<Ticket, AddError>;

    /// Registers `pod` waiting for `plugin` with no deadline: its ticket, or the error.
    fn add_untimed(&mut self, pod: Pod, plugin: PluginName) -> Result<Ticket, AddError>;

    /// Runs `call`; `expected` is what the model decided for it, in order (for what only this
    /// subject's API shows: the map's `expire` returns its decisions and delivers them too, a
    /// deferred batch holds them back). `Err` names what differs.
    fn decide(&mut self, call: &Call, expected: &[ModelDecision]) -> Result<Report, String>;

    /// Its waiting pods as one pure state (the sharded map's shards merged, copied in one
    /// critical section).
    fn state(&self) -> Cow<'_, WaitingState<()>>;

    /// Its own checks beyond `state.check()` (`state` is [`state`](Self::state), taken after
    /// the step), `expect` telling what each ticket it issued must show (`None`: a ticket the
    /// driver never saw). `Err` names the first broken.
    fn check<'m>(
        &self,
        state: &WaitingState<()>,
        expect: &dyn Fn(Ticket) -> Option<Expect<'m>>,
    ) -> Result<(), String>;
}
