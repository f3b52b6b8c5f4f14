//! A gang trace through gangway's own gang plugin and waiting map in [`Mode::Upstream`],
//! observed as `upstream/cmd/gangtrace` observes kube-scheduler's. The runner plays the parts
//! kube-scheduler's event handlers and binding cycle play in the harness — which pod object
//! the informer holds, which call each event makes, a binding cycle that unreserves its pod
//! when its wait ends in a rejection — and leaves every gang decision to the core.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gangsched::checking;
use gangsched::gang::GANG_SCHEDULING;
use gangsched::waiting::Receiver;
use gangsched::{
    Decision, GangScheduling, GroupKey, Mode, Permit, Pod, PodGroup, PodId, Policy, Time,
    WaitingPod, WaitingPods,
};
use gangway_model::ops::gang::{self as gang_ops, GangOutcome};

use super::gang_trace::{Counts, GangObservation, GangOp};
use super::permit_script::scripted_plugins;

const NAMESPACE: &str = "ns";

/// Runs `ops` through a fresh gang plugin in [`Mode::Upstream`]; one observation per step.
pub fn run(ops: &[GangOp]) -> Vec<GangObservation> {
    run_in(Mode::Upstream, ops)
}

/// Runs `ops` through a fresh gang plugin in `mode`.
pub fn run_in(mode: Mode, ops: &[GangOp]) -> Vec<GangObservation> {
    let mut runner = GangRunner::new(mode);
    ops.iter().map(|op| runner.step(op)).collect()
}

/// gangway's gang plugin and waiting map driven one operation at a time.
pub struct GangRunner {
    gang: GangScheduling,
    waiting: WaitingPods,
    decisions: Receiver<Decision>,
    now: Time,
    /// The informer's pods, the assumed ones (as their scheduling cycles left them), the pods
    /// whose wait on Permit passed, and the group names the trace used.
    pods: BTreeMap<String, Pod>,
    assumed: BTreeMap<String, Pod>,
    passed: BTreeSet<String>,
    group_names: BTreeSet<String>,
    /// The pods whose binding cycle is held after a failed wait, and those held now, rejected
    /// and still reserved until their `release`.
    hold: BTreeSet<String>,
    held: BTreeMap<String, Pod>,
    steps: usize,
}

impl GangRunner {
    /// A fresh plugin in `mode` with upstream's 5-minute wait.
    pub fn new(mode: Mode) -> GangRunner {
        let (waiting, decisions) = WaitingPods::with_channel();
        GangRunner {
            gang: GangScheduling::new(mode, waiting.clone()),
            waiting,
            decisions,
            now: Time::ZERO,
            pods: BTreeMap::new(),
            assumed: BTreeMap::new(),
            passed: BTreeSet::new(),
            group_names: BTreeSet::new(),
            hold: BTreeSet::new(),
            held: BTreeMap::new(),
            steps: 0,
        }
    }

    /// Applies `op`; what it saw.
    pub fn step(&mut self, op: &GangOp) -> GangObservation {
        self.steps += 1;
        let mut obs = GangObservation {
            step: self.steps,
            op: op.name().to_owned(),
            ..GangObservation::default()
        };
        if let Err(e) = self.apply(op, &mut obs) {
            obs.error = Some(e);
        }
        self.settle(&mut obs);
        obs
    }

    /// Whether `pod` is known and neither assumed nor bound (a scheduling cycle may take it).
    pub fn can_schedule(&self, pod: &str) -> bool {
        let bound = |p: &Pod| p.node().is_some();
        self.pods.get(pod).is_some_and(|p| !bound(p)) && !self.assumed.contains_key(pod)
    }

    /// Whether `pod` passed Permit and is not bound yet (it may bind, or fail binding).
    pub fn passed(&self, pod: &str) -> bool {
        self.passed_permit(pod).is_ok()
    }

    /// Applies `op` to the real gang plugin through the operation vocabulary.
    fn gang_op(&self, op: gang_ops::GangOp) -> GangOutcome<WaitingPod> {
        gang_ops::apply(&mut checking::gang_parts(&self.gang), &op)
    }

    fn pod(&self, name: &str) -> Result<Pod, String> {
        self.pods
            .get(name)
            .cloned()
            .ok_or_else(|| format!("pod {name} is unknown"))
    }

    fn passed_permit(&self, name: &str) -> Result<Pod, String> {
        match self.assumed.get(name) {
            Some(pod) if self.passed.contains(name) => Ok(pod.clone()),
            _ => Err(format!("pod {name} has not passed permit")),
        }
    }

    fn apply(&mut self, op: &GangOp, obs: &mut GangObservation) -> Result<(), String> {
        let id = |name: &str| PodId::from(name);
        match op {
            GangOp::Group { group, min_count } => {
                self.group_names.insert(group.clone());
                let object = match min_count {
                    Some(min) => PodGroup::gang(NAMESPACE, group, *min),
                    None => PodGroup::new(NAMESPACE, group, Policy::Basic),
                }
                .map_err(|e| e.to_string())?;
                self.gang_op(gang_ops::GangOp::GroupAdded(object))
                    .group_added()
                    .map_err(|e| e.to_string())?;
            }
            GangOp::Add {
                pod,
                group,
                priority,
            } => {
                if self.pods.contains_key(pod) {
                    return Err(format!("pod {pod} exists"));
                }
                let mut object = Pod::new(pod.as_str(), NAMESPACE, pod).with_priority(*priority);
                if let Some(group) = group {
                    self.group_names.insert(group.clone());
                    object = object.with_group(group);
                }
                self.pods.insert(pod.clone(), object.clone());
                self.gang_op(gang_ops::GangOp::PodAdded {
                    pod: object,
                    bound: false,
                })
                .pod_added()
                .map_err(|e| e.to_string())?;
            }
            GangOp::PreEnqueue { pod } => {
                let status = self
                    .gang_op(gang_ops::GangOp::PreEnqueue(self.pod(pod)?))
                    .pre_enqueue();
                // The queue names the plugin that gated the pod.
                let status = match (status.is_success(), status.plugin()) {
                    (false, None) => status.with_plugin(GANG_SCHEDULING),
                    _ => status,
                };
                obs.pre_enqueue = Some((&status).into());
            }
            GangOp::Release { pod } => {
                self.hold.remove(pod);
                if let Some(rejected) = self.held.remove(pod) {
                    self.assumed.remove(pod);
                    self.gang_op(gang_ops::GangOp::Unreserve(rejected));
                }
            }
            GangOp::Schedule {
                pod,
                node,
                hold,
                plugins,
            } => {
                if *hold {
                    self.hold.insert(pod.clone());
                } else {
                    self.hold.remove(pod);
                }
                let object = self.pod(pod)?;
                if self.assumed.contains_key(pod) || object.node().is_some() {
                    return Err(format!("pod {pod} is assumed or bound"));
                }
                let others = scripted_plugins(plugins)?;
                let node = node.as_deref().unwrap_or("node");
                let assumed = object.with_node(node);
                self.gang_op(gang_ops::GangOp::Reserve(assumed.clone()))
                    .reserved()
                    .map_err(|e| e.to_string())?;
                let permit = self
                    .gang_op(gang_ops::GangOp::Permit {
                        pod: assumed.clone(),
                        node: node.to_owned(),
                        others,
                        now: self.now,
                    })
                    .permit();
                obs.permit = Some((&permit.status()).into());
                obs.activated.extend(
                    self.gang
                        .activated(permit.activate())
                        .iter()
                        .map(|p| p.name().to_owned()),
                );
                self.passed.remove(pod);
                match permit {
                    Permit::Allow => {
                        // Its binding cycle's WaitOnPermit returns at once.
                        self.assumed.insert(pod.clone(), assumed);
                        obs.wait_on_permit
                            .insert(pod.clone(), (&gangsched::Status::success()).into());
                        self.passed.insert(pod.clone());
                    }
                    Permit::Wait { waiting, .. } => {
                        for pending in waiting.pending() {
                            let wait = pending.wait.as_millis() as u64;
                            obs.permit_waits.insert(pending.plugin.to_string(), wait);
                        }
                        self.assumed.insert(pod.clone(), assumed);
                    }
                    Permit::Reject { .. } => {
                        self.gang_op(gang_ops::GangOp::Unreserve(assumed));
                    }
                }
            }
            GangOp::Allow { pod, plugin } => {
                self.waiting.allow(&id(pod), plugin);
            }
            GangOp::Reject {
                pod,
                plugin,
                message,
            } => {
                let by = gangsched::PluginName::from(plugin.clone());
                obs.decided = Some(self.waiting.reject(&id(pod), by, message));
            }
            GangOp::Preempt {
                pod,
                plugin,
                message,
            } => {
                let by = gangsched::PluginName::from(plugin.clone());
                obs.decided = Some(self.waiting.preempt(&id(pod), by, message));
            }
            GangOp::Bind { pod } => {
                let assumed = self.passed_permit(pod)?;
                let node = assumed.node().unwrap_or("node").to_owned();
                let bound = self.pod(pod)?.with_node(&node);
                self.pods.insert(pod.clone(), bound.clone());
                self.assumed.remove(pod);
                self.gang_op(gang_ops::GangOp::PodBound(bound));
            }
            GangOp::Forget { pod } => {
                let assumed = self.passed_permit(pod)?;
                self.assumed.remove(pod);
                self.passed.remove(pod);
                self.gang_op(gang_ops::GangOp::Unreserve(assumed));
            }
            GangOp::Delete { pod } => {
                let object = self.pod(pod)?;
                self.pods.remove(pod);
                self.assumed.remove(pod);
                self.passed.remove(pod);
                self.gang_op(gang_ops::GangOp::PodDeleted(object.clone()));
                if object.node().is_none() {
                    // Upstream mode leaves the pod's own waiting entry to the caller.
                    self.waiting.remove(object.id());
                }
            }
            GangOp::AdvanceMs { ms } => {
                self.now += Duration::from_millis(*ms);
                self.waiting.expire(self.now);
                self.gang_op(gang_ops::GangOp::Expire(self.now));
            }
        }
        Ok(())
    }

    /// The binding cycles whose wait ended (a rejected one unreserves its pod), then the
    /// waiting pods, the groups' counts and the activations.
    fn settle(&mut self, obs: &mut GangObservation) {
        // A wait of no time runs out before the step settles, as its timer fires in the Go
        // harness's bubble.
        self.waiting.expire(self.now);
        for decision in self.decisions.drain() {
            let name = decision.pod.name().to_owned();
            obs.wait_on_permit
                .insert(name.clone(), (&decision.status).into());
            if decision.status.is_success() {
                self.passed.insert(name);
            } else if self.hold.contains(&name) {
                self.held.insert(name, decision.pod);
            } else {
                self.assumed.remove(&name);
                self.gang_op(gang_ops::GangOp::Unreserve(decision.pod));
            }
        }
        for waiting in self.waiting.snapshot() {
            let mut plugins: Vec<String> = waiting
                .pending_plugins()
                .iter()
                .map(|p| p.to_string())
                .collect();
            plugins.sort();
            obs.waiting.insert(waiting.pod().name().to_owned(), plugins);
        }
        for name in &self.group_names {
            let key = GroupKey::new(NAMESPACE, name);
            let counts = self.gang.registry().with_state(&key, |state| Counts {
                all: state.all_pods_count(),
                scheduled: state.scheduled_pods_count(),
                assumed: state.assumed().len(),
                assigned: state.assigned().len(),
                unscheduled: state.unscheduled_pods().len(),
            });
            if let Some(counts) = counts.filter(|c| c.all > 0) {
                obs.groups.insert(name.clone(), counts);
            }
        }
        obs.activated.sort();
        obs.activated.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{compare, gang_trace};
    use super::*;

    /// A trace with kube-scheduler's observations of it, recorded by `upstream/cmd/gangtrace`
    /// (`gangtrace < T.jsonl > T.jsonl.upstream`).
    fn recorded(name: &str) -> (Vec<GangOp>, Vec<GangObservation>) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../upstream/traces/");
        let read = |file: String| std::fs::read_to_string(dir.to_owned() + &file).unwrap();
        let ops = gang_trace::parse(&read(format!("{name}.jsonl"))).unwrap();
        let upstream =
            gang_trace::parse_observations(&read(format!("{name}.jsonl.upstream"))).unwrap();
        (ops, upstream)
    }

    #[test]
    fn upstream_mode_equals_the_recorded_real_code_and_hardened_does_not() {
        let (ops, upstream) = recorded("gang_timeout");
        assert!(gang_trace::is_gang_trace(&gang_trace::to_json_lines(&ops)));
        let ours = run(&ops);
        let outcome = compare(&ops, &upstream, &ours);
        assert_eq!(outcome.first, None);
        assert_eq!((outcome.equal, outcome.steps), (15, 15));
        // Step 9: the first member's own 5-minute timer.
        let timeout = &ours[8].wait_on_permit["a"];
        assert_eq!(
            timeout.message,
            "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
        );
        assert_eq!(ours[8].waiting.keys().collect::<Vec<_>>(), ["b"]);

        // The witness that the runner can fail: Hardened members wait on their gang
        // attempt's one deadline (H3), not a timer each.
        let hardened = run_in(Mode::Hardened, &ops);
        let first = compare(&ops, &upstream, &hardened).first.unwrap();
        assert!(first.step <= 9, "{first}");
        assert!(first.to_string().contains("first difference at step"));
    }

    /// The model checker's I6 counterexample (a reservation held for a lost gang) as the real
    /// code ran it: after a waiting member's delete the gang can never reach its min count,
    /// and the other waiting member keeps its node until its own timer, five minutes on.
    /// Hardened (H1: a lost member fails the attempt) releases it at the delete.
    #[test]
    fn the_i6_counterexample_happens_in_the_real_code() {
        let (ops, upstream) = recorded("gang_i6_held_for_a_lost_sibling");
        let ours = run(&ops);
        assert_eq!(compare(&ops, &upstream, &ours).first, None);
        for obs in &upstream[6..8] {
            let g = &obs.groups["g"];
            assert!(g.all < 3 && g.assumed == 1, "{obs:?}");
            assert_eq!(obs.waiting.keys().collect::<Vec<_>>(), ["a"]);
        }
        assert_eq!(
            upstream[8].wait_on_permit["a"].message,
            "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
        );
        let hardened = run_in(Mode::Hardened, &ops);
        assert!(hardened[6].waiting.is_empty(), "{:?}", hardened[6]);
        assert!(hardened[6].wait_on_permit.contains_key("a"));
    }

    /// The model checker's I3 counterexample (a partial gang) as the real code ran it: a-0's
    /// timer rejects it, and before its binding cycle unreserves it (held), a-1's Permit still
    /// counts it, meets quorum and passes alone; a-1 binds, a-0 does not. Hardened (H3: the
    /// attempt failed with its member) never lets a-1 through.
    #[test]
    fn the_i3_counterexample_happens_in_the_real_code() {
        let (ops, upstream) = recorded("gang_i3_partial_gang");
        let ours = run(&ops);
        assert_eq!(compare(&ops, &upstream, &ours).first, None);
        assert_eq!(upstream[4].wait_on_permit["a-0"].code, "Unschedulable");
        assert_eq!(upstream[5].permit.as_ref().unwrap().code, "Success");
        assert_eq!(upstream[5].wait_on_permit["a-1"].code, "Success");
        let a = &upstream[7].groups["a"];
        assert_eq!(
            (a.all, a.assigned, a.unscheduled),
            (2, 1, 1),
            "one of two bound"
        );
        let hardened = run_in(Mode::Hardened, &ops);
        let permit = hardened[5].permit.as_ref().expect("a-1's Permit");
        assert_eq!(permit.code, "Unschedulable", "{:?}", hardened[5]);
        assert!(
            permit.message.starts_with("gang attempt failed"),
            "{permit:?}"
        );
    }

    /// Permit plugins besides the gang's, as the real framework folds them, and a hazard that
    /// only they open: b's Permit meets quorum and allows a at once, then a later plugin turns
    /// b away; a binds without its gang. Hardened asks the other plugins before the gang and
    /// refuses their wait on a gang member.
    #[test]
    fn a_later_permit_plugin_splits_a_gang_in_the_real_code() {
        let (ops, upstream) = recorded("gang_permit_plugins");
        let ours = run(&ops);
        assert_eq!(compare(&ops, &upstream, &ours).first, None);
        let waits = &upstream[4].permit_waits;
        assert_eq!(
            (waits["GangScheduling"], waits["PermitA"], waits["PermitB"]),
            (300_000, 60_000, 1_000)
        );
        let rejected = upstream[6].permit.as_ref().unwrap();
        assert_eq!(
            (rejected.code.as_str(), rejected.plugin.as_str()),
            ("Unschedulable", "PermitB")
        );
        assert_eq!(upstream[6].waiting["a"], ["PermitA"], "the gang allowed a");
        let g = &upstream[8].groups["g"];
        assert_eq!((g.assigned, g.unscheduled), (1, 1), "a bound without b");
        assert_eq!(
            upstream[13].wait_on_permit["solo"].message,
            "rejected due to timeout after waiting 15m0s at plugin PermitB"
        );

        let hardened = run_in(Mode::Hardened, &ops);
        let refused = hardened[4].permit.as_ref().unwrap();
        assert_eq!(
            (refused.code.as_str(), refused.plugin.as_str()),
            ("Error", "PermitB")
        );
        assert!(
            refused.message.contains("only its gang holds a member"),
            "{refused:?}"
        );
        assert!(hardened
            .iter()
            .all(|o| o.groups.get("g").is_none_or(|g| g.assigned == 0)));
    }

    #[test]
    fn reject_and_preempt_report_upstreams_decisions() {
        let (ops, upstream) = recorded("gang_reject_preempt");
        let ours = run(&ops);
        assert_eq!(compare(&ops, &upstream, &ours).first, None);
        assert_eq!(ours[7].decided, Some(true));
        assert_eq!(ours[8].decided, Some(false));
        let preempted = &ours[9].wait_on_permit["b"];
        assert_eq!(preempted.code, "Error");
        assert_eq!(preempted.plugin, "DefaultPreemption");
        let mut broken = ours.clone();
        broken[8].decided = Some(true); // a second decision that claims to have decided
        assert_eq!(compare(&ops, &upstream, &broken).first.unwrap().step, 9);
    }
}
