//! The `queue_moves` fuzz corpus as queue traces: an input, decoded as the fuzz target decodes
//! it, becomes a trace for kube-scheduler's own queue (`upstream/cmd/queuetrace`, profile
//! `lockstep`) and gangway's (the same profile: `gangway_model::queue::plugins`), both queues
//! configured as the input's setup byte says (`lockstep::Setup`). An input whose setup turns on
//! a rule kube-scheduler 1.36 has not (`Setup::upstream_has`) is gangway's alone: it is read,
//! counted and not compared.
//!
//! The lockstep driver itself is stepped beside the translation: it resolves each op's *pick*
//! (the pick-th pod in flight) to the pod it names, and it checks the input as the target does,
//! so a corpus file means the same ops here and under the fuzzer. The lockstep runs the ops
//! as the trace has them, so its queue is the trace's. The fuzzer's ops include some that the
//! informer or the scheduler never make; they are left out (and counted):
//!
//! - a hand back of a pod that is not in flight (the lockstep queues a fresh record; upstream's
//!   queue takes no such call);
//! - an add of a pod the queue already holds (an informer adds a pod once);
//! - an update of a pod deleted while in flight, before its attempt ends (a delete is final:
//!   the informer sends nothing more of that pod, and gangway's queue drops it at its hand
//!   back, where kube-scheduler's failure handler looks it up in the informer's cache);
//! - a second close (a scheduler closes its queue once; kube-scheduler's panics on a closed
//!   channel).
//!
//! An add of a pod the queue has forgotten (bound, or its attempt ended by a close) while the
//! informer still has it becomes a delete and an add: the pod deleted and created again under
//! its name, the only way an informer adds it a second time.
//!
//! A gang hand back (`add_gang_unschedulable`, the Hardened whole-gang hand-back) becomes one
//! hand back per distinct member in flight, in the order listed: upstream hands each member
//! back alone, as `Mode::Upstream`'s driver does.

use std::collections::BTreeSet;
use std::time::Duration;

use gangsched::queue::QueuePlace;
use gangsched::{ClusterEvent, PodId};
use gangway_model::queue::lockstep::{self, Input, Lockstep, Op as FuzzOp, STEPS};
use gangway_model::queue::{CLAIMS, FIT, GATE, SILENT};

use super::trace::Op;

/// One input as a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The trace: a `config` op (the lockstep's queue configuration and plugin profile), then
    /// one op per fuzzer op, or several for a gang hand back.
    pub ops: Vec<Op>,
    /// Fuzzer ops left out (see the module documentation).
    pub left_out: usize,
    /// What each pop of the trace took (`None`: nothing to pop), in order.
    pub pops: Vec<Option<String>>,
}

/// `input`'s runnable ops (the target's bounds) as a trace, with the queue configuration its
/// setup picks; `Err` names the op where the lockstep's own checks fail (a fuzzer finding: that
/// input is a crash, not a trace).
pub fn trace_of(input: &Input) -> Result<Translation, String> {
    trace_following(input, &[])
}

/// [`trace_of`], but the `k`-th pop takes `pops[k]` where that pod ties at the head of the
/// queue: the lockstep follows the tie order kube-scheduler's heap took (its observations of
/// an earlier run of the trace), so the picks and the ops left out are decided on the queue
/// the real code has. [`Translation::pops`] is what the lockstep popped.
pub fn trace_following(input: &Input, pops: &[Option<String>]) -> Result<Translation, String> {
    let millis = |d: Duration| u64::try_from(d.as_millis()).expect("a short duration");
    let config = input.setup.config();
    let mut ops = vec![Op::Config {
        profile: Some("lockstep".into()),
        initial_backoff_ms: Some(millis(config.initial_backoff)),
        max_backoff_ms: Some(millis(config.max_backoff)),
        max_in_unschedulable_ms: Some(millis(config.max_in_unschedulable)),
        pop_from_backoff: Some(config.pop_from_backoff),
        gang_gates: Some(config.group_members_back_off),
        wildcards_move_gated: config.wildcards_move_gated.then_some(true),
    }];
    let mut left_out = 0;
    let mut l = Lockstep::new(config);
    // Pods deleted while in flight: their delete is final (the informer sends nothing more
    // of them) until their attempt ends.
    let mut gone: Vec<PodId> = Vec::new();
    // The pods the informer has: added or updated, and not deleted since.
    let mut existing: BTreeSet<PodId> = BTreeSet::new();
    let mut closed = false;
    let mut own_pops: Vec<Option<String>> = Vec::new();
    let mut prefer: Option<PodId> = None;
    for (i, op) in lockstep::runnable(&input.ops).enumerate() {
        // Each trace op with the lockstep op it is (a gang hand back is several).
        let mut steps: Vec<(Op, FuzzOp)> = Vec::new();
        match &op {
            FuzzOp::Add {
                pod: index,
                priority,
            } => {
                let pod = lockstep::universe_pod(*index, *priority);
                if l.state.place(pod.id()).is_none() {
                    if existing.contains(pod.id()) {
                        let delete = Op::Delete {
                            pod: pod.name().to_owned(),
                        };
                        steps.push((delete, FuzzOp::Delete { pod: *index }));
                    }
                    let add = Op::Add {
                        pod: pod.name().to_owned(),
                        priority: pod.priority(),
                        group: pod.group().map(str::to_owned),
                    };
                    steps.push((add, op.clone()));
                }
            }
            FuzzOp::Update { pod, priority } => {
                let pod = lockstep::universe_pod(*pod, *priority);
                if !gone.contains(pod.id()) {
                    let update = Op::Update {
                        pod: pod.name().to_owned(),
                        priority: pod.priority(),
                    };
                    steps.push((update, op.clone()));
                }
            }
            FuzzOp::Delete { pod } => {
                let id = lockstep::pod_id(*pod);
                if is_in_flight(&l, &id) {
                    gone.push(id.clone());
                }
                let delete = Op::Delete {
                    pod: id.to_string(),
                };
                steps.push((delete, op.clone()));
            }
            FuzzOp::Pop => {
                prefer = pops.get(own_pops.len()).cloned().flatten().map(PodId::from);
                steps.push((Op::Pop, op.clone()));
            }
            FuzzOp::Done { pick } => {
                let done = Op::Done {
                    pod: l.pick(*pick).to_string(),
                };
                steps.push((done, op.clone()));
            }
            FuzzOp::HandBack { pick, rejectors } => {
                let id = l.pick(*pick);
                if is_in_flight(&l, &id) {
                    steps.push((hand_back(&id, *rejectors), op.clone()));
                }
            }
            FuzzOp::HandBackGang { members } => {
                let mut seen: Vec<PodId> = Vec::new();
                for &(pick, rejectors) in members {
                    let id = l.pick(pick);
                    if !seen.contains(&id) && is_in_flight(&l, &id) {
                        let direct = FuzzOp::HandBack {
                            pick: universe_pick(&id),
                            rejectors,
                        };
                        steps.push((hand_back(&id, rejectors), direct));
                    }
                    seen.push(id);
                }
            }
            FuzzOp::Activate { pods } => {
                let activate = Op::Activate {
                    pods: pods
                        .iter()
                        .map(|&p| lockstep::pod_id(p).to_string())
                        .collect(),
                };
                steps.push((activate, op.clone()));
            }
            FuzzOp::MoveAll { event, exclude } => {
                let excluded = exclude.map(lockstep::pod_id);
                steps.push((move_all(&lockstep::event(*event), excluded), op.clone()));
            }
            FuzzOp::FlushBackoff => steps.push((Op::FlushBackoff, op.clone())),
            FuzzOp::FlushLeftover => steps.push((Op::FlushLeftover, op.clone())),
            FuzzOp::Advance { step } => {
                let ns = u64::try_from(STEPS[usize::from(*step) % STEPS.len()].as_nanos())
                    .expect("a short step");
                steps.push((Op::AdvanceNs { ns }, op.clone()));
            }
            FuzzOp::Close => {
                if !closed {
                    closed = true;
                    steps.push((Op::Close, op.clone()));
                }
            }
        }
        if steps.is_empty() {
            left_out += 1;
        }
        // The lockstep runs what the trace runs, so its queue is the trace's.
        for (trace_op, fuzz_op) in steps {
            let popping = matches!(trace_op, Op::Pop);
            let before: Vec<PodId> = in_flight_now(&l);
            l.step_preferring(&fuzz_op, prefer.take().as_ref())
                .map_err(|e| {
                    format!("the fuzz target fails this input at op {i} {fuzz_op:?}: {e}")
                })?;
            if popping {
                let popped = in_flight_now(&l).into_iter().find(|p| !before.contains(p));
                own_pops.push(popped.map(|p| p.to_string()));
            }
            match &trace_op {
                Op::Add { pod, .. } | Op::Update { pod, .. } => {
                    existing.insert(PodId::from(pod.as_str()));
                }
                Op::Delete { pod } => {
                    existing.remove(&PodId::from(pod.as_str()));
                }
                _ => {}
            }
            ops.push(trace_op);
        }
        gone.retain(|id| is_in_flight(&l, id));
    }
    Ok(Translation {
        ops,
        left_out,
        pops: own_pops,
    })
}

/// Whether `id` is in flight in the lockstep's real queue.
fn is_in_flight(l: &Lockstep, id: &PodId) -> bool {
    l.state.place(id) == Some(QueuePlace::InFlight)
}

/// The pods in flight in the lockstep's real queue.
fn in_flight_now(l: &Lockstep) -> Vec<PodId> {
    l.state
        .pods()
        .filter(|(_, place, _)| *place == QueuePlace::InFlight)
        .map(|(id, _, _)| id.clone())
        .collect()
}

/// The pick that names universe pod `id` directly (128 and up: `pick % 8`).
fn universe_pick(id: &PodId) -> u8 {
    let index = lockstep::POD_NAMES
        .iter()
        .position(|n| *n == id.as_str())
        .expect("a universe pod");
    128 + u8::try_from(index).expect("8 pods")
}

/// The in-flight pod `id` handed back rejected by the plugins in `bits` (as
/// [`lockstep::rejectors`] reads them), or with an error if there are none.
fn hand_back(id: &PodId, bits: u8) -> Op {
    let pod = id.to_string();
    let mut plugins = Vec::new();
    let mut pending = Vec::new();
    for (bit, name, is_pending) in [
        (1, FIT, false),
        (2, CLAIMS, true),
        (4, SILENT, false),
        (8, GATE, false),
        (16, FIT, true),
    ] {
        if bits & bit != 0 {
            if is_pending {
                pending.push(name.to_owned());
            } else {
                plugins.push(name.to_owned());
            }
        }
    }
    if plugins.is_empty() && pending.is_empty() {
        Op::Error { pod }
    } else {
        Op::Unschedulable {
            pod,
            plugins,
            pending,
        }
    }
}

/// A move-all for one of the lockstep's events (`lockstep::event`), leaving out `exclude`.
fn move_all(event: &ClusterEvent, exclude: Option<PodId>) -> Op {
    let (mut node, mut pod, mut priority) = (None, None, None);
    let name = match event {
        ClusterEvent::AssignedPodDelete(p) => {
            pod = Some(p.name().to_owned());
            "AssignedPodDelete"
        }
        ClusterEvent::AssignedPodAdd(p) => {
            pod = Some(p.name().to_owned());
            "AssignedPodAdd"
        }
        ClusterEvent::UnscheduledPodAdd(p) => {
            pod = Some(p.name().to_owned());
            "UnscheduledPodAdd"
        }
        ClusterEvent::UnscheduledPodUpdate { new, .. } => {
            pod = Some(new.name().to_owned());
            priority = Some(new.priority());
            "UnscheduledPodUpdate"
        }
        ClusterEvent::NodeAdd(n) => {
            node = Some(n.to_string());
            "NodeAdd"
        }
        ClusterEvent::NodeUpdate(n) => {
            node = Some(n.to_string());
            "NodeUpdate"
        }
        ClusterEvent::PodGroupAdd(_) => "PodGroupAdd",
        ClusterEvent::PodGroupUpdate { .. } => "PodGroupUpdate",
        ClusterEvent::ForceActivate => "ForceActivate",
        ClusterEvent::UnschedulableTimeout => "UnschedulableTimeout",
        ClusterEvent::BackoffComplete => "BackoffComplete",
        other => unreachable!("the lockstep names no {other:?}"),
    };
    Op::MoveAll {
        event: name.into(),
        node,
        pod,
        priority,
        precheck: None,
        min: None,
        exclude: exclude.map(|id| id.to_string()),
    }
}

/// A corpus file's name and its input (`None`: it does not decode).
pub type CorpusFile = (String, Option<Input>);

/// Every input in `dir` (sorted by file name), decoded as the fuzz target decodes it; an input
/// that does not decode (the target skips it) is `None`.
pub fn read_dir(dir: &std::path::Path) -> Result<Vec<CorpusFile>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            Ok((name, lockstep::decode(&bytes)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gangway_model::queue::lockstep::Setup;

    fn defaults(ops: Vec<FuzzOp>) -> Input {
        Input {
            setup: Setup::DEFAULT,
            ops,
        }
    }

    /// The setup byte reaches the trace's `config`: kube-scheduler with SchedulerPopFromBackoffQ off, the gang gates' rule
    /// and short timing as kube-scheduler's flags and gates say them.
    #[test]
    fn the_setup_configures_both_queues() {
        let input = Input {
            setup: Setup(
                Setup::POP_FROM_BACKOFF_OFF | Setup::GROUP_MEMBERS_BACK_OFF | Setup::SHORT_TIMING,
            ),
            ops: vec![FuzzOp::Pop],
        };
        assert!(input.setup.upstream_has());
        let t = trace_of(&input).unwrap();
        assert_eq!(
            super::super::trace::to_json_lines(&t.ops[..1]).trim_end(),
            r#"{"op":"config","profile":"lockstep","initial_backoff_ms":500,"max_backoff_ms":2000,"max_in_unschedulable_ms":30000,"pop_from_backoff":false,"gang_gates":true}"#
        );
        for bit in [
            Setup::EXACT,
            Setup::WILDCARDS_MOVE_GATED,
            Setup::OWN_IN_FLIGHT_EVENTS,
            Setup::GROUP_BACKOFF_SCALES,
        ] {
            assert!(!Setup(bit).upstream_has(), "{bit:#04x}");
        }
    }

    #[test]
    fn picks_become_the_pods_they_name_and_a_gang_is_handed_back_member_by_member() {
        use FuzzOp::*;
        let input = vec![
            Add {
                pod: 0,
                priority: 0,
            },
            Add {
                pod: 5,
                priority: 1,
            },
            Pop,
            Pop,
            // Pick 200 names universe pod 0 directly.
            HandBack {
                pick: 200,
                rejectors: 1,
            },
            // p5 is the one pod in flight; its second and third listings are the same member.
            HandBackGang {
                members: vec![(1, 3), (1, 0), (0, 0)],
            },
            // p2 is not in flight: left out.
            HandBack {
                pick: 130,
                rejectors: 4,
            },
            MoveAll {
                event: 12,
                exclude: Some(0),
            },
            Advance { step: 1 },
        ];
        let t = trace_of(&defaults(input)).unwrap();
        assert_eq!(t.left_out, 1);
        let lines = super::super::trace::to_json_lines(&t.ops);
        let expected = [
            r#"{"op":"config","profile":"lockstep","initial_backoff_ms":1000,"max_backoff_ms":10000,"max_in_unschedulable_ms":300000,"pop_from_backoff":true,"gang_gates":false}"#,
            r#"{"op":"add","pod":"p0","priority":0}"#,
            r#"{"op":"add","pod":"p5","priority":1,"group":"pg"}"#,
            r#"{"op":"pop"}"#,
            r#"{"op":"pop"}"#,
            r#"{"op":"unschedulable","pod":"p0","plugins":["NodeResourcesFit"]}"#,
            r#"{"op":"unschedulable","pod":"p5","plugins":["NodeResourcesFit"],"pending":["DynamicResources"]}"#,
            r#"{"op":"move_all","event":"UnscheduledPodUpdate","pod":"other","priority":1,"exclude":"p0"}"#,
            r#"{"op":"advance_ns","ns":1}"#,
        ];
        assert_eq!(lines.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn a_pod_added_again_after_its_queue_forgot_it_is_deleted_and_created_again() {
        use FuzzOp::*;
        let add = Add {
            pod: 5,
            priority: 0,
        };
        // Bound, then added again; then its attempt ended by the close, added again; then
        // deleted and added: an add as it is.
        let input = vec![
            add.clone(),
            Pop,
            Done { pick: 0 },
            add.clone(),
            Pop,
            Close,
            add.clone(),
            Delete { pod: 5 },
            add,
        ];
        let t = trace_of(&defaults(input)).unwrap();
        assert_eq!(t.left_out, 0);
        let lines = super::super::trace::to_json_lines(&t.ops[1..]);
        let (add, delete) = (
            r#"{"op":"add","pod":"p5","priority":0,"group":"pg"}"#,
            r#"{"op":"delete","pod":"p5"}"#,
        );
        let expected = [
            add,
            r#"{"op":"pop"}"#,
            r#"{"op":"done","pod":"p5"}"#,
            delete,
            add,
            r#"{"op":"pop"}"#,
            r#"{"op":"close"}"#,
            delete,
            add,
            delete,
            add,
        ];
        assert_eq!(lines.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn every_committed_fuzz_input_decodes_and_becomes_a_trace() {
        let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
        let mut read = 0;
        for dir in ["seeds/queue_moves", "regressions/queue_moves"] {
            for (name, input) in read_dir(&fuzz.join(dir)).unwrap() {
                let input = input.unwrap_or_else(|| panic!("{dir}/{name} does not decode"));
                let t = trace_of(&input).unwrap_or_else(|e| panic!("{dir}/{name}: {e}"));
                assert!(matches!(t.ops[0], Op::Config { .. }));
                read += 1;
            }
        }
        assert!(read >= 9, "{read} committed inputs");
    }
}
