//! Which critical sections can run next in a state: the action enumeration of the model. What
//! each action does is the core's own driver step (`drive.rs` maps an action onto it,
//! `successor.rs` records what it did); the deliberate bugs that witness tests plant are the
//! core's too, planted in those steps ([`Flaw`]).

use gangsched::checking::steps::Placed;
pub use gangsched::checking::Flaw;
use gangsched::checking::JobQueue;
use gangsched::GangCycle;

use super::cluster::{Cluster, Stage};
use super::drive::InCycle;
use super::protocol::{Action, GangProtocol};

impl GangProtocol {
    /// Every action enabled in `s`, in a fixed order.
    pub(super) fn enabled(&self, s: &Cluster, actions: &mut Vec<Action>) {
        if s.broken() {
            return;
        }
        if self.config.arrivals {
            if let Some(id) = s.next_arrival() {
                if self.symmetric {
                    let gang = s.pod(&id).group();
                    let absent = s
                        .pods
                        .values()
                        .filter(|p| p.group() == gang && s.stage(p.id()) == Stage::Absent);
                    actions.extend(absent.map(|p| Action::Arrive(p.id().clone())));
                } else {
                    actions.push(Action::Arrive(id));
                }
            }
        }
        // The scheduling cycle is serial: one pod from pop to Permit (or hand-back) at a time.
        match &*s.cycle {
            None => {
                let mut heads = s.queue.heads();
                if let Some(first) = heads.next() {
                    // The pod-group cycle takes a pod that names a group with its siblings.
                    let as_group = self.config.gang_cycle == GangCycle::PodGroup
                        && s.pod(first).group().is_some();
                    let schedule = |id: &gangsched::PodId| match as_group {
                        true => Action::ScheduleGroup(id.clone()),
                        false => Action::Schedule(id.clone()),
                    };
                    actions.push(schedule(first));
                    if self.symmetric {
                        // The core pops the smallest name, and a pod's name starts with its
                        // gang's: any member of that gang tied with it may pop instead.
                        let gang = s.pod(first).group();
                        let tied = heads.filter(|id| s.pod(id).group() == gang);
                        actions.extend(tied.map(schedule));
                    }
                }
            }
            Some(InCycle::Pod(placed @ Placed::Unfit { .. })) => {
                actions.push(Action::HandBack(placed.pod().id().clone()))
            }
            Some(InCycle::Pod(placed @ Placed::Reserved { .. })) => {
                let id = placed.pod().id();
                if s.budget.permit_rejections > 0 {
                    actions.push(Action::PermitRejected(id.clone()));
                }
                // An embedder's plugin denying it with no denial left ends the path here.
                if !self.permit_past_budget(s) {
                    actions.push(Action::Permit(id.clone()))
                }
            }
            Some(InCycle::Permitted { pod, .. }) => actions.push(Action::Record(pod.id().clone())),
            Some(InCycle::Group(simulation)) => {
                if let Some((first, _)) = simulation.members.first() {
                    actions.push(Action::Commit(first.info.id().clone()));
                }
            }
        }
        // The embedder may allow a pod its Permit plugin holds, at any moment.
        if !self.plugins.permit_names().is_empty() {
            for waiting in s.waiting.iter() {
                for pending in waiting.pending() {
                    if self.plugins.permit_names().contains(&pending.plugin) {
                        actions.push(Action::PluginAllows {
                            pod: waiting.pod().id().clone(),
                            plugin: pending.plugin.clone(),
                        });
                    }
                }
            }
        }
        // A binding worker may take any decision next.
        for job in s.driver.jobs().jobs() {
            let id = job.decision.pod.id().clone();
            if job.decision.cause.is_allowed() {
                if s.budget.bind_failures > 0 {
                    actions.push(Action::BindFails(id.clone()));
                }
                actions.push(Action::Bind(id));
            } else {
                actions.push(Action::Release(id));
            }
        }
        if s.budget.deletes > 0 {
            for (id, stage) in &s.stages {
                if matches!(stage, Stage::Pending | Stage::Waiting | Stage::Bound) {
                    actions.push(Action::Delete(id.clone()));
                }
            }
        }
        if s.queue.next_backoff_expiry().is_some() {
            actions.push(Action::FlushBackoff);
        }
        if s.budget.timeouts > 0 && self.next_deadline(s).is_some() {
            actions.push(Action::Deadline);
        }
        if s.budget.flushes > 0 && s.queue.next_leftover_flush().is_some() {
            actions.push(Action::FlushLeftover);
        }
        if s.budget.group_updates > 0 {
            for g in s.groups.iter() {
                let Some(min) = g.min_count() else { continue };
                // Down to 1, or up to the members there (the core refuses more).
                let down = (min > 1).then(|| min - 1);
                let up = (min < g.all_pods_count() as u32).then_some(min + 1);
                for min in down.into_iter().chain(up) {
                    let group = g.key().clone();
                    actions.push(Action::UpdateGroup { group, min });
                }
            }
        }
    }
}
