//! The scheduling queue's operations as values ([`QueueOp`]) and the one function that applies
//! them to the real queue ([`apply`]); [`QueueModel::apply`](crate::queue::QueueModel::apply)
//! applies them to the reference model. The lockstep driver, the differential against
//! kube-scheduler's queue, the conformance table and the `queue_moves` fuzz target each
//! translate their own input into these and call the same functions.

use std::cell::RefCell;
use std::time::Duration;

use gangsched::checking::queue_critical_section;
use gangsched::queue::{
    ClusterEvent, HandBackError, Popped, QueueError, QueuePlace, QueuePlugins, QueueState,
    QueuedPodInfo, SchedulingQueue,
};
use gangsched::{PluginName, Pod, PodId, Time};

/// One operation on a scheduling queue, its arguments as values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueOp {
    /// A pod is created (`add`).
    Add(Pod),
    /// A pod's object changes (`update`).
    Update {
        /// The object before.
        old: Pod,
        /// The object after.
        new: Pod,
    },
    /// A pod is deleted (`delete`).
    Delete(PodId),
    /// The scheduling loop pops the head of the queue; `prefer`, if it is tied at the head
    /// ([`QueueState::heads`]) — for a runner that follows another queue's order among equals.
    Pop {
        /// The tied pod to take instead of the queue's own first.
        prefer: Option<PodId>,
    },
    /// A pod's attempt is over (`done`).
    Done(PodId),
    /// A popped pod comes back with this record — its rejecting and pending plugins set by
    /// its attempt (`add_unschedulable_if_not_present`).
    HandBack(QueuedPodInfo),
    /// A popped pod comes back with the queue's own record, rejected by `rejector` (`None`:
    /// an error) (`hand_back`).
    HandBackOwn {
        /// The pod.
        pod: PodId,
        /// The plugin that rejected it.
        rejector: Option<PluginName>,
    },
    /// A gang's members come back together, each with its record (`add_gang_unschedulable`).
    HandBackGang(Vec<QueuedPodInfo>),
    /// Pods are activated (`activate`).
    Activate(Vec<PodId>),
    /// A cluster event is announced (`move_all_to_active_or_backoff`).
    MoveAll {
        /// The event.
        event: ClusterEvent,
        /// Which unschedulable pods the move considers.
        precheck: Precheck,
    },
    /// Ended backoffs are flushed (`flush_backoff_completed`).
    FlushBackoff,
    /// Pods parked too long are flushed (`flush_unschedulable_leftover`).
    FlushLeftover,
    /// The clock moves on.
    Advance(Duration),
    /// The queue closes (`close`).
    Close,
}

impl QueueOp {
    /// The operation's name in a report (`add`, `pop`, `hand back`…).
    pub fn name(&self) -> &'static str {
        match self {
            QueueOp::Add(_) => "add",
            QueueOp::Update { .. } => "update",
            QueueOp::Delete(_) => "delete",
            QueueOp::Pop { .. } => "pop",
            QueueOp::Done(_) => "done",
            QueueOp::HandBack(_) => "hand back",
            QueueOp::HandBackOwn { .. } => "hand back (own record)",
            QueueOp::HandBackGang(_) => "gang hand back",
            QueueOp::Activate(_) => "activate",
            QueueOp::MoveAll { .. } => "move all",
            QueueOp::FlushBackoff => "flush backoff",
            QueueOp::FlushLeftover => "flush leftover",
            QueueOp::Advance(_) => "advance",
            QueueOp::Close => "close",
        }
    }
}

/// The precheck of a move: which pods of the unschedulable pool it considers. The default
/// considers all of them, with no precheck at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Precheck {
    /// A rule on the pod's priority.
    pub rule: Option<PriorityRule>,
    /// A pod left out.
    pub exclude: Option<PodId>,
}

/// A precheck's rule on a pod's priority (the differential's, after upstream's tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorityRule {
    /// At least this priority.
    AtLeast(i32),
    /// Even and at least this priority.
    EvenAtLeast(i32),
    /// Even and negative.
    EvenNegative,
    /// Nobody — and the move must not even ask (upstream skips the precheck for an event no
    /// plugin registered for): a call is reported.
    Never,
}

impl Precheck {
    /// Whether the move asks anything of the pods at all.
    pub fn is_none(&self) -> bool {
        self.rule.is_none() && self.exclude.is_none()
    }

    /// Notes in `asked` that a `Never` precheck was asked about pod `id` (one it does not
    /// leave out anyway): the move should not have asked.
    pub fn note_asked(&self, id: &PodId, asked: &RefCell<Option<PodId>>) {
        if self.rule == Some(PriorityRule::Never) && self.exclude.as_ref() != Some(id) {
            asked.borrow_mut().get_or_insert_with(|| id.clone());
        }
    }

    /// Whether the move considers pod `id` of `priority`.
    pub fn admits(&self, id: &PodId, priority: i32) -> bool {
        if self.exclude.as_ref() == Some(id) {
            return false;
        }
        match self.rule {
            None => true,
            Some(PriorityRule::AtLeast(min)) => priority >= min,
            Some(PriorityRule::EvenAtLeast(min)) => priority % 2 == 0 && priority >= min,
            Some(PriorityRule::EvenNegative) => priority % 2 == 0 && priority < 0,
            Some(PriorityRule::Never) => false,
        }
    }
}

/// What an operation did: each the result of the queue call it stands for. `P` is what a pop
/// returns (the real queue's [`Popped`], the model's
/// [`ModelPopped`](crate::queue::ModelPopped)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueOutcome<P> {
    /// `add`'s result.
    Added(Result<bool, QueueError>),
    /// `update`'s place.
    Updated(QueuePlace),
    /// `delete`'s result.
    Deleted(bool),
    /// What was popped.
    Popped(Option<P>),
    /// `done`'s result.
    Done(bool),
    /// `add_unschedulable_if_not_present`'s result.
    HandedBack(Result<Option<QueuePlace>, QueueError>),
    /// `hand_back`'s result.
    HandedBackOwn(Result<Option<QueuePlace>, HandBackError>),
    /// `add_gang_unschedulable`'s result.
    GangHandedBack(Result<Vec<Option<QueuePlace>>, QueueError>),
    /// How many pods became active.
    Activated(usize),
    /// How many pods left the pool, and the first pod a `Never` precheck was asked about.
    Moved {
        /// Pods moved.
        moved: usize,
        /// The first pod the precheck was asked about although its rule is `Never`.
        asked: Option<PodId>,
    },
    /// How many pods a flush moved.
    Flushed(usize),
    /// The clock moved.
    Advanced,
    /// The queue closed.
    Closed,
}

impl<P> QueueOutcome<P> {
    /// The same outcome with what a pop returned mapped by `f`.
    pub fn map_popped<Q>(self, f: impl FnOnce(P) -> Q) -> QueueOutcome<Q> {
        match self {
            QueueOutcome::Added(r) => QueueOutcome::Added(r),
            QueueOutcome::Updated(p) => QueueOutcome::Updated(p),
            QueueOutcome::Deleted(d) => QueueOutcome::Deleted(d),
            QueueOutcome::Popped(p) => QueueOutcome::Popped(p.map(f)),
            QueueOutcome::Done(d) => QueueOutcome::Done(d),
            QueueOutcome::HandedBack(r) => QueueOutcome::HandedBack(r),
            QueueOutcome::HandedBackOwn(r) => QueueOutcome::HandedBackOwn(r),
            QueueOutcome::GangHandedBack(r) => QueueOutcome::GangHandedBack(r),
            QueueOutcome::Activated(n) => QueueOutcome::Activated(n),
            QueueOutcome::Moved { moved, asked } => QueueOutcome::Moved { moved, asked },
            QueueOutcome::Flushed(n) => QueueOutcome::Flushed(n),
            QueueOutcome::Advanced => QueueOutcome::Advanced,
            QueueOutcome::Closed => QueueOutcome::Closed,
        }
    }
}

/// What the queue's operations run on: the pure [`QueueState`] with its plugins
/// ([`PureQueue`]), or the locked [`SchedulingQueue`], through its own methods.
pub trait QueueTarget {
    /// `add`.
    fn add(&mut self, pod: Pod, now: Time) -> Result<bool, QueueError>;
    /// `update`.
    fn update(&mut self, old: Pod, new: Pod, now: Time) -> QueuePlace;
    /// `delete`.
    fn delete(&mut self, id: &PodId) -> bool;
    /// A pop: of `prefer` if it is tied at the head, else of the head.
    fn pop(&mut self, prefer: Option<&PodId>) -> Option<Popped>;
    /// `done`.
    fn done(&mut self, id: &PodId) -> bool;
    /// `add_unschedulable_if_not_present`.
    fn hand_back(
        &mut self,
        info: QueuedPodInfo,
        now: Time,
    ) -> Result<Option<QueuePlace>, QueueError>;
    /// `hand_back`.
    fn hand_back_own(
        &mut self,
        id: &PodId,
        rejector: Option<PluginName>,
        now: Time,
    ) -> Result<Option<QueuePlace>, HandBackError>;
    /// `add_gang_unschedulable`.
    fn hand_back_gang(
        &mut self,
        members: Vec<QueuedPodInfo>,
        now: Time,
    ) -> Result<Vec<Option<QueuePlace>>, QueueError>;
    /// `activate`.
    fn activate(&mut self, ids: &[PodId], now: Time) -> usize;
    /// `move_all_to_active_or_backoff`.
    fn move_all(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
    ) -> usize;
    /// `flush_backoff_completed`.
    fn flush_backoff(&mut self, now: Time) -> usize;
    /// `flush_unschedulable_leftover`.
    fn flush_leftover(&mut self, now: Time) -> usize;
    /// `close`.
    fn close(&mut self);
}

/// The pure queue state with the plugins it consults.
pub struct PureQueue<'a> {
    /// The state.
    pub state: &'a mut QueueState,
    /// Its plugins.
    pub plugins: &'a dyn QueuePlugins,
}

impl QueueTarget for PureQueue<'_> {
    fn add(&mut self, pod: Pod, now: Time) -> Result<bool, QueueError> {
        self.state.add(pod, now, self.plugins)
    }
    fn update(&mut self, old: Pod, new: Pod, now: Time) -> QueuePlace {
        self.state.update(old, new, now, self.plugins)
    }
    fn delete(&mut self, id: &PodId) -> bool {
        self.state.delete(id)
    }
    fn pop(&mut self, prefer: Option<&PodId>) -> Option<Popped> {
        pop_preferring(self.state, prefer)
    }
    fn done(&mut self, id: &PodId) -> bool {
        self.state.done(id)
    }
    fn hand_back(
        &mut self,
        info: QueuedPodInfo,
        now: Time,
    ) -> Result<Option<QueuePlace>, QueueError> {
        self.state
            .add_unschedulable_if_not_present(info, now, self.plugins)
    }
    fn hand_back_own(
        &mut self,
        id: &PodId,
        rejector: Option<PluginName>,
        now: Time,
    ) -> Result<Option<QueuePlace>, HandBackError> {
        self.state.hand_back(id, rejector, now, self.plugins)
    }
    fn hand_back_gang(
        &mut self,
        members: Vec<QueuedPodInfo>,
        now: Time,
    ) -> Result<Vec<Option<QueuePlace>>, QueueError> {
        self.state
            .add_gang_unschedulable(members, now, self.plugins)
    }
    fn activate(&mut self, ids: &[PodId], now: Time) -> usize {
        self.state.activate(ids, now, self.plugins)
    }
    fn move_all(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
    ) -> usize {
        self.state
            .move_all_to_active_or_backoff(event, precheck, now, self.plugins)
    }
    fn flush_backoff(&mut self, now: Time) -> usize {
        self.state.flush_backoff_completed(now, self.plugins)
    }
    fn flush_leftover(&mut self, now: Time) -> usize {
        self.state.flush_unschedulable_leftover(now, self.plugins)
    }
    fn close(&mut self) {
        self.state.close();
    }
}

/// The locked queue's own methods; what it does not offer on its own (a preferred pop, a
/// hand-back with its own record) runs on its state in one of its critical sections.
impl QueueTarget for SchedulingQueue {
    fn add(&mut self, pod: Pod, now: Time) -> Result<bool, QueueError> {
        SchedulingQueue::add(self, pod, now)
    }
    fn update(&mut self, old: Pod, new: Pod, now: Time) -> QueuePlace {
        SchedulingQueue::update(self, old, new, now)
    }
    fn delete(&mut self, id: &PodId) -> bool {
        SchedulingQueue::delete(self, id)
    }
    fn pop(&mut self, prefer: Option<&PodId>) -> Option<Popped> {
        match prefer {
            None => self.try_pop(),
            Some(_) => queue_critical_section(self, |state, _| pop_preferring(state, prefer)),
        }
    }
    fn done(&mut self, id: &PodId) -> bool {
        SchedulingQueue::done(self, id)
    }
    fn hand_back(
        &mut self,
        info: QueuedPodInfo,
        now: Time,
    ) -> Result<Option<QueuePlace>, QueueError> {
        self.add_unschedulable_if_not_present(info, now)
    }
    fn hand_back_own(
        &mut self,
        id: &PodId,
        rejector: Option<PluginName>,
        now: Time,
    ) -> Result<Option<QueuePlace>, HandBackError> {
        queue_critical_section(self, |state, plugins| {
            state.hand_back(id, rejector, now, plugins)
        })
    }
    fn hand_back_gang(
        &mut self,
        members: Vec<QueuedPodInfo>,
        now: Time,
    ) -> Result<Vec<Option<QueuePlace>>, QueueError> {
        self.add_gang_unschedulable(members, now)
    }
    fn activate(&mut self, ids: &[PodId], now: Time) -> usize {
        SchedulingQueue::activate(self, ids, now)
    }
    fn move_all(
        &mut self,
        event: ClusterEvent,
        precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool>,
        now: Time,
    ) -> usize {
        self.move_all_to_active_or_backoff(event, precheck, now)
    }
    fn flush_backoff(&mut self, now: Time) -> usize {
        self.flush_backoff_completed(now)
    }
    fn flush_leftover(&mut self, now: Time) -> usize {
        self.flush_unschedulable_leftover(now)
    }
    fn close(&mut self) {
        SchedulingQueue::close(self);
    }
}

/// A pop of `prefer` if it is tied at `state`'s head, else of the head.
fn pop_preferring(state: &mut QueueState, prefer: Option<&PodId>) -> Option<Popped> {
    match prefer.filter(|p| state.heads().any(|head| head == *p)) {
        Some(pod) => state.pop_tied(pod),
        None => state.pop(),
    }
}

/// Applies `op` to `target` at `now` (which an `Advance` moves).
pub fn apply(target: &mut impl QueueTarget, now: &mut Time, op: &QueueOp) -> QueueOutcome<Popped> {
    let at = *now;
    match op {
        QueueOp::Add(pod) => QueueOutcome::Added(target.add(pod.clone(), at)),
        QueueOp::Update { old, new } => {
            QueueOutcome::Updated(target.update(old.clone(), new.clone(), at))
        }
        QueueOp::Delete(id) => QueueOutcome::Deleted(target.delete(id)),
        QueueOp::Pop { prefer } => QueueOutcome::Popped(target.pop(prefer.as_ref())),
        QueueOp::Done(id) => QueueOutcome::Done(target.done(id)),
        QueueOp::HandBack(info) => QueueOutcome::HandedBack(target.hand_back(info.clone(), at)),
        QueueOp::HandBackOwn { pod, rejector } => {
            QueueOutcome::HandedBackOwn(target.hand_back_own(pod, rejector.clone(), at))
        }
        QueueOp::HandBackGang(members) => {
            QueueOutcome::GangHandedBack(target.hand_back_gang(members.clone(), at))
        }
        QueueOp::Activate(ids) => QueueOutcome::Activated(target.activate(ids, at)),
        QueueOp::MoveAll { event, precheck } => {
            let asked = RefCell::new(None);
            let check = |info: &QueuedPodInfo| {
                precheck.note_asked(info.id(), &asked);
                precheck.admits(info.id(), info.pod().priority())
            };
            let check: Option<&dyn Fn(&QueuedPodInfo) -> bool> =
                (!precheck.is_none()).then_some(&check);
            let moved = target.move_all(event.clone(), check, at);
            QueueOutcome::Moved {
                moved,
                asked: asked.into_inner(),
            }
        }
        QueueOp::FlushBackoff => QueueOutcome::Flushed(target.flush_backoff(at)),
        QueueOp::FlushLeftover => QueueOutcome::Flushed(target.flush_leftover(at)),
        QueueOp::Advance(by) => {
            *now += *by;
            QueueOutcome::Advanced
        }
        QueueOp::Close => {
            target.close();
            QueueOutcome::Closed
        }
    }
}
