//! The harness behind the `queue_moves` fuzz target, as plain functions so that `cargo test`
//! (in `fuzz/`) replays the committed seeds and regression inputs without libFuzzer.
//!
//! The target decodes its input as a `Vec<`[`Op`]`>` (libFuzzer bytes → [`arbitrary`]) and runs
//! it through [`gangway_model::queue::lockstep`]: the real `QueueState` and the reference
//! `QueueModel` side by side, checking after every op that their results, places, records,
//! lengths and active order are equal, that `QueueState::check()` passes (I4), and that no pod
//! whose attempt saw an event worth requeuing it parks in the unschedulable pool (I7). The
//! property test `tests/tests/prop_queue.rs` uses the same driver.
//!
//! [`arbitrary`]: libfuzzer_sys::arbitrary

use gangway::QueueConfig;
use gangway_model::queue::lockstep::{self, Lockstep};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};

/// At most this many ops of an input run; the rest is ignored. Keeps every run short (the
/// goal is ≥ 50,000 runs a second); bugs in this queue need few ops.
pub const MAX_OPS: usize = 64;
/// At most this many pods in one `HandBackGang` or `Activate`.
pub const MAX_PODS_PER_OP: usize = 4;

/// One fuzzer-chosen operation: [`lockstep::Op`] with `Arbitrary` (see there for what each
/// field means; pods are small indexes into an 8-pod universe, taken modulo).
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Add a universe pod with a priority.
    Add {
        /// Universe index.
        pod: u8,
        /// Priority index.
        priority: u8,
    },
    /// Change a universe pod's priority.
    Update {
        /// Universe index.
        pod: u8,
        /// Priority index.
        priority: u8,
    },
    /// Delete a universe pod.
    Delete {
        /// Universe index.
        pod: u8,
    },
    /// Pop the first active pod.
    Pop,
    /// End the picked pod's attempt (bound).
    Done {
        /// Pick.
        pick: u8,
    },
    /// Hand the picked pod back, rejected by a bit set of plugins (0: an error).
    HandBack {
        /// Pick.
        pick: u8,
        /// Rejector bits.
        rejectors: u8,
    },
    /// Hand picked pods back as one gang.
    HandBackGang {
        /// (pick, rejector bits) per member.
        members: Vec<(u8, u8)>,
    },
    /// Activate universe pods.
    Activate {
        /// Universe indexes.
        pods: Vec<u8>,
    },
    /// Announce a cluster event, the precheck maybe excluding one universe pod.
    MoveAll {
        /// Event index.
        event: u8,
        /// Excluded universe pod.
        exclude: Option<u8>,
    },
    /// Flush completed backoffs.
    FlushBackoff,
    /// Flush unschedulable leftovers.
    FlushLeftover,
    /// Advance the clock by a step.
    Advance {
        /// Step index.
        step: u8,
    },
    /// Close the queue.
    Close,
}

/// How many variants [`Op`] has (for [`encode`]).
const VARIANTS: u32 = 13;

impl From<&Op> for lockstep::Op {
    fn from(op: &Op) -> lockstep::Op {
        use lockstep::Op as L;
        match op {
            &Op::Add { pod, priority } => L::Add { pod, priority },
            &Op::Update { pod, priority } => L::Update { pod, priority },
            &Op::Delete { pod } => L::Delete { pod },
            Op::Pop => L::Pop,
            &Op::Done { pick } => L::Done { pick },
            &Op::HandBack { pick, rejectors } => L::HandBack { pick, rejectors },
            Op::HandBackGang { members } => L::HandBackGang {
                members: members.iter().take(MAX_PODS_PER_OP).copied().collect(),
            },
            Op::Activate { pods } => L::Activate {
                pods: pods.iter().take(MAX_PODS_PER_OP).copied().collect(),
            },
            &Op::MoveAll { event, exclude } => L::MoveAll { event, exclude },
            Op::FlushBackoff => L::FlushBackoff,
            Op::FlushLeftover => L::FlushLeftover,
            &Op::Advance { step } => L::Advance { step },
            Op::Close => L::Close,
        }
    }
}

/// Runs the first [`MAX_OPS`] of `ops` through the lockstep driver with the default queue
/// timing; panics (a fuzzer finding) at the first failed check, naming the op.
pub fn queue_moves(ops: &[Op]) {
    let mut l = Lockstep::new(QueueConfig::default());
    for (i, op) in ops.iter().take(MAX_OPS).enumerate() {
        if let Err(e) = l.step(&op.into()) {
            panic!("op {i} {op:?} at {}: {e}", l.now);
        }
    }
}

/// Decodes fuzzer bytes as the target does (`Vec<Op>` from all the bytes); `None` if they do
/// not decode (the target then skips the input).
pub fn decode(bytes: &[u8]) -> Option<Vec<Op>> {
    Vec::<Op>::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}

/// Bytes that [`decode`] turns back into `ops` (arbitrary 1.x's format: a "more" byte before
/// each element of a `Vec`, a little-endian `u32` scaled to the variant count for an enum
/// variant, a flag byte for an `Option`). Used to write the seed corpus from readable op lists;
/// a test checks the round trip, so a format change is noticed.
pub fn encode(ops: &[Op]) -> Vec<u8> {
    fn variant(out: &mut Vec<u8>, index: u32) {
        let x = (u64::from(index) << 32).div_ceil(u64::from(VARIANTS));
        out.extend(u32::try_from(x).expect("below 2^32").to_le_bytes());
    }
    let mut out = Vec::new();
    for op in ops {
        out.push(1);
        match op {
            Op::Add { pod, priority } => {
                variant(&mut out, 0);
                out.extend([*pod, *priority]);
            }
            Op::Update { pod, priority } => {
                variant(&mut out, 1);
                out.extend([*pod, *priority]);
            }
            Op::Delete { pod } => {
                variant(&mut out, 2);
                out.push(*pod);
            }
            Op::Pop => variant(&mut out, 3),
            Op::Done { pick } => {
                variant(&mut out, 4);
                out.push(*pick);
            }
            Op::HandBack { pick, rejectors } => {
                variant(&mut out, 5);
                out.extend([*pick, *rejectors]);
            }
            Op::HandBackGang { members } => {
                variant(&mut out, 6);
                for (pick, rejectors) in members {
                    out.extend([1, *pick, *rejectors]);
                }
                out.push(0);
            }
            Op::Activate { pods } => {
                variant(&mut out, 7);
                for pod in pods {
                    out.extend([1, *pod]);
                }
                out.push(0);
            }
            Op::MoveAll { event, exclude } => {
                variant(&mut out, 8);
                out.push(*event);
                match exclude {
                    Some(pod) => out.extend([1, *pod]),
                    None => out.push(0),
                }
            }
            Op::FlushBackoff => variant(&mut out, 9),
            Op::FlushLeftover => variant(&mut out, 10),
            Op::Advance { step } => {
                variant(&mut out, 11);
                out.push(*step);
            }
            Op::Close => variant(&mut out, 12),
        }
    }
    out
}

/// The seed corpus, as readable op lists: each walks one rule of the queue so the fuzzer starts
/// from inputs that already reach it. Each encodes to at most 128 bytes (`.ci/fuzz` runs with
/// `-max_len=128`; longer seeds would be cut). `fuzz/seeds/queue_moves/<name>` holds [`encode`] of each
/// (regenerate with `cargo test -- --ignored write_seeds`).
pub fn seeds() -> Vec<(&'static str, Vec<Op>)> {
    use Op::*;
    // Event indexes (lockstep::event): 0 resources freed, 2 hint fails, 3 big node added,
    // 7 node ready (Claims, pending), 9 pod group added, 10 not of interest, 12 update lifting
    // the gate, 14/15/16 wildcards. Rejector bits: 1 Fit, 2 Claims pending, 4 Silent, 8 Gate.
    vec![
        (
            "event-in-flight",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Add {
                    pod: 1,
                    priority: 0,
                },
                Pop,
                MoveAll {
                    event: 0,
                    exclude: None,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                Advance { step: 4 },
                FlushBackoff,
            ],
        ),
        (
            "pending-immediately",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Pop,
                MoveAll {
                    event: 7,
                    exclude: None,
                },
                HandBack {
                    pick: 0,
                    rejectors: 3,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 2,
                },
                MoveAll {
                    event: 9,
                    exclude: None,
                },
            ],
        ),
        (
            "gang-one-backoff",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Add {
                    pod: 1,
                    priority: 1,
                },
                Add {
                    pod: 2,
                    priority: 3,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 0,
                },
                Advance { step: 4 },
                FlushBackoff,
                Pop,
                Pop,
                Pop,
                MoveAll {
                    event: 3,
                    exclude: None,
                },
                HandBackGang {
                    members: vec![(0, 1), (1, 4), (2, 1)],
                },
                Advance { step: 5 },
                FlushBackoff,
            ],
        ),
        (
            "gated-leftover",
            vec![
                Add {
                    pod: 6,
                    priority: 0,
                },
                Add {
                    pod: 7,
                    priority: 2,
                },
                MoveAll {
                    event: 0,
                    exclude: None,
                },
                MoveAll {
                    event: 12,
                    exclude: Some(7),
                },
                Advance { step: 9 },
                FlushLeftover,
                Advance { step: 7 },
                FlushLeftover,
                Update {
                    pod: 6,
                    priority: 1,
                },
                Pop,
            ],
        ),
        (
            "delete-in-flight",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Pop,
                Delete { pod: 0 },
                Update {
                    pod: 0,
                    priority: 3,
                },
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                Add {
                    pod: 0,
                    priority: 0,
                },
                Pop,
                Done { pick: 0 },
                Delete { pod: 0 },
            ],
        ),
        (
            "error-backoff-activate",
            vec![
                Add {
                    pod: 0,
                    priority: 0,
                },
                Add {
                    pod: 1,
                    priority: 0,
                },
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 0,
                },
                Activate { pods: vec![0, 1] },
                Pop,
                Pop,
                HandBack {
                    pick: 0,
                    rejectors: 1,
                },
                MoveAll {
                    event: 2,
                    exclude: None,
                },
                HandBack {
                    pick: 0,
                    rejectors: 4,
                },
                Advance { step: 6 },
                FlushBackoff,
                FlushLeftover,
            ],
        ),
        (
            "update-in-flight",
            vec![
                Add {
                    pod: 6,
                    priority: 1,
                },
                Pop,
                Update {
                    pod: 6,
                    priority: 3,
                },
                Activate { pods: vec![6] },
                HandBack {
                    pick: 0,
                    rejectors: 8,
                },
                Update {
                    pod: 6,
                    priority: 0,
                },
                Advance { step: 8 },
                Advance { step: 9 },
                FlushLeftover,
            ],
        ),
        (
            "mixed",
            vec![
                Add {
                    pod: 0,
                    priority: 1,
                },
                Add {
                    pod: 1,
                    priority: 3,
                },
                Add {
                    pod: 2,
                    priority: 2,
                },
                Add {
                    pod: 7,
                    priority: 0,
                },
                Pop,
                Pop,
                Advance { step: 1 },
                MoveAll {
                    event: 6,
                    exclude: Some(1),
                },
                Activate { pods: vec![1, 7] },
                HandBackGang {
                    members: vec![(0, 1), (1, 17)],
                },
                Pop,
                MoveAll {
                    event: 10,
                    exclude: None,
                },
                MoveAll {
                    event: 14,
                    exclude: None,
                },
                HandBack {
                    pick: 0,
                    rejectors: 4,
                },
                Advance { step: 10 },
                FlushLeftover,
                FlushBackoff,
                Close,
                Done { pick: 0 },
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::{Path, PathBuf};

    use super::*;

    fn files(dir: &str) -> Vec<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut files: Vec<PathBuf> = match fs::read_dir(&dir) {
            Ok(entries) => entries.map(|e| e.expect("readable").path()).collect(),
            Err(_) => Vec::new(),
        };
        files.retain(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"));
        files.sort();
        files
    }

    #[test]
    fn seeds_round_trip_and_pass() {
        for (name, ops) in seeds() {
            assert!(encode(&ops).len() <= 128, "{name} is longer than -max_len");
            assert_eq!(decode(&encode(&ops)).as_ref(), Some(&ops), "{name}");
            queue_moves(&ops);
        }
    }

    #[test]
    fn committed_seeds_are_the_listed_ones() {
        let on_disk = files("seeds/queue_moves");
        let listed = seeds();
        assert_eq!(on_disk.len(), listed.len(), "regenerate with write_seeds");
        for (name, ops) in listed {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("seeds/queue_moves")
                .join(name);
            let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                decode(&bytes),
                Some(ops),
                "{name}: regenerate with write_seeds"
            );
        }
    }

    /// Replays every committed input: the seeds and the regressions (crashes once found, kept
    /// so they stay fixed). Inputs that do not decode are skipped, as the target skips them.
    #[test]
    fn committed_inputs_replay() {
        for path in files("seeds/queue_moves")
            .into_iter()
            .chain(files("regressions/queue_moves"))
        {
            let bytes = fs::read(&path).expect("readable");
            if let Some(ops) = decode(&bytes) {
                let run = std::panic::catch_unwind(|| queue_moves(&ops));
                assert!(run.is_ok(), "{} fails: {ops:?}", path.display());
            }
        }
    }

    /// Writes `seeds/queue_moves/` from [`seeds`].
    #[test]
    #[ignore = "writes files: run to regenerate the seed corpus"]
    fn write_seeds() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/queue_moves");
        fs::create_dir_all(&dir).unwrap();
        for (name, ops) in seeds() {
            fs::write(dir.join(name), encode(&ops)).unwrap();
        }
    }
}
