//! Comparing the model with the real queue.

use gangsched::queue::QueueState;

use super::{ModelInfo, ModelPlace, QueueModel};

impl QueueModel {
    /// Whether the real queue `state` is in the same state: the same pods, each in the same
    /// place with the same record; the same lengths, active order, cycle count and closed flag.
    /// Describes the first difference.
    pub fn agrees_with(&self, state: &QueueState) -> Result<(), String> {
        // Both list their pods in id order: walk them side by side.
        let mut records = self.records.iter();
        for (id, place, info) in state.pods() {
            let Some(record) = records.next() else {
                return Err(format!("queue knows {id} ({place:?}), model does not"));
            };
            let model_id = record.info.id();
            if model_id != id {
                return Err(format!(
                    "known pods differ at {id} (queue) / {model_id} (model)"
                ));
            }
            let model_place = record.queue_place();
            if model_place != place {
                return Err(format!("{id}: queue {place:?}, model {model_place:?}"));
            }
            if !record.info.matches(info) {
                return Err(format!("{id}: queue {info:?}, model {:?}", record.info));
            }
        }
        if let Some(extra) = records.next() {
            return Err(format!("model knows {}, queue does not", extra.info.id()));
        }
        let (lengths, model_lengths) = (state.lengths(), self.lengths());
        if lengths != model_lengths {
            return Err(format!(
                "lengths: queue {lengths:?}, model {model_lengths:?}"
            ));
        }
        // The queue's active order must be the model's: the same pods (their number was just
        // compared; each is active in the model), each strictly before the next by the model's
        // rule. (Checked pairwise, without sorting: this runs after every fuzzer op.)
        let mut previous: Option<&ModelInfo> = None;
        let mut in_order = true;
        for id in state.active_order() {
            let Some(r) = self.record(id).filter(|r| r.place == ModelPlace::Active) else {
                in_order = false;
                break;
            };
            if previous.is_some_and(|p| Self::pops_before(&r.info, p)) {
                in_order = false;
                break;
            }
            previous = Some(&r.info);
        }
        if !in_order {
            return Err(format!(
                "active order: queue {:?}, model {:?}",
                state.active_order().collect::<Vec<_>>(),
                self.active_order()
            ));
        }
        if state.scheduling_cycle() != self.cycle || state.is_closed() != self.closed {
            return Err(format!(
                "cycle/closed: queue {}/{}, model {}/{}",
                state.scheduling_cycle(),
                state.is_closed(),
                self.cycle,
                self.closed
            ));
        }
        Ok(())
    }
}
