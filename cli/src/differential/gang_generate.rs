//! Random gang traces for the differential: valid operation sequences over six pods in two
//! gangs and none (each name one pod, never re-added), built op by op against gangway's gang runner (so that a bind names a pod
//! that passed Permit and a schedule one that may be scheduled).

use gangsched::Mode;

use super::gang::GangRunner;
use super::gang_trace::GangOp;
use crate::simulate::generate::SplitMix64;

const PODS: usize = 6;
const PLUGINS: [&str; 2] = ["GangScheduling", "Other"];

/// A gang trace of `steps` operations from `seed`.
pub fn trace(seed: u64, steps: usize) -> Vec<GangOp> {
    let mut rng = SplitMix64(seed);
    let mut runner = GangRunner::new(Mode::Upstream);
    let mut ops = Vec::new();
    let (mut groups, mut made, mut added) = (0usize, 0usize, Vec::<String>::new());
    let pick = |rng: &mut SplitMix64, names: &[String]| -> Option<String> {
        (!names.is_empty()).then(|| names[rng.range(0, names.len() as u64 - 1) as usize].clone())
    };
    while ops.len() < steps {
        let schedulable: Vec<String> = added
            .iter()
            .filter(|p| runner.can_schedule(p))
            .cloned()
            .collect();
        let passed: Vec<String> = added.iter().filter(|p| runner.passed(p)).cloned().collect();
        let plugin = PLUGINS[rng.range(0, 1) as usize].to_owned();
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
            15..=24 => match pick(&mut rng, &added) {
                Some(pod) => GangOp::PreEnqueue { pod },
                None => continue,
            },
            25..=49 => match pick(&mut rng, &schedulable) {
                Some(pod) => GangOp::Schedule {
                    node: Some(format!("n{}", rng.range(0, 1))),
                    pod,
                    hold: false,
                },
                None => continue,
            },
            50..=53 => match pick(&mut rng, &added) {
                Some(pod) => GangOp::Allow { pod, plugin },
                None => continue,
            },
            54..=57 => match pick(&mut rng, &added) {
                Some(pod) => GangOp::Reject {
                    pod,
                    plugin,
                    message: "rejected".to_owned(),
                },
                None => continue,
            },
            58..=60 => match pick(&mut rng, &added) {
                Some(pod) => GangOp::Preempt {
                    pod,
                    plugin,
                    message: "preempted".to_owned(),
                },
                None => continue,
            },
            61..=72 => match pick(&mut rng, &passed) {
                Some(pod) => GangOp::Bind { pod },
                None => continue,
            },
            73..=76 => match pick(&mut rng, &passed) {
                Some(pod) => GangOp::Forget { pod },
                None => continue,
            },
            77..=80 => match pick(&mut rng, &added) {
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
        for seed in 1..=20 {
            let ops = trace(seed, 120);
            assert_eq!(ops.len(), 120);
            for (op, obs) in ops.iter().zip(run(&ops)) {
                assert_eq!(obs.error, None, "seed {seed}: {op:?}");
                binds += usize::from(matches!(op, GangOp::Bind { .. }));
                deletes += usize::from(matches!(op, GangOp::Delete { .. }));
                for status in obs.wait_on_permit.values() {
                    allowed += usize::from(status.code == "Success");
                    timed_out += usize::from(status.message.contains("timeout"));
                }
            }
        }
        assert!(allowed > 0 && timed_out > 0 && binds > 0 && deletes > 0);
    }
}
