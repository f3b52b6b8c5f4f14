//! Bytes that the target decodes back into a given op list, for writing the seed corpus from
//! readable ops.

use super::Op;

/// How many variants [`Op`] has.
const VARIANTS: u32 = 9;

/// Bytes that [`decode`](super::decode) turns back into `ops` (arbitrary 1.x's format: a
/// "more" byte before each element of a `Vec`, a little-endian `u32` scaled to the variant
/// count for an enum variant, one byte for each index, flag and one-byte choice). A test
/// checks the round trip, so a format change is noticed.
pub fn encode(ops: &[Op]) -> Vec<u8> {
    fn variant(out: &mut Vec<u8>, index: u32) {
        let x = (u64::from(index) << 32).div_ceil(u64::from(VARIANTS));
        out.extend(u32::try_from(x).unwrap_or(u32::MAX).to_le_bytes());
    }
    fn list(out: &mut Vec<u8>, items: &[u8]) {
        for item in items {
            out.extend([1, *item]);
        }
        out.push(0);
    }
    let mut out = Vec::new();
    for op in ops {
        out.push(1);
        match op {
            Op::Add { pod, waits } => {
                variant(&mut out, 0);
                out.push(*pod);
                for (plugin, wait) in waits {
                    out.extend([1, *plugin, *wait]);
                }
                out.push(0);
            }
            Op::Allow {
                pod,
                ticket,
                plugin,
            } => {
                variant(&mut out, 1);
                out.extend([*pod, ticket.to_byte(), *plugin]);
            }
            Op::Reject {
                pod,
                ticket,
                plugin,
                msg,
                how,
            } => {
                variant(&mut out, 2);
                out.extend([*pod, ticket.to_byte(), *plugin, *msg, how.to_byte()]);
            }
            Op::AllowAll {
                pods,
                plugin,
                deferred,
            } => {
                variant(&mut out, 3);
                list(&mut out, pods);
                out.extend([*plugin, u8::from(*deferred)]);
            }
            Op::RejectAll {
                pods,
                plugin,
                msg,
                cause,
                deferred,
            } => {
                variant(&mut out, 4);
                list(&mut out, pods);
                out.extend([*plugin, *msg, *cause, u8::from(*deferred)]);
            }
            Op::Advance { step } => {
                variant(&mut out, 5);
                out.push(*step);
            }
            Op::Expire { step } => {
                variant(&mut out, 6);
                out.push(*step);
            }
            Op::Query { pod } => {
                variant(&mut out, 7);
                out.push(*pod);
            }
            Op::AddUntimed { pod, plugin } => {
                variant(&mut out, 8);
                out.extend([*pod, *plugin]);
            }
        }
    }
    out
}
