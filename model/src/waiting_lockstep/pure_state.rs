//! The pure [`WaitingState`] as a [`Subject`]: what `tests/tests/prop_waiting.rs` has always
//! driven. Its calls return their decisions, each naming its registration.

use std::borrow::Cow;
use std::time::Duration;

use gangsched::waiting::{AllowOutcome, Decided, Ticket};
use gangsched::{AddError, Decision, PluginName, Pod, Status, Time, WaitingState};

use crate::ops::waiting::{AllowKind, Answer, Call, Delivered, Expect, Report, Subject};
use crate::waiting::ModelDecision;

/// A decision of the state, with its registration.
fn told(d: Decided<()>) -> Delivered {
    Delivered {
        decision: Decision::new(d.pod, d.status, d.cause),
        ticket: Some(d.ticket),
    }
}

impl Subject for WaitingState<()> {
    fn add(
        &mut self,
        pod: Pod,
        waits: Vec<(PluginName, Duration)>,
        now: Time,
    ) -> Result<Ticket, AddError> {
        WaitingState::add(self, pod, waits, now, ())
    }

    fn add_untimed(&mut self, pod: Pod, plugin: PluginName) -> Result<Ticket, AddError> {
        WaitingState::add_untimed(self, pod, plugin, ())
    }

    fn decide(&mut self, call: &Call, _: &[ModelDecision]) -> Result<Report, String> {
        let (answer, decided) = match call {
            Call::Allow { id, ticket, plugin } => match self.allow(id, *ticket, plugin.as_str()) {
                AllowOutcome::NotWaiting => (Answer::Allow(AllowKind::NotWaiting), Vec::new()),
                AllowOutcome::StillPending => (Answer::Allow(AllowKind::StillPending), Vec::new()),
                AllowOutcome::Allowed(d) => (Answer::Allow(AllowKind::Allowed), vec![d]),
            },
            Call::Reject {
                id,
                ticket,
                rejection,
            } => {
                let decided = self.reject(id, *ticket, rejection.status(), rejection.cause());
                (
                    Answer::Decided(decided.is_some()),
                    decided.into_iter().collect(),
                )
            }
            Call::AllowAll { ids, plugin, .. } => match self.allow_all(ids, plugin.as_str()) {
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
                let decided: Vec<Decided<()>> = batches
                    .iter()
                    .flat_map(|batch| self.reject_all(batch, &status, *cause))
                    .collect();
                (Answer::Count(decided.len()), decided)
            }
            Call::Expire { now } => {
                let decided = self.expire(*now);
                (Answer::Count(decided.len()), decided)
            }
        };
        Ok(Report {
            answer,
            delivered: decided.into_iter().map(told).collect(),
        })
    }

    fn state(&self) -> Cow<'_, WaitingState<()>> {
        Cow::Borrowed(self)
    }

    /// Nothing beyond `check()`: the state is all there is.
    fn check<'m>(
        &self,
        _: &WaitingState<()>,
        _: &dyn Fn(Ticket) -> Option<Expect<'m>>,
    ) -> Result<(), String> {
        Ok(())
    }
}
