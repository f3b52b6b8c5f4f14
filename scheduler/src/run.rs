//! The scheduler's life: serve health, reach the API server, lead, finish recorded placements,
//! then watch and schedule until SIGTERM (or a lost lease), and stop without losing a pod.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::stream::{self, StreamExt};
use gangsched::{Scheduler, SystemClock};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1beta1;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client};
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use crate::api::Writer;
use crate::binder::ApiBinder;
use crate::connect::{self, ConnectError};
use crate::health::Health;
use crate::leader::{self, LeaseSpec};
use crate::mirror::{Change, Mirror};
use crate::options::{ModeArg, Options};
use crate::outcomes::{write_outcomes, Outcomes};
use crate::record::PlacementRecord;
use crate::recovery;
use crate::serve;
use crate::throttle::Throttle;

/// Why the scheduler stopped other than by SIGTERM.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The health endpoint could not listen.
    #[error("serving {address}: {error}")]
    Serve {
        /// Where.
        address: std::net::SocketAddr,
        /// Why.
        error: std::io::Error,
    },
    /// The API server could not be reached.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The lease could not be taken.
    #[error("leader election: {0}")]
    Lease(#[from] kube_lease_manager::LeaseManagerError),
    /// The lease was lost while leading.
    #[error("leader election lost")]
    LeaseLost,
    /// Recorded placements could not be read or finished.
    #[error("finishing recorded placements: {0}")]
    Recovery(kube::Error),
    /// A signal handler could not be installed.
    #[error("signal handler: {0}")]
    Signal(std::io::Error),
}

/// Runs until SIGTERM or SIGINT (`Ok`) or a fault (`Err`).
pub async fn run(options: Options, metrics: PrometheusHandle) -> Result<(), RunError> {
    let mut terminate = signal(SignalKind::terminate()).map_err(RunError::Signal)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(RunError::Signal)?;
    let health = Health::default();
    let address = options.bind_address;
    serve::serve(address, health.clone(), metrics)
        .await
        .map_err(|error| RunError::Serve { address, error })?;

    let config = connect::config(options.kubeconfig.as_deref()).await?;
    let namespace = config.default_namespace.clone();
    let client = tokio::select! {
        client = connect::connect(config, options.startup_timeout) => client?,
        _ = terminate.recv() => return Ok(()),
        _ = interrupt.recv() => return Ok(()),
    };
    health.set_connected();

    let identity = options.identity.clone().unwrap_or_else(default_identity);
    let mut leadership = if options.leader_elect {
        let spec = LeaseSpec {
            name: options.leader_elect_resource_name.clone(),
            namespace: options
                .leader_elect_resource_namespace
                .clone()
                .or_else(|| std::env::var("POD_NAMESPACE").ok())
                .unwrap_or(namespace),
            identity: identity.clone(),
            duration: options.leader_elect_lease_duration,
        };
        tokio::select! {
            held = leader::acquire(client.clone(), &spec) => Some(held?),
            _ = terminate.recv() => return Ok(()),
            _ = interrupt.recv() => return Ok(()),
        }
    } else {
        None
    };
    health.set_leading();

    let writer = Writer::new(
        client.clone(),
        Throttle::new(options.kube_api_qps, options.kube_api_burst),
        &identity,
    );
    // Conditions and events have a bucket of their own (kube-scheduler's event client is
    // separate too): a burst of failures does not slow the binds.
    let reporter = Writer::new(
        client.clone(),
        Throttle::new(options.kube_api_qps, options.kube_api_burst),
        &identity,
    );
    let hardened = options.mode == ModeArg::Hardened;
    let recovered = recovery::finish_recorded(&client, &writer, &options.scheduler_name)
        .await
        .map_err(RunError::Recovery)?;
    tracing::info!(
        finished = recovered.finished,
        bound = recovered.bound,
        cleared = recovered.cleared,
        "recorded placements done"
    );
    health.set_recovered();

    let record = (hardened && options.records_placement())
        .then(|| PlacementRecord::new(writer.clone(), options.clears_released_nominations()));
    let (outcomes, outcome_stream) = tokio::sync::mpsc::unbounded_channel();
    let built = Arc::new(OnceLock::new());
    let binder = ApiBinder::new(
        tokio::runtime::Handle::current(),
        writer.clone(),
        record.clone(),
        built.clone(),
    );
    let scheduler = Scheduler::builder(options.scheduler_config())
        .binder(binder)
        .outcomes(Outcomes(outcomes))
        .build();
    let _ = built.set(scheduler.clone());
    let clock = SystemClock::new();
    // The cache, not the scheduler: the outcome channel closes when the scheduler is dropped.
    let record = record.map(|record| (record, scheduler.cache().clone()));
    let writing = tokio::spawn(write_outcomes(outcome_stream, reporter.clone(), record));

    let mut mirror = Mirror::new(
        scheduler.clone(),
        clock,
        options.scheduler_name.clone(),
        health.clone(),
        reporter,
    );
    let mut changes = watches(client);
    // The core's threads start once every watch has listed in full, as kube-scheduler waits for
    // its informers' caches: a pod popped earlier could be placed on a node whose bound pods
    // are not counted yet.
    let mut running = None;
    let stopped = loop {
        tokio::select! {
            change = changes.recv() => match change {
                Some(change) => {
                    if mirror.apply(change).await.is_err() {
                        break Ok(());
                    }
                    if running.is_none() && health.not_ready().is_none() {
                        running = Some(scheduler.start(clock));
                        tracing::info!(scheduler_name = %options.scheduler_name, mode = ?options.mode,
                            gang_cycle = ?options.gang_cycle, "scheduling");
                    }
                }
                None => break Ok(()),
            },
            _ = lost(&mut leadership) => break Err(RunError::LeaseLost),
            _ = terminate.recv() => break Ok(()),
            _ = interrupt.recv() => break Ok(()),
        }
    };
    if let Err(e) = &stopped {
        // Another replica may lead already: not one more bind.
        tracing::error!(error = %e, "stopping at once");
        std::process::exit(1);
    }
    tracing::info!("shutting down: pods waiting at Permit are released, binds under way finish");
    // Joins the core's threads; its binders block on this runtime, so not on one of its threads.
    match running {
        Some(running) => {
            let _ = tokio::task::spawn_blocking(move || running.shutdown()).await;
        }
        None => scheduler.close(),
    }
    drop(scheduler);
    drop(mirror);
    let _ = tokio::time::timeout(Duration::from_secs(10), writing).await;
    if let Some(leadership) = leadership {
        leadership.release().await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Resolves when a held lease is lost; never without one.
async fn lost(leadership: &mut Option<leader::Leadership>) {
    match leadership {
        Some(held) => held.lost().await,
        None => std::future::pending().await,
    }
}

/// The three watches as one channel: Nodes and PodGroups first, listed in full before Pods are
/// watched, so that a pod's node and group are known when it comes. Each watch relists after
/// `410 Gone` and retries a broken connection with backoff; a watch error is logged. The
/// forwarding task ends when the receiver is dropped.
fn watches(client: Client) -> mpsc::Receiver<Change> {
    let config = watcher::Config::default();
    let nodes = watcher(Api::<core::Node>::all(client.clone()), config.clone())
        .default_backoff()
        .filter_map(|e| async move { logged("nodes", e).map(|e| Change::Node(Box::new(e))) });
    let groups = watcher(
        Api::<v1beta1::PodGroup>::all(client.clone()),
        config.clone(),
    )
    .default_backoff()
    .filter_map(|e| async move { logged("podgroups", e).map(|e| Change::Group(Box::new(e))) });
    let pods_config = config.fields("status.phase!=Succeeded,status.phase!=Failed");
    let pods = watcher(Api::<core::Pod>::all(client), pods_config)
        .default_backoff()
        .filter_map(|e| async move { logged("pods", e).map(|e| Change::Pod(Box::new(e))) });
    let (tx, rx) = mpsc::channel(1024);
    tokio::spawn(async move {
        let mut first = stream::select(nodes.boxed(), groups.boxed());
        let (mut nodes_listed, mut groups_listed) = (false, false);
        while !(nodes_listed && groups_listed) {
            let Some(change) = first.next().await else {
                return;
            };
            match &change {
                Change::Node(e) if matches!(**e, watcher::Event::InitDone) => nodes_listed = true,
                Change::Group(e) if matches!(**e, watcher::Event::InitDone) => groups_listed = true,
                _ => {}
            }
            if tx.send(change).await.is_err() {
                return;
            }
        }
        let mut all = stream::select(first, pods.boxed());
        while let Some(change) = all.next().await {
            if tx.send(change).await.is_err() {
                return;
            }
        }
    });
    rx
}

fn logged<K>(
    what: &str,
    event: Result<watcher::Event<K>, watcher::Error>,
) -> Option<watcher::Event<K>> {
    match event {
        Ok(event) => Some(event),
        Err(e) => {
            metrics::counter!("gangway_watch_errors_total", "resource" => what.to_owned())
                .increment(1);
            tracing::warn!(resource = what, error = %e, "watch failed; retrying with backoff");
            None
        }
    }
}

/// `hostname_pid-nanos`, unique enough among replicas.
fn default_identity() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "gangway-scheduler".to_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{host}_{}-{nanos}", std::process::id())
}
