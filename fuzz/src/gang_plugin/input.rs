//! The byte format of a `gang_plugin` input (every byte string is one). Byte 0 is the
//! [`Setup`]; the rest are the lockstep driver's own ops,
//! [`gangway_model::gang::lockstep::Op`], one after another until the bytes run out (at most
//! [`MAX_OPS`]), each decoded by its derived `Arbitrary` (model feature `arbitrary`): a
//! little-endian `u32` variant, then a byte per field (an index taken modulo, a bool, a
//! duration or a policy from the model's lists). An op costs 4 to 6 bytes, so `.ci/fuzz`'s 128
//! bytes hold about 25.

use gangsched::Mode;
use gangway_model::gang::lockstep::{encode, Op, GROUPS, MAX_PODS};
use libfuzzer_sys::arbitrary::{Arbitrary, Unstructured};

/// At most this many ops are read (the rest of a longer input is ignored; 128 bytes hold
/// fewer).
pub const MAX_OPS: usize = 64;

/// The lockstep's setup (the input's first byte): bit 0 `Mode::Upstream` (else Hardened),
/// bit 1 three groups (else two), bit 2 Permit rejections unreserved late
/// (`deferring_permit_rejections`), bits 3–4 pods per group less one, bit 5 pods in blocks
/// (`p0`.. in `g0`, the next block in `g1`, …; else interleaved, `p<i>` in `g<i % groups>`).
/// Bits 6–7 are ignored. At most [`MAX_PODS`] pods. I3 is checked in Hardened only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The plugin's and the model's mode.
    pub mode: Mode,
    /// How many groups (`g0`.. of [`GROUPS`]): 2 or 3.
    pub groups: usize,
    /// Pods per group: 1 to 4 (the total capped at [`MAX_PODS`]).
    pub pods_per_group: usize,
    /// Pods in blocks of [`pods_per_group`](Setup::pods_per_group) (else interleaved).
    pub blocks: bool,
    /// A pod rejected at Permit is unreserved only by a later op or the settling.
    pub deferring: bool,
}

impl Setup {
    /// The setup byte `b` stands for.
    pub fn decode(b: u8) -> Setup {
        Setup {
            mode: if b & 1 == 0 {
                Mode::Hardened
            } else {
                Mode::Upstream
            },
            groups: if b & 2 == 0 { 2 } else { 3 },
            deferring: b & 4 != 0,
            pods_per_group: 1 + usize::from((b >> 3) & 3),
            blocks: b & 32 != 0,
        }
    }

    /// The byte [`decode`](Setup::decode) reads as this setup.
    pub fn encode(&self) -> u8 {
        let ppg = u8::try_from(self.pods_per_group.clamp(1, 4) - 1).expect("at most 3");
        u8::from(self.mode == Mode::Upstream)
            | u8::from(self.groups == 3) << 1
            | u8::from(self.deferring) << 2
            | ppg << 3
            | u8::from(self.blocks) << 5
    }

    /// Which group each pod names (`Lockstep::new`'s `pod_groups`).
    pub fn pod_groups(&self) -> Vec<usize> {
        let groups = self.groups.clamp(2, GROUPS.len());
        let ppg = self.pods_per_group.clamp(1, 4);
        (0..(groups * ppg).min(MAX_PODS))
            .map(|i| if self.blocks { i / ppg } else { i % groups })
            .collect()
    }
}

/// One input: the setup and the ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// Byte 0.
    pub setup: Setup,
    /// The rest.
    pub ops: Vec<Op>,
}

impl Input {
    /// Any bytes as an input (none: Hardened, two groups, one pod each, no ops).
    pub fn decode(bytes: &[u8]) -> Input {
        let (setup, rest) = match bytes.split_first() {
            Some((&b, rest)) => (b, rest),
            None => (0, &[][..]),
        };
        let mut u = Unstructured::new(rest);
        let mut ops = Vec::new();
        while !u.is_empty() && ops.len() < MAX_OPS {
            match Op::arbitrary(&mut u) {
                Ok(op) => ops.push(op),
                Err(_) => break,
            }
        }
        Input {
            setup: Setup::decode(setup),
            ops,
        }
    }

    /// The bytes [`decode`](Input::decode) reads as this input.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = vec![self.setup.encode()];
        bytes.extend(encode(&self.ops));
        bytes
    }
}

// libFuzzer's bytes as an `Input`, all of them (`Input::decode`), so that `cargo fuzz fmt`
// prints it.
crate::arbitrary_from_bytes!(Input);
