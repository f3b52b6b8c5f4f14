//! The queue's operations ([`QueueOp`](crate::ops::queue::QueueOp)) applied to the model, as
//! [`ops::queue::apply`](crate::ops::queue::apply) applies them to the real queue.

use std::cell::RefCell;

use gangsched::queue::PluginSet;
use gangsched::Time;

use super::{ModelInfo, ModelPopped, QueueModel};
use crate::ops::queue::{QueueOp, QueueOutcome};

impl QueueModel {
    /// Applies `op` with `plugins` at `now` (which an `Advance` moves). `None` for an operation
    /// the model leaves out: a hand-back with the queue's own record (`HandBackOwn`), which the
    /// runners that compare with the model never send. A pop's `prefer` is taken as given: the
    /// runner has checked that it ties at the real queue's head.
    pub fn apply(
        &mut self,
        op: &QueueOp,
        now: &mut Time,
        plugins: &PluginSet,
    ) -> Option<QueueOutcome<ModelPopped>> {
        let at = *now;
        Some(match op {
            QueueOp::Add(pod) => QueueOutcome::Added(self.add(pod.clone(), at, plugins)),
            QueueOp::Update { old, new } => {
                QueueOutcome::Updated(self.update(old.clone(), new.clone(), at, plugins))
            }
            QueueOp::Delete(id) => QueueOutcome::Deleted(self.delete(id)),
            QueueOp::Pop { prefer } => QueueOutcome::Popped(match prefer {
                Some(pod) => self.pop_pod(pod),
                None => self.pop(),
            }),
            QueueOp::Done(id) => QueueOutcome::Done(self.done(id)),
            QueueOp::HandBack(info) => QueueOutcome::HandedBack(
                self.add_unschedulable_if_not_present(ModelInfo::of(info), at, plugins),
            ),
            QueueOp::HandBackOwn { .. } => return None,
            QueueOp::HandBackGang(members) => {
                QueueOutcome::GangHandedBack(self.add_gang_unschedulable(
                    members.iter().map(ModelInfo::of).collect(),
                    at,
                    plugins,
                ))
            }
            QueueOp::Activate(ids) => QueueOutcome::Activated(self.activate(ids, at, plugins)),
            QueueOp::MoveAll { event, precheck } => {
                let asked = RefCell::new(None);
                let check = |info: &ModelInfo| {
                    precheck.note_asked(info.id(), &asked);
                    precheck.admits(info.id(), info.pod.priority())
                };
                let check: Option<&dyn Fn(&ModelInfo) -> bool> =
                    (!precheck.is_none()).then_some(&check);
                let moved = self.move_all_to_active_or_backoff(event.clone(), check, at, plugins);
                QueueOutcome::Moved {
                    moved,
                    asked: asked.into_inner(),
                }
            }
            QueueOp::FlushBackoff => {
                QueueOutcome::Flushed(self.flush_backoff_completed(at, plugins))
            }
            QueueOp::FlushLeftover => {
                QueueOutcome::Flushed(self.flush_unschedulable_leftover(at, plugins))
            }
            QueueOp::Advance(by) => {
                *now += *by;
                QueueOutcome::Advanced
            }
            QueueOp::Close => {
                self.close();
                QueueOutcome::Closed
            }
        })
    }
}
