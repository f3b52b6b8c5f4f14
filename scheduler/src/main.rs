//! gangway-scheduler: a Kubernetes scheduler for gangs with gangsched's hardened core inside.
//! See README.md ("Run it on a cluster") and deploy/.

#![forbid(unsafe_code)]

mod api;
mod binder;
mod connect;
mod duration;
mod faults;
mod health;
mod leader;
mod mirror;
mod options;
mod outcomes;
mod record;
mod recovery;
mod run;
mod serve;
mod throttle;

use std::process::ExitCode;

use clap::Parser;
use metrics_exporter_prometheus::PrometheusBuilder;
use tracing_subscriber::filter::Targets;

use options::Options;

fn main() -> ExitCode {
    let options = Options::parse();
    let filter = options
        .log
        .clone()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| "info".to_owned());
    let filter: Targets = match filter.parse() {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!("gangway-scheduler: --log {filter:?}: {e}");
            return ExitCode::from(2);
        }
    };
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(std::io::stderr),
        )
        .with(filter)
        .init();
    #[cfg(feature = "faults")]
    if let Some(spec) = &options.pause_at {
        if let Err(e) = faults::pause_at(spec) {
            eprintln!("gangway-scheduler: {e}");
            return ExitCode::from(2);
        }
    }
    // kube-scheduler's buckets for its latency histograms: 1 ms doubling to about 16 s.
    let buckets: Vec<f64> = (0..15).map(|i| 0.001 * f64::from(1u32 << i)).collect();
    let metrics = match PrometheusBuilder::new()
        .set_buckets(&buckets)
        .map(PrometheusBuilder::install_recorder)
    {
        Ok(Ok(handle)) => handle,
        Ok(Err(e)) | Err(e) => {
            eprintln!("gangway-scheduler: metrics: {e}");
            return ExitCode::FAILURE;
        }
    };
    gangsched::telemetry::describe_metrics();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("gangway-scheduler: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run::run(options, metrics)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "gangway-scheduler stopped");
            ExitCode::FAILURE
        }
    }
}
