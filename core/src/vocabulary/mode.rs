/// Which behaviour a component follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// kube-scheduler 1.36, step for step — including its races (partial gang, resources held
    /// while waiting). For fidelity, and as the witness that gangway's checkers find them.
    Upstream,
    /// gangway's guarantees H1–H5 on top of upstream's behaviour (the default).
    #[default]
    Hardened,
}
