//! What fuzzer bytes mean as [`Op`]s (the `arbitrary` feature): the generators the derived
//! `Arbitrary` calls for the fields, one byte each, and [`encode`], their inverse, for seed
//! corpora written from readable op lists.

use std::time::Duration;

use gangsched::gang::DEFAULT_PERMIT_TIMEOUT;

use gangsched::waiting::MAX_PERMIT_WAIT;
use gangsched::Policy;

use super::Op;

/// The durations an [`Op::Tick`] or [`Op::Expire`] takes (by one byte, modulo): none, the
/// smallest step, the property tests' steps, either side of the Permit timeout, and the
/// 15-minute cap.
pub const DURATIONS: [Duration; 8] = [
    Duration::ZERO,
    Duration::from_nanos(1),
    Duration::from_secs(1),
    Duration::from_secs(150),
    DEFAULT_PERMIT_TIMEOUT.saturating_sub(Duration::from_nanos(1)),
    DEFAULT_PERMIT_TIMEOUT,
    Duration::from_secs(10 * 60),
    MAX_PERMIT_WAIT,
];

/// The policies a group op gives (by one byte, modulo), weighted as the property tests weigh
/// them: gangs of two and three most often.
pub const POLICIES: [Policy; 8] = [
    Policy::Basic,
    Policy::Gang { min_count: 1 },
    Policy::Gang { min_count: 2 },
    Policy::Gang { min_count: 2 },
    Policy::Gang { min_count: 2 },
    Policy::Gang { min_count: 3 },
    Policy::Gang { min_count: 3 },
    Policy::Gang { min_count: 4 },
];

/// How many variants [`Op`] has, in declaration order (the derived `Arbitrary` picks one by a
/// little-endian `u32` scaled to this count).
const VARIANTS: u64 = 15;

/// An index (a pod, a group or a pick) from one byte; the lockstep takes it modulo.
#[cfg(feature = "arbitrary")]
pub(super) fn index(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<usize> {
    Ok(usize::from(u.arbitrary::<u8>()?))
}

/// One of [`DURATIONS`], from one byte.
#[cfg(feature = "arbitrary")]
pub(super) fn duration(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<Duration> {
    Ok(DURATIONS[usize::from(u.arbitrary::<u8>()?) % DURATIONS.len()])
}

/// One of [`POLICIES`], from one byte.
#[cfg(feature = "arbitrary")]
pub(super) fn policy(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<Policy> {
    Ok(POLICIES[usize::from(u.arbitrary::<u8>()?) % POLICIES.len()])
}

/// Bytes that the derived `Arbitrary` decodes back into `ops`, one `Op::arbitrary` after
/// another: per op a `u32` variant, then its fields, a byte each. Indexes above 255 are cut
/// to a byte (the lockstep takes them modulo anyway, so this changes which pod only beyond 255);
/// a duration or policy not in [`DURATIONS`] / [`POLICIES`] panics.
pub fn encode(ops: &[Op]) -> Vec<u8> {
    fn variant(out: &mut Vec<u8>, index: u64) {
        let x = (index << 32).div_ceil(VARIANTS);
        out.extend(u32::try_from(x).expect("below 2^32").to_le_bytes());
    }
    fn byte(i: usize) -> u8 {
        (i % 256) as u8
    }
    fn duration(d: Duration) -> u8 {
        let i = DURATIONS.iter().position(|&x| x == d);
        byte(i.unwrap_or_else(|| panic!("{d:?} is not one of DURATIONS")))
    }
    fn policy(p: Policy) -> u8 {
        let i = POLICIES.iter().position(|&x| x == p);
        byte(i.unwrap_or_else(|| panic!("{p:?} is not one of POLICIES")))
    }
    let mut out = Vec::new();
    for op in ops {
        match *op {
            Op::AddPod { pod, bound } => {
                variant(&mut out, 0);
                out.extend([byte(pod), u8::from(bound)]);
            }
            Op::AddGroup { group, policy: p } => {
                variant(&mut out, 1);
                out.extend([byte(group), policy(p)]);
            }
            Op::UpdateGroup { group, policy: p } => {
                variant(&mut out, 2);
                out.extend([byte(group), policy(p)]);
            }
            Op::DeleteGroup { group } => {
                variant(&mut out, 3);
                out.push(byte(group));
            }
            Op::Schedule { pick } => {
                variant(&mut out, 4);
                out.push(byte(pick));
            }
            Op::Reserve { pick } => {
                variant(&mut out, 5);
                out.push(byte(pick));
            }
            Op::Permit => variant(&mut out, 6),
            Op::AbortCycle => variant(&mut out, 7),
            Op::Tick(d) => {
                variant(&mut out, 8);
                out.push(duration(d));
            }
            Op::Expire(d) => {
                variant(&mut out, 9);
                out.push(duration(d));
            }
            Op::Unreserve { pick } => {
                variant(&mut out, 10);
                out.push(byte(pick));
            }
            Op::Bind { pick } => {
                variant(&mut out, 11);
                out.push(byte(pick));
            }
            Op::Preempt { pick } => {
                variant(&mut out, 12);
                out.push(byte(pick));
            }
            Op::BindElsewhere { pick } => {
                variant(&mut out, 13);
                out.push(byte(pick));
            }
            Op::Delete { pod } => {
                variant(&mut out, 14);
                out.push(byte(pod));
            }
        }
    }
    out
}
