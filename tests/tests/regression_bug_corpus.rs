//! The bug corpus (`gangway_tests::bug_corpus`, docs/bug-corpus.md): real gang-scheduling bugs
//! of kube-scheduler and peer schedulers, each planted in gangway's own code and found here by
//! the model checker — one test per bug, named after it, asserting the property it breaks and
//! the counterexample's telling step — and the checks that keep the corpus honest: every test
//! the corpus names exists, and docs/bug-corpus.md is rendered from the tables.
//!
//! Each test prints how long the checker took to its counterexample (`--nocapture`).

use std::path::Path;

use gangsched::checking::{Flaw, GangFlaw};
use gangsched::{GangCycle, Mode};
use gangway_check::{discover, timeline, ClusterConfig, GangProtocol, Preset, I9};
use gangway_cli::differential::compare;
use gangway_cli::differential::driver::{recorded, DriverRunner};
use gangway_tests::bug_corpus::model_checker::{find, Found, Planted, Where};
use gangway_tests::bug_corpus::{render, BUGS, GAPS, UPSTREAM_BUGS};

const I3: &str = "I3 gang atomicity";
const I4: &str = "I4 conservation";
const I5: &str = "I5 accounting";
const I6: &str = "I6 no reservation held for a lost gang";
const I7: &str = "I7 no lost event";
const I8: &str = "I8 no stuck gang";

fn at(preset: Preset, mode: Mode, cycle: GangCycle) -> Where {
    Where {
        preset,
        mode,
        cycle,
    }
}

/// The model checker's counterexample to `property` with `planted` at `where_`, printed with
/// the time it took; its last step must carry `telling`.
fn found(bug: &str, planted: Planted, where_: Where, property: &'static str, telling: &str) {
    let place = format!("{:?}, {:?}, {:?}", where_.preset, where_.mode, where_.cycle);
    found_in(bug, planted, &place, where_.config(), property, telling);
}

/// [`found`] in a cluster of the test's own, described as `place`.
fn found_in(
    bug: &str,
    planted: Planted,
    place: &str,
    config: ClusterConfig,
    property: &'static str,
    telling: &str,
) {
    let Found {
        elapsed,
        timeline,
        steps,
    } = find(planted, config, property)
        .unwrap_or_else(|| panic!("{bug}: no counterexample to {property} in {place}"));
    println!(
        "corpus {bug}: found by the model checker ({place}) in {:.2} s, {steps} steps: {property}",
        elapsed.as_secs_f64()
    );
    let last = timeline
        .lines()
        .find(|l| l.contains('✗'))
        .unwrap_or_default();
    assert!(last.contains(telling), "{bug}: {timeline}");
}

const BARRIER: GangCycle = GangCycle::PermitBarrier;
const POD_GROUP: GangCycle = GangCycle::PodGroup;

#[test]
fn kubernetes_88179_a_decision_before_the_record_is_lost() {
    found(
        "kubernetes#88179",
        Planted::Step(Flaw::RecordsAfterPermit),
        at(Preset::Small, Mode::Hardened, BARRIER),
        I6,
        "no binding cycle to end its reservation",
    );
}

#[test]
fn kubernetes_138422_a_deleted_assumed_member_is_counted_on() {
    found(
        "kubernetes#138422",
        Planted::Gang(GangFlaw::ForgetRestoresDeletedMember),
        at(Preset::Small, Mode::Hardened, BARRIER),
        I4,
        "was deleted but its group counts it",
    );
}

#[test]
fn kubernetes_pr_137804_the_cycle_acts_on_a_stale_view_of_the_group() {
    found(
        "kubernetes PR #137804",
        Planted::Step(Flaw::CommitTrustsTheSnapshot),
        at(Preset::Small, Mode::Hardened, POD_GROUP),
        I3,
        "I3",
    );
}

#[test]
fn kubernetes_pr_139418_a_failed_bind_releases_twice() {
    found(
        "kubernetes PR #139418",
        Planted::Step(Flaw::BindFailureReleasesTwice),
        at(Preset::Small, Mode::Hardened, BARRIER),
        I5,
        "I5",
    );
}

/// Found in Upstream mode, whose every other violation of I6 is a sibling's: the flaw's is
/// the deleted pod itself still waiting. Hardened masks it for a gang member (H1).
#[test]
fn kubernetes_84554_a_deleted_pod_keeps_waiting() {
    found(
        "kubernetes#84554",
        Planted::Step(Flaw::DeleteLeavesPodWaiting),
        at(Preset::Small, Mode::Upstream, BARRIER),
        I6,
        "was deleted but still waits at Permit",
    );
    let unplanted = GangProtocol::new(Preset::Small.config(Mode::Upstream));
    let path = discover(&unplanted, I6, 2).expect("Upstream's own I6 counterexample");
    let trace = timeline(&unplanted, I6, path).to_string();
    assert!(
        !trace.contains("still waits at Permit"),
        "without the flaw a deleted pod never waits: {trace}"
    );
}

#[test]
fn kubernetes_96478_a_release_wakes_nobody() {
    found(
        "kubernetes#96478",
        Planted::Step(Flaw::ReleaseAnnouncesNothing),
        at(Preset::Medium, Mode::Hardened, BARRIER),
        I7,
        "a node has room for it",
    );
}

#[test]
fn kubernetes_pr_135854_a_short_gang_keeps_binding() {
    found(
        "kubernetes PR #135854",
        Planted::Step(Flaw::ShortGangKeepsBinding),
        at(Preset::Small, Mode::Hardened, POD_GROUP),
        I9,
        "I9",
    );
}

#[test]
fn yunikorn_2953_a_timeout_releases_twice() {
    found(
        "YUNIKORN-2953",
        Planted::Step(Flaw::TimeoutReleasesTwice),
        at(Preset::Tiny, Mode::Hardened, BARRIER),
        I5,
        "I5",
    );
}

#[test]
fn yunikorn_3355_a_failed_bind_keeps_the_node_reservation() {
    found(
        "YUNIKORN-3355",
        Planted::Step(Flaw::BindFailureKeepsNodeReservation),
        at(Preset::Small, Mode::Hardened, BARRIER),
        I5,
        "is Pending but the cache has it Some(Assumed)",
    );
}

#[test]
fn kubernetes_49314_a_failed_bind_loses_the_pod() {
    found(
        "kubernetes#49314",
        Planted::Step(Flaw::BindFailureLosesPod),
        at(Preset::Small, Mode::Hardened, BARRIER),
        I4,
        "the queue has it nowhere",
    );
}

#[test]
fn kubernetes_93830_a_release_keeps_the_node_reservation() {
    found(
        "kubernetes#93830",
        Planted::Step(Flaw::ReleaseKeepsNodeReservation),
        at(Preset::Small, Mode::Hardened, BARRIER),
        I5,
        "but the cache has it Some(Assumed)",
    );
}

#[test]
fn kubernetes_139186_a_rejected_pod_is_in_no_queue() {
    found(
        "kubernetes#139186",
        Planted::Step(Flaw::RejectedNotRequeued),
        at(Preset::Small, Mode::Hardened, BARRIER),
        I4,
        "the queue has it nowhere",
    );
}

#[test]
fn kubernetes_pr_134157_a_delete_in_binding_wakes_nobody() {
    found(
        "kubernetes PR #134157",
        Planted::Step(Flaw::DeleteAnnouncesNothing),
        at(Preset::Medium, Mode::Hardened, BARRIER),
        I7,
        "a node has room for it",
    );
}

/// Two gangs of two arriving one pod at a time on one node with room for one gang (a gang
/// whose member reaches Permit is rescued by Permit's activation of its siblings; the second
/// gang's never does).
#[test]
fn scheduler_plugins_125_a_sibling_arrival_wakes_nobody() {
    let config = ClusterConfig {
        gangs: vec![(2, 2), (2, 2)],
        nodes: vec![2],
        arrivals: true,
        group_updates: 0,
        ..Preset::Tiny.config(Mode::Hardened)
    };
    found_in(
        "kubernetes-sigs/scheduler-plugins#125",
        Planted::Step(Flaw::ArrivalSkipsMoveEvent),
        "two gangs of two arriving, room for one, Hardened, Permit barrier",
        config,
        I8,
        "still gated",
    );
}

/// The driver differential against kube-scheduler v1.36.3's `ScheduleOne`, on the recorded
/// traces (`upstream/traces/driver_*.jsonl` and the real code's observations beside them):
/// with `flaw` planted in Upstream mode, at least one trace must differ from the real code.
/// Returns how many differ, and the first difference.
fn differs_from_the_real_code(bug: &str, flaw: Flaw) -> (usize, String) {
    let started = std::time::Instant::now();
    let traces = recorded(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../upstream/traces"));
    let mut differing = Vec::new();
    for (name, ops, upstream) in &traces {
        let mut runner = DriverRunner::in_mode(Mode::Upstream).planted(flaw);
        let ours: Vec<_> = ops.iter().map(|op| runner.step(op)).collect();
        if let Some(first) = compare(ops, upstream, &ours).first {
            differing.push(format!("{name}: {first}"));
        }
    }
    assert!(
        !differing.is_empty(),
        "{bug}: every one of {} recorded traces agrees with the real code",
        traces.len()
    );
    println!(
        "corpus {bug}: found by the driver differential in {:.2} s, {} of {} recorded traces differ",
        started.elapsed().as_secs_f64(),
        differing.len(),
        traces.len()
    );
    (differing.len(), differing.swap_remove(0))
}

#[test]
fn kubernetes_pr_119785_a_rejection_at_wait_on_permit_forgets_its_plugin() {
    let (_, first) =
        differs_from_the_real_code("kubernetes PR #119785", Flaw::WaitRejectionForgetsItsPlugin);
    assert!(first.contains("driver_permit_reject"), "{first}");
}

/// scheduler-plugins#117 and koordinator#872, in `Mode::Upstream` itself: two gangs on a node
/// with room for one and a half hold a member each at Permit, and only a timeout moves them.
#[test]
fn scheduler_plugins_117_gangs_hold_and_wait() {
    let upstream = GangProtocol {
        hold_and_wait: true,
        ..GangProtocol::new(Preset::Medium.config(Mode::Upstream))
    };
    let path = discover(&upstream, I9, 2).expect("upstream holds and waits");
    let trace = timeline(&upstream, I9, path).to_string();
    assert!(trace.contains("waits at Permit for its gang"), "{trace}");
}

/// Every test the corpus names exists: its file has a function of that name.
#[test]
fn every_test_the_corpus_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let finds = BUGS
        .iter()
        .flat_map(|bug| bug.found_by.iter())
        .chain(UPSTREAM_BUGS.iter().map(|bug| &bug.found_by));
    for find in finds {
        let (file, function) = find
            .test
            .rsplit_once("::")
            .unwrap_or_else(|| panic!("{}: not path::function", find.test));
        let source = std::fs::read_to_string(root.join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", find.test));
        assert!(
            source.contains(&format!("fn {function}(")),
            "{}: no such function in {file}",
            find.test
        );
    }
    assert!(!GAPS.is_empty());
}

/// docs/bug-corpus.md carries the corpus as rendered from the tables (regenerate:
/// `GANGWAY_WRITE_DOCS=1 cargo test -p gangway-tests --test regression_bug_corpus`).
#[test]
fn docs_bug_corpus_is_rendered_from_the_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/bug-corpus.md");
    let doc = std::fs::read_to_string(&path).expect("docs/bug-corpus.md");
    let (begin, end) = ("<!-- corpus:begin -->\n", "<!-- corpus:end -->");
    let (head, rest) = doc.split_once(begin).expect("a corpus:begin mark");
    let (_, tail) = rest.split_once(end).expect("a corpus:end mark");
    let rendered = format!("{head}{begin}{}{end}{tail}", render());
    if std::env::var_os("GANGWAY_WRITE_DOCS").is_some() {
        std::fs::write(&path, &rendered).expect("written");
    }
    assert!(
        doc == rendered,
        "docs/bug-corpus.md is not rendered from the corpus: run with GANGWAY_WRITE_DOCS=1"
    );
}
