//! What `gangway simulate --log` shows, in a test binary of its own: the subscriber is the
//! process's global default, installed before any span or event is first seen (tracing caches
//! each callsite's interest, so a callsite first met by another test thread without a
//! subscriber would stay silent).
#![cfg(not(loom))]

use gangway::sync::{Arc, Mutex};
use gangway_model::simulate::{self, ModeArg, Options};
use gangway_tests::simulate_options;
use std::io::Write;

/// A buffer the subscriber writes to.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The small workload (model/workloads/small.toml) in virtual time, as `gangway simulate
/// --log` runs it.
fn options() -> Options {
    Options {
        log: Some(simulate::LogLevel::Debug),
        ..simulate_options(ModeArg::Hardened, 1, Some("small.toml"))
    }
}

/// A gang through the barrier shows its scheduling and binding cycles, each Permit decision,
/// the gang's quorum and the queue's moves.
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
    let log = String::from_utf8(buffer.0.lock().clone()).unwrap();
    for expected in [
        "scheduling_cycle{pod=",
        "binding_cycle{pod=",
        "permit: waiting",
        "permit: allowed",
        "plugin=\"GangScheduling\"",
        "gang: quorum, members allowed together",
        "bound",
        "queue: moved to active or backoff",
    ] {
        assert!(log.contains(expected), "the log shows {expected:?}:\n{log}");
    }
}
