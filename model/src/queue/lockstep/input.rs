//! What one fuzz input runs: the queue configuration its first byte picks ([`Setup`]), then
//! the first [`MAX_OPS`] ops, each with its pod lists cut to [`MAX_PODS_PER_OP`], decoded from
//! libFuzzer's bytes by [`decode`]. The `queue_moves` target (`fuzz/src/queue_moves/`) and the
//! corpus differential (`gangway differential --corpus`) both read inputs through these, so a
//! corpus file means the same queue and the same ops to both.

use std::time::Duration;

use gangsched::QueueConfig;

use super::Op;

/// The queue configuration an input runs with: its first byte, one rule per bit. Byte 0 is
/// [`QueueConfig::DEFAULT`] (kube-scheduler 1.36's queue); every other byte is an input too
/// (bit 7 is read as nothing).
///
/// | bit | rule | kube-scheduler 1.36 has it |
/// |---|---|---|
/// | 0 | [`QueueConfig::POP_FROM_BACKOFF_OFF`]: only the active queue pops, PreEnqueue runs as a pod leaves backoff, no window (a backoff ending now still holds) | yes, `SchedulerPopFromBackoffQ` off |
/// | 1 | exact comparisons, a backoff ending now over (no ordering window); with bit 0, [`QueueConfig::BEFORE_1_33`] | no (1.32 had it) |
/// | 2 | [`group_members_back_off`](QueueConfig::group_members_back_off) (pod `p5` is a group's member) | yes, the gang gates' rule |
/// | 3 | [`wildcards_move_gated`](QueueConfig::wildcards_move_gated) (kubernetes#139162) | no, not in v1.36.3 |
/// | 4 | [`shared_in_flight_events`](QueueConfig::shared_in_flight_events) off | no |
/// | 5 | [`group_backoff_scales_with_size`](QueueConfig::group_backoff_scales_with_size) (1.37) | no |
/// | 6 | short timing: 500 ms first backoff, 2 s at most, 30 s in the unschedulable pool | yes, its flags |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Setup(pub u8);

impl Setup {
    /// The defaults: kube-scheduler 1.36's queue.
    pub const DEFAULT: Setup = Setup(0);
    /// [`QueueConfig::POP_FROM_BACKOFF_OFF`].
    pub const POP_FROM_BACKOFF_OFF: u8 = 1;
    /// Exact comparisons (no ordering window); with [`POP_FROM_BACKOFF_OFF`](Self::POP_FROM_BACKOFF_OFF),
    /// [`QueueConfig::BEFORE_1_33`].
    pub const EXACT: u8 = 2;
    /// A group's member backs off after every failure.
    pub const GROUP_MEMBERS_BACK_OFF: u8 = 4;
    /// Wildcard events move gated pods.
    pub const WILDCARDS_MOVE_GATED: u8 = 8;
    /// In-flight updates replayed only for the pod they concern.
    pub const OWN_IN_FLIGHT_EVENTS: u8 = 16;
    /// A gang's backoff scales with its size.
    pub const GROUP_BACKOFF_SCALES: u8 = 32;
    /// Short backoffs and a short unschedulable limit.
    pub const SHORT_TIMING: u8 = 64;
    /// The bits kube-scheduler 1.36's queue has no rule for: an input with one of them set is
    /// gangway's alone, and the corpus differential does not compare it.
    pub const GANGWAY_ONLY: u8 = Self::EXACT
        | Self::WILDCARDS_MOVE_GATED
        | Self::OWN_IN_FLIGHT_EVENTS
        | Self::GROUP_BACKOFF_SCALES;

    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// The queue configuration this setup picks.
    pub fn config(self) -> QueueConfig {
        let base = match (self.has(Self::POP_FROM_BACKOFF_OFF), self.has(Self::EXACT)) {
            (false, false) => QueueConfig::DEFAULT,
            (true, false) => QueueConfig::POP_FROM_BACKOFF_OFF,
            (false, true) => QueueConfig::DEFAULT.with_ordering_window(None),
            (true, true) => QueueConfig::BEFORE_1_33,
        };
        let config = base
            .with_group_members_back_off(self.has(Self::GROUP_MEMBERS_BACK_OFF))
            .with_wildcards_move_gated(self.has(Self::WILDCARDS_MOVE_GATED))
            .with_shared_in_flight_events(!self.has(Self::OWN_IN_FLIGHT_EVENTS))
            .with_group_backoff_scales_with_size(self.has(Self::GROUP_BACKOFF_SCALES));
        if self.has(Self::SHORT_TIMING) {
            config
                .with_initial_backoff(Duration::from_millis(500))
                .with_max_backoff(Duration::from_secs(2))
                .with_max_in_unschedulable(Duration::from_secs(30))
        } else {
            config
        }
    }

    /// Whether kube-scheduler 1.36's queue has every rule this setup picks (see the table).
    pub fn upstream_has(self) -> bool {
        self.0 & Self::GANGWAY_ONLY == 0
    }
}

/// One fuzz input: the queue's [`Setup`] (its first byte), then the ops.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Input {
    /// The queue configuration.
    pub setup: Setup,
    /// The ops, as generated (the run takes [`runnable`] of them).
    pub ops: Vec<Op>,
}

#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for Setup {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        u8::arbitrary(u).map(Setup)
    }

    fn size_hint(depth: usize) -> (usize, Option<usize>) {
        u8::size_hint(depth)
    }
}

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

/// Decodes fuzzer bytes as the target does (an [`Input`] from all the bytes, arbitrary 1.x:
/// the setup byte, then the `Vec<Op>`); `None` if they do not decode (the target then skips
/// the input).
#[cfg(feature = "arbitrary")]
pub fn decode(bytes: &[u8]) -> Option<Input> {
    use arbitrary::{Arbitrary, Unstructured};
    Input::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}
