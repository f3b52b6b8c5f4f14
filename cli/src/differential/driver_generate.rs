//! Random driver traces for the differential: valid operation sequences over one node (which
//! may leave and come back), six pods and three pod groups (two gangs and a Basic group, each
//! created at some point or never; a member goes through the pod-group cycle), built op by op against gangway's driver runner (so
//! that a `schedule_one` comes only when a pod can pop, a `reject` names a waiting pod).
//!
//! Time moves a millisecond after every other operation: equal priorities stamped at equal
//! times would leave both heaps' order to chance (kube-scheduler's heap is not stable, gangway
//! breaks ties by name) and report differences that are none. No two Permit waits of a trace
//! end at the same instant, where the order the real code's timer goroutines run in is not
//! the trace's to choose.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gangsched::Time;

use super::choices::Choices;
use super::driver::DriverRunner;
use super::driver_trace::DriverOp;
use super::permit_script::{Script, SCRIPTED_PLUGINS};
use crate::simulate::generate::SplitMix64;

const PODS: usize = 6;
const NODE: &str = "n0";
/// The node's CPU and the pods' requests: three of the middle size fill it.
const NODE_CPU: u64 = 1_000;
const REQUESTS: [u64; 4] = [0, 300, 400, 700];
const WAITS: [u64; 4] = [1_337, 2_711, 4_111, 61_001];
const ADVANCES: [u64; 5] = [100, 500, 1_000, 2_600, 30_000];
/// The pod groups a trace may create: two gangs and a Basic group. A pod names one of them
/// (or none) whether or not it exists yet: kube-scheduler's gang plugin gates it until then.
const GROUPS: [(&str, Option<u32>); 3] = [("a", Some(2)), ("b", Some(3)), ("c", None)];
/// A group member's priority: its own, above every ungrouped pod's. 1.36's pod-group cycle
/// sorts its members by priority, then by first attempt time — equal for siblings popped in
/// one cycle, where Go's unstable sort would leave their order to chance.
const MEMBER_PRIORITY: i32 = 20;

/// What the scripted Permit plugins answer in one cycle: mostly nothing, sometimes a wait, a
/// rejection or an error. A wait's deadline is one no other timer of the trace has.
fn scripts(
    rng: &mut dyn Choices,
    now: Time,
    deadlines: &mut BTreeSet<Time>,
) -> BTreeMap<String, Script> {
    let mut scripts = BTreeMap::new();
    for name in SCRIPTED_PLUGINS {
        let script = match rng.range(0, 11) {
            0..=2 => {
                let start = rng.range(0, WAITS.len() as u64 - 1) as usize;
                // The first wait whose deadline is new; taking it records the deadline.
                let free = (0..WAITS.len())
                    .map(|i| WAITS[(start + i) % WAITS.len()])
                    .find(|&ms| deadlines.insert(now + Duration::from_millis(ms)));
                let Some(wait_ms) = free else { continue };
                Script {
                    code: "Wait".to_owned(),
                    wait_ms,
                    ..Script::default()
                }
            }
            3 => Script {
                code: "Unschedulable".to_owned(),
                message: "over quota".to_owned(),
                ..Script::default()
            },
            4 => Script {
                code: ["UnschedulableAndUnresolvable", "Error"][rng.range(0, 1) as usize]
                    .to_owned(),
                message: "budget store down".to_owned(),
                ..Script::default()
            },
            _ => continue,
        };
        scripts.insert(name.to_owned(), script);
    }
    scripts
}

/// A driver trace of `steps` operations from `seed`.
pub fn trace(seed: u64, steps: usize) -> Vec<DriverOp> {
    trace_from(&mut SplitMix64(seed), steps)
}

/// A driver trace of at most `steps` operations, its choices from `rng`; shorter if they run
/// out.
pub fn trace_from(rng: &mut dyn Choices, steps: usize) -> Vec<DriverOp> {
    let mut runner = DriverRunner::new();
    let mut deadlines = BTreeSet::new();
    let mut node_up = true;
    let mut ops = vec![
        DriverOp::Node {
            node: NODE.to_owned(),
            cpu_milli: NODE_CPU,
        },
        DriverOp::AdvanceMs { ms: 1 },
    ];
    for op in &ops {
        runner.step(op);
    }
    let mut made = 0;
    let mut groups = BTreeSet::new();
    let pick = |rng: &mut dyn Choices, names: &[String]| -> Option<String> {
        (!names.is_empty()).then(|| names[rng.range(0, names.len() as u64 - 1) as usize].clone())
    };
    while ops.len() < steps && !rng.exhausted() {
        let live: Vec<String> = runner.live_pods().map(|(p, _)| p.to_owned()).collect();
        let unbound: Vec<String> = runner
            .live_pods()
            .filter(|(_, bound)| !bound)
            .map(|(p, _)| p.to_owned())
            .collect();
        let waiting = runner.waiting_pods();
        let plugin = SCRIPTED_PLUGINS[rng.range(0, 1) as usize].to_owned();
        let held = runner.held_pods();
        let op = match rng.range(0, 114) {
            0..=14 if made < PODS => {
                made += 1;
                let cpu_milli = REQUESTS[rng.range(0, REQUESTS.len() as u64 - 1) as usize];
                let group = rng.range(0, GROUPS.len() as u64 + 1).checked_sub(2);
                DriverOp::Add {
                    pod: format!("p{}", made - 1),
                    group: group.map(|g| GROUPS[g as usize].0.to_owned()),
                    cpu_milli,
                    priority: match group {
                        Some(_) => MEMBER_PRIORITY + made as i32,
                        None => [0, 0, 10][rng.range(0, 2) as usize],
                    },
                }
            }
            0..=44 if runner.can_pop() => DriverOp::ScheduleOne {
                plugins: scripts(rng, runner.now(), &mut deadlines),
            },
            45..=50 => match pick(rng, &unbound) {
                Some(pod) => DriverOp::FailBind { pod },
                None => continue,
            },
            51..=55 => match pick(rng, &live) {
                Some(pod) => DriverOp::Delete { pod },
                None => continue,
            },
            56..=61 => match pick(rng, &waiting) {
                Some(pod) => DriverOp::Allow { pod, plugin },
                None => continue,
            },
            62..=65 => match pick(rng, &waiting) {
                Some(pod) => DriverOp::Reject {
                    pod,
                    plugin,
                    message: "rejected by the trace".to_owned(),
                },
                None => continue,
            },
            66..=67 if node_up => {
                node_up = false;
                DriverOp::DeleteNode {
                    node: NODE.to_owned(),
                }
            }
            66..=69 if !node_up => {
                node_up = true;
                DriverOp::Node {
                    node: NODE.to_owned(),
                    cpu_milli: NODE_CPU,
                }
            }
            70..=99 => DriverOp::AdvanceMs {
                ms: ADVANCES[rng.range(0, ADVANCES.len() as u64 - 1) as usize],
            },
            // A binding held at PreBind, so deletes, node removals and other pods' cycles meet
            // a pod in the middle of its binding.
            100..=104 => {
                let free: Vec<String> = unbound.into_iter().filter(|p| !held.contains(p)).collect();
                match pick(rng, &free) {
                    Some(pod) => DriverOp::HoldBind { pod },
                    None => continue,
                }
            }
            105..=109 => match pick(rng, &held) {
                Some(pod) => DriverOp::ReleaseBind { pod },
                None => continue,
            },
            110..=114 => {
                let (group, min_count) = GROUPS[rng.range(0, GROUPS.len() as u64 - 1) as usize];
                if !groups.insert(group) {
                    continue;
                }
                DriverOp::Group {
                    group: group.to_owned(),
                    min_count,
                }
            }
            _ => continue,
        };
        let stamps = !matches!(op, DriverOp::AdvanceMs { .. });
        runner.step(&op);
        ops.push(op);
        if stamps {
            // Equal priorities stamped at equal times would leave both heaps' order to chance.
            let tick = DriverOp::AdvanceMs { ms: 1 };
            runner.step(&tick);
            ops.push(tick);
        }
    }
    ops.truncate(steps);
    ops
}

#[cfg(test)]
mod tests {
    use super::super::driver::run;
    use super::*;

    #[test]
    fn generated_traces_bind_wait_time_out_fail_delete_hold_binds_and_schedule_pod_groups() {
        let (mut bound, mut waited, mut timed_out, mut bind_failed, mut rejected) = (0, 0, 0, 0, 0);
        let mut held = 0;
        let (mut members_bound, mut groups_unschedulable, mut gated) = (0, 0, 0);
        for seed in 1..=20 {
            let ops = trace(seed, 80);
            assert_eq!(ops.len(), 80);
            let members: BTreeSet<&str> = ops
                .iter()
                .filter_map(|op| match op {
                    DriverOp::Add {
                        pod,
                        group: Some(_),
                        ..
                    } => Some(pod.as_str()),
                    _ => None,
                })
                .collect();
            for (op, obs) in ops.iter().zip(run(&ops)) {
                assert_eq!(obs.error, None, "seed {seed}: {op:?}");
                waited += usize::from(!obs.waiting.is_empty());
                held += obs.places.values().filter(|p| *p == "binding").count();
                gated += obs.places.values().filter(|p| *p == "gated").count();
                for (pod, condition) in &obs.conditions {
                    bound += usize::from(condition.status == "True");
                    members_bound +=
                        usize::from(condition.status == "True" && members.contains(pod.as_str()));
                    groups_unschedulable +=
                        usize::from(condition.message.starts_with("pod group is unschedulable"));
                    timed_out += usize::from(condition.message.contains("timeout"));
                    bind_failed += usize::from(condition.reason == "SchedulerError");
                    rejected += usize::from(condition.message.contains("over quota"));
                }
            }
        }
        assert!(
            bound > 0 && waited > 0 && timed_out > 0 && bind_failed > 0 && rejected > 0 && held > 0,
            "{bound} {waited} {timed_out} {bind_failed} {rejected} {held}"
        );
        assert!(
            members_bound > 0 && groups_unschedulable > 0 && gated > 0,
            "{members_bound} {groups_unschedulable} {gated}"
        );
    }
}
