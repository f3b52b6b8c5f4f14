//! One step of the lockstep: an operation on both sides, then every comparison.

use crate::error_style::check_refusal;
use crate::gang::{GangModel, ModelPermit};
use crate::ops::gang::{self as gang_ops, GangOp, GangOutcome};
use gangsched::checking::{GangFlaw, PlantedGang};
use gangsched::gang::{GangScheduling, Permit};
use gangsched::{
    Cause, Decision, Mode, PermitPlugins, Pod, PodId, Status, Time, WaitingPod, WaitingPods,
};
use gangsched::{GroupKey, PodGroup, Policy};

use super::{ensure, ensure_eq, Failure, Lockstep, Op, Phase, Track, GROUPS, NS, PREEMPTION};

pub(super) fn pod_index(id: &PodId) -> usize {
    id.as_str()[1..].parse().expect("pod ids are p<index>")
}

/// The decisions by pod: each one's status and cause.
fn sorted(mut decisions: Vec<Decision>) -> Vec<(PodId, Status, Cause)> {
    decisions.sort_by(|a, b| a.pod.id().cmp(b.pod.id()));
    decisions
        .into_iter()
        .map(|d| (d.pod.id().clone(), d.status, d.cause))
        .collect()
}

/// Permit for `pod` with no plugin besides the gang's, on the node it names (the plugin's
/// `permit`).
fn permit_of(pod: &Pod, now: Time) -> GangOp {
    GangOp::Permit {
        pod: pod.clone(),
        node: pod.node().unwrap_or_default().to_owned(),
        others: PermitPlugins::none(),
        now,
    }
}

impl Lockstep {
    /// Applies `op` to the real plugin through the operation vocabulary: its own parts, or
    /// the same parts with the planted flaw (`checking::PlantedGang`).
    pub(super) fn real(&self, op: GangOp) -> GangOutcome<WaitingPod> {
        let parts = gangsched::checking::gang_parts(&self.gang);
        match self.flaw {
            None => gang_ops::apply(&mut { parts }, &op),
            Some(flaw) => gang_ops::apply(&mut PlantedGang { parts, flaw }, &op),
        }
    }

    /// The real plugin (with the default timeout) and the model in `mode`, with `groups` groups
    /// and one pod per entry of `pod_groups` naming group `pod_groups[i]` (modulo `groups`);
    /// nothing exists yet. Checks I3 after every step if `check_i3`.
    pub fn new(mode: Mode, groups: usize, pod_groups: &[usize], check_i3: bool) -> Self {
        let (waiting, decisions) = WaitingPods::with_channel();
        let groups: Vec<GroupKey> = GROUPS[..groups]
            .iter()
            .map(|name| GroupKey::new(NS, name))
            .collect();
        let pods: Vec<Pod> = pod_groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let name = format!("p{i}");
                Pod::new(name.as_str(), NS, &name).with_group(groups[g % groups.len()].name())
            })
            .collect();
        Lockstep {
            mode,
            gang: GangScheduling::new(mode, waiting),
            decisions,
            model: GangModel::new(mode),
            now: Time::ZERO,
            track: vec![Track::new(Phase::Absent); pods.len()],
            pods,
            groups,
            check_i3,
            defer_permit_rejections: false,
            trace: Vec::new(),
            flaw: None,
        }
    }

    /// Runs the real plugin's operations with `flaw` planted in them (through
    /// `checking::PlantedGang`, the operations of `checking::gang_ops` on the plugin's own
    /// parts): a witness that the checks find it. Unplanted, the lockstep calls the plugin's
    /// public methods.
    pub fn planting(mut self, flaw: GangFlaw) -> Self {
        self.flaw = Some(flaw);
        self
    }

    /// A pod rejected at Permit stays in its cycle ([`Phase::Rejected`]) until an
    /// [`Op::Unreserve`] or the settling unreserves it, like a pod whose wait was rejected (a
    /// driver that defers it to a binding worker), instead of being unreserved at once.
    pub fn deferring_permit_rejections(mut self) -> Self {
        self.defer_permit_rejections = true;
        self
    }

    /// The real plugin.
    pub fn gang(&self) -> &GangScheduling {
        &self.gang
    }

    /// The model.
    pub fn model(&self) -> &GangModel {
        &self.model
    }

    /// Where the test believes pod `i` is.
    pub fn phase(&self, i: usize) -> Phase {
        self.track[i].phase
    }

    /// The pod whose scheduling cycle is in flight (reserved, not yet at Permit).
    fn in_flight(&self) -> Option<usize> {
        self.track.iter().position(|t| t.phase == Phase::Reserved)
    }

    /// The `pick`-th pod (modulo their number) for which `applies` holds.
    pub(super) fn pick(
        &self,
        pick: usize,
        applies: impl Fn(usize, &Track) -> bool,
    ) -> Option<usize> {
        let eligible: Vec<usize> = (0..self.pods.len())
            .filter(|&i| applies(i, &self.track[i]))
            .collect();
        if eligible.is_empty() {
            return None;
        }
        Some(eligible[pick % eligible.len()])
    }

    /// The `pick`-th pod in `phase`.
    fn pick_in(&self, pick: usize, phase: Phase) -> Option<usize> {
        self.pick(pick, |_, t| t.phase == phase)
    }

    /// Whether a scheduling cycle could start for pod `i`: it is queued and passes PreEnqueue.
    fn schedulable(&self, i: usize) -> bool {
        self.track[i].phase == Phase::Queued
            && self
                .real(GangOp::PreEnqueue(self.pods[i].clone()))
                .pre_enqueue()
                .is_success()
    }

    fn object(&self, group: usize, policy: Policy) -> PodGroup {
        let key = &self.groups[group % self.groups.len()];
        PodGroup::new(key.namespace(), key.name(), policy).expect("min counts are at least 1")
    }

    /// Runs `op` on both sides and compares everything; a failure carries the trace.
    pub fn run(&mut self, op: Op) -> Result<(), Failure> {
        self.step(op).map_err(|reason| {
            format!(
                "{reason}\n{:?} trace (t = {}):\n  {}",
                self.mode,
                self.now,
                self.trace.join("\n  ")
            )
        })
    }

    fn step(&mut self, op: Op) -> Result<(), Failure> {
        let admitted = self.admitted();
        let mut passed: Vec<usize> = Vec::new();
        let n = self.pods.len();
        match op {
            Op::AddPod { pod, bound } => {
                let i = pod % n;
                if self.track[i].phase != Phase::Absent {
                    return Ok(());
                }
                let p = self.pods[i].clone();
                self.trace.push(format!("add {} bound={bound}", p.id()));
                let real = self
                    .real(GangOp::PodAdded {
                        pod: p.clone(),
                        bound,
                    })
                    .pod_added();
                let model = self.model.add_pod(p.clone(), bound);
                ensure_eq!(&real, &model, "add pod");
                check_refusal(real.clone(), |e| e.into_pod() == p)?;
                if real.is_ok() {
                    let phase = if bound { Phase::Bound } else { Phase::Queued };
                    self.track[i] = Track::new(phase);
                }
            }
            Op::AddGroup { group, policy } => {
                let object = self.object(group, policy);
                self.trace
                    .push(format!("add group {} {policy:?}", object.key()));
                let real = self.real(GangOp::GroupAdded(object.clone())).group_added();
                let model = self.model.add_group(object.clone());
                ensure_eq!(real, model, "add group");
                check_refusal(real, |e| e.into_group() == object)?;
            }
            Op::UpdateGroup { group, policy } => {
                let object = self.object(group, policy);
                self.trace
                    .push(format!("update group {} {policy:?}", object.key()));
                let real = self
                    .real(GangOp::GroupUpdated(object.clone()))
                    .group_updated();
                let model = self.model.update_group(object.clone());
                ensure_eq!(real, model, "update group");
                check_refusal(real, |e| e.into_group() == object)?;
            }
            Op::DeleteGroup { group } => {
                let key = self.groups[group % self.groups.len()].clone();
                self.trace.push(format!("delete group {key}"));
                let real = self.real(GangOp::GroupDeleted(key.clone())).group_deleted();
                let model = self.model.delete_group(&key);
                ensure_eq!(real, model, "delete group");
            }
            Op::Schedule { pick } => {
                if self.in_flight().is_some() {
                    return Ok(());
                }
                let Some(i) = self.pick(pick, |i, _| self.schedulable(i)) else {
                    return Ok(());
                };
                self.reserve(i)?;
                self.permit(i, &mut passed)?;
            }
            Op::Reserve { pick } => {
                if self.in_flight().is_some() {
                    return Ok(());
                }
                let Some(i) = self.pick(pick, |i, _| self.schedulable(i)) else {
                    return Ok(());
                };
                self.reserve(i)?;
            }
            Op::Permit => {
                let Some(i) = self.in_flight() else {
                    return Ok(());
                };
                self.permit(i, &mut passed)?;
            }
            Op::AbortCycle => {
                let Some(i) = self.in_flight() else {
                    return Ok(());
                };
                self.unreserve(i);
            }
            Op::Tick(d) => {
                self.now += d;
                self.trace.push(format!("tick to {}", self.now));
            }
            Op::Expire(d) => {
                self.now += d;
                self.trace.push(format!("expire at {}", self.now));
                let real = self.gang.waiting().expire(self.now);
                let model = self.model.expire_waiting(self.now);
                ensure_eq!(real, model, "WaitingPods::expire");
                let real = self.real(GangOp::Expire(self.now)).expired();
                let model = self.model.expire_attempts(self.now);
                ensure_eq!(real, model, "GangScheduling::expire");
            }
            Op::Unreserve { pick } => {
                let Some(i) = self.pick_in(pick, Phase::Rejected) else {
                    return Ok(());
                };
                self.unreserve(i);
            }
            Op::Bind { pick } => {
                let Some(i) = self.pick_in(pick, Phase::Allowed) else {
                    return Ok(());
                };
                if self.track[i].deleted || self.track[i].bound_elsewhere {
                    // Binding a deleted or already bound pod fails: the failure path
                    // unreserves it.
                    self.unreserve(i);
                } else {
                    let p = self.pods[i].clone();
                    self.trace.push(format!("bind {}", p.id()));
                    let real = self.real(GangOp::PodBound(p.clone())).pod_bound();
                    ensure_eq!(real, self.model.pod_bound(&p), "bind");
                    ensure!(real, "an allowed member binds");
                    self.track[i].phase = Phase::Bound;
                }
            }
            Op::Preempt { pick } => {
                let Some(i) = self.pick_in(pick, Phase::Waiting) else {
                    return Ok(());
                };
                let id = self.pods[i].id().clone();
                self.trace.push(format!("preempt {id}"));
                let message = "preempted by a higher priority pod";
                let real = self.gang.waiting().reject(&id, PREEMPTION, message);
                let model = self.model.reject_waiting(&id, PREEMPTION, message);
                ensure_eq!(real, model, "external reject");
            }
            Op::BindElsewhere { pick } => {
                let exists = |t: &Track| t.phase != Phase::Absent && !t.deleted;
                let unbound = |t: &Track| t.phase != Phase::Bound && !t.bound_elsewhere;
                let Some(i) = self.pick(pick, |_, t| exists(t) && unbound(t)) else {
                    return Ok(());
                };
                let p = self.pods[i].clone();
                self.trace.push(format!("bind {} elsewhere", p.id()));
                let real = self.real(GangOp::PodBound(p.clone())).pod_bound();
                ensure_eq!(real, self.model.pod_bound(&p), "bind elsewhere");
                ensure!(real, "an unbound member binds");
                if self.track[i].in_cycle() {
                    self.track[i].bound_elsewhere = true;
                } else {
                    self.track[i] = Track::new(Phase::Bound);
                }
            }
            Op::Delete { pod } => {
                let i = pod % n;
                if self.track[i].phase == Phase::Absent || self.track[i].deleted {
                    return Ok(());
                }
                let p = self.pods[i].clone();
                self.trace.push(format!("delete {}", p.id()));
                let real = self.real(GangOp::PodDeleted(p.clone())).pod_deleted();
                let model = self.model.delete_pod(&p);
                ensure_eq!(real, model, "delete");
                if self.mode == Mode::Upstream {
                    let real = self.gang.waiting().remove(p.id()).is_some();
                    let model = self.model.remove_waiting(p.id());
                    ensure_eq!(real, model, "WaitingPods::remove");
                }
                if self.track[i].in_cycle() {
                    self.track[i].deleted = true;
                } else {
                    self.track[i] = Track::new(Phase::Absent);
                }
            }
        }
        // The decisions this step made, as delivered on the channel.
        let real = sorted(self.decisions.drain());
        let model = sorted(self.model.take_decisions());
        ensure_eq!(&real, &model, "decisions delivered");
        for (id, status, cause) in real {
            let i = pod_index(&id);
            ensure_eq!(self.track[i].phase, Phase::Waiting, "{} decided", id);
            self.trace
                .push(format!("  {id} decided: {status} ({cause})"));
            if status.is_success() {
                passed.push(i);
                self.track[i].phase = Phase::Allowed;
            } else {
                self.track[i].phase = Phase::Rejected;
            }
        }
        self.agree()?;
        if self.check_i3 {
            self.gang_atomicity(&admitted, &passed)?;
        }
        Ok(())
    }

    /// Reserve of pod `i`, which passes PreEnqueue (on both sides: compared after every step).
    fn reserve(&mut self, i: usize) -> Result<(), Failure> {
        let p = self.pods[i].clone();
        self.trace.push(format!("reserve {}", p.id()));
        let real = self.real(GangOp::Reserve(p.clone())).reserved();
        let model = self.model.reserve(&p);
        ensure_eq!(&real, &model, "reserve");
        ensure!(real.is_ok(), "a queued pod that passes PreEnqueue reserves");
        self.track[i].phase = Phase::Reserved;
        Ok(())
    }

    /// Permit of pod `i`, reserved; records it in `passed` if it is allowed.
    fn permit(&mut self, i: usize, passed: &mut Vec<usize>) -> Result<(), Failure> {
        let p = self.pods[i].clone();
        let real = match self.real(permit_of(&p, self.now)).permit() {
            Permit::Allow => ModelPermit::Allow,
            Permit::Wait {
                waiting, activate, ..
            } => {
                ensure_eq!(waiting.id(), p.id());
                ensure_eq!(waiting.decision(), None, "decided while returning Wait");
                // Listed right after the Permit, as the scheduler lists them.
                ModelPermit::Wait {
                    activate: self.gang.activated(&activate),
                }
            }
            Permit::Reject { status, cause, .. } => ModelPermit::Reject(status, cause),
        };
        let model = self.model.permit(&p, self.now);
        self.trace.push(format!("permit {} -> {real:?}", p.id()));
        ensure_eq!(&real, &model, "permit {}", p.id());
        self.track[i].phase = match real {
            ModelPermit::Allow => {
                passed.push(i);
                Phase::Allowed
            }
            ModelPermit::Wait { .. } => Phase::Waiting,
            ModelPermit::Reject(..) => Phase::Rejected,
        };
        if self.track[i].phase == Phase::Rejected {
            // Hardened Permit releases a pod it rejects at once (P7); upstream keeps it
            // assumed until its unreserve.
            self.track[i].released = self.mode == Mode::Hardened;
            if !self.defer_permit_rejections {
                // kube-scheduler's scheduling cycle unreserves a pod rejected at Permit
                // itself, before the next cycle starts.
                self.unreserve(i);
            }
        }
        Ok(())
    }

    /// The failure path for pod `i` (of its binding cycle, or of its scheduling cycle).
    fn unreserve(&mut self, i: usize) {
        let p = self.pods[i].clone();
        self.trace.push(format!("unreserve {}", p.id()));
        self.real(GangOp::Unreserve(p.clone()));
        self.model.unreserve(&p);
        self.track[i] = self.track[i].after_cycle();
    }
}
