//! Reaching the API server: the kubeconfig from the usual places, then `/version` until it
//! answers — with backoff, a log line per failed try naming where it tried, and an error once
//! the startup timeout has passed.

use std::path::Path;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use tokio::time::Instant;

/// Why the scheduler could not reach its API server.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No usable configuration.
    #[error("no kubeconfig: {0}")]
    Config(String),
    /// The client could not be built from it.
    #[error("client for {url}: {why}")]
    Client {
        /// The server it names.
        url: String,
        /// Why.
        why: String,
    },
    /// The server did not answer within the startup timeout.
    #[error("api server {url} unreachable for {waited:?}: {last}")]
    Unreachable {
        /// Where it tried.
        url: String,
        /// How long it kept trying.
        waited: Duration,
        /// The last failure.
        last: String,
    },
}

/// The client configuration: `kubeconfig` if given, else kube's inference (in-cluster when in a
/// pod, `KUBECONFIG`, `~/.kube/config`).
pub async fn config(kubeconfig: Option<&Path>) -> Result<Config, ConnectError> {
    match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .map_err(|e| ConnectError::Config(format!("{}: {e}", path.display())))?;
            Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(|e| ConnectError::Config(format!("{}: {e}", path.display())))
        }
        None => Config::infer()
            .await
            .map_err(|e| ConnectError::Config(e.to_string())),
    }
}

/// A client whose server has answered `/version`, trying for up to `timeout`.
pub async fn connect(config: Config, timeout: Duration) -> Result<Client, ConnectError> {
    let url = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| ConnectError::Client {
        url: url.clone(),
        why: e.to_string(),
    })?;
    let start = Instant::now();
    let mut backoff = Duration::from_millis(200);
    loop {
        match client.apiserver_version().await {
            Ok(version) => {
                tracing::info!(server = %url, version = %version.git_version, "api server reached");
                return Ok(client);
            }
            Err(e) => {
                let waited = start.elapsed();
                if waited >= timeout {
                    return Err(ConnectError::Unreachable {
                        url,
                        waited,
                        last: e.to_string(),
                    });
                }
                tracing::warn!(server = %url, error = %e, retry_in = ?backoff, "api server unreachable");
                tokio::time::sleep(backoff.min(timeout.saturating_sub(waited))).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}
