//! Leader election on a `coordination.k8s.io` Lease (kube-lease-manager: server-side apply, so
//! two replicas never both hold it): only the leader schedules and binds. A follower waits and
//! takes over within the lease's duration once the leader stops renewing. A leader that loses
//! its lease exits at once, as kube-scheduler does, and comes back as a follower.

use std::time::Duration;

use kube::Client;
use kube_lease_manager::{LeaseManagerBuilder, LeaseParams};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A held lease: watch it for loss, release it at shutdown.
pub struct Leadership {
    state: watch::Receiver<bool>,
    task:
        JoinHandle<Result<kube_lease_manager::LeaseManager, kube_lease_manager::LeaseManagerError>>,
}

/// The lease to take.
pub struct LeaseSpec {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// This replica.
    pub identity: String,
    /// How long it holds without renewal.
    pub duration: Duration,
}

/// Waits until this replica holds the lease.
pub async fn acquire(
    client: Client,
    spec: &LeaseSpec,
) -> Result<Leadership, kube_lease_manager::LeaseManagerError> {
    let seconds = spec.duration.as_secs().max(2);
    let params = LeaseParams::new(spec.identity.clone(), seconds, (seconds / 3).max(1));
    let manager = LeaseManagerBuilder::new(client, spec.name.clone())
        .with_namespace(spec.namespace.clone())
        .with_parameters(params)
        .build()
        .await?;
    let (mut state, task) = manager.watch().await;
    tracing::info!(lease = %format!("{}/{}", spec.namespace, spec.name), identity = %spec.identity,
        "waiting to lead");
    while !*state.borrow_and_update() {
        if state.changed().await.is_err() {
            let error = match task.await {
                Ok(Err(e)) => e,
                _ => kube_lease_manager::LeaseManagerError::InconsistentState(
                    "lease task ended".into(),
                ),
            };
            return Err(error);
        }
    }
    tracing::info!(lease = %spec.name, identity = %spec.identity, "leading");
    Ok(Leadership { state, task })
}

impl Leadership {
    /// Resolves when the lease is lost (or its task ended).
    pub async fn lost(&mut self) {
        while *self.state.borrow_and_update() {
            if self.state.changed().await.is_err() {
                return;
            }
        }
    }

    /// Gives the lease up, so that a follower takes over at once.
    pub async fn release(self) {
        let Leadership { state, task } = self;
        drop(state);
        match task.await {
            Ok(Ok(manager)) => {
                if let Err(e) = manager.release().await {
                    tracing::warn!(error = %e, "could not release the lease: a follower takes over when it expires");
                }
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "lease task failed"),
            Err(e) => tracing::warn!(error = %e, "lease task failed"),
        }
    }
}
