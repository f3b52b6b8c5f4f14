//! Random gang traces for the differential: valid operation sequences over six pods in two
//! gangs and none (each name one pod, never re-added), built op by op against gangway's gang runner (so that a bind names a pod
//! that passed Permit and a schedule one that may be scheduled).

use std::collections::BTreeMap;

use gangsched::Mode;

use super::choices::Choices;
use super::gang::GangRunner;
use super::gang_trace::GangOp;
use super::permit_script::{Script, SCRIPTED_PLUGINS};
use crate::simulate::generate::SplitMix64;

const PODS: usize = 6;
/// The plugins an allow, reject or preempt names: the gang's, the scripted ones, and one that
/// no pod waits for.
const PLUGINS: [&str; 4] = [
    "GangScheduling",
    "Other",
    SCRIPTED_PLUGINS[0],
    SCRIPTED_PLUGINS[1],
];

/// What the scripted Permit plugins answer in one scheduling cycle: mostly nothing (they
/// allow), sometimes a wait — of no time, a second, a minute, or past the 15-minute cap — or
/// a rejection or an error.
///
/// Two plugins never wait equally long (nor as long as the gang's 5 minutes): kube-scheduler
/// starts a pod's timers ranging over a Go map (`newWaitingPod`), so of two timers due at
/// once either may reject the pod first — a nondeterminism of the real code
/// (docs/verification.md), which gangway resolves in registration order.
fn scripts(rng: &mut dyn Choices) -> BTreeMap<String, Script> {
    const WAITS: [u64; 4] = [0, 1_000, 60_000, 1_200_000];
    let mut scripts = BTreeMap::new();
    let mut waited = None;
    for name in SCRIPTED_PLUGINS {
        let script = match rng.range(0, 19) {
            0..=1 => {
                let mut pick = rng.range(0, WAITS.len() as u64 - 1) as usize;
                if waited == Some(pick) {
                    pick = (pick + 1) % WAITS.len();
                }
                waited = Some(pick);
                Script {
                    code: "Wait".to_owned(),
                    wait_ms: WAITS[pick],
                    message: ["", "waiting for quota"][rng.range(0, 1) as usize].to_owned(),
                }
            }
            2 => Script {
                code: "Unschedulable".to_owned(),
                message: "over quota".to_owned(),
                ..Script::default()
            },
            3 => Script {
                code: ["UnschedulableAndUnresolvable", "Error"][rng.range(0, 1) as usize]
                    .to_owned(),
                message: "budget store down".to_owned(),
                ..Script::default()
            },
            4 => Script {
                code: "Success".to_owned(),
                ..Script::default()
            },
            _ => continue,
        };
        scripts.insert(name.to_owned(), script);
    }
    scripts
}

/// A gang trace of `steps` operations from `seed`.
pub fn trace(seed: u64, steps: usize) -> Vec<GangOp> {
    trace_from(&mut SplitMix64(seed), steps)
}

/// A gang trace of at most `steps` operations, its choices from `rng`; shorter if they run
/// out.
pub fn trace_from(rng: &mut dyn Choices, steps: usize) -> Vec<GangOp> {
    let mut runner = GangRunner::new(Mode::Upstream);
    let mut ops = Vec::new();
    let (mut groups, mut made, mut added) = (0usize, 0usize, Vec::<String>::new());
    let pick = |rng: &mut dyn Choices, names: &[String]| -> Option<String> {
        (!names.is_empty()).then(|| names[rng.range(0, names.len() as u64 - 1) as usize].clone())
    };
    while ops.len() < steps && !rng.exhausted() {
        let schedulable: Vec<String> = added
            .iter()
            .filter(|p| runner.can_schedule(p))
            .cloned()
            .collect();
        let passed: Vec<String> = added.iter().filter(|p| runner.passed(p)).cloned().collect();
        let plugin = PLUGINS[rng.range(0, PLUGINS.len() as u64 - 1) as usize].to_owned();
        let op = match rng.range(0, 99) {
            0..=4 if groups < 2 => {
                groups += 1;
                GangOp::Group {
                    group: format!("g{}", groups - 1),
                    min_count: Some(3 - groups as u32 + 1),
                }
            }
            0..=14 if made < PODS => {
                made += 1;
                let pod = format!("p{}", made - 1);
                added.push(pod.clone());
                let group = match rng.range(0, 5) {
                    0 => None,
                    1 | 2 => Some("g1".to_owned()),
                    _ => Some("g0".to_owned()),
                };
                GangOp::Add {
                    pod,
                    group,
                    priority: 0,
                }
            }
            15..=24 => match pick(rng, &added) {
                Some(pod) => GangOp::PreEnqueue { pod },
                None => continue,
            },
            25..=49 => match pick(rng, &schedulable) {
                Some(pod) => GangOp::Schedule {
                    node: Some(format!("n{}", rng.range(0, 1))),
                    pod,
                    hold: false,
                    plugins: scripts(rng),
                },
                None => continue,
            },
            50..=53 => match pick(rng, &added) {
                Some(pod) => GangOp::Allow { pod, plugin },
                None => continue,
            },
            54..=57 => match pick(rng, &added) {
                Some(pod) => GangOp::Reject {
                    pod,
                    plugin,
                    message: "rejected".to_owned(),
                },
                None => continue,
            },
            58..=60 => match pick(rng, &added) {
                Some(pod) => GangOp::Preempt {
                    pod,
                    plugin,
                    message: "preempted".to_owned(),
                },
                None => continue,
            },
            61..=72 => match pick(rng, &passed) {
                Some(pod) => GangOp::Bind { pod },
                None => continue,
            },
            73..=76 => match pick(rng, &passed) {
                Some(pod) => GangOp::Forget { pod },
                None => continue,
            },
            77..=80 => match pick(rng, &added) {
                Some(pod) => GangOp::Delete { pod },
                None => continue,
            },
            81..=99 => GangOp::AdvanceMs {
                ms: [1_000, 60_000, 150_000, 299_999, 300_000][rng.range(0, 4) as usize],
            },
            _ => continue,
        };
        if let GangOp::Delete { pod } = &op {
            added.retain(|p| p != pod);
        }
        runner.step(&op);
        ops.push(op);
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::super::gang::run;
    use super::*;

    #[test]
    fn generated_traces_reach_quorum_timeouts_binds_and_deletes() {
        let (mut allowed, mut timed_out, mut binds, mut deletes) = (0, 0, 0, 0);
        let (mut scripted_waits, mut scripted_rejections, mut scripted_timeouts) = (0, 0, 0);
        for seed in 1..=20 {
            let ops = trace(seed, 120);
            assert_eq!(ops.len(), 120);
            for (op, obs) in ops.iter().zip(run(&ops)) {
                assert_eq!(obs.error, None, "seed {seed}: {op:?}");
                binds += usize::from(matches!(op, GangOp::Bind { .. }));
                scripted_waits += usize::from(obs.permit_waits.contains_key("PermitA"));
                let by =
                    |s: &super::super::gang_trace::ObservedStatus| s.plugin.starts_with("Permit");
                scripted_rejections += usize::from(obs.permit.as_ref().is_some_and(by));
                deletes += usize::from(matches!(op, GangOp::Delete { .. }));
                for status in obs.wait_on_permit.values() {
                    allowed += usize::from(status.code == "Success");
                    timed_out += usize::from(status.message.contains("timeout"));
                    scripted_timeouts += usize::from(
                        status.message.contains("timeout") && status.plugin.starts_with("Permit"),
                    );
                }
            }
        }
        assert!(allowed > 0 && timed_out > 0 && binds > 0 && deletes > 0);
        assert!(
            scripted_waits > 0 && scripted_rejections > 0 && scripted_timeouts > 0,
            "{scripted_waits} {scripted_rejections} {scripted_timeouts}"
        );
    }
}
