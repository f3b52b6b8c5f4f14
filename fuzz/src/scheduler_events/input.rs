//! What a `scheduler_events` input says: a [`Setup`] (mode, gang cycle, whether an embedder's
//! Permit plugin runs) and up to [`MAX_OPS`] cluster events and driver steps ([`Op`]), in a
//! compact byte format that every byte string decodes to (so every mutation libFuzzer makes
//! is a valid input): the first byte is the setup, then two bytes an op — a tag whose low four
//! bits pick the kind and whose high four bits are a slot (node, group or pod), and an
//! argument. Values are taken modulo their range; a last odd byte is ignored.
//!
//! [`Op::Schedule`] and [`Op::Bind`] name no slot: the high bit of their tag ([`SPLIT`]) says
//! that the cycle is *split* — run step by step, with the input's next op, if it is a cluster
//! event ([`Op::is_cluster_event`]), between the cycle's first step and its last (the
//! harness's `split.rs` says which steps). A split with no cluster event next runs whole.

use gangsched::{GangCycle, Mode};

/// At most this many ops run (the rest of a longer input is ignored).
pub const MAX_OPS: usize = 48;
/// Node slots `n0` … `n5`.
pub const NODES: u8 = 6;
/// PodGroup slots `g0` … `g2`.
pub const GROUPS: u8 = 3;
/// Pod slots `p0` … `p11` (a slot deleted and added again is a new pod, `p3.1`).
pub const PODS: u8 = 12;
/// How many op kinds there are (the tag's low four bits, modulo this).
const KINDS: u8 = 16;
/// The tag bit of a split [`Op::Schedule`] or [`Op::Bind`] (see the module docs): the high bit
/// of the slot nibble, which neither reads (a `Wait`'s timeout takes the nibble modulo 4).
pub const SPLIT: u8 = 0x80;

/// The time steps an [`Op::Advance`] takes, by index: ties, the backoff edges (1 s doubled to
/// 10 s), the flushes (1 s, 30 s, 5 min), the permit timeout (5 min) and the 15-minute cap of
/// a plugin's wait.
pub const STEPS_MS: [u64; 16] = [
    0, 1, 500, 1_000, 1_500, 2_000, 4_000, 10_000, 30_000, 60_000, 120_000, 299_999, 300_000,
    301_000, 600_000, 960_000,
];

/// The timeouts a [`Verdict::Wait`] asks for, by index (the last is over the 15-minute cap).
pub const PLUGIN_WAITS_MS: [u64; 4] = [1_000, 60_000, 300_000, 1_200_000];

/// How the scheduler under test is configured (the input's first byte: bit 0 Upstream, bit 1
/// the pod-group cycle, bit 2 an embedder's Permit plugin beside the gang's, bit 3 the node
/// index built from the start, bit 4 the queue's indexes built from the start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    /// Upstream's behaviour or gangway's guarantees.
    pub mode: Mode,
    /// The Permit barrier or the pod-group cycle.
    pub cycle: GangCycle,
    /// Whether the scripted Permit plugin `FuzzPermit` runs beside the gang plugin.
    pub permit_plugin: bool,
    /// Whether the node cache's placement index is built from the start
    /// (`checking::build_node_index`) rather than from 64 nodes on, which the harness's six
    /// never reach: placement then takes the indexed path, and the cache's check verifies the
    /// index after every step (I5).
    pub node_index: bool,
    /// Whether the scheduling queue's derived indexes — its pods by group, its pool by time
    /// parked — are built from the start (`checking::build_scheduling_queue_indexes`) rather
    /// than from 64 pods on, which the harness's twelve never reach: a pod added or a PodGroup
    /// changed then moves only its group's pods (`EventScope::Group`, the gang plugin's scoped
    /// moves), and the queue's check verifies the indexes after every step (I4).
    pub queue_index: bool,
}

/// What the scripted Permit plugin answers in one scheduling cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Allow.
    Allow,
    /// Wait, for [`PLUGIN_WAITS_MS`]`[timeout]`.
    Wait {
        /// Index into [`PLUGIN_WAITS_MS`].
        timeout: u8,
    },
    /// Reject (unschedulable).
    Reject,
    /// Reject with an error.
    Error,
    /// Panic (caught by the scheduler as the plugin's error).
    Panic,
}

/// What the binder answers in one binding cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindAnswer {
    /// The binding is written.
    Ok,
    /// The API server refuses it.
    Fail,
    /// The binder panics (caught by the scheduler as `BindError::Panicked`).
    Panic,
}

/// One cluster event or driver step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Node `n{node}` joins with `cpus` CPUs (1–4).
    AddNode {
        /// Slot.
        node: u8,
        /// CPUs.
        cpus: u8,
    },
    /// Node `n{node}` leaves.
    DeleteNode {
        /// Slot.
        node: u8,
    },
    /// Node `n{node}` now has `cpus` CPUs, and the taint `fz/dedicated:NoSchedule` (which
    /// only members of `g2` tolerate) if `tainted`.
    UpdateNode {
        /// Slot.
        node: u8,
        /// CPUs.
        cpus: u8,
        /// Whether the node is tainted (the argument's bit 2).
        tainted: bool,
    },
    /// PodGroup `g{group}` is created: `Gang { min_count: min }`, or `Basic` for 0.
    AddGroup {
        /// Slot.
        group: u8,
        /// Its min count (0: Basic).
        min: u8,
    },
    /// PodGroup `g{group}` changes its policy (its min count).
    UpdateGroup {
        /// Slot.
        group: u8,
        /// Its min count (0: Basic).
        min: u8,
    },
    /// PodGroup `g{group}` is deleted.
    DeleteGroup {
        /// Slot.
        group: u8,
    },
    /// A pod is created in slot `pod` (again, if the slot's pod is live: the scheduler must
    /// refuse it), a member of `g{group}` or of none, requesting `half_cpus` × 500m.
    AddPod {
        /// Slot.
        pod: u8,
        /// Its group, if any.
        group: Option<u8>,
        /// Half CPUs requested (1–4).
        half_cpus: u8,
        /// Priority (0–3).
        priority: u8,
    },
    /// The slot's pod changes its priority.
    UpdatePod {
        /// Slot.
        pod: u8,
        /// Priority (0–3).
        priority: u8,
    },
    /// The slot's pod is deleted.
    DeletePod {
        /// Slot.
        pod: u8,
    },
    /// One scheduling cycle (`schedule_one`), the scripted plugin answering `plugin`.
    Schedule {
        /// The scripted plugin's answer.
        plugin: Verdict,
        /// Split: the next op, if a cluster event, runs between the cycle's first step (the
        /// pop and placement: `Schedule` or `ScheduleGroup`) and its last (`Permit`,
        /// `HandBack` or `Commit`).
        split: bool,
    },
    /// One binding cycle, the binder answering `answer`.
    Bind {
        /// The binder's answer.
        answer: BindAnswer,
        /// Split: the next op, if a cluster event, runs between the cycle's begin
        /// (`BeginNextBinding`) and its bind and end (`EndBinding`).
        split: bool,
    },
    /// Every pending binding cycle, each bind succeeding.
    BindAll,
    /// Scheduling and binding cycles (binds succeed) until nothing moves.
    Settle,
    /// Virtual time moves on by [`STEPS_MS`]`[step]`; the timers fire at each instant due.
    Advance {
        /// Index into [`STEPS_MS`].
        step: u8,
    },
    /// The scripted plugin decides for the slot's waiting pod: allow or reject.
    Decide {
        /// Slot.
        pod: u8,
        /// Allow (else reject).
        allow: bool,
    },
    /// The informer reports every binding not yet reported (the pod's update naming its node).
    Observe,
}

/// A whole input: the setup and the ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The scheduler's configuration.
    pub setup: Setup,
    /// The ops, at most [`MAX_OPS`].
    pub ops: Vec<Op>,
}

impl Setup {
    fn decode(byte: u8) -> Setup {
        Setup {
            mode: if byte & 1 == 0 {
                Mode::Hardened
            } else {
                Mode::Upstream
            },
            cycle: if byte & 2 == 0 {
                GangCycle::PermitBarrier
            } else {
                GangCycle::PodGroup
            },
            permit_plugin: byte & 4 != 0,
            node_index: byte & 8 != 0,
            queue_index: byte & 16 != 0,
        }
    }

    fn encode(&self) -> u8 {
        u8::from(self.mode == Mode::Upstream)
            | u8::from(self.cycle == GangCycle::PodGroup) << 1
            | u8::from(self.permit_plugin) << 2
            | u8::from(self.node_index) << 3
            | u8::from(self.queue_index) << 4
    }
}

impl Op {
    /// The op that `tag` and `arg` say (see the module docs).
    pub fn decode(tag: u8, arg: u8) -> Op {
        let hi = tag >> 4;
        let split = tag & SPLIT != 0;
        match tag % KINDS {
            0 => Op::AddNode {
                node: hi % NODES,
                cpus: arg % 4 + 1,
            },
            1 => Op::DeleteNode { node: hi % NODES },
            2 => Op::UpdateNode {
                node: hi % NODES,
                cpus: arg % 4 + 1,
                tainted: arg & 4 != 0,
            },
            3 => Op::AddGroup {
                group: hi % GROUPS,
                min: arg % 5,
            },
            4 => Op::UpdateGroup {
                group: hi % GROUPS,
                min: arg % 5,
            },
            5 => Op::DeleteGroup { group: hi % GROUPS },
            6 => Op::AddPod {
                pod: hi % PODS,
                group: Some(arg & 3).filter(|g| *g < GROUPS),
                half_cpus: (arg >> 2) % 4 + 1,
                priority: (arg >> 4) % 4,
            },
            7 => Op::UpdatePod {
                pod: hi % PODS,
                priority: arg % 4,
            },
            8 => Op::DeletePod { pod: hi % PODS },
            9 => Op::Schedule {
                plugin: match arg % 8 {
                    0..=3 => Verdict::Allow,
                    4 => Verdict::Wait {
                        timeout: hi % PLUGIN_WAITS_MS.len() as u8,
                    },
                    5 => Verdict::Reject,
                    6 => Verdict::Error,
                    _ => Verdict::Panic,
                },
                split,
            },
            10 => Op::Bind {
                answer: match arg % 4 {
                    0 | 1 => BindAnswer::Ok,
                    2 => BindAnswer::Fail,
                    _ => BindAnswer::Panic,
                },
                split,
            },
            11 => Op::BindAll,
            12 => Op::Settle,
            13 => Op::Advance {
                step: arg % STEPS_MS.len() as u8,
            },
            14 => Op::Decide {
                pod: hi % PODS,
                allow: arg & 1 == 0,
            },
            _ => Op::Observe,
        }
    }

    /// The canonical `(tag, arg)` of this op: [`Op::decode`] gives it back.
    pub fn encode(&self) -> (u8, u8) {
        let tag = |kind: u8, hi: u8| kind | hi << 4;
        match *self {
            Op::AddNode { node, cpus } => (tag(0, node), cpus - 1),
            Op::DeleteNode { node } => (tag(1, node), 0),
            Op::UpdateNode {
                node,
                cpus,
                tainted,
            } => (tag(2, node), (cpus - 1) | u8::from(tainted) << 2),
            Op::AddGroup { group, min } => (tag(3, group), min),
            Op::UpdateGroup { group, min } => (tag(4, group), min),
            Op::DeleteGroup { group } => (tag(5, group), 0),
            Op::AddPod {
                pod,
                group,
                half_cpus,
                priority,
            } => (
                tag(6, pod),
                group.unwrap_or(3) | (half_cpus - 1) << 2 | priority << 4,
            ),
            Op::UpdatePod { pod, priority } => (tag(7, pod), priority),
            Op::DeletePod { pod } => (tag(8, pod), 0),
            Op::Schedule { plugin, split } => {
                let (timeout, arg) = match plugin {
                    Verdict::Allow => (0, 0),
                    Verdict::Wait { timeout } => (timeout, 4),
                    Verdict::Reject => (0, 5),
                    Verdict::Error => (0, 6),
                    Verdict::Panic => (0, 7),
                };
                (tag(9, timeout) | split_bit(split), arg)
            }
            Op::Bind { answer, split } => {
                let arg = match answer {
                    BindAnswer::Ok => 0,
                    BindAnswer::Fail => 2,
                    BindAnswer::Panic => 3,
                };
                (tag(10, 0) | split_bit(split), arg)
            }
            Op::BindAll => (tag(11, 0), 0),
            Op::Settle => (tag(12, 0), 0),
            Op::Advance { step } => (tag(13, 0), step),
            Op::Decide { pod, allow } => (tag(14, pod), u8::from(!allow)),
            Op::Observe => (tag(15, 0), 0),
        }
    }

    /// Whether this is a cluster event — a node, group or pod added, updated or deleted —
    /// which a split [`Op::Schedule`] or [`Op::Bind`] runs inside its cycle.
    pub fn is_cluster_event(&self) -> bool {
        matches!(
            self,
            Op::AddNode { .. }
                | Op::DeleteNode { .. }
                | Op::UpdateNode { .. }
                | Op::AddGroup { .. }
                | Op::UpdateGroup { .. }
                | Op::DeleteGroup { .. }
                | Op::AddPod { .. }
                | Op::UpdatePod { .. }
                | Op::DeletePod { .. }
        )
    }

    /// Whether this is a split [`Op::Schedule`] or [`Op::Bind`].
    pub fn splits(&self) -> bool {
        matches!(
            self,
            Op::Schedule { split: true, .. } | Op::Bind { split: true, .. }
        )
    }
}

/// [`SPLIT`] if `split`.
fn split_bit(split: bool) -> u8 {
    if split {
        SPLIT
    } else {
        0
    }
}

impl Input {
    /// The input `bytes` say (see the module docs); the empty string is the default setup
    /// (Hardened, the Permit barrier, no plugin) with no ops.
    pub fn decode(bytes: &[u8]) -> Input {
        let (setup, ops) = match bytes.split_first() {
            Some((first, rest)) => (*first, rest),
            None => (0, &[][..]),
        };
        Input {
            setup: Setup::decode(setup),
            ops: ops
                .chunks_exact(2)
                .take(MAX_OPS)
                .map(|pair| Op::decode(pair[0], pair[1]))
                .collect(),
        }
    }

    /// Bytes that [`decode`](Self::decode) turns back into this input.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![self.setup.encode()];
        for op in &self.ops {
            let (tag, arg) = op.encode();
            out.extend([tag, arg]);
        }
        out
    }
}

// libFuzzer's bytes as an `Input`, all of them (`Input::decode`), so that `cargo fuzz fmt`
// prints it.
crate::arbitrary_from_bytes!(Input);
