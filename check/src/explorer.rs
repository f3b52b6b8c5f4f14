//! The model stateright's explorer serves: [`GangProtocol`], each action carrying its name in
//! the counterexample timeline's words, so the explorer lists `scheduler a-0 gang ns/a: permit`
//! where it would print the action enum's `Debug` dump.

use stateright::{Model, Property};

use super::cluster::{Cluster, ClusterConfig};
use super::protocol::{protocol_properties, Action, GangProtocol};
use super::run::step;
use super::words::{action_label, action_step};

/// [`GangProtocol`] with its actions named: the same states, actions (in the same order),
/// transitions and properties.
#[derive(Clone, Debug)]
pub struct NamedActions(pub GangProtocol);

/// An action of [`GangProtocol`] and its name in the timeline's words
/// ([`action_label`] of [`action_step`] in the state it is enabled in).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NamedAction {
    /// The action.
    pub action: Action,
    /// What the explorer shows for it.
    pub name: String,
}

impl NamedActions {
    /// The exact model of `config`, its actions named.
    pub fn new(config: ClusterConfig) -> NamedActions {
        NamedActions(GangProtocol::new(config))
    }
}

impl AsRef<GangProtocol> for NamedActions {
    fn as_ref(&self) -> &GangProtocol {
        &self.0
    }
}

impl Model for NamedActions {
    type State = Cluster;
    type Action = NamedAction;

    fn init_states(&self) -> Vec<Cluster> {
        self.0.init_states()
    }

    fn actions(&self, s: &Cluster, actions: &mut Vec<NamedAction>) {
        let mut enabled = Vec::new();
        self.0.actions(s, &mut enabled);
        actions.extend(enabled.into_iter().map(|action| NamedAction {
            name: action_label(&action_step(&action, s)),
            action,
        }));
    }

    fn next_state(&self, s: &Cluster, action: NamedAction) -> Option<Cluster> {
        self.0.next_state(s, action.action)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        protocol_properties(&self.0)
    }

    fn format_action(&self, action: &NamedAction) -> String {
        action.name.clone()
    }

    /// The timeline's whole step (the action, what changed, any invariant broken), then the
    /// state it leads to.
    fn format_step(&self, last: &Cluster, action: NamedAction) -> Option<String> {
        let next = self.0.next_state(last, action.action.clone())?;
        let step = step(&self.0, last, &action.action, &next);
        Some(format!("{}\n\n{next:#?}", action_label(&step)))
    }
}

#[cfg(test)]
mod tests {
    use gangsched::Mode;
    use stateright::Model;

    use super::NamedActions;
    use crate::run::step;
    use crate::words::{action_label, action_step};
    use crate::{discover, Preset};

    /// Along a path that a counterexample takes, every action the explorer offers is named as
    /// the timeline names it, and no name is a `Debug` dump of the action.
    #[test]
    fn the_explorer_names_each_action_in_the_timelines_words() {
        let named = NamedActions::new(Preset::Tiny.config(Mode::Upstream));
        let path =
            discover(&named.0, "I3 gang atomicity", 1).expect("upstream's tiny preset shows I3");
        let mut seen = 0;
        for (state, _) in path.iter() {
            let mut offered = Vec::new();
            named.actions(state, &mut offered);
            let mut plain = Vec::new();
            named.0.actions(state, &mut plain);
            assert_eq!(
                offered.iter().map(|a| &a.action).collect::<Vec<_>>(),
                plain.iter().collect::<Vec<_>>(),
                "the same actions in the same order"
            );
            for a in &offered {
                assert_eq!(
                    named.format_action(a),
                    action_label(&action_step(&a.action, state))
                );
                let next = named
                    .0
                    .next_state(state, a.action.clone())
                    .expect("enabled");
                let timeline_step = step(&named.0, state, &a.action, &next);
                assert!(
                    named.format_action(a).contains(&timeline_step.action),
                    "{:?} is not named {:?}",
                    a.action,
                    timeline_step.action
                );
                for dump in ["Arrive(", "Schedule(", "Permit(", "Release(", "PodId"] {
                    assert!(!a.name.contains(dump), "a Debug dump: {}", a.name);
                }
                seen += 1;
            }
        }
        assert!(seen > 5, "the path offers actions");
    }

    #[test]
    fn a_step_shows_what_changed_then_the_state() {
        let named = NamedActions::new(Preset::Tiny.config(Mode::Upstream));
        let init = &named.init_states()[0];
        let mut offered = Vec::new();
        named.actions(init, &mut offered);
        let first = offered.first().expect("an arrival").clone();
        assert_eq!(first.name, "informer a-0 gang ns/a: pod created, queued");
        let shown = named.format_step(init, first).expect("a successor");
        assert!(
            shown.starts_with(
                "informer a-0 gang ns/a: pod created, queued → a-0: absent → queued (gated)"
            ),
            "{shown}"
        );
        assert!(shown.contains("Cluster {"), "{shown}");
    }
}
