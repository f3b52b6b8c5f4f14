//! The `gangway` command: `gangway simulate` runs the real scheduler core on a workload.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gangway_model::simulate::{self, Options};

/// gangway: the concurrency core of Kubernetes gang scheduling, checked race-free.
#[derive(Parser, Debug)]
#[command(name = "gangway", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the real scheduler core on a workload (an embedded default, or a TOML/JSON file)
    /// and print what bound, what timed out, partial gangs, lost pods and leaked reservations.
    /// Exits 1 if a Hardened run breaks I3, I4 or I6 (an Upstream run reports its hazards).
    Simulate(Options),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Simulate(options) => simulate_command(&options),
    }
}

fn simulate_command(options: &Options) -> ExitCode {
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
    let hardened = gangway::Mode::from(options.mode) == gangway::Mode::Hardened;
    if hardened && !report.is_clean() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
