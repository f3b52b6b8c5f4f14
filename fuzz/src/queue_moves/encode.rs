//! Inputs as the bytes the target decodes, to write the seed corpus from readable op lists.

use super::{Input, Op};

/// How many variants [`Op`] has.
const VARIANTS: u32 = 13;

/// Bytes that [`decode`](super::decode) turns back into `input` (arbitrary 1.x's format: the
/// setup byte, then a "more" byte before each element of the `Vec`, a little-endian `u32`
/// scaled to the variant count for an enum variant, a flag byte for an `Option`). Used to write
/// the seed corpus from readable op lists; a test checks the round trip, so a format change is
/// noticed.
pub fn encode(input: &Input) -> Vec<u8> {
    fn variant(out: &mut Vec<u8>, index: u32) {
        let x = (u64::from(index) << 32).div_ceil(u64::from(VARIANTS));
        out.extend(u32::try_from(x).expect("below 2^32").to_le_bytes());
    }
    let mut out = vec![input.setup.0];
    for op in &input.ops {
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
