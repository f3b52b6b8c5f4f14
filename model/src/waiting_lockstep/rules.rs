//! The model's side of each call: the reference model's own methods, batches included.

use gangsched::Status;

use crate::ops::waiting::{AllowKind, Answer, Call};
use crate::waiting::{ModelAllow, ModelDecision, Registration, WaitingModel};

/// What the model answers and decides for `call`, in order; `registration` is the one the
/// call names (resolved by the driver), if any.
pub fn on_model(
    model: &mut WaitingModel,
    call: &Call,
    registration: Option<Registration>,
) -> (Answer, Vec<ModelDecision>) {
    match call {
        Call::Allow { id, plugin, .. } => match model.allow(id, registration, plugin.as_str()) {
            ModelAllow::NotWaiting => (Answer::Allow(AllowKind::NotWaiting), Vec::new()),
            ModelAllow::StillPending => (Answer::Allow(AllowKind::StillPending), Vec::new()),
            ModelAllow::Allowed(d) => (Answer::Allow(AllowKind::Allowed), vec![d]),
        },
        Call::Reject { id, rejection, .. } => {
            let decided = model.reject(id, registration, rejection.status(), rejection.cause());
            (
                Answer::Decided(decided.is_some()),
                decided.into_iter().collect(),
            )
        }
        Call::AllowAll { ids, plugin, .. } => match model.allow_all(ids, plugin.as_str()) {
            Ok(decided) => (Answer::Batch(Ok(decided.len())), decided),
            Err(missing) => (Answer::Batch(Err(missing)), Vec::new()),
        },
        Call::RejectAll {
            batches,
            plugin,
            message,
            cause,
            ..
        } => {
            let status = Status::unschedulable(message.as_str()).with_plugin(plugin.clone());
            let decided: Vec<ModelDecision> = batches
                .iter()
                .flat_map(|batch| model.reject_all(batch, &status, *cause))
                .collect();
            (Answer::Count(decided.len()), decided)
        }
        Call::Expire { now } => {
            let decided = model.expire(*now);
            (Answer::Count(decided.len()), decided)
        }
    }
}
