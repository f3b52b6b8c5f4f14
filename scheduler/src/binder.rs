//! The core's Bind step on the API server: the gang's placement recorded first (H7), then the
//! pod's `pods/binding`. Runs on the core's binding workers (plain threads), blocking on the
//! runtime for the requests.

use std::sync::{Arc, OnceLock};

use gangsched::scheduler::{BindError, Binder};
use gangsched::{Pod, Scheduler};
use tokio::runtime::Handle;

use crate::api::{refusal, Refusal, Writer};
use crate::faults;
use crate::record::PlacementRecord;

/// Binds through the API server.
pub struct ApiBinder {
    runtime: Handle,
    writer: Writer,
    record: Option<PlacementRecord>,
    scheduler: Arc<OnceLock<Scheduler>>,
}

impl ApiBinder {
    /// A binder writing through `writer` on `runtime`; with `record`, a gang's placement is
    /// recorded before its first bind. `scheduler` is set once the core is built (the binder
    /// reads the gang's placement from it).
    pub fn new(
        runtime: Handle,
        writer: Writer,
        record: Option<PlacementRecord>,
        scheduler: Arc<OnceLock<Scheduler>>,
    ) -> ApiBinder {
        ApiBinder {
            runtime,
            writer,
            record,
            scheduler,
        }
    }

    async fn bind_async(&self, pod: &Pod, node: &str) -> Result<(), BindError> {
        if let Some(record) = &self.record {
            let scheduler = self
                .scheduler
                .get()
                .ok_or_else(|| BindError::Failed("the scheduler is not started".into()))?;
            if let Err(e) = record.ensure(scheduler, pod, node).await {
                tracing::warn!(pod = %pod.full_name(), node, error = %e,
                    "placement record failed: not binding, the pod is released");
                metrics::counter!("gangway_binds_total", "result" => "unrecorded").increment(1);
                return Err(BindError::Failed(format!(
                    "recording the gang's placement: {e}"
                )));
            }
        }
        match self.writer.bind(pod, node).await {
            Ok(()) => {
                metrics::counter!("gangway_binds_total", "result" => "bound").increment(1);
                faults::reached("bound");
                Ok(())
            }
            Err(e) => {
                let (result, why) = match refusal(&e) {
                    Refusal::Conflict => ("conflict", "bound by someone else"),
                    Refusal::NotFound => ("not_found", "pod gone"),
                    Refusal::Other => ("error", "api server"),
                };
                metrics::counter!("gangway_binds_total", "result" => result).increment(1);
                tracing::warn!(pod = %pod.full_name(), node, error = %e,
                    "bind refused ({why}): the pod's reservation is released");
                Err(BindError::Failed(e.to_string()))
            }
        }
    }
}

impl Binder for ApiBinder {
    fn bind(&self, pod: &Pod, node: &str) -> Result<(), BindError> {
        self.runtime.block_on(self.bind_async(pod, node))
    }
}
