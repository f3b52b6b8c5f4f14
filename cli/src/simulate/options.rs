//! Command-line options of `gangway simulate`.

use std::path::PathBuf;

use gangsched::GangCycle;

use super::generate::{ContentionSpec, GenerateSpec};

/// Options of `gangway simulate [WORKLOAD]`.
#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// Workload file (.toml or .json: nodes, groups, pods with arrival times). Without it, a
    /// generated workload sized by --nodes, --gangs, --min-gang, --max-gang and --basic-pods.
    #[arg(value_name = "WORKLOAD")]
    pub workload: Option<PathBuf>,

    /// Scheduler behaviour: `upstream` (kube-scheduler, races included) or `hardened` (H1–H5).
    #[arg(long, value_enum, default_value = "hardened")]
    pub mode: ModeArg,

    /// How gangs are scheduled: `barrier` (each member reserves its node and waits at Permit
    /// for its gang: kube-scheduler's gang plugin) or `pod-group` (a gang placed in one cycle
    /// on one snapshot, all or nothing: 1.36's pod-group cycle).
    #[arg(long, value_name = "CYCLE", default_value = "barrier",
          value_parser = crate::parse_gang_cycle)]
    pub gang_cycle: GangCycle,

    /// Generate the contention workload instead of the default one: --gangs gangs that each
    /// need 60–90% of --nodes nodes (one member per node), arriving over 60 s, each member
    /// running --run-secs once bound. Reports gangs per simulated second, time to bind and
    /// the reservation-seconds held by attempts that did not bind.
    #[arg(long, conflicts_with = "workload")]
    pub contention: bool,

    /// With --contention: how long each member runs once bound, in seconds (default 60).
    #[arg(long, value_name = "SECS", requires = "contention")]
    pub run_secs: Option<u64>,

    /// Seed for the generated workload and for injected bind failures and deletes; the same
    /// seed gives the same run in virtual time.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Probability (0 to 1) that a bind fails, exercising unreserve and requeue.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate, value_name = "RATE")]
    pub bind_failure_rate: f64,

    /// Probability (0 to 1) that a pod is deleted while pending or waiting at permit.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate, value_name = "RATE")]
    pub delete_rate: f64,

    /// Print the summary as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,

    /// Run on the wall clock (permit timeouts and arrivals take real time) instead of the
    /// default deterministic virtual time.
    #[arg(long)]
    pub real_time: bool,

    /// Nodes in the generated workload (64 CPU, 256 GiB each; at least 1). Default 500, or
    /// 32 with --contention.
    #[arg(long, value_name = "N", value_parser = crate::parse_count)]
    pub nodes: Option<usize>,

    /// Gangs in the generated workload. Default 1,000, or 100 with --contention.
    #[arg(long, value_name = "N")]
    pub gangs: Option<usize>,

    /// Smallest gang size in the generated workload.
    #[arg(long, default_value_t = 2, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub min_gang: u32,

    /// Largest gang size in the generated workload (at least --min-gang).
    #[arg(long, default_value_t = 64, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_gang: u32,

    /// Pods outside any gang in the generated workload (a quarter of them in Basic groups).
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub basic_pods: usize,

    /// Print the core's tracing spans and events on stderr: scheduling and binding cycles,
    /// every Permit decision, gang allows and rejections, queue moves. LEVEL is `info` (gang
    /// decisions only), `debug` (the default: every decision and move) or `trace`.
    #[arg(long, value_name = "LEVEL", num_args = 0..=1, default_missing_value = "debug")]
    pub log: Option<LogLevel>,
}

/// How much `--log` shows.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    /// Gang attempts decided as a whole.
    Info,
    /// Every cycle, decision and queue move.
    Debug,
    /// Everything.
    Trace,
}

impl Options {
    /// The spec for [`Workload::generate`](super::Workload::generate) from the sizing flags and
    /// `--seed`. Errors if `--max-gang` is below `--min-gang`.
    pub fn generate_spec(&self) -> Result<GenerateSpec, String> {
        if self.max_gang < self.min_gang {
            return Err(format!(
                "--max-gang ({}) is below --min-gang ({})",
                self.max_gang, self.min_gang
            ));
        }
        let default = GenerateSpec::default();
        Ok(GenerateSpec {
            nodes: self.nodes.unwrap_or(default.nodes),
            gangs: self.gangs.unwrap_or(default.gangs),
            min_gang: self.min_gang,
            max_gang: self.max_gang,
            basic_pods: self.basic_pods,
            seed: self.seed,
        })
    }

    /// The spec for [`Workload::contention`](super::Workload::contention) from `--nodes`,
    /// `--gangs`, `--run-secs` and `--seed`. Errors on a run time too long to count in
    /// milliseconds.
    pub fn contention_spec(&self) -> Result<ContentionSpec, String> {
        let default = ContentionSpec::default();
        let run_ms = match self.run_secs {
            None => default.run_ms,
            Some(secs) => secs
                .checked_mul(1000)
                .filter(|&ms| ms <= super::LATEST_MS)
                .ok_or_else(|| format!("--run-secs {secs} is too long"))?,
        };
        Ok(ContentionSpec {
            nodes: self.nodes.unwrap_or(default.nodes),
            gangs: self.gangs.unwrap_or(default.gangs),
            run_ms,
            seed: self.seed,
        })
    }
}

/// `--mode` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ModeArg {
    /// kube-scheduler 1.36 step for step, including its races.
    Upstream,
    /// gangway's guarantees H1–H5 on top of upstream (the default).
    #[default]
    Hardened,
}

impl From<ModeArg> for gangsched::Mode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::Upstream => gangsched::Mode::Upstream,
            ModeArg::Hardened => gangsched::Mode::Hardened,
        }
    }
}

/// Parses a probability: a finite number from 0 to 1.
fn parse_rate(s: &str) -> Result<f64, String> {
    let rate: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=1.0).contains(&rate) {
        Ok(rate)
    } else {
        Err(format!(
            "{s} is not a probability (expected a number from 0 to 1)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        options: Options,
    }

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        let argv = std::iter::once("simulate").chain(args.iter().copied());
        Cli::try_parse_from(argv).map(|c| c.options)
    }

    #[test]
    fn defaults_match_the_issue() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.workload, None);
        assert_eq!(o.mode, ModeArg::Hardened);
        assert_eq!((o.seed, o.bind_failure_rate, o.delete_rate), (1, 0.0, 0.0));
        assert!(!o.json && !o.real_time);
        assert_eq!(o.generate_spec().unwrap(), GenerateSpec::default());
        assert_eq!(gangsched::Mode::from(o.mode), gangsched::Mode::Hardened);
        assert_eq!(o.gang_cycle, GangCycle::PermitBarrier);
        assert!(!o.contention);
    }

    #[test]
    fn contention_has_its_own_sizes() {
        let o = parse(&["--contention", "--gang-cycle", "pod-group"]).unwrap();
        assert_eq!(o.gang_cycle, GangCycle::PodGroup);
        assert_eq!(o.contention_spec().unwrap(), ContentionSpec::default());
        let o = parse(&[
            "--contention",
            "--nodes",
            "8",
            "--gangs",
            "3",
            "--run-secs",
            "5",
        ])
        .unwrap();
        let spec = o.contention_spec().unwrap();
        assert_eq!((spec.nodes, spec.gangs, spec.run_ms), (8, 3, 5_000));
        let err = parse(&["--run-secs", "5"]).unwrap_err().to_string();
        assert!(err.contains("--contention"), "{err}");
        let err = parse(&["w.toml", "--contention"]).unwrap_err().to_string();
        assert!(err.contains("cannot be used with"), "{err}");
        let o = parse(&["--contention", "--run-secs", &u64::MAX.to_string()]).unwrap();
        assert!(o.contention_spec().unwrap_err().contains("too long"));
        let err = parse(&["--gang-cycle", "permit"]).unwrap_err().to_string();
        assert!(err.contains("barrier or pod-group"), "{err}");
    }

    #[test]
    fn flags_parse() {
        let o = parse(&[
            "w.toml",
            "--mode",
            "upstream",
            "--seed",
            "7",
            "--bind-failure-rate",
            "0.25",
            "--delete-rate",
            "1",
            "--json",
            "--real-time",
            "--max-gang",
            "8",
        ])
        .unwrap();
        assert_eq!(o.workload.as_deref(), Some(std::path::Path::new("w.toml")));
        assert_eq!(gangsched::Mode::from(o.mode), gangsched::Mode::Upstream);
        assert_eq!((o.seed, o.bind_failure_rate, o.delete_rate), (7, 0.25, 1.0));
        assert!(o.json && o.real_time);
        assert_eq!(o.generate_spec().unwrap().max_gang, 8);
    }

    #[test]
    fn bad_rates_and_sizes_are_rejected_with_a_reason() {
        let err = parse(&["--bind-failure-rate", "1.5"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--bind-failure-rate") && err.contains("from 0 to 1"),
            "{err}"
        );
        let err = parse(&["--delete-rate", "NaN"]).unwrap_err().to_string();
        assert!(err.contains("not a probability"), "{err}");
        let err = parse(&["--delete-rate", "x"]).unwrap_err().to_string();
        assert!(err.contains("not a number"), "{err}");
        assert!(parse(&["--min-gang", "0"]).is_err());
        let err = parse(&["--nodes", "0"]).unwrap_err().to_string();
        assert!(
            err.contains("--nodes") && err.contains("at least 1"),
            "{err}"
        );
        assert_eq!(parse(&["--nodes", "1"]).unwrap().nodes, Some(1));
        let err = parse(&["--min-gang", "9", "--max-gang", "8"])
            .unwrap()
            .generate_spec();
        assert!(err.unwrap_err().contains("--max-gang"));
    }
}
