//! `gangway check`'s throughput: a full check of each preset (Hardened, 2 checker threads)
//! through the same entry point as the command (`check::check_with`), reported as generated
//! states per second (`Throughput::Elements` = the states a first run generated), with the
//! command's allocator (mimalloc).
//!
//! `cargo bench -p gangway-check --bench checker` (about three minutes on 2 cores).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use gangsched::Mode;
use gangway_check::{check_with, CheckReport, GangProtocol, Preset, Search};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Checker threads, as `gangway check` runs by default.
const THREADS: usize = 2;

/// The presets measured: name, preset, search.
const CASES: [(&str, Preset, Search); 7] = [
    ("tiny/hardened/bfs", Preset::Tiny, Search::Bfs),
    ("small/hardened/bfs", Preset::Small, Search::Bfs),
    ("medium/hardened/bfs", Preset::Medium, Search::Bfs),
    ("medium/hardened/dfs", Preset::Medium, Search::Dfs),
    ("standard/hardened/dfs", Preset::Standard, Search::Dfs),
    ("small/hardened/symmetric", Preset::Small, Search::Symmetric),
    (
        "medium/hardened/symmetric",
        Preset::Medium,
        Search::Symmetric,
    ),
];

fn run(preset: Preset, search: Search) -> CheckReport {
    let model = GangProtocol::new(preset.config(Mode::Hardened));
    check_with(model, preset, THREADS, search)
}

fn checker(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for (name, preset, search) in CASES {
        let first = run(preset, search);
        assert!(first.all_hold(), "{name}: {first:#?}");
        eprintln!(
            "{name}: {} states generated, {} distinct",
            first.states, first.unique_states
        );
        group.throughput(Throughput::Elements(first.states as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let report = run(preset, search);
                assert_eq!(
                    report.states, first.states,
                    "{name}: the state count changed"
                );
                report.unique_states
            });
        });
    }
    group.finish();
}

criterion_group!(benches, checker);
criterion_main!(benches);
