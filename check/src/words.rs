//! What each action of the model is called: the words of the counterexample timeline, which the
//! explorer (`gangway check --serve`) uses too, so that both name an action alike.

use gangsched::GroupKey;

use super::cluster::{Cluster, Stage};
use super::protocol::Action;
use super::timeline::Step;

/// The step `action` begins in `before`, in the timeline's words: who acts, what it does, the
/// pod and gang it is about, and for a PodGroup update how the min count changes. The timeline
/// adds what changed in the pods' stages and which invariant broke.
pub fn action_step(action: &Action, before: &Cluster) -> Step {
    let (actor, verb, pod) = match action {
        Action::Arrive(id) => ("informer", "pod created, queued", Some(id)),
        Action::Schedule(id) => ("scheduler", "pop, place, assume, reserve", Some(id)),
        Action::HandBack(id) => ("scheduler", "no room: back to the queue", Some(id)),
        Action::Permit(id) => ("scheduler", "permit", Some(id)),
        Action::Record(id) => ("scheduler", "record the assignment (late)", Some(id)),
        Action::Deadline => ("timer", "permit deadline passes", None),
        Action::FlushBackoff => ("timer", "backoff ends: to the active queue", None),
        Action::FlushLeftover => ("timer", "unschedulable leftovers retried", None),
        Action::Bind(id) => ("binder", "bind", Some(id)),
        Action::BindFails(id) => ("binder", "bind fails: unreserve, forget, requeue", Some(id)),
        Action::PermitRejected(id) => ("scheduler", "permit: the quota plugin rejects", Some(id)),
        Action::Release(id) if before.driver.assignment(id).is_none() => (
            "binder",
            "a decision for no pod in binding: ignored",
            Some(id),
        ),
        Action::Release(id) if before.stage(id) == Stage::Deleting => (
            "binder",
            "deleted while binding: release its room",
            Some(id),
        ),
        Action::Release(id) => ("binder", "rejected: unreserve, forget, requeue", Some(id)),
        Action::Delete(id) => ("cluster", "pod deleted", Some(id)),
        Action::ScheduleGroup(id) => (
            "scheduler",
            "pop the gang, place it on a snapshot",
            Some(id),
        ),
        Action::Commit(id) => (
            "scheduler",
            "commit the gang: admit it, or hand it back",
            Some(id),
        ),
        Action::UpdateGroup { .. } => ("informer", "PodGroup updated", None),
        Action::PluginAllows { pod, .. } => ("embedder", "its Permit plugin allows", Some(pod)),
    };
    let mut step = Step::new(actor, verb);
    if let Action::PluginAllows { plugin, .. } = action {
        step = step.with_change(format!("{plugin} allows"));
    }
    if let Action::UpdateGroup { group, min } = action {
        let old = before.groups.get(group).and_then(|g| g.min_count());
        let old = old.map_or("none".to_owned(), |m| m.to_string());
        step = step
            .with_gang(group.to_string())
            .with_change(format!("{group}: min count {old} → {min}"));
    }
    if let Some(id) = pod {
        step = step.with_pod(id.as_str());
        if let Some(key) = GroupKey::of(before.pod(id)) {
            step = step.with_gang(key.to_string());
        }
    }
    step
}

/// `step` on one line, as the explorer lists an action: actor, pod, gang, then the action and
/// what changed, e.g. `scheduler a-0 gang ns/a: permit` or
/// `informer gang ns/a: PodGroup updated → ns/a: min count 2 → 1`.
pub fn action_label(step: &Step) -> String {
    let mut label = step.actor.clone();
    if let Some(pod) = &step.pod {
        label.push(' ');
        label.push_str(pod);
    }
    if let Some(gang) = &step.gang {
        label.push_str(" gang ");
        label.push_str(gang);
    }
    label.push_str(": ");
    label.push_str(&step.action);
    if !step.changes.is_empty() {
        label.push_str(" → ");
        label.push_str(&step.changes.join("; "));
    }
    if let Some(violation) = &step.violation {
        label.push_str(" ✗ ");
        label.push_str(violation);
    }
    label
}
