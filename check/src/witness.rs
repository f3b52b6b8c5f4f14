//! What the witness tests share: the properties' names, and the checker's counterexample to a
//! property as the printed timeline.

use super::{discover, timeline, ClusterConfig, Flaw, GangProtocol};

pub(super) const I3: &str = "I3 gang atomicity";
pub(super) const I4: &str = "I4 conservation";
pub(super) const I5: &str = "I5 accounting";
pub(super) const I6: &str = "I6 no reservation held for a lost gang";
pub(super) const I7: &str = "I7 no lost event";
pub(super) const I8: &str = "I8 no stuck gang";
pub(super) use super::protocol::{I9, PROGRESS};

/// The checker's counterexample to `property` in `model`, as the printed timeline; its last
/// step must be marked with the broken invariant.
pub(super) fn counterexample(model: &GangProtocol, property: &'static str) -> String {
    let path = discover(model, property, 2)
        .unwrap_or_else(|| panic!("{property} should have a counterexample in {model:?}"));
    let trace = timeline(model, property, path);
    let last = trace.steps.last().expect("at least one step");
    let marked = last.violation.as_deref().unwrap_or_default();
    // An invariant marks its step with its id (`I3:`), another property with its name.
    let first = property.split(' ').next().unwrap_or_default();
    let numbered = first.len() > 1 && first[1..].bytes().all(|b| b.is_ascii_digit());
    let id = if numbered { first } else { property };
    assert!(
        marked.contains(&format!("{id}:")),
        "the last step is marked with {id}: {trace}"
    );
    trace.to_string()
}

pub(super) fn model(config: ClusterConfig, flaw: Option<Flaw>) -> GangProtocol {
    GangProtocol {
        flaw,
        ..GangProtocol::new(config)
    }
}
