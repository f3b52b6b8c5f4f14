//! What one fuzz input runs: the first [`MAX_OPS`] ops, each with its pod lists cut to
//! [`MAX_PODS_PER_OP`], decoded from libFuzzer's bytes by [`decode`]. The `queue_moves` target
//! (`fuzz/src/lib.rs`) and the corpus differential (`gangway differential --corpus`) both read
//! inputs through these, so a corpus file means the same ops to both.

use super::Op;

/// At most this many ops of an input run; the rest is ignored. Keeps every run short (the
/// fuzz target's goal is ≥ 50,000 runs a second); bugs in this queue need few ops.
pub const MAX_OPS: usize = 64;
/// At most this many pods in one `HandBackGang` or `Activate`.
pub const MAX_PODS_PER_OP: usize = 4;

/// `op` with its pod lists cut to [`MAX_PODS_PER_OP`].
pub fn bounded(op: &Op) -> Op {
    match op {
        Op::HandBackGang { members } => Op::HandBackGang {
            members: members.iter().take(MAX_PODS_PER_OP).copied().collect(),
        },
        Op::Activate { pods } => Op::Activate {
            pods: pods.iter().take(MAX_PODS_PER_OP).copied().collect(),
        },
        other => other.clone(),
    }
}

/// The ops an input runs: its first [`MAX_OPS`], [`bounded`].
pub fn runnable(ops: &[Op]) -> impl Iterator<Item = Op> + '_ {
    ops.iter().take(MAX_OPS).map(bounded)
}

/// Decodes fuzzer bytes as the target does (`Vec<Op>` from all the bytes, arbitrary 1.x);
/// `None` if they do not decode (the target then skips the input).
#[cfg(feature = "arbitrary")]
pub fn decode(bytes: &[u8]) -> Option<Vec<Op>> {
    use arbitrary::{Arbitrary, Unstructured};
    Vec::<Op>::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}
