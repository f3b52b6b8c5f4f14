//! The witness mechanism: a flaw planted in the sharded map's own code
//! ([`gangsched::checking::WaitingFlaw`], through `checking::waiting_pods_with_flaw`: a map
//! built any other way has none). The harness then builds its map that way; everything else
//! runs as always.

use gangsched::checking::WaitingFlaw;

/// The flaws this harness can plant, by the name `GANGWAY_FUZZ_FLAW` gives them (their `Debug`
/// names), and the invariant each breaks (a failure names it).
pub const PLANTABLE: [(WaitingFlaw, &str); 2] = [
    (WaitingFlaw::ExpirySkipsPodDueNow, "H4"),
    (WaitingFlaw::ExpiryInShardOrder, "H4"),
];

/// The plantable flaw named `name` (its `Debug` name), if there is one.
pub fn flaw_named(name: &str) -> Option<WaitingFlaw> {
    crate::plantable::flaw_named(PLANTABLE.iter().map(|(flaw, _)| *flaw), name)
}
