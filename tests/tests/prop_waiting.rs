#![cfg(not(loom))]
//! Property tests: [`gangsched::WaitingState`] run in lockstep with the reference model
//! [`gangway_model::waiting::WaitingModel`] over random operation sequences.
//!
//! The universe is small on purpose (pods `p0`..`p5`, plugins `A`, `B`, `C`, waits in steps of
//! 2m30s up to 20m, time advancing in coarse steps plus 1ns nudges) so that re-adds, deadline
//! ties, the 15-minute cap and "exactly at the deadline" happen often. The case count comes
//! from `PROPTEST_CASES` (default 256).

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use gangsched::waiting::{AllowOutcome, Decided, Ticket};
use gangsched::{Cause, PluginName, Pod, PodId, Status, Time, WaitingState};
use gangway_model::waiting::{ModelAllow, ModelDecision, Registration, WaitingModel};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

const PODS: usize = 6;
const PLUGINS: [&str; 3] = ["A", "B", "C"];
/// Waits are multiples of this, from 0 to 8 steps (20m): 6 steps is the 15m cap.
const WAIT_STEP: Duration = Duration::from_secs(150);

/// Which registration an allow or reject names.
#[derive(Clone, Copy, Debug)]
enum TicketChoice {
    /// `None`: whichever registration is waiting.
    Any,
    /// The pod's most recent registration (the current one if it is waiting).
    Latest,
    /// One of the pod's registrations so far (index modulo their number): often stale.
    Past(usize),
}

#[derive(Clone, Debug)]
enum Op {
    Add {
        pod: usize,
        waits: Vec<(&'static str, Duration)>,
    },
    Allow {
        pod: usize,
        ticket: TicketChoice,
        plugin: &'static str,
    },
    Reject {
        pod: usize,
        ticket: TicketChoice,
        plugin: &'static str,
        msg: usize,
    },
    /// Moves the clock without expiring anything.
    Advance(Duration),
    /// Moves the clock, then expires at the new time.
    Expire(Duration),
    Query(usize),
}

fn pod_id(pod: usize) -> PodId {
    PodId::from(format!("p{pod}"))
}

fn plugin() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&PLUGINS[..])
}

fn wait() -> impl Strategy<Value = Duration> {
    (0u32..=8).prop_map(|k| WAIT_STEP * k)
}

fn step() -> impl Strategy<Value = Duration> {
    prop::sample::select(vec![
        Duration::ZERO,
        Duration::from_nanos(1),
        WAIT_STEP - Duration::from_nanos(1),
        WAIT_STEP,
        2 * WAIT_STEP,
        Duration::from_secs(15 * 60),
    ])
}

fn waits() -> impl Strategy<Value = Vec<(&'static str, Duration)>> {
    prop_oneof![
        // Mostly a valid registration: distinct plugins in any order.
        8 => (
            prop::sample::subsequence(PLUGINS.to_vec(), 1..=3).prop_shuffle(),
            prop::collection::vec(wait(), 3),
        )
            .prop_map(|(plugins, waits)| plugins.into_iter().zip(waits).collect()),
        // Sometimes anything, including no plugin and a plugin named twice.
        1 => prop::collection::vec((plugin(), wait()), 0..=4),
    ]
}

fn ticket() -> impl Strategy<Value = TicketChoice> {
    prop_oneof![
        4 => Just(TicketChoice::Any),
        2 => Just(TicketChoice::Latest),
        1 => (0usize..4).prop_map(TicketChoice::Past),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..PODS, waits()).prop_map(|(pod, waits)| Op::Add { pod, waits }),
        4 => (0..PODS, ticket(), plugin())
            .prop_map(|(pod, ticket, plugin)| Op::Allow { pod, ticket, plugin }),
        1 => (0..PODS, ticket(), plugin(), 0usize..3)
            .prop_map(|(pod, ticket, plugin, msg)| Op::Reject { pod, ticket, plugin, msg }),
        2 => step().prop_map(Op::Advance),
        2 => step().prop_map(Op::Expire),
        1 => (0..PODS).prop_map(Op::Query),
    ]
}

/// The real state and the model, side by side, with what the test remembers about them.
struct Lockstep {
    state: WaitingState<()>,
    model: WaitingModel,
    now: Time,
    /// Every ticket the state ever issued, and the model registration issued with it.
    tickets: HashMap<Ticket, Registration>,
    /// Per pod, its registrations so far, oldest first.
    history: Vec<Vec<(Registration, Ticket)>>,
    /// Pods decided and not successfully re-added since: they must not be waiting.
    decided: BTreeSet<usize>,
    /// Successful and failed adds so far, to give each added pod a distinct name.
    adds: usize,
}

impl Lockstep {
    fn new() -> Self {
        Lockstep {
            state: WaitingState::new(),
            model: WaitingModel::new(),
            now: Time::ZERO,
            tickets: HashMap::new(),
            history: vec![Vec::new(); PODS],
            decided: BTreeSet::new(),
            adds: 0,
        }
    }

    fn choose(&self, pod: usize, choice: TicketChoice) -> (Option<Registration>, Option<Ticket>) {
        let history = &self.history[pod];
        let picked = match choice {
            TicketChoice::Any => None,
            TicketChoice::Latest => history.last(),
            TicketChoice::Past(i) if !history.is_empty() => Some(&history[i % history.len()]),
            TicketChoice::Past(_) => None,
        };
        match picked {
            Some(&(r, t)) => (Some(r), Some(t)),
            None => (None, None),
        }
    }

    fn decision(&self, d: Decided<()>) -> Result<ModelDecision, TestCaseError> {
        let registration = *self
            .tickets
            .get(&d.ticket)
            .ok_or_else(|| TestCaseError::fail(format!("unknown ticket {:?}", d.ticket)))?;
        Ok(ModelDecision {
            pod: d.pod,
            registration,
            status: d.status,
            cause: d.cause,
        })
    }

    fn mark_decided(&mut self, d: &ModelDecision) {
        let pod: usize = d.pod.id().as_str()[1..].parse().unwrap();
        self.decided.insert(pod);
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match *op {
            Op::Add { pod, ref waits } => {
                let id = pod_id(pod);
                let p = Pod::new(id.clone(), "default", &format!("{id}-{}", self.adds));
                self.adds += 1;
                let waits: Vec<(PluginName, Duration)> = waits
                    .iter()
                    .map(|&(n, w)| (PluginName::from(n), w))
                    .collect();
                let real = self.state.add(p.clone(), waits.clone(), self.now, ());
                let model = self.model.add(p, waits, self.now);
                match (real, model) {
                    (Ok(ticket), Ok(registration)) => {
                        // A fresh ticket: never issued before, to this pod or any other.
                        prop_assert!(
                            !self.tickets.contains_key(&ticket),
                            "ticket {ticket:?} reissued"
                        );
                        self.tickets.insert(ticket, registration);
                        self.history[pod].push((registration, ticket));
                        self.decided.remove(&pod);
                    }
                    (Err(real), Err(model)) => prop_assert_eq!(real, model),
                    (real, model) => {
                        return Err(TestCaseError::fail(format!(
                            "add: state {real:?}, model {model:?}"
                        )))
                    }
                }
            }
            Op::Allow {
                pod,
                ticket,
                plugin,
            } => {
                let (registration, ticket) = self.choose(pod, ticket);
                let id = pod_id(pod);
                let real = match self.state.allow(&id, ticket, plugin) {
                    AllowOutcome::NotWaiting => ModelAllow::NotWaiting,
                    AllowOutcome::StillPending => ModelAllow::StillPending,
                    AllowOutcome::Allowed(d) => ModelAllow::Allowed(self.decision(d)?),
                };
                let model = self.model.allow(&id, registration, plugin);
                prop_assert_eq!(&real, &model);
                if let ModelAllow::Allowed(d) = &model {
                    prop_assert!(d.status.is_success());
                    self.mark_decided(d);
                }
            }
            Op::Reject {
                pod,
                ticket,
                plugin,
                msg,
            } => {
                let (registration, ticket) = self.choose(pod, ticket);
                let id = pod_id(pod);
                let status = Status::unschedulable(format!("no room {msg}")).with_plugin(plugin);
                let real = match self
                    .state
                    .reject(&id, ticket, status.clone(), Cause::Preempted)
                {
                    Some(d) => Some(self.decision(d)?),
                    None => None,
                };
                let model = self
                    .model
                    .reject(&id, registration, status, Cause::Preempted);
                prop_assert_eq!(&real, &model);
                if let Some(d) = &model {
                    self.mark_decided(d);
                }
            }
            Op::Advance(d) => self.now += d,
            Op::Expire(d) => {
                self.now += d;
                let now = self.now;
                // Each waiting pod's earliest pending deadline, read from the state before.
                let before: HashMap<PodId, Time> = self
                    .state
                    .iter()
                    .map(|e| {
                        let earliest = e.pending().iter().map(|p| p.deadline).min().unwrap();
                        (e.pod().id().clone(), earliest)
                    })
                    .collect();
                let due = before.values().filter(|&&d| d <= now).count();
                let real = self
                    .state
                    .expire(now)
                    .into_iter()
                    .map(|d| self.decision(d))
                    .collect::<Result<Vec<_>, _>>()?;
                let model = self.model.expire(now);
                prop_assert_eq!(&real, &model);
                prop_assert_eq!(real.len(), due, "every due pod expires, no other");
                let mut last: Option<(Time, &PodId)> = None;
                for d in &real {
                    let id = d.pod.id();
                    let deadline = before[id];
                    prop_assert!(deadline <= now, "{id} expired before its deadline");
                    prop_assert!(d.status.is_rejected());
                    if let Some(prev) = last {
                        prop_assert!(prev < (deadline, id), "expire order: {prev:?} then {id}");
                    }
                    last = Some((deadline, id));
                }
                if let Some(next) = self.state.next_deadline() {
                    prop_assert!(next > now, "after expire({now}) next deadline is {next}");
                }
                for d in &model {
                    self.mark_decided(d);
                }
            }
            Op::Query(pod) => {
                let id = pod_id(pod);
                let real = self
                    .state
                    .get(&id)
                    .map(|e| (e.pod().clone(), e.pending().to_vec()));
                let model = self
                    .model
                    .get(&id)
                    .map(|e| (e.pod.clone(), e.pending.clone()));
                prop_assert_eq!(real, model);
                prop_assert_eq!(self.state.is_empty(), self.model.is_empty());
                prop_assert_eq!(&self.state.map_latches(|_| ()), &self.state);
            }
        }
        self.agree()
    }

    /// What must hold after every step.
    fn agree(&self) -> Result<(), TestCaseError> {
        if let Err(broken) = self.state.check() {
            return Err(TestCaseError::fail(format!("check: {broken}")));
        }
        prop_assert_eq!(self.state.len(), self.model.len());
        prop_assert_eq!(self.state.next_deadline(), self.model.next_deadline());
        let real_ids: Vec<&PodId> = self.state.iter().map(|e| e.pod().id()).collect();
        let mut model_ids: Vec<&PodId> = self.model.entries().iter().map(|e| e.pod.id()).collect();
        model_ids.sort();
        prop_assert_eq!(
            real_ids,
            model_ids,
            "waiting pods (state iterates in id order)"
        );
        for pod in 0..PODS {
            let id = pod_id(pod);
            let (real, model) = (self.state.get(&id), self.model.get(&id));
            if self.decided.contains(&pod) {
                prop_assert!(real.is_none(), "decided pod {id} is waiting again");
            }
            let (Some(real), Some(model)) = (real, model) else {
                prop_assert_eq!(real.is_some(), model.is_some(), "{} waiting", id);
                continue;
            };
            prop_assert_eq!(real.pod(), &model.pod);
            prop_assert_eq!(self.tickets.get(&real.ticket()), Some(&model.registration));
            let names = |p: &[gangsched::waiting::PendingPlugin]| -> BTreeSet<String> {
                p.iter().map(|p| p.plugin.to_string()).collect()
            };
            prop_assert_eq!(
                names(real.pending()),
                names(&model.pending),
                "{} pending plugins",
                id
            );
            // Stronger: same waits and deadlines, and both in registration order.
            prop_assert_eq!(real.pending(), &model.pending[..], "{} pending", id);
        }
        Ok(())
    }
}

proptest! {
    // Only where failures are saved: `SourceParallel` cannot place files for an integration
    // test (no lib.rs beside it); the cwd of an integration test is the package root, tests/.
    // The case count stays with `PROPTEST_CASES`.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/prop_waiting.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn state_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        let mut lockstep = Lockstep::new();
        for op in &ops {
            lockstep.step(op)?;
        }
        // Draining: everything still waiting expires by the cap, in order.
        lockstep.step(&Op::Expire(Duration::from_secs(15 * 60)))?;
        prop_assert!(lockstep.state.is_empty() && lockstep.model.is_empty());
        prop_assert_eq!(lockstep.state.next_deadline(), None);
    }
}
