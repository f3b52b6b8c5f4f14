//! What `gangway simulate --log` shows, in a test binary of its own: the subscriber is the
//! process's global default, installed before any span or event is first seen (tracing caches
//! each callsite's interest, so a callsite first met by another test thread without a
//! subscriber would stay silent).
#![cfg(not(loom))]

use gangsched::sync::{Arc, Mutex};
use gangway_cli::simulate::{self, ModeArg, Options};
use gangway_tests::simulate_options;
use std::io::Write;

/// A buffer the subscriber writes to.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Buffer {
    /// Asserts that what was written so far contains each of `expected`.
    fn assert_shows(&self, expected: &[&str]) {
        let log = String::from_utf8(self.0.lock().clone()).unwrap();
        for line in expected {
            assert!(log.contains(line), "the log shows {line:?}:\n{log}");
        }
    }
}

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The small workload (cli/workloads/small.toml) in virtual time, as `gangway simulate
/// --log` runs it.
fn options() -> Options {
    Options {
        log: Some(simulate::LogLevel::Debug),
        ..simulate_options(ModeArg::Hardened, 1, Some("small.toml"))
    }
}

/// A gang through the barrier shows its scheduling cycles (with the node once placed) and
/// binding cycles, each Permit decision, each waiting pod's decision, the gang's quorum and
/// the queue's moves.
#[test]
fn the_log_shows_cycles_decisions_gangs_and_queue_moves() {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .without_time()
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let options = options();
    let workload = simulate::load(&options).unwrap();
    let report = simulate::run(&options, &workload).unwrap();
    assert!(report.is_clean());
    buffer.assert_shows(&[
        "scheduling_cycle{pod=",
        "binding_cycle{pod=",
        "permit: waiting",
        "permit: allowed",
        "waiting pod: allowed",
        "node=\"node-",
        "plugin=\"GangScheduling\"",
        "gang: quorum, members allowed together",
        "bound",
        "queue: moved to active or backoff",
    ]);

    // An embedder of the gang plugin alone, with no scheduler, sees the same decisions.
    buffer.0.lock().clear();
    plugin_alone();
    buffer.assert_shows(&[
        "permit: waiting pod=uid-0 gang=\"alone\" plugin=\"GangScheduling\"",
        "permit: allowed pod=uid-1 gang=\"alone\"",
        "gang: quorum, members allowed together gang=\"alone\" members=2",
        "waiting pod: allowed pod=uid-0 gang=\"alone\"",
        "gang: attempt timed out gang=ml/late",
        "waiting pod: rejected pod=uid-2 gang=\"late\" plugin=\"GangScheduling\"",
        "gang: attempt failed gang=ml/lost reason=",
        "gang: quorum, members allowed together gang=\"upstream\" members=3",
    ]);
}

/// A gang of two through the Hardened plugin and the waiting map alone, and a second gang
/// whose attempt times out.
fn plugin_alone() {
    use gangsched::{GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPods};

    let gang = GangScheduling::new(Mode::Hardened, WaitingPods::new());
    for (name, min) in [("alone", 2), ("late", 2)] {
        gang.on_group_added(PodGroup::gang("ml", name, min).unwrap())
            .unwrap();
    }
    let pod = |i: usize, group: &str| {
        Pod::new(format!("uid-{i}"), "ml", &format!("p-{i}")).with_group(group)
    };
    let pods = [
        pod(0, "alone"),
        pod(1, "alone"),
        pod(2, "late"),
        pod(3, "late"),
    ];
    for p in &pods {
        gang.on_pod_added(p.clone(), false).unwrap();
    }
    for p in [&pods[0], &pods[1], &pods[2]] {
        gang.reserve(p).unwrap();
        let permit = gang.permit(p, Time::ZERO);
        assert_eq!(
            matches!(permit, Permit::Wait { .. }),
            p.id() != pods[1].id()
        );
    }
    gang.expire(Time::from_secs(300));

    // A waiting member deleted: its gang's attempt fails whole.
    gang.on_group_added(PodGroup::gang("ml", "lost", 2).unwrap())
        .unwrap();
    let lost = pod(7, "lost");
    gang.on_pod_added(lost.clone(), false).unwrap();
    gang.on_pod_added(pod(8, "lost"), false).unwrap();
    gang.reserve(&lost).unwrap();
    assert!(matches!(
        gang.permit(&lost, Time::ZERO),
        Permit::Wait { .. }
    ));
    gang.on_pod_deleted(&lost);

    // Upstream: the quorum member lets its two waiting siblings through — three together.
    let upstream = GangScheduling::new(Mode::Upstream, WaitingPods::new());
    upstream
        .on_group_added(PodGroup::gang("ml", "upstream", 3).unwrap())
        .unwrap();
    let members = [pod(4, "upstream"), pod(5, "upstream"), pod(6, "upstream")];
    for p in &members {
        upstream.on_pod_added(p.clone(), false).unwrap();
    }
    for (i, p) in members.iter().enumerate() {
        upstream.reserve(p).unwrap();
        let permit = upstream.permit(p, Time::ZERO);
        assert_eq!(matches!(permit, Permit::Wait { .. }), i < 2);
    }
}
