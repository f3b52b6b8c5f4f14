//! The `gangway` command: `gangway check` model-checks the gang protocol over the real state
//! machine; `gangway simulate` runs the real scheduler core on a workload.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gangway_check as check;
use gangway_cli::simulate::{self, Options};

mod differential_command;
use differential_command::{differential_command, DifferentialArgs};

/// mimalloc rather than the system allocator: the checker clones and drops millions of small
/// states across its threads, and `gangway check` runs in half the time (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// gangway: the concurrency core of Kubernetes gang scheduling, checked race-free.
#[derive(Parser, Debug)]
#[command(name = "gangway", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Model-check the gang protocol over the real state machine: every ordering of the
    /// scheduler's, the timer's, the binders' and the cluster's critical sections on a small
    /// cluster. Prints states explored, states/s and each property's verdict, with a numbered
    /// timeline for every counterexample. Exits 1 if a Hardened check finds one (with
    /// --expect-counterexample: if none is found, in either mode).
    Check(CheckArgs),
    /// Run the real scheduler core on a workload (an embedded default, or a TOML/JSON file)
    /// and print what bound, what timed out, partial gangs, lost pods and leaked reservations.
    /// Exits 1 if a Hardened run breaks I3, I4 or I6 (an Upstream run reports its hazards).
    Simulate(Options),
    /// Run a workload of the Go permit-barrier anchor (anchors/go-permit) through gangway's
    /// gang plugin, waiting map, decision delivery and binding workers (no-op bind); print one
    /// key=value line with the Go program's keys (--json: one JSON object). Exits 1 if the
    /// outcome is wrong (a pod not bound — W2: not rejected by its timeout —, the waiting map
    /// not empty, a pod still assumed; W3: a pod no longer waiting).
    Bench(BenchArgs),
    /// Run traces through kube-scheduler's own scheduling queue (the Go harness in
    /// upstream/, k8s.io/kubernetes v1.36) and through gangway's, and print, for each, the
    /// share of steps whose observations are equal and the first step where they differ, with
    /// both observations. Exits 1 if any trace differs.
    Differential(DifferentialArgs),
}

/// `gangway bench`'s flags.
#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// The workload: W1 (barrier, 10,000 gangs × 8), W2 (hold, 100,000 pods timing out after
    /// 2 s), W3 (contention, 10,000 waiting pods, 1,000,000 operations) or W4 (fan-out, one
    /// gang of 10,000).
    #[arg(value_enum, ignore_case = true)]
    workload: gangway_cli::bench::Workload,
    /// Multiply the workload's size (gangs for W1, W2 and W3, members for W4), for the scaling
    /// table (at least 1).
    #[arg(long, default_value_t = 1, value_parser = gangway_cli::parse_count)]
    scale: usize,
    /// Binding worker threads (W3: threads running the operations; at least 1).
    #[arg(long, default_value_t = 2, value_parser = gangway_cli::parse_count)]
    workers: usize,
    /// W3's "iterate over one gang": each member looked up under the gang's lock (members),
    /// or a walk over every waiting pod (scan). Go's -iter.
    #[arg(long, value_enum, default_value = "members")]
    iter: gangway_cli::bench::Iter,
    /// Print the figures as one JSON object (the same keys and values as the key=value line).
    #[arg(long)]
    json: bool,
}

/// `gangway check`'s flags.
#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// The cluster size.
    #[arg(long, value_enum, default_value = "standard")]
    preset: check::Preset,
    /// Upstream (its races included: expect counterexamples) or Hardened.
    #[arg(long, value_enum, default_value = "hardened")]
    mode: simulate::ModeArg,
    /// Checker threads (at least 1).
    #[arg(long, default_value_t = 2, value_parser = gangway_cli::parse_count)]
    threads: usize,
    /// Breadth first (shortest counterexamples), depth first (far less memory), or symmetric
    /// (depth first over every order of a gang's tied members, one state per renaming of them).
    #[arg(long, value_enum, default_value = "bfs")]
    search: check::Search,
    /// Print the report as JSON: each property with its id (I3 … I9), and the cluster checked
    /// dimension by dimension.
    #[arg(long)]
    json: bool,
    /// Write the first counterexample as an SVG sequence diagram to this file (checked before
    /// the run: an unwritable path fails at once).
    #[arg(long, value_name = "FILE")]
    trace_svg: Option<std::path::PathBuf>,
    /// Exit 0 only if some invariant has a counterexample, 1 (saying so) if none has: for CI
    /// to assert that Upstream still shows its races.
    #[arg(long)]
    expect_counterexample: bool,
    /// Open stateright's explorer on ADDR (e.g. localhost:3000; port 0 picks a free one)
    /// instead of checking: step through the preset's states in a browser. Prints
    /// `serving on URL` on stdout first, then blocks (Ctrl-C to stop).
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with_all = ["json", "trace_svg", "expect_counterexample"]
    )]
    serve: Option<String>,
    /// Check I9 (no hold-and-wait) with the Permit barrier too: the pod-group cycle's
    /// guarantee, which the barrier breaks (its witness, with --expect-counterexample). The
    /// pod-group cycle always checks it; progress without timeouts is checked in both.
    #[arg(long)]
    hold_and_wait: bool,
    /// Change any dimension of the preset's cluster.
    #[command(flatten)]
    dimensions: check::Dimensions,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check_command(&args),
        Command::Simulate(options) => simulate_command(&options),
        Command::Bench(args) => bench_command(&args),
        Command::Differential(args) => differential_command(&args),
    }
}

fn bench_command(args: &BenchArgs) -> ExitCode {
    match gangway_cli::bench::run(args.workload, args.scale, args.workers, args.iter) {
        Ok(line) if args.json => {
            println!("{}", line.to_json());
            ExitCode::SUCCESS
        }
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gangway bench {:?}: check failed: {e}", args.workload);
            ExitCode::FAILURE
        }
    }
}

fn check_command(args: &CheckArgs) -> ExitCode {
    let mode = gangsched::Mode::from(args.mode);
    let config = match args.dimensions.apply(args.preset.config(mode)) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("gangway check: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(addr) = &args.serve {
        eprintln!("stateright explorer for {config} in {mode:?} mode (blocks; Ctrl-C to stop)");
        return match check::serve(config, args.threads, addr) {
            Ok(never) => match never {},
            Err(e) => {
                eprintln!("gangway check: cannot serve the explorer on {addr}: {e}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(path) = &args.trace_svg {
        if let Err(e) = gangway_cli::output::check_writable(path) {
            eprintln!("gangway check: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    eprintln!("checking {config} in {mode:?} mode…");
    let model = check::GangProtocol {
        hold_and_wait: args.hold_and_wait,
        ..check::GangProtocol::new(config)
    };
    let report = check::check_with(model, args.preset, args.threads, args.search);
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        )
    } else {
        report.write_text(&mut out)
    };
    if let Err(e) = written {
        eprintln!("gangway check: cannot write the report: {e}");
        return ExitCode::from(2);
    }
    if let Some(path) = &args.trace_svg {
        let counterexample = report
            .properties
            .iter()
            .find(|p| p.kind == "always" && !p.holds)
            .and_then(|p| p.trace.as_ref());
        match counterexample {
            Some(trace) => {
                if let Err(e) = std::fs::write(path, trace.to_svg()) {
                    eprintln!("gangway check: cannot write {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            None => eprintln!("gangway check: no counterexample, no {}", path.display()),
        }
    }
    if args.expect_counterexample {
        if report.has_counterexample() {
            ExitCode::SUCCESS
        } else {
            eprintln!("gangway check: no counterexample found (--expect-counterexample)");
            ExitCode::FAILURE
        }
    } else if mode == gangsched::Mode::Hardened && !report.all_hold() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn simulate_command(options: &Options) -> ExitCode {
    if let Some(level) = options.log {
        let level = match level {
            simulate::LogLevel::Info => tracing::Level::INFO,
            simulate::LogLevel::Debug => tracing::Level::DEBUG,
            simulate::LogLevel::Trace => tracing::Level::TRACE,
        };
        // Virtual time runs faster than the wall clock, so wall-clock stamps would mislead.
        tracing_subscriber::fmt()
            .with_max_level(level)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .without_time()
            .init();
    }
    let report = simulate::load(options).and_then(|workload| simulate::run(options, &workload));
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            eprintln!("gangway simulate: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    let written = if options.json {
        writeln!(out, "{}", report.to_json())
    } else {
        report.write_text(&mut out)
    };
    if let Err(e) = written {
        eprintln!("gangway simulate: cannot write the report: {e}");
        return ExitCode::from(2);
    }
    let hardened = gangsched::Mode::from(options.mode) == gangsched::Mode::Hardened;
    if hardened && !report.is_clean() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
