//! What one fuzz input runs: the first [`MAX_OPS`] ops, each with its lists cut short
//! ([`bounded`]), decoded from libFuzzer's bytes by [`decode`].

use super::Op;

/// At most this many ops of an input run; the rest is ignored (a 128-byte input holds about
/// 15 ops, so this bounds only longer runs).
pub const MAX_OPS: usize = 64;
/// At most this many pods in one `AllowAll` or `RejectAll`.
pub const MAX_PODS_PER_BATCH: usize = 8;
/// At most this many plugin waits in one `Add` (one more than there are plugins, so a plugin
/// named twice stays possible).
pub const MAX_WAITS: usize = 4;

/// `op` with its lists cut to [`MAX_WAITS`] and [`MAX_PODS_PER_BATCH`].
pub fn bounded(op: &Op) -> Op {
    let mut op = op.clone();
    match &mut op {
        Op::Add { waits, .. } => waits.truncate(MAX_WAITS),
        Op::AllowAll { pods, .. } | Op::RejectAll { pods, .. } => pods.truncate(MAX_PODS_PER_BATCH),
        _ => {}
    }
    op
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
