//! Split cycles: a scheduling or binding cycle run step by step through the driver's operation
//! vocabulary ([`SchedulerOp`]), with a cluster event between its first step and its last —
//! the races a threaded scheduler runs into, where an informer's event lands while a cycle is
//! under way (issue #43). The steps are those `Scheduler::schedule_one` and
//! `run_binding_cycle` are made of, on the scheduler's own parts (or, with a flaw planted, on
//! those parts with it planted):
//!
//! - the Permit barrier's cycle: `Schedule(head)` (pop, place, assume, reserve, record), the
//!   event, then `Permit` (or `HandBack` for a pod no node had room for);
//! - the pod-group cycle (a gang member, [`GangCycle::PodGroup`]): `ScheduleGroup(head)` (pop,
//!   gather the siblings, simulate on a snapshot), the event, then `Commit`;
//! - a binding cycle: `BeginNextBinding`, the event, then the binder's answer (if the cycle
//!   binds) and `EndBinding`.
//!
//! The head is the pod `schedule_one` would pop: the first of the queue's heads. Every check
//! runs after each step, as after every op; the scheduling cycle's outcome is delivered as
//! the scheduler delivers it when its cycle ends (its pods' outcomes, the group's condition).
//! A cycle with nothing to pop or bind, or that ends at its first step, leaves the event to
//! run on its own after it.

use gangsched::checking::steps::Placed;
use gangsched::checking::Parts;
use gangsched::GangCycle;
use gangway_model::ops::scheduler::{self as scheduler_ops, InCycle};

use super::*;

impl Harness {
    /// [`run`](Harness::run) with the scheduling thread's `slot`, kept between the steps of a
    /// split cycle.
    pub(super) fn run_in(&self, slot: &mut Option<InCycle>, op: SchedulerOp) -> SchedulerOutcome {
        let mut parts = checking::scheduler_parts(&self.s);
        match self.flaw {
            None => scheduler_ops::apply(&mut parts, slot, &op, self.now),
            Some(flaw) => {
                let mut planted = Planted { parts, flaw };
                scheduler_ops::apply(&mut planted, slot, &op, self.now)
            }
        }
    }

    /// `op`, a split [`Op::Schedule`] or [`Op::Bind`], with the cluster event `event` between
    /// its cycle's first step and its last (see the module docs).
    pub(super) fn split(&mut self, op: &Op, event: &Op) -> Result<(), String> {
        match *op {
            Op::Schedule { plugin, .. } => {
                self.script.lock().plugin = plugin;
                let result = self.split_scheduling_cycle(event);
                self.script.lock().plugin = Verdict::Allow;
                self.in_cycle.clear();
                result
            }
            Op::Bind { answer, .. } => self.split_binding_cycle(answer, event),
            // Only a scheduling or binding cycle splits: anything else runs, then the event.
            _ => {
                self.apply(op)?;
                self.verify()?;
                self.apply(event)
            }
        }
    }

    /// The event, between two steps of a split cycle: checked before and after.
    fn inside(&mut self, event: &Op) -> Result<(), String> {
        self.verify()?;
        if let Some(trace) = &mut self.trace {
            trace.push(format!("inside: {event:?}"));
        }
        self.apply(event)?;
        self.verify()
    }

    /// Traces one step of a split cycle (`what` it did).
    fn step(&mut self, what: impl FnOnce() -> String) {
        if let Some(trace) = &mut self.trace {
            trace.push(format!("step {}", what()));
        }
    }

    /// A split scheduling cycle of the queue's head (see the module docs).
    fn split_scheduling_cycle(&mut self, event: &Op) -> Result<(), String> {
        let head = checking::scheduler_parts(&self.s).read_queue(|q| {
            let id = q.heads().next()?;
            q.info(id).map(|info| info.pod().clone())
        });
        let Some(head) = head else {
            if let Some(trace) = &mut self.trace {
                trace.push("no pod to schedule".into());
            }
            return self.apply(event);
        };
        let pod_group_cycle =
            head.group_key().is_some() && self.s.config().gang_cycle == GangCycle::PodGroup;
        let mut slot = None;
        let first = match pod_group_cycle {
            true => SchedulerOp::ScheduleGroup(head.id().clone()),
            false => SchedulerOp::Schedule(head.id().clone()),
        };
        let placed = self.run_in(&mut slot, first.clone());
        self.step(|| format!("{first:?}: {placed:?}"));
        let pods: Vec<Pod> = match (&placed, &slot) {
            (SchedulerOutcome::Placed(Some(_)), Some(InCycle::Pod(placed))) => {
                vec![placed.pod().clone()]
            }
            (SchedulerOutcome::Simulated(_), Some(InCycle::Group(simulation))) => simulation
                .members
                .iter()
                .map(|(member, _)| member.info.pod().clone())
                .collect(),
            // The cycle ended at its first step: the group had no state (its outcome
            // delivered here), or the assume or reserve failed (the step keeps its outcome).
            _ => {
                if let SchedulerOutcome::Committed(outcome) = placed {
                    self.end_cycle(outcome, &[head]);
                }
                self.verify()?;
                return self.apply(event);
            }
        };
        self.in_cycle = pods.iter().map(|pod| pod.id().clone()).collect();
        self.inside(event)?;
        let last = match &slot {
            Some(InCycle::Pod(Placed::Unfit { .. })) => SchedulerOp::HandBack,
            Some(InCycle::Pod(Placed::Reserved { .. })) => SchedulerOp::Permit,
            _ => SchedulerOp::Commit,
        };
        let ended = self.run_in(&mut slot, last.clone());
        self.step(|| format!("{last:?}"));
        // Only with `Flaw::RecordsAfterPermit` planted: the assignment is recorded after Permit.
        if matches!(slot, Some(InCycle::Permitted { .. })) {
            self.run_in(&mut slot, SchedulerOp::Record);
            self.step(|| "Record".into());
        }
        self.in_cycle.clear();
        match ended {
            SchedulerOutcome::Permitted(outcome)
            | SchedulerOutcome::HandedBack(outcome)
            | SchedulerOutcome::Committed(outcome) => {
                self.end_cycle(outcome, &pods);
                Ok(())
            }
            other => Err(format!("a split cycle's {last:?} did not apply: {other:?}")),
        }
    }

    /// A scheduling cycle's end, as `Scheduler::schedule` ends one: its outcome traced, the
    /// group's condition mirrored, and each pod's outcome among `pods` (the cycle's) delivered
    /// as `deliver_cycle_outcome` delivers it.
    fn end_cycle(&mut self, outcome: CycleOutcome, pods: &[Pod]) {
        if let Some(trace) = &mut self.trace {
            trace.push(format!("cycle: {outcome:?}"));
        }
        if let Err(failure) = self.mirror_pod_group_condition(&outcome) {
            self.condition_failure.get_or_insert(failure);
        }
        self.step_outcomes
            .extend(checking::cycle_outcomes(&outcome, pods));
    }

    /// A split binding cycle of the oldest decision (see the module docs), the binder
    /// answering `answer`.
    fn split_binding_cycle(&mut self, answer: BindAnswer, event: &Op) -> Result<(), String> {
        let begun = self.run(SchedulerOp::BeginNextBinding);
        self.step(|| match &begun {
            SchedulerOutcome::BindingBegun(Some(b)) => format!(
                "BeginNextBinding: {} on {} (binds: {})",
                b.pod().id(),
                b.node(),
                b.binds()
            ),
            other => format!("BeginNextBinding: {other:?}"),
        });
        let SchedulerOutcome::BindingBegun(Some(binding)) = begun else {
            // Nothing to bind, or a decision for no pod in binding (taken and ignored).
            self.verify()?;
            return self.apply(event);
        };
        self.inside(event)?;
        let bound = binding.binds().then(|| {
            self.script.lock().bind = answer;
            let mut parts = checking::scheduler_parts(&self.s);
            let bound = parts.bind(binding.pod(), binding.node());
            self.script.lock().bind = BindAnswer::Ok;
            bound
        });
        self.step(|| format!("EndBinding, the binder answering {bound:?}"));
        let end = SchedulerOp::EndBinding {
            binding: Box::new(binding),
            bound,
        };
        let ended = self.run(end);
        match ended {
            SchedulerOutcome::Bound(outcome) => {
                self.step_outcomes
                    .extend(checking::binding_outcomes(outcome));
                Ok(())
            }
            other => Err(format!(
                "a split binding cycle's end did not apply: {other:?}"
            )),
        }
    }
}
