//! The driver: the real map and the model stepped by one op at a time, every check made after
//! each.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::time::Duration;

use gangsched::waiting::{PendingPlugin, Ticket};
use gangsched::{AddError, Cause, PluginName, Pod, PodId, Status, Time};

use super::ops::{cause, message, plugin, pod_id, step, wait, How, Op, TicketChoice, PODS};
use super::rules::on_model;
use crate::ops::waiting::{Call, Delivered, Expect, Rejection, Subject};
use crate::waiting::{ModelDecision, Registration, WaitingModel};

/// Runs `ops` on `subject` beside a fresh model, from time zero; the lockstep after the last
/// op, or the first failed check, described with its op.
pub fn run<'a, S: Subject>(
    subject: S,
    ops: impl IntoIterator<Item = &'a Op>,
) -> Result<Lockstep<S>, String> {
    let mut lockstep = Lockstep::new(subject);
    for (i, op) in ops.into_iter().enumerate() {
        lockstep
            .step(op)
            .map_err(|e| format!("op {i} {op:?} at {}: {e}", lockstep.now))?;
    }
    Ok(lockstep)
}

/// The real waiting map and the model side by side, with what the driver remembers of them.
#[derive(Debug)]
pub struct Lockstep<S> {
    /// The real map.
    pub subject: S,
    /// The model.
    pub model: WaitingModel,
    /// The clock.
    pub now: Time,
    /// Every ticket the real map issued, and the model registration issued with it.
    tickets: HashMap<Ticket, Registration>,
    /// Per pod, its registrations so far, oldest first.
    history: Vec<Vec<(Registration, Ticket)>>,
    /// Pods decided and not successfully re-added since: they must not be waiting.
    decided: BTreeSet<u8>,
    /// Successful and failed adds so far, to give each added pod a distinct name.
    adds: usize,
    /// Every decision the model made, by registration (each is decided once).
    outcomes: HashMap<Registration, ModelDecision>,
}

impl<S: Subject> Lockstep<S> {
    /// `subject` (empty) beside an empty model, at time zero.
    pub fn new(subject: S) -> Lockstep<S> {
        Lockstep {
            subject,
            model: WaitingModel::new(),
            now: Time::ZERO,
            tickets: HashMap::new(),
            history: vec![Vec::new(); usize::from(PODS)],
            decided: BTreeSet::new(),
            adds: 0,
            outcomes: HashMap::new(),
        }
    }

    /// How many registrations the real map issued (successful adds).
    pub fn registrations(&self) -> usize {
        self.tickets.len()
    }

    /// How many of them have been decided.
    pub fn decisions(&self) -> usize {
        self.outcomes.len()
    }

    /// The registration (model, real) `choice` names for pod `pod`, if any.
    fn choose(&self, pod: u8, choice: TicketChoice) -> (Option<Registration>, Option<Ticket>) {
        let history = &self.history[usize::from(pod % PODS)];
        let picked = match choice {
            TicketChoice::Any => None,
            TicketChoice::Latest => history.last(),
            TicketChoice::Past(i) if !history.is_empty() => {
                Some(&history[usize::from(i) % history.len()])
            }
            TicketChoice::Past(_) => None,
        };
        match picked {
            Some(&(r, t)) => (Some(r), Some(t)),
            None => (None, None),
        }
    }

    /// Runs `op` on both, then every check.
    pub fn step(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::Add { pod, ref waits } => self.add(pod, waits)?,
            Op::AddUntimed { pod, plugin: p } => self.add_untimed(pod, p)?,
            Op::Allow {
                pod,
                ticket,
                plugin: p,
            } => {
                let (registration, ticket) = self.choose(pod, ticket);
                let call = Call::Allow {
                    id: pod_id(pod),
                    ticket,
                    plugin: plugin(p),
                };
                for d in self.call(&call, registration)? {
                    if !d.status.is_success() {
                        return Err(format!("allowed {} with {}", d.pod.id(), d.status));
                    }
                }
            }
            Op::Reject {
                pod,
                ticket,
                plugin: p,
                msg,
                how,
            } => {
                let (registration, ticket) = match how {
                    How::Remove => (None, None),
                    _ => self.choose(pod, ticket),
                };
                let (plugin, message) = (plugin(p), message(msg));
                let rejection = match how {
                    How::Reject => Rejection::Reject { plugin, message },
                    How::Preempt => Rejection::Preempt { plugin, message },
                    How::For(c) => Rejection::For {
                        status: Status::unschedulable(message).with_plugin(plugin),
                        cause: cause(c),
                    },
                    How::Remove => Rejection::Remove,
                };
                let call = Call::Reject {
                    id: pod_id(pod),
                    ticket,
                    rejection,
                };
                self.call(&call, registration)?;
            }
            Op::AllowAll {
                ref pods,
                plugin: p,
                deferred,
            } => {
                let call = Call::AllowAll {
                    ids: pods.iter().map(|&pod| pod_id(pod)).collect(),
                    plugin: plugin(p),
                    deferred,
                };
                self.call(&call, None)?;
            }
            Op::RejectAll {
                ref pods,
                plugin: p,
                msg,
                cause: c,
                deferred,
            } => {
                let ids: Vec<PodId> = pods.iter().map(|&pod| pod_id(pod)).collect();
                let batches = match deferred {
                    false => vec![ids],
                    true => {
                        let (first, rest) = ids.split_at(ids.len() / 2);
                        vec![first.to_vec(), rest.to_vec()]
                    }
                };
                let call = Call::RejectAll {
                    batches,
                    plugin: plugin(p),
                    message: message(msg),
                    cause: cause(c),
                    deferred,
                };
                self.call(&call, None)?;
            }
            Op::Advance { step: s } => self.now += step(s),
            Op::Expire { step: s } => self.expire(step(s))?,
            Op::Query { pod } => self.query(pod)?,
        }
        self.agree()
    }

    /// Adds the pod on both: equal results, and a fresh ticket.
    fn add(&mut self, pod: u8, waits: &[(u8, u8)]) -> Result<(), String> {
        let waits: Vec<(PluginName, Duration)> =
            waits.iter().map(|&(n, w)| (plugin(n), wait(w))).collect();
        let now = self.now;
        self.register(
            pod,
            |subject, p| subject.add(p, waits.clone(), now),
            |model, p| model.add(p, waits.clone(), now),
        )
    }

    /// Adds the pod on both with no deadline, waiting for one plugin: equal results, and a
    /// fresh ticket.
    fn add_untimed(&mut self, pod: u8, p: u8) -> Result<(), String> {
        let name = plugin(p);
        self.register(
            pod,
            |subject, p| subject.add_untimed(p, name.clone()),
            |model, p| model.add_untimed(p, name.clone()),
        )
    }

    /// Registers a new object of pod `pod` with `real` and `model`: equal results, a fresh
    /// ticket, the error contract on a refusal.
    fn register(
        &mut self,
        pod: u8,
        real: impl FnOnce(&mut S, Pod) -> Result<Ticket, AddError>,
        model: impl FnOnce(&mut WaitingModel, Pod) -> Result<Registration, AddError>,
    ) -> Result<(), String> {
        let id = pod_id(pod);
        let p = Pod::new(id.clone(), "default", &format!("{id}-{}", self.adds));
        self.adds += 1;
        let real = real(&mut self.subject, p.clone());
        let model = model(&mut self.model, p.clone());
        match (real, model) {
            (Ok(ticket), Ok(registration)) => {
                // A fresh ticket: never issued before, to this pod or any other.
                if self.tickets.contains_key(&ticket) {
                    return Err(format!("ticket {ticket:?} reissued"));
                }
                self.tickets.insert(ticket, registration);
                self.history[usize::from(pod % PODS)].push((registration, ticket));
                self.decided.remove(&(pod % PODS));
            }
            (Err(real), Err(model)) if real == model => {
                // The error contract: a styled message, and the pod handed back as given.
                crate::error_style::check_refusal(Err::<(), _>(real), |e| e.into_pod() == p)?;
            }
            (real, model) => return Err(format!("add: real {real:?}, model {model:?}")),
        }
        Ok(())
    }

    /// Runs `call` on the model, then on the real map: equal answers (H4) and equal decisions,
    /// each naming the registration the model decided (I1). The model's decisions.
    fn call(
        &mut self,
        call: &Call,
        registration: Option<Registration>,
    ) -> Result<Vec<ModelDecision>, String> {
        let (answer, expected) = on_model(&mut self.model, call, registration);
        let report = self.subject.decide(call, &expected)?;
        if !report.answer.agrees_with(&answer) {
            return Err(format!(
                "H4: answered {:?}, the model {answer:?}",
                report.answer
            ));
        }
        self.match_decisions(&report.delivered, &expected)?;
        for d in &expected {
            if self.outcomes.insert(d.registration, d.clone()).is_some() {
                return Err(format!("the model decided {:?} twice", d.registration));
            }
            let pod: u8 = d.pod.id().as_str()[1..].parse().unwrap_or(PODS);
            self.decided.insert(pod);
        }
        Ok(expected)
    }

    /// The real map's decisions are the model's, in order: same pods, statuses, causes, and —
    /// where the real map names the registration — the same registration (I1: each decided
    /// once, none lost).
    fn match_decisions(
        &self,
        delivered: &[Delivered],
        expected: &[ModelDecision],
    ) -> Result<(), String> {
        let same = delivered.len() == expected.len()
            && delivered.iter().zip(expected).all(|(real, model)| {
                let d = &real.decision;
                d.pod == model.pod && d.status == model.status && d.cause == model.cause
            });
        if !same {
            return Err(format!(
                "I1: decided {}, the model {}",
                listed(delivered.iter().map(|d| {
                    let d = &d.decision;
                    (&d.pod, &d.status, d.cause)
                })),
                listed(expected.iter().map(|d| (&d.pod, &d.status, d.cause)))
            ));
        }
        for (real, model) in delivered.iter().zip(expected) {
            let Some(ticket) = real.ticket else { continue };
            let registration = self
                .tickets
                .get(&ticket)
                .ok_or_else(|| format!("unknown ticket {ticket:?}"))?;
            if *registration != model.registration {
                return Err(format!(
                    "I1: decided {:?} of {}, the model {:?}",
                    registration,
                    model.pod.id(),
                    model.registration
                ));
            }
        }
        Ok(())
    }

    /// Moves the clock by `by` and expires on both: equal decisions, exactly the pods due (by
    /// the deadlines the real map held before), each rejected, in (deadline, pod) order; none
    /// due after.
    fn expire(&mut self, by: Duration) -> Result<(), String> {
        self.now += by;
        let now = self.now;
        // Each waiting pod's earliest pending deadline, read from the real map before.
        let before: HashMap<PodId, Time> = self
            .subject
            .state()
            .iter()
            .filter_map(|e| {
                let earliest = e.pending().iter().map(|p| p.deadline).min()?;
                Some((e.pod().id().clone(), earliest))
            })
            .collect();
        let due = before.values().filter(|&&d| d <= now).count();
        let decided = self.call(&Call::Expire { now }, None)?;
        if decided.len() != due {
            return Err(format!(
                "H4: {} expired, {due} due: every due pod expires, no other",
                decided.len()
            ));
        }
        let mut last: Option<(Time, &PodId)> = None;
        for d in &decided {
            let id = d.pod.id();
            let deadline = before
                .get(id)
                .copied()
                .ok_or_else(|| format!("{id} expired, but it was not waiting"))?;
            if deadline > now {
                return Err(format!("{id} expired before its deadline"));
            }
            if !d.status.is_rejected() {
                return Err(format!("{id} expired with {}", d.status));
            }
            if let Some(prev) = last {
                if prev >= (deadline, id) {
                    return Err(format!("expire order: {prev:?} then {id}"));
                }
            }
            last = Some((deadline, id));
        }
        if let Some(next) = self.subject.state().next_deadline() {
            if next <= now {
                return Err(format!("after expire({now}) next deadline is {next}"));
            }
        }
        Ok(())
    }

    /// Looks the pod up in both.
    fn query(&self, pod: u8) -> Result<(), String> {
        let id = pod_id(pod);
        let state = self.subject.state();
        let real = state
            .get(&id)
            .map(|e| (e.pod().clone(), e.pending().to_vec()));
        let model = self
            .model
            .get(&id)
            .map(|e| (e.pod.clone(), e.pending.clone()));
        equal("query", real, model)?;
        equal("is_empty", state.is_empty(), self.model.is_empty())?;
        equal("map_latches", &state.map_latches(|_| ()), &*state)
    }

    /// What must hold after every step: the real map's `check()` and its own checks; the
    /// same waiting pods as the model, each with the same pod, registration and pending
    /// plugins (waits, deadlines, order); decided pods not waiting; every registration the
    /// real map issued either waiting or decided (nothing lost).
    fn agree(&self) -> Result<(), String> {
        let state = self.subject.state();
        state.check().map_err(|broken| format!("check: {broken}"))?;
        let expect = |ticket: Ticket| {
            let registration = self.tickets.get(&ticket)?;
            match self
                .model
                .entries()
                .iter()
                .find(|e| e.registration == *registration)
            {
                Some(entry) => Some(Expect::Waiting(entry)),
                None => self.outcomes.get(registration).map(Expect::Decided),
            }
        };
        self.subject.check(&state, &expect)?;
        equal("len", state.len(), self.model.len())?;
        equal(
            "next_deadline",
            state.next_deadline(),
            self.model.next_deadline(),
        )?;
        let real_ids: Vec<&PodId> = state.iter().map(|e| e.pod().id()).collect();
        let mut model_ids: Vec<&PodId> = self.model.entries().iter().map(|e| e.pod.id()).collect();
        model_ids.sort();
        equal(
            "waiting pods (the real map iterates in id order)",
            real_ids,
            model_ids,
        )?;
        for pod in 0..PODS {
            let id = pod_id(pod);
            let (real, model) = (state.get(&id), self.model.get(&id));
            if self.decided.contains(&pod) && real.is_some() {
                return Err(format!("decided pod {id} is waiting again"));
            }
            let (Some(real), Some(model)) = (real, model) else {
                equal(&format!("{id} waiting"), real.is_some(), model.is_some())?;
                continue;
            };
            equal(&format!("{id}'s pod"), real.pod(), &model.pod)?;
            equal(
                &format!("{id}'s registration"),
                self.tickets.get(&real.ticket()),
                Some(&model.registration),
            )?;
            let names = |p: &[PendingPlugin]| -> BTreeSet<String> {
                p.iter().map(|p| p.plugin.to_string()).collect()
            };
            equal(
                &format!("{id} pending plugins"),
                names(real.pending()),
                names(&model.pending),
            )?;
            // Stronger: same waits and deadlines, and both in registration order.
            equal(&format!("{id} pending"), real.pending(), &model.pending[..])?;
        }
        let settled = self.model.len() + self.outcomes.len();
        if self.tickets.len() != settled {
            return Err(format!(
                "I1: {} registrations, {} waiting and {} decided: one lost",
                self.tickets.len(),
                self.model.len(),
                self.outcomes.len()
            ));
        }
        Ok(())
    }

    /// The end of a run: the clock moves by the cap and everything still waiting expires, in
    /// order; then nothing waits in either, no deadline is left, and every registration has
    /// been decided exactly once.
    pub fn drain(&mut self) -> Result<(), String> {
        let cap = super::STEPS.len() as u8 - 1;
        self.step(&Op::Expire { step: cap })
            .map_err(|e| format!("the drain at {}: {e}", self.now))?;
        // Past the cap no deadline is left: what still waits was added untimed, its plugin
        // owning the timeout. The driver, as that plugin, rejects it.
        let (real, model) = (
            self.subject.state().next_deadline(),
            self.model.next_deadline(),
        );
        if real.is_some() || model.is_some() {
            return Err(format!(
                "the drain at {}: a deadline is left past the cap: real {real:?}, model {model:?}",
                self.now
            ));
        }
        let untimed = Op::RejectAll {
            pods: (0..PODS).collect(),
            plugin: 0,
            msg: 0,
            cause: 0,
            deferred: false,
        };
        self.step(&untimed)
            .map_err(|e| format!("the drain's rejection of the untimed at {}: {e}", self.now))?;
        let state = self.subject.state();
        if !state.is_empty() || !self.model.is_empty() || state.next_deadline().is_some() {
            return Err(format!(
                "the drain at {}: {} waiting (model {}), next deadline {:?}",
                self.now,
                state.len(),
                self.model.len(),
                state.next_deadline()
            ));
        }
        equal("decisions", self.outcomes.len(), self.tickets.len())
    }
}

/// `Ok` if `real == model`, else what differs under `what`.
fn equal<T: PartialEq + Debug>(what: &str, real: T, model: T) -> Result<(), String> {
    match real == model {
        true => Ok(()),
        false => Err(format!("{what}: real {real:?}, model {model:?}")),
    }
}

/// Decisions, short: `pod name: status (cause)` each.
fn listed<'a>(decisions: impl Iterator<Item = (&'a Pod, &'a Status, Cause)>) -> String {
    let each: Vec<String> = decisions
        .map(|(pod, status, cause)| format!("{}: {status} ({cause})", pod.name()))
        .collect();
    format!("[{}]", each.join(", "))
}
