//! `gangway differential`: queue, gang and driver traces through kube-scheduler's own code
//! (the Go harnesses in upstream/) and through gangway's, compared step by step.

use std::process::ExitCode;

/// `gangway differential`'s flags.
#[derive(clap::Args, Debug)]
pub struct DifferentialArgs {
    /// The queue's Go harness (`go build -ldflags=-checklinkname=0 -o BIN ./cmd/queuetrace` in
    /// upstream/), for queue traces and generated ones.
    #[arg(long, value_name = "BIN")]
    upstream: Option<std::path::PathBuf>,
    /// The gang's Go harness (`go test -c -o BIN ./cmd/gangtrace` in upstream/), for gang
    /// traces: a trace that schedules pods (upstream/README.md) is one, run through gangway's
    /// gang plugin and waiting map in Mode::Upstream.
    #[arg(long, value_name = "BIN")]
    gang: Option<std::path::PathBuf>,
    /// The driver's Go harness (`go test -c -o BIN ./cmd/drivertrace` in upstream/), for
    /// driver traces: a trace with `schedule_one` steps (upstream/README.md) is one, run
    /// through kube-scheduler's `ScheduleOne` there and gangway's whole `Scheduler` in
    /// Mode::Upstream here.
    #[arg(long, value_name = "BIN")]
    driver: Option<std::path::PathBuf>,
    /// gangway's queue with the rules of kube-scheduler before 1.33 (`QueueConfig::BEFORE_1_33`:
    /// only the active queue pops, backoffs compared exactly) instead of 1.36's defaults; the
    /// Go harness keeps 1.36's, so the traces that reach those rules differ.
    #[arg(long)]
    before_1_33: bool,
    /// gangway's queue with its default for pod group members (`QueueConfig::DEFAULT`: a
    /// failed member waits for an event like any pod) instead of the gang gates' rule the Go
    /// harness runs (`group_members_back_off`: it backs off whatever happened).
    #[arg(long)]
    group_members_wait: bool,
    /// gangway's queue with kubernetes#139162 (`QueueConfig::wildcards_move_gated`: a
    /// wildcard event, the leftover flush's above all, moves a gated pod) instead of v1.36.3's
    /// rule, which the Go harness runs: traces with a gated pod left past the flush differ.
    #[arg(long)]
    wildcards_move_gated: bool,
    /// Also run this many generated traces (random valid operations over six pods, seeds
    /// from --seed on); a differing one is written to target/differential-SEED.jsonl.
    #[arg(long, default_value_t = 0)]
    generate: u64,
    /// Also run this many generated gang traces (random valid operations over six pods in two
    /// gangs, seeds from --seed on; needs --gang); a differing one is written to
    /// target/differential-gang-SEED.jsonl.
    #[arg(long, default_value_t = 0)]
    generate_gang: u64,
    /// Also run this many generated driver traces (random valid operations over nodes, pods,
    /// Permit plugins, bind failures, deletes and time, seeds from --seed on; needs --driver);
    /// a differing one is written to target/differential-driver-SEED.jsonl.
    #[arg(long, default_value_t = 0)]
    generate_driver: u64,
    /// Also run every input in this directory of the `queue_moves` fuzz corpus (repeatable:
    /// fuzz/seeds/queue_moves, fuzz/regressions/queue_moves, a working corpus), decoded as the
    /// fuzz target decodes it and made a queue trace with the lockstep's plugin profile (needs
    /// --upstream); a differing one is written to target/differential-corpus-NAME.jsonl.
    #[arg(long, value_name = "DIR")]
    corpus: Vec<std::path::PathBuf>,
    /// The first generated trace's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Operations in each generated trace.
    #[arg(long, default_value_t = 60, value_parser = gangway_cli::parse_count)]
    steps: usize,
    /// The traces (JSON lines, as upstream/README.md describes).
    #[arg(value_name = "TRACE", required_unless_present_any = ["generate", "generate_gang", "generate_driver", "corpus"])]
    traces: Vec<std::path::PathBuf>,
}

/// Adds one trace's `outcome` to `totals` and prints
/// it: a trace with a difference always, with the first difference; a generated one (named
/// `prefix` and its seed) only then, written to target/`file`-SEED.jsonl.
fn report<O: serde::Serialize, B: serde::Serialize + PartialEq>(
    name: &str,
    outcome: &gangway_cli::differential::Outcome<O, B>,
    totals: &mut Totals,
    prefix: &str,
    file: &str,
    trace: impl FnOnce() -> String,
) {
    totals.steps += outcome.steps;
    totals.equal += outcome.equal;
    totals.tie_pops += outcome.tie_pops;
    if let Some(step) = outcome.varies_from {
        totals.varying += 1;
        println!(
            "{name}: {} steps equal; kube-scheduler varies run to run from step {step} \
             (its goroutines' order), not compared from there",
            outcome.equal
        );
        return;
    }
    match &outcome.first {
        None if name.starts_with(prefix) => {}
        None => println!("{name}: {} steps, all equal", outcome.steps),
        Some(first) => {
            totals.differing += 1;
            println!(
                "{name}: {} of {} steps equal; {first}",
                outcome.equal, outcome.steps
            );
            if let Some(seed) = name.strip_prefix(prefix) {
                let path = format!("target/{file}-{seed}.jsonl");
                match std::fs::write(&path, trace()) {
                    Ok(()) => println!("  the trace: {path}"),
                    Err(e) => eprintln!("gangway differential: cannot write {path}: {e}"),
                }
            }
        }
    }
}

/// What a run of the differential adds up to.
#[derive(Default)]
struct Totals {
    /// Steps run.
    steps: usize,
    /// Steps whose observations are equal.
    equal: usize,
    /// Traces with a difference.
    differing: usize,
    /// Traces compared only up to where the real code varies run to run.
    varying: usize,
    /// Pops among tied pods where gangway followed the real code's choice.
    tie_pops: usize,
}

/// Runs `traces` of one kind (`gang`, `driver`) through the Go harness its flag names and
/// through gangway, reporting each; `Err` with the exit code if the harness is missing or a
/// trace cannot run (a generated one is written to target/ first).
fn run_traces<O, B: serde::Serialize + PartialEq>(
    kind: &str,
    bin: &Option<std::path::PathBuf>,
    traces: &[(String, Vec<O>)],
    run: impl Fn(&std::path::Path, &[O]) -> Result<gangway_cli::differential::Outcome<O, B>, String>,
    lines: impl Fn(&[O]) -> String,
    totals: &mut Totals,
) -> Result<(), ExitCode>
where
    O: serde::Serialize,
{
    if traces.is_empty() {
        return Ok(());
    }
    let Some(bin) = bin else {
        eprintln!("gangway differential: these traces need --{kind} BIN");
        return Err(ExitCode::from(2));
    };
    let prefix = format!("generated {kind} seed ");
    let file = format!("differential-{kind}");
    for (name, ops) in traces {
        let outcome = run(bin, ops).map_err(|e| {
            eprintln!("gangway differential: {name}: {e}");
            if let Some(seed) = name.strip_prefix(&prefix) {
                let path = format!("target/{file}-{seed}.jsonl");
                if std::fs::write(&path, lines(ops)).is_ok() {
                    eprintln!("  the trace: {path}");
                }
            }
            ExitCode::from(2)
        })?;
        report(name, &outcome, totals, &prefix, &file, || lines(ops));
    }
    Ok(())
}

pub fn differential_command(args: &DifferentialArgs) -> ExitCode {
    use gangway_cli::differential::{self, generate, trace, Op};
    let config = if args.before_1_33 {
        gangsched::QueueConfig::BEFORE_1_33
    } else {
        gangsched::QueueConfig::DEFAULT
    }
    .with_group_members_back_off(!args.group_members_wait)
    .with_wildcards_move_gated(args.wildcards_move_gated);
    // Each trace by name: the files, then the generated ones; gang traces apart.
    let mut traces: Vec<(String, Vec<Op>)> = Vec::new();
    let mut gang_traces = Vec::new();
    let mut driver_traces = Vec::new();
    for path in &args.traces {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("gangway differential: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        if differential::driver_trace::is_driver_trace(&text) {
            match differential::driver_trace::parse(&text) {
                Ok(ops) => driver_traces.push((path.display().to_string(), ops)),
                Err(e) => {
                    eprintln!("gangway differential: {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            continue;
        }
        if differential::gang_trace::is_gang_trace(&text) {
            match differential::gang_trace::parse(&text) {
                Ok(ops) => gang_traces.push((path.display().to_string(), ops)),
                Err(e) => {
                    eprintln!("gangway differential: {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            continue;
        }
        match trace::parse(&text) {
            Ok(ops) => traces.push((path.display().to_string(), ops)),
            Err(e) => {
                eprintln!("gangway differential: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    for seed in args.seed..args.seed.saturating_add(args.generate) {
        let ops = generate::trace(seed, args.steps, 6, config);
        traces.push((format!("generated seed {seed}"), ops));
    }
    for seed in args.seed..args.seed.saturating_add(args.generate_gang) {
        let ops = differential::gang_generate::trace(seed, args.steps);
        gang_traces.push((format!("generated gang seed {seed}"), ops));
    }
    for seed in args.seed..args.seed.saturating_add(args.generate_driver) {
        let ops = differential::driver_generate::trace(seed, args.steps);
        driver_traces.push((format!("generated driver seed {seed}"), ops));
    }
    let mut totals = Totals::default();
    let gang = run_traces(
        "gang",
        &args.gang,
        &gang_traces,
        differential::gang_differential,
        differential::gang_trace::to_json_lines,
        &mut totals,
    );
    let driver = gang.and_then(|()| {
        run_traces(
            "driver",
            &args.driver,
            &driver_traces,
            differential::driver_differential,
            differential::driver_trace::to_json_lines,
            &mut totals,
        )
    });
    if let Err(code) = driver {
        return code;
    }
    let corpus = match corpus_inputs(&args.corpus) {
        Ok(corpus) => corpus,
        Err(e) => {
            eprintln!("gangway differential: {e}");
            return ExitCode::from(2);
        }
    };
    let upstream = match (&args.upstream, traces.is_empty() && corpus.is_empty()) {
        (_, true) => std::path::PathBuf::new(),
        (Some(bin), false) => bin.clone(),
        (None, false) => {
            eprintln!("gangway differential: these traces need --upstream BIN");
            return ExitCode::from(2);
        }
    };
    for (name, ops) in &traces {
        let outcome = match differential::differential(&upstream, ops, config) {
            Ok(outcome) => outcome,
            Err(e) => {
                eprintln!("gangway differential: {name}: {e}");
                return ExitCode::from(2);
            }
        };
        let trace = || trace::to_json_lines(ops);
        report(
            name,
            &outcome,
            &mut totals,
            "generated seed ",
            "differential",
            trace,
        );
    }
    // An input the fuzz target itself fails is an error: a crash to fix, not a trace.
    let mut left_out = 0;
    for (name, input) in &corpus {
        let (translation, outcome) = match differential::corpus_differential(&upstream, input) {
            Ok(run) => run,
            Err(e) => {
                eprintln!("gangway differential: {name}: {e}");
                return ExitCode::from(2);
            }
        };
        left_out += translation.left_out;
        let trace = || trace::to_json_lines(&translation.ops);
        report(
            name,
            &outcome,
            &mut totals,
            "corpus ",
            "differential-corpus",
            trace,
        );
    }
    if !corpus.is_empty() {
        println!(
            "corpus: {} inputs as traces, {left_out} fuzzer ops left out (no informer or \
             scheduler makes them: differential::corpus)",
            corpus.len()
        );
    }
    let Totals {
        steps,
        equal,
        differing,
        varying,
        tie_pops,
    } = totals;
    let share = if steps == 0 {
        1.0
    } else {
        equal as f64 / steps as f64
    };
    println!(
        "fidelity: {equal} of {steps} steps equal ({:.1}%), {differing} of {} traces differ",
        share * 100.0,
        traces.len() + corpus.len() + gang_traces.len() + driver_traces.len()
    );
    if varying > 0 {
        println!("{varying} traces compared only up to where kube-scheduler varies run to run");
    }
    if tie_pops > 0 {
        println!(
            "{tie_pops} pops among pods tied in the queue's order took the pod kube-scheduler's \
             heap popped, not gangway's first by id (either is the queue's contract)"
        );
    }
    if differing == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The fuzz corpus inputs in `dirs`, named `corpus FILE`; how many each directory has, how
/// many do not decode (the fuzz target skips them too) and how many run a queue rule
/// kube-scheduler 1.36 has not (`Setup::upstream_has`: not compared) is printed.
fn corpus_inputs(
    dirs: &[std::path::PathBuf],
) -> Result<Vec<(String, gangway_model::queue::lockstep::Input)>, String> {
    use gangway_cli::differential::corpus;
    let mut inputs = Vec::new();
    for dir in dirs {
        let read = corpus::read_dir(dir)?;
        let total = read.len();
        let (mut skipped, mut gangway_only) = (0, 0);
        for (name, input) in read {
            match input {
                Some(input) if input.setup.upstream_has() => {
                    inputs.push((format!("corpus {name}"), input));
                }
                Some(_) => gangway_only += 1,
                None => skipped += 1,
            }
        }
        println!(
            "{}: {total} inputs, {} decode as the fuzz target decodes them, {gangway_only} of \
             those configure rules kube-scheduler 1.36 has not (not compared)",
            dir.display(),
            total - skipped
        );
    }
    Ok(inputs)
}
