//! The steps' own seam for the planted flaws that act inside a step (the `checking` feature):
//! kept apart so that what exists only for the witnesses is not mutated with the product's
//! code (`.cargo/mutants.toml` excludes every `planted.rs`).

use crate::{PodId, Resources};

use super::super::flaw::Flaw;
use super::super::parts::Parts;

/// What a planted double release takes off a failed binding cycle's node a second time: the
/// pod's node and requests, read before its release, when `Flaw::BindFailureReleasesTwice` is
/// planted and its bind failed, or `Flaw::TimeoutReleasesTwice` and its wait timed out.
pub(crate) fn double_release<P: Parts>(
    p: &mut P,
    id: &PodId,
    bind_failed: bool,
    timed_out: bool,
) -> Option<(String, Resources)> {
    let planted = (bind_failed && p.planted(Flaw::BindFailureReleasesTwice))
        || (timed_out && p.planted(Flaw::TimeoutReleasesTwice));
    if !planted {
        return None;
    }
    p.read_cache(|c| Some((c.pod_node(id)?.to_owned(), c.pod_requests(id)?.clone())))
}

/// Takes [`double_release`]'s requests off its node a second time.
pub(crate) fn release_again<P: Parts>(p: &mut P, twice: Option<(String, Resources)>) {
    if let Some((node, requests)) = twice {
        p.cache(|c| c.release_again(&node, &requests));
    }
}
