//! The harness behind the `k8s_objects` fuzz target: untrusted Kubernetes objects through
//! gangsched's `k8s` conversions. An input's first byte picks what it is — a `core/v1` Pod, a
//! `core/v1` Node, a `scheduling.k8s.io/v1alpha2` PodGroup, or bare quantities — and the rest
//! drives a structure-aware generator ([`gen`]) of JSON shaped like that object, with
//! arbitrary values where the conversion reads (quantities from [`quantity::Parts`]). The JSON
//! is deserialized with `serde_json` into the k8s-openapi type (an input whose JSON it refuses
//! ends there) and converted with `TryFrom`.
//!
//! Checked ([`checks`], [`quantity`]):
//!
//! - the conversion never panics, and returns a value or its typed error (whose `Display`
//!   does not panic either);
//! - every quantity the input wrote parses exactly: `quantity_value` and
//!   `quantity_milli_value` return what an independent big-integer oracle computes from the
//!   quantity's parts by the documented contract ([`quantity::expect`]);
//! - a converted object holds what its source says: names, priority, group, node, policy; each
//!   resource amount equals the quantity's value in the unit the docs give (a Node's capacity
//!   exactly; a Pod's requests: each container's within the total, a lone container's the
//!   total, the overhead added to the pod converted without it), and a quantity error names a
//!   quantity that is one.
//!
//! `GANGWAY_FUZZ_FLAW=<flaw>` (read once, by [`init`]) plants one of [`PLANTABLE`] in the
//! quantity parser (`checking::planted_quantity_value`, the real parser with the flaw's seam
//! set), which the quantity checks then call: a witness that they find it.

pub mod bytes;
pub mod checks;
pub mod gen;
pub mod quantity;
mod seeds;
#[cfg(test)]
mod tests;

use gangsched::checking::{planted_quantity_milli_value, planted_quantity_value, QuantityFlaw};
use gangsched::k8s::k8s_openapi::api::core::v1 as core;
use gangsched::k8s::k8s_openapi::api::scheduling::v1alpha2 as scheduling;
use gangsched::k8s::{quantity_milli_value, quantity_value};
use gangsched::scheduler::Node;
use gangsched::{Pod, PodGroup};
use serde_json::Value;

pub use seeds::seeds;

use gen::Gen;
use quantity::{Parts, QuantityFn};

pub use crate::plantable::FLAW_VAR;

/// The flaws this target can plant, by their `Debug` names, with the property the checks
/// report them under.
pub const PLANTABLE: [(QuantityFlaw, &str); 1] =
    [(QuantityFlaw::TooLargeByDigitsOnly, "quantity contract")];

/// At most this many bare quantities are read from one input.
pub const MAX_QUANTITIES: usize = 32;

/// The flaw the target plants ([`init`] reads it).
static FLAW: crate::plantable::FlawChoice = crate::plantable::FlawChoice::new();

/// The plantable flaw named `name` (its `Debug` name), if there is one.
pub fn flaw_named(name: &str) -> Option<QuantityFlaw> {
    crate::plantable::flaw_named(PLANTABLE.iter().map(|(f, _)| *f), name)
}

/// The fuzz target's one-time set-up: reads [`FLAW_VAR`]. Panics on a name that is not a
/// plantable flaw, listing those that are.
pub fn init() {
    FLAW.read("k8s_objects", PLANTABLE.iter().map(|(f, _)| *f));
}

/// The flaw [`init`] read, if any.
pub fn planted_flaw() -> Option<QuantityFlaw> {
    FLAW.get(PLANTABLE.iter().map(|(f, _)| *f))
}

/// What an input is (its first byte modulo 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `core/v1` Pod.
    Pod,
    /// A `core/v1` Node.
    Node,
    /// A `scheduling.k8s.io/v1alpha2` PodGroup.
    PodGroup,
    /// Up to [`MAX_QUANTITIES`] quantities, checked against the oracle alone.
    Quantities,
}

/// What an input came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What it was.
    pub kind: Kind,
    /// `None` for bare quantities; else `Err` with serde's message if the JSON did not
    /// deserialize, `Ok` with the conversion's outcome (`converts`, or its error) if it did.
    pub converted: Option<Result<String, String>>,
    /// How many quantities were checked against the oracle.
    pub quantities: usize,
}

/// The JSON `bytes` generate (none for bare quantities), and the quantities they wrote.
pub fn generate(bytes: &[u8]) -> (Kind, Option<Value>, Vec<Parts>) {
    let mut g = Gen::new(bytes);
    let kind = [Kind::Pod, Kind::Node, Kind::PodGroup, Kind::Quantities][g.b.below(4)];
    let value = match kind {
        Kind::Pod => Some(g.pod()),
        Kind::Node => Some(g.node()),
        Kind::PodGroup => Some(g.pod_group()),
        Kind::Quantities => {
            while !g.b.is_empty() && g.quantities.len() < MAX_QUANTITIES {
                let parts = Parts::read(&mut g.b);
                g.quantities.push(parts);
            }
            None
        }
    };
    (kind, value, g.quantities)
}

/// A conversion's outcome as text: `converts`, or the error's `Display`.
fn outcome<T, E: std::fmt::Display>(result: &Result<T, E>) -> String {
    match result {
        Ok(_) => "converts".to_owned(),
        Err(e) => e.to_string(),
    }
}

/// Runs the input `bytes` with `flaw` planted in the quantity checks, if any: what it came to,
/// or the first failed check.
pub fn run(bytes: &[u8], flaw: Option<QuantityFlaw>) -> Result<Outcome, String> {
    let (kind, value, quantities) = generate(bytes);
    let converted = match value {
        None => None,
        Some(value) => Some(convert(kind, value, &quantities)?),
    };
    let (value_fn, milli_fn): (QuantityFn, QuantityFn) = match flaw {
        None => (quantity_value, quantity_milli_value),
        Some(QuantityFlaw::TooLargeByDigitsOnly) => (
            |q| planted_quantity_value(q, QuantityFlaw::TooLargeByDigitsOnly),
            |q| planted_quantity_milli_value(q, QuantityFlaw::TooLargeByDigitsOnly),
        ),
        Some(other) => return Err(format!("{other:?} cannot be planted here")),
    };
    for parts in &quantities {
        quantity::check(parts, value_fn, milli_fn)?;
    }
    Ok(Outcome {
        kind,
        converted,
        quantities: quantities.len(),
    })
}

/// Deserializes `value` as `kind`'s k8s-openapi type and converts it, checking the result.
fn convert(
    kind: Kind,
    value: Value,
    quantities: &[Parts],
) -> Result<Result<String, String>, String> {
    Ok(Ok(match kind {
        Kind::Pod => {
            let source: core::Pod = match serde_json::from_value(value) {
                Ok(source) => source,
                Err(e) => return Ok(Err(e.to_string())),
            };
            let converted = Pod::try_from(&source);
            checks::pod(&source, &converted, quantities)?;
            outcome(&converted)
        }
        Kind::Node => {
            let source: core::Node = match serde_json::from_value(value) {
                Ok(source) => source,
                Err(e) => return Ok(Err(e.to_string())),
            };
            let converted = Node::try_from(&source);
            checks::node(&source, &converted, quantities)?;
            outcome(&converted)
        }
        Kind::PodGroup | Kind::Quantities => {
            let source: scheduling::PodGroup = match serde_json::from_value(value) {
                Ok(source) => source,
                Err(e) => return Ok(Err(e.to_string())),
            };
            let converted = PodGroup::try_from(&source);
            checks::pod_group(&source, &converted)?;
            outcome(&converted)
        }
    }))
}

/// The fuzz target's body: runs `bytes` (with the flaw [`init`] read); panics — a finding —
/// at the first failed check.
pub fn k8s_objects(bytes: &[u8]) {
    if let Err(failure) = run(bytes, planted_flaw()) {
        panic!("{failure}");
    }
}
