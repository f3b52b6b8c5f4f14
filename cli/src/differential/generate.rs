//! Random traces for the differential: valid operation sequences over a handful of pods, built
//! op by op against gangway's queue (so that a rejection names a pod in flight), with time
//! moving a millisecond after every operation that stamps a pod — equal priorities at equal
//! times would leave both heaps' order to chance and report differences that are none.

use gangsched::queue::{QueueConfig, QueuePlace};

use super::queue::Runner;
use super::trace::Op;
use crate::simulate::generate::SplitMix64;

const EVENTS: [&str; 4] = [
    "NodeAdd",
    "NodeUpdate",
    "AssignedPodAdd",
    "AssignedPodDelete",
];

/// A trace of about `steps` operations over at most `pods` pods, from `seed`, valid for a
/// queue configured as `config`.
pub fn trace(seed: u64, steps: usize, pods: usize, config: QueueConfig) -> Vec<Op> {
    let mut rng = SplitMix64(seed);
    let mut runner = Runner::new(config);
    let mut ops: Vec<Op> = Vec::new();
    let mut added = 0usize;
    // Deleted pods are gone for good: the informer sends no update for them (a pod created
    // again would have a new uid, and the uid is the name here).
    let mut deleted: Vec<String> = Vec::new();
    let tick = Op::AdvanceMs { ms: 1 };
    while ops.len() < steps {
        // Which pods are in flight now, as gangway's queue has it (both sides agree until the
        // differential says otherwise).
        let in_flight: Vec<String> = (0..added)
            .map(name)
            .filter(|p| runner.place(p) == Some(QueuePlace::InFlight))
            .collect();
        let any_pod = |rng: &mut SplitMix64| name(rng.range(0, added.max(1) as u64 - 1) as usize);
        let roll = rng.range(0, 99);
        let op = match roll {
            0..=14 if added < pods => {
                added += 1;
                Op::Add {
                    pod: name(added - 1),
                    priority: rng.range(0, 2) as i32,
                    // The sixth pod names a pod group (the gang gates' backoff rule).
                    group: (added == 6).then(|| "pg".to_owned()),
                }
            }
            0..=34 => Op::Pop,
            35..=49 if !in_flight.is_empty() => Op::Unschedulable {
                pod: in_flight[rng.range(0, in_flight.len() as u64 - 1) as usize].clone(),
                plugins: vec!["NodeResourcesFit".to_owned()],
                pending: Vec::new(),
            },
            50..=54 if !in_flight.is_empty() => Op::Error {
                pod: in_flight[rng.range(0, in_flight.len() as u64 - 1) as usize].clone(),
            },
            55..=61 if !in_flight.is_empty() => Op::Done {
                pod: in_flight[rng.range(0, in_flight.len() as u64 - 1) as usize].clone(),
            },
            62..=69 => Op::MoveAll {
                event: EVENTS[rng.range(0, EVENTS.len() as u64 - 1) as usize].to_owned(),
                node: None,
                pod: None,
                priority: None,
                precheck: None,
                min: None,
                exclude: None,
            },
            70..=73 if added > 0 => Op::Activate {
                pods: vec![any_pod(&mut rng)],
            },
            74..=75 if added > 0 => {
                let pod = any_pod(&mut rng);
                deleted.push(pod.clone());
                Op::Delete { pod }
            }
            76..=79 if added > 0 => {
                let pod = any_pod(&mut rng);
                if deleted.contains(&pod) {
                    continue;
                }
                Op::Update {
                    pod,
                    priority: rng.range(0, 2) as i32,
                }
            }
            80..=89 => Op::AdvanceMs {
                ms: rng.range(1, 4000),
            },
            90..=96 => Op::FlushBackoff,
            97..=98 => Op::FlushLeftover,
            _ => continue,
        };
        let stamps = matches!(
            op,
            Op::Add { .. } | Op::Unschedulable { .. } | Op::Error { .. } | Op::Update { .. }
        );
        runner.step(&op);
        ops.push(op);
        if stamps {
            runner.step(&tick);
            ops.push(tick.clone());
        }
    }
    ops
}

fn name(i: usize) -> String {
    format!("p{i}")
}
