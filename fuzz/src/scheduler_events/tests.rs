//! Replays of the committed inputs and the witnesses that the checks find planted flaws.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// Each seed round-trips, fits `-max_len`, passes every check, and walks the path it is
/// named after (the scheduler's counters say so).
#[test]
fn seeds_round_trip_fit_and_pass() {
    quiet_injected_panics();
    let mut lost = Vec::new();
    for (name, input) in seeds() {
        let bytes = input.encode();
        assert!(bytes.len() <= 128, "{name} is longer than -max_len");
        assert!(input.ops.len() <= MAX_OPS, "{name} has too many ops");
        assert_eq!(Input::decode(&bytes), input, "{name}");
        let stats = run(&input, None).unwrap_or_else(|failure| panic!("{name}: {failure}"));
        let walked = match name {
            "gang-binds" | "pod-group-admits" => stats.bound >= 2,
            "bind-failure" => stats.bind_failures == 2 && stats.plugin_panics == 1,
            // Through the barrier the sibling binds all the same; an admitted pod-group gang
            // left short releases it.
            "gang-bind-failure" => stats.bind_failures == 1 && stats.bound == 2,
            "pod-group-bind-failure" => stats.bind_failures == 1 && stats.permit_rejections >= 1,
            "delete-while-waiting" => stats.deleted_in_flight == 1,
            "delete-before-bind-frees-room" => stats.deleted_in_flight == 1 && stats.bound == 1,
            "permit-timeout" | "gang-deadline" => stats.permit_timeouts >= 1,
            "infeasible-group" => stats.unschedulable >= 1 && stats.bound == 3,
            "upstream-pod-group" => stats.bound == 2,
            "plugin-wait-decide" => stats.permit_rejections >= 1 && stats.plugin_panics == 1,
            "plugin-rejects-gang" => stats.permit_rejections >= 1 && stats.bound >= 1,
            "group-changes" => stats.cycles >= 2,
            "two-gangs-contend" => stats.permit_timeouts >= 1,
            // Their paths are the error branches they reach: `race_seeds_reach_their_branches`.
            race if RACES.iter().any(|(name, _)| *name == race) => true,
            other => panic!("{other}: no expectation"),
        };
        if !walked {
            eprintln!("{name} does not walk its path: {stats:?}");
            lost.push(name);
        }
    }
    assert!(lost.is_empty(), "seeds that miss their path: {lost:?}");
}

/// Every kind of op, both modes and both gang cycles appear in the seeds.
#[test]
fn seeds_walk_every_op_kind_and_setup() {
    let seeds = seeds();
    let kinds: std::collections::BTreeSet<u8> = seeds
        .iter()
        .flat_map(|(_, input)| input.ops.iter().map(|op| op.encode().0 & 15))
        .collect();
    assert_eq!(kinds.len(), 16, "op kinds seen: {kinds:?}");
    for mode in [gangsched::Mode::Hardened, gangsched::Mode::Upstream] {
        for cycle in [
            gangsched::GangCycle::PermitBarrier,
            gangsched::GangCycle::PodGroup,
        ] {
            let seen = seeds
                .iter()
                .any(|(_, i)| i.setup.mode == mode && i.setup.cycle == cycle);
            assert!(seen, "no seed in {mode:?} with {cycle:?}");
        }
    }
    assert!(
        seeds.iter().any(|(_, i)| i.setup.node_index),
        "no seed builds the node index"
    );
    assert!(
        seeds.iter().any(|(_, i)| i.setup.queue_index),
        "no seed builds the queue's indexes"
    );
}

/// The queue's derived indexes change no step (issue #23: scoped moves, and activations
/// that skip the members in flight already found past Reserve while their gang's unscheduled
/// stamp holds): every committed input and 3,000 pseudo-random ones, each run with the
/// indexes built from the start and without, trace alike, step by step, to the same end.
#[test]
fn the_queue_indexes_change_no_step() {
    quiet_injected_panics();
    let committed = ["seeds/scheduler_events", "regressions/scheduler_events"]
        .into_iter()
        .flat_map(crate::committed::committed_files)
        .map(|path| fs::read(path).expect("readable"));
    let random = crate::committed::pseudo_random_inputs(0x5eed_1d3e_c0de_0023, 3_000);
    let mut indexed_runs = 0;
    for bytes in committed.chain(random) {
        let input = Input::decode(&bytes);
        let with = |queue_index| {
            let mut input = input.clone();
            input.setup.queue_index = queue_index;
            let (result, steps) = trace(&input, None);
            (result.map_err(|f| format!("{}: {}", f.at, f.what)), steps)
        };
        let (walked, walked_steps) = with(false);
        let (indexed, indexed_steps) = with(true);
        assert_eq!(walked_steps, indexed_steps, "{input:?}");
        assert_eq!(walked, indexed, "{input:?}");
        indexed_runs += 1;
    }
    assert!(indexed_runs > 3_000);
}

/// Any bytes decode, and what decodes encodes back to bytes that decode the same.
#[test]
fn every_byte_string_is_an_input() {
    for bytes in crate::committed::pseudo_random_inputs(0x9e37_79b9_7f4a_7c15, 200) {
        let input = Input::decode(&bytes);
        assert!(input.ops.len() <= MAX_OPS);
        assert_eq!(Input::decode(&input.encode()), input);
    }
}

#[test]
fn committed_seeds_are_the_listed_ones() {
    crate::committed::assert_seeds_committed("scheduler_events", seeds(), |path| {
        let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Input::decode(&bytes)
    });
}

/// Replays every committed input: the seeds and the regressions (inputs that once failed).
#[test]
fn committed_scheduler_events_inputs_replay() {
    quiet_injected_panics();
    crate::committed::replay_committed("scheduler_events", |path| {
        run(&Input::decode(&fs::read(path).expect("readable")), None).map(drop)
    });
}

fn replay_regression(file: &str) {
    quiet_injected_panics();
    let path = dir("regressions/scheduler_events").join(file);
    let input = Input::decode(&fs::read(&path).expect("readable"));
    if let Err(failure) = run(&input, None) {
        panic!("{file}: {failure}");
    }
}

/// The fuzzer's first find (fuzz/README.md, "Findings"): Hardened, `g0` is a Basic group;
/// its member `p2` waits at Permit for the embedder's plugin; `g0` becomes `Gang { min 2 }`;
/// the next member `p1` passed the gang's Permit alone, its quorum counting `p2`, which was
/// reserved but still waiting — and could be rejected (its plugin's timeout), leaving `p1`
/// bound alone (I3). Fixed: Hardened rejects such a waiter when its group becomes a gang
/// (`gang::ops::BECAME_A_GANG`).
#[test]
fn basic_to_gang_quorum_counts_a_plugin_waiter() {
    replay_regression("basic-to-gang-quorum-counts-a-plugin-waiter");
}

/// The fuzzer's second find: Hardened pod-group cycle, `g0` (`Gang { min 1 }`) admits its
/// member `p5`; `g0` is deleted and added again as `Gang { min 2 }`; `p5`, allowed, kept
/// waiting to bind for a gang short of its quorum (I9). Fixed: `steps::group_added` releases
/// a gang left short, as `steps::group_updated` does.
#[test]
fn group_readded_with_higher_min_keeps_binding() {
    replay_regression("group-readded-with-higher-min-keeps-binding");
}

/// The fuzzer's third find, by `.ci/run`: the first find's fix rejected the waiter but left it
/// assumed until its binding cycle ran; `p1`'s Permit before then counted it and passed alone
/// (I3). Fixed: the members the rejection reached stop counting towards quorum in the same
/// critical section (then `gang::ops::reject_waiters_outside_the_gang`, now
/// `Conversion::apply` in `core/src/gang/group_object_ops.rs`).
#[test]
fn rejected_waiter_counts_until_its_binding_cycle() {
    replay_regression("rejected-waiter-counts-until-its-binding-cycle");
}

/// The fuzzer's fourth find, by the 30-minute run: `p8`, a member of the Basic group `g0`,
/// waits at Permit for `FuzzPermit` and times out — rejected, still assumed until its binding
/// cycle runs; `g0` becomes `Gang { min 3 }`; the third find's fix took only members still
/// waiting out of the quorum, so `p5`'s Permit counted `p8`, one member binding and itself,
/// and passed alone (I3). Fixed: every member a group let wait for another plugin while it was
/// no gang stops counting as it becomes one (`GroupState::wait_for_others`).
#[test]
fn timed_out_waiter_counts_once_its_group_is_a_gang() {
    replay_regression("timed-out-waiter-counts-once-its-group-is-a-gang");
}

/// Found by `.ci/run`'s fuzz step once the target judged its rests: Hardened pod-group cycle,
/// `g0` (minimum 3) placed `p1.1` and `p0.1` on the cycle's snapshot and turned `p10` and `p9`
/// away for the room they took; `p1.1` was deleted before the commit, so nothing it held was
/// released and nothing announced, and `p10` waited for the leftover flush with its gang's room
/// free (I7). Fixed: a member deleted unscheduled asks its parked siblings again
/// (`steps/member_gone.rs`; `regression_a_member_deleted_as_its_gang_cycle_runs_asks_its_siblings_again`
/// and, deleted once the gang is parked, `…_while_its_gang_is_parked_…` in the core).
#[test]
fn member_deleted_in_the_cycle_parks_siblings_with_room() {
    replay_regression("member-deleted-in-the-cycle-parks-siblings-with-room");
}

/// The witnesses: each file in `witnesses/scheduler_events/` is named after a plantable flaw
/// (`<Flaw>` or `<Flaw>.<anything>`) and is an input the fuzzer found with that flaw planted
/// (`GANGWAY_FUZZ_FLAW`, fuzz/README.md). On the real scheduler it passes every check; with
/// the flaw planted the checks fail, naming the invariant the flaw breaks.
#[test]
fn witnesses_find_their_planted_flaws() {
    quiet_injected_panics();
    let breaks = |flaw| PLANTABLE.iter().find(|(f, _)| *f == flaw).unwrap().1;
    crate::committed::check_witnesses(
        "scheduler_events",
        PLANTABLE.iter().map(|(f, _)| *f),
        |path, flaw| run(&Input::decode(&fs::read(path).expect("readable")), flaw).map(drop),
        |flaw, failure: &Failure| breaks(flaw).split('/').any(|id| failure.what.contains(id)),
    );
}

/// Writes `seeds/scheduler_events/` from [`seeds`].
#[test]
#[ignore = "writes files: run to regenerate the seed corpus"]
fn write_scheduler_events_seeds() {
    let dir = dir("seeds/scheduler_events");
    fs::create_dir_all(&dir).unwrap();
    for (name, input) in seeds() {
        fs::write(dir.join(name), input.encode()).unwrap();
    }
}

/// Prints what the input in `GANGWAY_FUZZ_INPUT` (a file) does, step by step, with the flaw
/// `GANGWAY_FUZZ_FLAW` planted if set: `cargo test -q -- --ignored --nocapture trace_input`.
#[test]
#[ignore = "a tool: prints the trace of GANGWAY_FUZZ_INPUT"]
fn trace_input() {
    quiet_injected_panics();
    let path = std::env::var("GANGWAY_FUZZ_INPUT").expect("GANGWAY_FUZZ_INPUT=<file>");
    let flaw = std::env::var(FLAW_VAR)
        .ok()
        .map(|name| flaw_named(&name).expect("a flaw"));
    let input = Input::decode(&fs::read(&path).expect("readable"));
    println!("{:?}", input.setup);
    let (result, lines) = trace(&input, flaw);
    for line in lines {
        println!("{line}");
    }
    match result {
        Ok(stats) => println!("passes: {stats:?}"),
        Err(failure) => println!("FAILS: {failure}"),
    }
}

/// Which seeds fail with each plantable flaw planted (a survey, for choosing witnesses).
#[test]
#[ignore = "a survey: prints which seeds find each flaw"]
fn survey_flaws_on_seeds() {
    quiet_injected_panics();
    for (flaw, breaks) in PLANTABLE {
        let found: Vec<String> = seeds()
            .into_iter()
            .filter_map(|(name, input)| {
                run(&input, Some(flaw))
                    .err()
                    .map(|f| format!("{name} ({})", f.what.split(':').next().unwrap_or("")))
            })
            .collect();
        println!("{flaw:?} ({breaks}): {found:?}");
    }
}

/// The debug lines (their `message`) the core logs while a closure runs on this thread.
///
/// One subscriber for the whole process, the global default, installed on first use: it
/// keeps the lines of the threads that asked for them. A subscriber scoped to the test's
/// thread (`with_default`) would miss lines: a callsite first reached on another test's
/// thread, with no subscriber there, could cache the interest "never" for every thread.
mod listen {
    use std::cell::RefCell;
    use std::fmt;
    use std::sync::Once;

    use tracing::field::{Field, Visit};
    use tracing::level_filters::LevelFilter;
    use tracing::span::{Attributes, Id, Record};
    use tracing::subscriber::Interest;
    use tracing::{Event, Level, Metadata, Subscriber};

    thread_local! {
        /// This thread's lines, while it collects them.
        static LINES: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
    }

    /// Keeps the message of every event at DEBUG or above on a thread that collects them.
    struct Listener;

    /// The `message` field of an event.
    struct Message(String);

    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl Subscriber for Listener {
        fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
            match *metadata.level() <= Level::DEBUG {
                // Asked at each event: only some threads collect.
                true => Interest::sometimes(),
                false => Interest::never(),
            }
        }

        fn enabled(&self, metadata: &Metadata<'_>) -> bool {
            *metadata.level() <= Level::DEBUG && LINES.with(|lines| lines.borrow().is_some())
        }

        fn max_level_hint(&self) -> Option<LevelFilter> {
            Some(LevelFilter::DEBUG)
        }

        fn new_span(&self, _: &Attributes<'_>) -> Id {
            // Spans are not followed: one id for all.
            Id::from_u64(1)
        }

        fn record(&self, _: &Id, _: &Record<'_>) {}

        fn record_follows_from(&self, _: &Id, _: &Id) {}

        fn event(&self, event: &Event<'_>) {
            let mut message = Message(String::new());
            event.record(&mut message);
            LINES.with(|lines| {
                if let Some(lines) = lines.borrow_mut().as_mut() {
                    lines.push(message.0);
                }
            });
        }

        fn enter(&self, _: &Id) {}

        fn exit(&self, _: &Id) {}
    }

    /// Runs `f`; what it returned and the debug lines logged on this thread meanwhile.
    pub fn lines<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            tracing::subscriber::set_global_default(Listener).expect("the only global subscriber");
        });
        LINES.with(|lines| *lines.borrow_mut() = Some(Vec::new()));
        let result = f();
        let lines = LINES.with(|lines| lines.borrow_mut().take());
        (result, lines.unwrap_or_default())
    }
}

/// The debug lines of the core's steps that each race seed reaches (issue #43): the error
/// branch its event, landing between two steps of a cycle, sends the cycle's last step down —
/// and none for an event the step after it does not look at (a node gone before Permit or
/// a bind: the cache keeps a removed node's pods; a min raised before an Upstream Permit or
/// commit: the members wait for the new quorum, as upstream's do).
const RACES: &[(&str, &[&str])] = &[
    (
        "race-permit-member-deleted-hardened",
        &["deleted before it bound: released"],
    ),
    (
        "race-permit-member-deleted-upstream",
        &["deleted during its cycle: dropped"],
    ),
    ("race-permit-group-deleted-hardened", &["permit: rejected"]),
    (
        "race-permit-group-deleted-upstream",
        &["rejected at permit, released"],
    ),
    ("race-permit-node-deleted-hardened", &[]),
    ("race-permit-node-deleted-upstream", &[]),
    (
        "race-permit-min-raised-hardened",
        &["gang: attempt timed out"],
    ),
    ("race-permit-min-raised-upstream", &[]),
    (
        "race-commit-node-deleted-hardened",
        &["commit: assume failed"],
    ),
    ("race-commit-node-deleted-upstream", &["assume failed"]),
    (
        "race-commit-min-raised-hardened",
        &["commit: quorum lost since the snapshot"],
    ),
    ("race-commit-min-raised-upstream", &[]),
    (
        "race-commit-group-deleted-hardened",
        &["commit: quorum lost since the snapshot"],
    ),
    (
        "race-commit-group-deleted-upstream",
        &["rejected at permit, released"],
    ),
    (
        "race-bind-deleted-ok-hardened",
        &[
            "bound, but deleted meanwhile",
            "admitted gang short of quorum",
        ],
    ),
    (
        "race-bind-deleted-ok-upstream",
        &["bound, but deleted meanwhile"],
    ),
    (
        "race-bind-deleted-fail-hardened",
        &[
            "deleted before it bound: released",
            "admitted gang short of quorum",
        ],
    ),
    (
        "race-bind-deleted-fail-upstream",
        &["deleted before it bound: released"],
    ),
    ("race-bind-node-deleted-hardened", &[]),
    ("race-bind-node-deleted-upstream", &[]),
    (
        "race-bind-min-raised-hardened",
        &["admitted gang short of quorum"],
    ),
    (
        "race-commit-member-deleted-hardened",
        &[
            "commit: reserve failed",
            "deleted during its cycle: dropped",
        ],
    ),
    (
        "race-commit-member-deleted-upstream",
        &["reserve failed", "deleted during its cycle: dropped"],
    ),
    (
        "race-permit-member-deleted-gang-upstream",
        &[
            "deleted while assumed, not waiting: room freed",
            "permit: waiting",
        ],
    ),
    (
        "race-unfit-deleted-hardened",
        &["no node fits", "deleted during its cycle: dropped"],
    ),
    (
        "race-unfit-deleted-upstream",
        &["no node fits", "deleted during its cycle: dropped"],
    ),
];

/// Each race seed passes every check and reaches the error branches [`RACES`] lists for it:
/// the core logs each branch's debug line, which a subscriber on the test's thread collects.
#[test]
fn race_seeds_reach_their_branches() {
    quiet_injected_panics();
    let races = seeds::race_seeds();
    let names: Vec<&str> = races.iter().map(|(name, _)| *name).collect();
    let listed: Vec<&str> = RACES.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, listed, "every race seed has its branches listed");
    for ((name, input), (_, branches)) in races.into_iter().zip(RACES) {
        let (result, lines) = listen::lines(|| run(&input, None));
        if let Err(failure) = result {
            panic!("{name}: {failure}");
        }
        for branch in *branches {
            assert!(
                lines.iter().any(|line| line == branch),
                "{name} does not reach {branch:?}; its lines: {lines:?}"
            );
        }
    }
}

/// Prints each race seed's trace and the debug lines it logged.
#[test]
#[ignore = "a survey: prints what each race does"]
fn survey_race_seeds() {
    quiet_injected_panics();
    for (name, input) in seeds::race_seeds().into_iter() {
        let ((result, steps), lines) = listen::lines(|| trace(&input, None));
        println!("== {name}: {:?}", result.map(drop));
        for step in steps {
            println!("  {step}");
        }
        let lines: std::collections::BTreeSet<_> = lines.into_iter().collect();
        println!("  lines: {lines:?}");
    }
}

/// I7's judge (`gangway_check::parked_with_room`) once took two waits in Upstream's pod-group
/// cycle for lost wake-ups (found by this target's judgement at rest, which has since left that
/// cycle unjudged): room for a quorum that only an order the cycle never takes finds, and a
/// member parked while a sibling backs off. Judged there all the same, both inputs pass.
#[test]
fn the_judge_at_rest_takes_no_false_wait_in_upstream_pod_groups() {
    for name in [
        "quorum-room-only-in-an-order-the-cycle-never-takes",
        "member-parked-while-its-group-backs-off",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("regressions/scheduler_events")
            .join(name);
        let input = Input::decode(&fs::read(&path).expect("readable"));
        assert_eq!(input.setup.mode, gangsched::Mode::Upstream, "{name}");
        assert_eq!(input.setup.cycle, gangsched::GangCycle::PodGroup, "{name}");
        if let Err(failure) = run_judging_every_cycle(&input) {
            panic!("{name}: {failure}");
        }
    }
}
