//! The command line: what an operator can set, with kube-scheduler's names where it has one.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use gangsched::{GangCycle, Mode, SchedulerConfig};

use crate::duration::parse_duration;

/// gangway-scheduler: schedules the pods whose `spec.schedulerName` is its own, a gang (a
/// `scheduling.k8s.io/v1beta1` PodGroup with a gang policy) all or nothing, with gangsched's
/// hardened core inside.
#[derive(Clone, Debug, Parser)]
#[command(name = "gangway-scheduler", version)]
pub struct Options {
    /// The kubeconfig to use. Without it: the in-cluster service account when running in a
    /// pod, else `KUBECONFIG`, else `~/.kube/config`.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The `spec.schedulerName` of the pods this scheduler schedules.
    #[arg(long, default_value = "gangway-scheduler")]
    pub scheduler_name: String,

    /// `hardened` (gangway's guarantees H1-H7, the default) or `upstream` (kube-scheduler's
    /// gang behaviour step for step, its races included).
    #[arg(long, value_enum, default_value_t = ModeArg::Hardened)]
    pub mode: ModeArg,

    /// How a gang's members are scheduled: `pod-group` (together in one cycle, nothing held
    /// while a gang waits: H6) or `permit-barrier` (one by one, meeting at Permit).
    #[arg(long, value_enum, default_value_t = GangCycleArg::PodGroup)]
    pub gang_cycle: GangCycleArg,

    /// How long a gang waits at Permit for its quorum (pod-group cycle: how long an admitted
    /// gang's members may wait for their binding cycles).
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    pub permit_timeout: Duration,

    /// Binding workers: binds in flight to the API server at once (kube-scheduler binds each
    /// pod in a goroutine of its own). Each is a thread blocked on its request.
    #[arg(long, default_value_t = 16)]
    pub workers: usize,

    /// Requests per second this scheduler writes to the API server (binds, status patches,
    /// events), as kube-scheduler's `--kube-api-qps`.
    #[arg(long, default_value_t = 50.0)]
    pub kube_api_qps: f64,

    /// Requests allowed in a burst above the QPS, as kube-scheduler's `--kube-api-burst`.
    #[arg(long, default_value_t = 100)]
    pub kube_api_burst: u32,

    /// Elect a leader on a Lease so that of several replicas only one binds.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,

    /// The Lease's name.
    #[arg(long, default_value = "gangway-scheduler")]
    pub leader_elect_resource_name: String,

    /// The Lease's namespace (default: this pod's namespace from `POD_NAMESPACE` or the
    /// service account, else `kube-system`).
    #[arg(long)]
    pub leader_elect_resource_namespace: Option<String>,

    /// How long a lease holds without renewal: a follower takes over within it.
    #[arg(long, value_parser = parse_duration, default_value = "15s")]
    pub leader_elect_lease_duration: Duration,

    /// This replica's identity in the Lease (default: the host name and a random suffix).
    #[arg(long)]
    pub identity: Option<String>,

    /// Where `/metrics`, `/healthz` and `/readyz` are served.
    #[arg(long, default_value = "0.0.0.0:10259")]
    pub bind_address: SocketAddr,

    /// How long to keep trying an unreachable API server at start before exiting non-zero.
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    pub startup_timeout: Duration,

    /// Log filter: a level, or `target=level` pairs (`info,gangsched=debug`). Default: `RUST_LOG`,
    /// else `info`.
    #[arg(long)]
    pub log: Option<String>,

    /// Test seam (the `faults` feature): park the process at `POINT:N`, the N-th time it
    /// reaches POINT, so that a test can kill -9 it there; with `:MILLIS`, hold only that thread
    /// for MILLIS milliseconds, then go on. Points: `recorded` (a gang's placement recorded,
    /// nothing bound), `bound` (after a bind), `released` (a pod's nomination cleared),
    /// `placement-read` (a bind has read its gang's placement, before the gang's record lock).
    #[cfg(feature = "faults")]
    #[arg(long, value_name = "POINT:N[:MILLIS]")]
    pub pause_at: Option<String>,

    /// Test seam (the `faults` feature), H7's witness: bind a gang's members without recording
    /// its placement first.
    #[cfg(feature = "faults")]
    #[arg(long)]
    pub skip_placement_record: bool,

    /// Test seam (the `faults` feature), the witness of scheduler-plugins#293: a released
    /// member's nomination is not cleared.
    #[cfg(feature = "faults")]
    #[arg(long)]
    pub keep_released_nominations: bool,
}

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// gangway's guarantees.
    Hardened,
    /// kube-scheduler's behaviour.
    Upstream,
}

/// `--gang-cycle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GangCycleArg {
    /// One cycle for the whole gang.
    PodGroup,
    /// A cycle per member, meeting at Permit.
    PermitBarrier,
}

impl Options {
    /// The core's configuration.
    pub fn scheduler_config(&self) -> SchedulerConfig {
        let mode = match self.mode {
            ModeArg::Hardened => Mode::Hardened,
            ModeArg::Upstream => Mode::Upstream,
        };
        let cycle = match self.gang_cycle {
            GangCycleArg::PodGroup => GangCycle::PodGroup,
            GangCycleArg::PermitBarrier => GangCycle::PermitBarrier,
        };
        SchedulerConfig::default()
            .with_mode(mode)
            .with_gang_cycle(cycle)
            .with_permit_timeout(self.permit_timeout)
            .with_workers(self.workers.max(1))
    }

    /// Whether the placement of a gang is recorded before its first bind (H7): always, but for
    /// the witness build's `--skip-placement-record`.
    pub fn records_placement(&self) -> bool {
        #[cfg(feature = "faults")]
        {
            !self.skip_placement_record
        }
        #[cfg(not(feature = "faults"))]
        {
            true
        }
    }

    /// Whether a member released instead of bound has its recorded nomination cleared: always,
    /// but for the witness build's `--keep-released-nominations`.
    pub fn clears_released_nominations(&self) -> bool {
        #[cfg(feature = "faults")]
        {
            !self.keep_released_nominations
        }
        #[cfg(not(feature = "faults"))]
        {
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_hardened_with_the_pod_group_cycle() {
        let options = Options::parse_from(["gangway-scheduler"]);
        let config = options.scheduler_config();
        assert_eq!(config.mode, Mode::Hardened);
        assert_eq!(config.gang_cycle, GangCycle::PodGroup);
        assert_eq!(config.permit_timeout, Duration::from_secs(300));
        assert!(options.leader_elect);
        assert!(options.records_placement());
        assert!(options.clears_released_nominations());
    }

    #[test]
    fn durations_read_as_go_writes_them() {
        let options = Options::parse_from(["gangway-scheduler", "--permit-timeout", "1m30s"]);
        assert_eq!(options.permit_timeout, Duration::from_secs(90));
        let bad = Options::try_parse_from(["gangway-scheduler", "--permit-timeout", "soon"]);
        let message = bad.unwrap_err().to_string();
        assert!(message.contains("not a duration"), "{message}");
    }
}
