//! The model's side of each call: the reference model's own methods, and for the batch calls
//! the rules stated over them (the model has no batch methods: a batch is its single-pod
//! rules in turn, or nothing).

use gangsched::{PluginName, PodId, Status};

use super::subject::{AllowKind, Answer, Call};
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
        Call::AllowAll { ids, plugin, .. } => match allow_all(model, ids, plugin) {
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
                .flatten()
                .filter_map(|id| model.reject(id, None, status.clone(), *cause))
                .collect();
            (Answer::Count(decided.len()), decided)
        }
        Call::Expire { now } => {
            let decided = model.expire(*now);
            (Answer::Count(decided.len()), decided)
        }
    }
}

/// `allow_all`'s rule: if a pod of `ids` is not waiting, nothing changes and the first such
/// is named; otherwise `plugin` is cleared for each pod of `ids` in turn (a repeat finds it
/// cleared, or the pod allowed and gone), and the pods that had nothing else pending are
/// allowed, in that order.
pub fn allow_all(
    model: &mut WaitingModel,
    ids: &[PodId],
    plugin: &PluginName,
) -> Result<Vec<ModelDecision>, PodId> {
    if let Some(missing) = ids.iter().find(|id| model.get(id).is_none()) {
        return Err(missing.clone());
    }
    let decided = ids
        .iter()
        .filter_map(|id| match model.allow(id, None, plugin.as_str()) {
            ModelAllow::Allowed(d) => Some(d),
            ModelAllow::NotWaiting | ModelAllow::StillPending => None,
        })
        .collect();
    Ok(decided)
}
