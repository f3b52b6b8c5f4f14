//! Running the checker on a preset and reporting verdicts, with counterexamples as timelines.

use std::time::{Duration, Instant};

use gangsched::queue::QueuePlace;
use gangsched::{GangCycle, Mode, PodId};
use serde::Serialize;
use stateright::{Expectation, Model};

use super::cluster::{Cluster, ClusterConfig, Stage};
use super::properties::{
    accounting, conservation, held_for_lost_member, hold_and_wait, lost_event,
};
use super::protocol::{Action, GangProtocol, PLACEMENT, PROGRESS};
use super::state_space::{fingerprint, representative_fingerprint, Order, Walk};
use super::timeline::{Step, Timeline};
use super::words::action_step;

/// Named cluster sizes, from tiny to large.
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// 1 gang × 2 pods arriving one by one, one node with room for both; one permit deadline,
    /// one change of the PodGroup's min count.
    Tiny,
    /// 1 gang × 3 pods arriving one by one, one node with room for all; one deadline, one
    /// delete, one bind failure, one leftover flush.
    Small,
    /// 2 gangs × 2 pods on one node with room for 3: gangs compete; one deadline, one delete,
    /// one bind failure.
    Medium,
    /// A gang of 3 and a gang of 2 on two nodes with room for 3 and 2: gangs compete and
    /// spread, two members of a gang can wait together (upstream's held-resources race needs
    /// that); two deadlines, one delete (2.4 million distinct states in Hardened, fewer in
    /// Upstream: the default, 15–30 s on 2 cores).
    Standard,
    /// 2 gangs × 3 pods arriving one by one, on 2 nodes with room for 3 each; two deadlines,
    /// one delete, one bind failure, one leftover flush, one min-count change (the size
    /// docs/verification.md runs overnight: depth first, with memory to match).
    Large,
    /// 2 gangs × 2 pods on one node with room for 3: the second gang waits for room while the
    /// first's bind fails, a pod is deleted, a permit deadline passes and the leftover flush
    /// runs — every fault with a gang waiting for the room it frees, where a release or an
    /// announcement that does not happen delays a gang that fits (progress without timeouts).
    /// Hardened: 2.15 million distinct states (4.27 million generated, depth 37), 25 s and
    /// 570 MB on 2 busy cores; Upstream 1.09 million, 11 s; with the pod-group cycle 0.58
    /// million (Hardened), 4 s. Not run by CI (docs/verification.md): `medium`, the same
    /// faults without the flush, is in the test step. With pods arriving one by one it would
    /// be 9.4 million distinct states and 2.2 GB: they are there from the start.
    Contended,
}

impl Preset {
    /// The cluster this preset checks in `mode`.
    pub fn config(self, mode: Mode) -> ClusterConfig {
        // (gangs, nodes, arrivals, timeouts, deletes, bind failures, leftover flushes, group
        // updates)
        let (gangs, nodes, arrivals, timeouts, deletes, bind_failures, flushes, group_updates) =
            match self {
                Preset::Tiny => (vec![(2, 2)], vec![2], true, 1, 0, 0, 0, 1),
                Preset::Small => (vec![(3, 3)], vec![3], true, 1, 1, 1, 1, 0),
                Preset::Medium => (vec![(2, 2), (2, 2)], vec![3], false, 1, 1, 1, 0, 0),
                Preset::Standard => (vec![(3, 3), (2, 2)], vec![3, 2], false, 2, 1, 0, 0, 0),
                Preset::Large => (vec![(3, 3), (3, 3)], vec![3, 3], true, 2, 1, 1, 1, 1),
                Preset::Contended => (vec![(2, 2), (2, 2)], vec![3], false, 1, 1, 1, 1, 0),
            };
        ClusterConfig {
            mode,
            gangs,
            nodes,
            arrivals,
            timeouts,
            deletes,
            bind_failures,
            flushes,
            group_updates,
            permit_rejections: 0,
            gang_cycle: GangCycle::PermitBarrier,
            retries: 2,
        }
    }
}

/// One property's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The property's id (`I3` … `I9`, `P1`) for an `always` property; `None` for the vacuity
    /// guards (`sometimes`), which have none.
    pub id: Option<&'static str>,
    /// The property, e.g. `I3 gang atomicity`.
    pub name: &'static str,
    /// `always` or `sometimes`.
    pub kind: &'static str,
    /// Whether it is as it should be: an `always` with no counterexample, a `sometimes` with
    /// an example.
    pub holds: bool,
    /// The counterexample (always) or the example (sometimes), as a timeline.
    pub trace: Option<Timeline>,
}

/// The embedder's parts a check ran ([`Plugins`](super::Plugins)).
#[derive(Clone, Debug, Serialize)]
pub struct PluginsChecked {
    /// The placement's name.
    pub placement: String,
    /// The Permit plugins beside the gang's, in order.
    pub permit: Vec<String>,
    /// Permits at which they may turn a pod away, on one path.
    pub denials: u8,
}

/// What a check found.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The preset.
    pub preset: Preset,
    /// The cluster checked (the preset's, with any dimension changed), on one line.
    pub cluster: String,
    /// The same cluster, dimension by dimension.
    pub dimensions: ClusterConfig,
    /// Whether a dimension flag changed the preset's cluster (then `dimensions` differ from
    /// the preset's).
    pub dimensions_changed: bool,
    /// `upstream` or `hardened`.
    pub mode: String,
    /// The embedder's parts checked, if not gangway's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugins: Option<PluginsChecked>,
    /// States generated.
    pub states: usize,
    /// Distinct states.
    pub unique_states: usize,
    /// Longest path explored.
    pub max_depth: usize,
    /// Wall time.
    pub seconds: f64,
    /// Generated states per second.
    pub states_per_sec: f64,
    /// Each property's verdict.
    pub properties: Vec<Verdict>,
}

impl CheckReport {
    /// Whether some `always` property has a counterexample.
    pub fn has_counterexample(&self) -> bool {
        self.properties
            .iter()
            .any(|p| p.kind == "always" && !p.holds)
    }

    /// Every property is as it should be.
    pub fn all_hold(&self) -> bool {
        self.properties.iter().all(|p| p.holds)
    }

    /// The verdict on property `name`.
    pub fn verdict(&self, name: &str) -> Option<&Verdict> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// The report as one JSON object (`gangway check --json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The report as `gangway check` prints it: the cluster, the state counts, each property's
    /// verdict, then each counterexample as a numbered timeline.
    pub fn write_text(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let report = self;
        if report.dimensions_changed {
            writeln!(out, "preset        {:?}, dimensions changed", report.preset)?;
        } else {
            writeln!(out, "preset        {:?}", report.preset)?;
        }
        writeln!(out, "cluster       {}", report.cluster)?;
        writeln!(out, "mode          {}", report.mode)?;
        if let Some(plugins) = &report.plugins {
            let permit = match plugins.permit.as_slice() {
                [] => "none".to_owned(),
                names => format!("{} (up to {} denials)", names.join(", "), plugins.denials),
            };
            writeln!(
                out,
                "plugins       placement {}; permit {permit}",
                plugins.placement
            )?;
        }
        writeln!(
            out,
            "states        {} generated, {} distinct, depth {}",
            report.states, report.unique_states, report.max_depth
        )?;
        writeln!(
            out,
            "time          {:.2} s ({:.0} states/s)",
            report.seconds, report.states_per_sec
        )?;
        for p in &report.properties {
            let verdict = match (p.kind, p.holds) {
                ("sometimes", true) => "example found",
                ("sometimes", false) => "NO EXAMPLE (the model may be vacuous)",
                (_, true) => "holds",
                (_, false) => "COUNTEREXAMPLE",
            };
            writeln!(out, "{:<9} {:<42} {verdict}", p.kind, p.name)?;
        }
        if report.verdict(PLACEMENT).is_some_and(|p| !p.holds) {
            writeln!(
                out,
                "note: a placement that is not a function of its inputs makes paths unrepeatable; \
                 the other counterexamples may replay without their breach: mend P1 first"
            )?;
        }
        for p in report
            .properties
            .iter()
            .filter(|p| p.kind != "sometimes" && !p.holds)
        {
            if let Some(trace) = &p.trace {
                writeln!(out)?;
                trace.write_text(out)?;
            }
        }
        Ok(())
    }
}

/// The report as `gangway check` prints it ([`CheckReport::write_text`]).
impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = Vec::new();
        self.write_text(&mut text).map_err(|_| std::fmt::Error)?;
        f.write_str(&String::from_utf8_lossy(&text))
    }
}

/// Explores every reachable state of `preset` in `mode` (breadth first, `threads` threads) and
/// checks every property.
pub fn check(preset: Preset, mode: Mode, threads: usize) -> CheckReport {
    check_model(GangProtocol::new(preset.config(mode)), preset, threads)
}

/// How the checker walks the state space.
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Search {
    /// Breadth first: counterexamples are shortest; the frontier of whole states is kept in
    /// memory.
    #[default]
    Bfs,
    /// Depth first: only the current path's states are kept (fingerprints of the others), so
    /// big presets fit in far less memory; counterexamples may be longer.
    Dfs,
    /// Depth first with symmetry reduction: the symmetric model (any member of the first gang
    /// tied at the queue's head may pop, a gang's members arrive in any order), skipping states
    /// that are a renaming of interchangeable members of a state already seen.
    Symmetric,
}

/// [`check`] for a given model (witness tests plant a [`Flaw`](super::Flaw) in it), breadth
/// first.
pub fn check_model(model: GangProtocol, preset: Preset, threads: usize) -> CheckReport {
    check_with(model, preset, threads, Search::Bfs)
}

/// [`check_model`] with the search strategy chosen: the checker's own walk over the state
/// space (`state_space.rs`), breadth first or depth first, symmetric or not.
pub fn check_with(
    model: GangProtocol,
    preset: Preset,
    threads: usize,
    search: Search,
) -> CheckReport {
    let started = Instant::now();
    let model = GangProtocol {
        symmetric: model.symmetric || search == Search::Symmetric,
        intern: search == Search::Bfs,
        ..model
    };
    let (order, key): (Order, fn(&Cluster) -> u64) = match search {
        Search::Bfs => (Order::Breadth, fingerprint),
        Search::Dfs => (Order::Depth, fingerprint),
        Search::Symmetric => (Order::Depth, representative_fingerprint),
    };
    let walk = Walk::new(&model, key, None);
    run_with_progress(&walk, order, threads, started);
    report(&model, preset, &walk, started)
}

/// What `walk` found, as a report.
fn report(model: &GangProtocol, preset: Preset, walk: &Walk<'_>, started: Instant) -> CheckReport {
    let mode = model.config.mode;
    let properties = model.properties();
    let seconds = started.elapsed().as_secs_f64();
    let verdicts = properties
        .iter()
        .map(|p| {
            let found = walk.discovery(p.name);
            let kind = match p.expectation {
                Expectation::Always => "always",
                Expectation::Eventually => "eventually",
                Expectation::Sometimes => "sometimes",
            };
            let holds = match p.expectation {
                Expectation::Sometimes => found.is_some(),
                _ => found.is_none(),
            };
            let mut trace = found.map(|path| timeline(model, p.name, path));
            if p.name == PLACEMENT {
                // Replayed, a placement with a memory of its own may not break its contract
                // again: the breach is named as it was found.
                let last = trace.as_mut().and_then(|t| t.steps.last_mut());
                if let (Some(last), Some(fault)) = (last, model.plugins.first_fault()) {
                    if last.violation.is_none() {
                        last.violation = Some(format!("P1: {fault}"));
                    }
                }
            }
            Verdict {
                id: invariant_id(p.name),
                name: p.name,
                kind,
                holds,
                trace,
            }
        })
        .collect();
    CheckReport {
        preset,
        cluster: model.config.to_string(),
        dimensions: model.config.clone(),
        dimensions_changed: model.config != preset.config(mode),
        mode: format!("{mode:?}").to_lowercase(),
        plugins: (!model.plugins.are_gangways()).then(|| PluginsChecked {
            placement: model.plugins.placement_name().to_owned(),
            permit: model
                .plugins
                .permit_names()
                .iter()
                .map(|p| p.to_string())
                .collect(),
            denials: model.plugins.denial_budget(),
        }),
        states: walk.generated(),
        unique_states: walk.distinct(),
        max_depth: walk.max_depth(),
        seconds,
        states_per_sec: walk.generated() as f64 / seconds.max(1e-9),
        properties: verdicts,
    }
}

/// The invariant's id a property's name starts with (`I3` of `I3 gang atomicity`), if any.
fn invariant_id(name: &'static str) -> Option<&'static str> {
    let (id, _) = name.split_once(' ')?;
    let number = id.strip_prefix('I').or_else(|| id.strip_prefix('P'))?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(id)
}

/// Runs `walk`, printing its progress on stderr every 5 seconds once a run has taken that
/// long (short runs, like the tests', print nothing). It looks every 2 ms (a look costs next
/// to nothing): a longer nap would add its latency to every short run's time.
fn run_with_progress(walk: &Walk<'_>, order: Order, threads: usize, started: Instant) {
    std::thread::scope(|scope| {
        let running = scope.spawn(|| walk.run(order, threads));
        let mut last = started;
        while !running.is_finished() {
            std::thread::sleep(Duration::from_millis(2));
            if last.elapsed() >= Duration::from_secs(5) {
                last = Instant::now();
                let seconds = started.elapsed().as_secs_f64();
                eprintln!(
                    "  {:>6.0} s: {} states, {} distinct, depth {} ({:.0} states/s)",
                    seconds,
                    walk.generated(),
                    walk.distinct(),
                    walk.max_depth(),
                    walk.generated() as f64 / seconds
                );
            }
        }
        if let Err(panic) = running.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

/// A path as a numbered timeline: who acted, on which pod and gang, and what changed; the step
/// that breaks an invariant is marked with it.
pub fn timeline(
    model: &GangProtocol,
    title: &str,
    path: Vec<(Cluster, Option<Action>)>,
) -> Timeline {
    let mut timeline = Timeline::new(title);
    for window in path.windows(2) {
        let (before, Some(action)) = (&window[0].0, &window[0].1) else {
            continue;
        };
        let after = &window[1].0;
        timeline.push(step(model, before, action, after));
    }
    timeline
}

/// The timeline's step for `action` from `before` to `after`: the action in the timeline's
/// words ([`action_step`]), every pod whose stage or queue place changed, the clock, and the
/// invariants `after` breaks.
pub(super) fn step(
    model: &GangProtocol,
    before: &Cluster,
    action: &Action,
    after: &Cluster,
) -> Step {
    let mut step = action_step(action, before);
    for (id, stage) in &after.stages {
        let old = before.stage(id);
        let moved = queued_as(before, id) != queued_as(after, id);
        if old != *stage || (*stage == Stage::Pending && moved) {
            let node = after
                .cache
                .pod_node(id)
                .map(|n| format!(" on {n}"))
                .unwrap_or_default();
            let queued = match (*stage, queued_as(after, id)) {
                (Stage::Pending, Some(p)) => format!(" ({p})"),
                _ => String::new(),
            };
            step = step.with_change(format!(
                "{id}: {} → {}{node}{queued}",
                name(old),
                name(*stage)
            ));
        }
    }
    if after.now != before.now {
        step = step.with_change(format!("time {} s", after.now.as_nanos() / 1_000_000_000));
    }
    let violations: Vec<String> = [
        after.partial.clone().map(|p| format!("I3: {p}")),
        conservation(after).err().map(|e| format!("I4: {e}")),
        accounting(after, model.config.mode)
            .err()
            .map(|e| format!("I5: {e}")),
        held_for_lost_member(after).map(|h| format!("I6: {h}")),
        lost_event(
            after,
            model.config.gang_cycle == GangCycle::PodGroup,
            &model.plugins,
            |p| model.placements(p),
        )
        .map(|l| format!("I7: {l}")),
        model.stuck(after).map(|s| format!("I8: {s}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut violations = violations;
    if let Some(fault) = &after.plugin_fault {
        violations.push(format!("P1: {fault}"));
    }
    if model.checks_hold_and_wait() {
        violations.extend(hold_and_wait(after).map(|h| format!("I9: {h}")));
    }
    let progress = model.waits_for_a_timeout(after);
    violations.extend(progress.map(|p| format!("{PROGRESS}: {p}")));
    if !violations.is_empty() {
        step = step.with_violation(violations.join("; "));
    }
    step
}

/// Where a pod waits in the queue, in words (`None`: the queue does not know it).
fn queued_as(s: &Cluster, id: &PodId) -> Option<&'static str> {
    let gated = s.queue.info(id).is_some_and(|i| i.gated_by().is_some());
    s.queue.place(id).map(|p| match p {
        QueuePlace::Active(_) => "active",
        QueuePlace::Backoff(_) | QueuePlace::ErrorBackoff(_) => "backoff",
        QueuePlace::Unschedulable if gated => "gated",
        QueuePlace::Unschedulable => "unschedulable",
        QueuePlace::InFlight => "in flight",
    })
}

fn name(stage: Stage) -> &'static str {
    match stage {
        Stage::Absent => "absent",
        Stage::Pending => "queued",
        Stage::Unfit => "no room",
        Stage::Reserved => "reserved",
        Stage::Placing => "placing",
        Stage::Waiting => "waiting",
        Stage::Decided { allowed: true } => "allowed",
        Stage::Decided { allowed: false } => "rejected",
        Stage::Bound => "bound",
        Stage::Deleting => "deleted, in binding",
        Stage::Deleted => "deleted",
    }
}
