//! Bugs planted in the core's own driver steps — not in a copy the checker keeps — and found by
//! the model checker as counterexamples, in both modes: one each in the binding-failure path,
//! the delete path, the requeue after a failure and the order in which a scheduling cycle
//! records what its binding cycle will need. Each runs the production step with the flaw
//! switched on through `Parts::planted`, which exists only with gangsched's `checking`
//! feature.

use gangsched::Mode;

use super::witness::{counterexample, model, I4, I5, I6, I7, I8};
use super::{discover, Flaw, Preset};

const MODES: [Mode; 2] = [Mode::Hardened, Mode::Upstream];

/// The binding-failure path: a failed bind releases the group's reservation, not the node's.
#[test]
fn a_failed_bind_that_keeps_the_node_reservation_breaks_accounting() {
    for mode in MODES {
        let broken = model(
            Preset::Small.config(mode),
            Some(Flaw::BindFailureKeepsNodeReservation),
        );
        let trace = counterexample(&broken, I5);
        assert!(trace.contains("bind fails"), "{mode:?}: {trace}");
        assert!(
            trace.contains("is Pending but the cache has it Some(Assumed)"),
            "{mode:?}: {trace}"
        );
    }
}

/// The delete path: the binding cycle of a pod deleted while it waited releases its room in
/// silence, so a pod that found no room stays parked though it fits.
#[test]
fn a_deleted_pod_whose_binding_cycle_announces_nothing_parks_a_pod_that_fits() {
    for mode in MODES {
        let broken = model(
            Preset::Medium.config(mode),
            Some(Flaw::DeleteAnnouncesNothing),
        );
        let trace = counterexample(&broken, I7);
        assert!(
            trace.contains("no room: back to the queue"),
            "{mode:?}: {trace}"
        );
        assert!(
            trace.contains("waiting → deleted, in binding"),
            "{mode:?}: {trace}"
        );
        assert!(
            trace.contains("deleted while binding: release"),
            "{mode:?}: {trace}"
        );
        assert!(
            trace.contains("a node has room for it"),
            "{mode:?}: {trace}"
        );
    }
}

/// The requeue after a failure: a pod rejected at Permit is released but never handed back
/// (Hardened: nor its gang).
#[test]
fn a_rejected_pod_that_is_not_requeued_is_lost() {
    for mode in MODES {
        let broken = model(Preset::Small.config(mode), Some(Flaw::RejectedNotRequeued));
        let trace = counterexample(&broken, I4);
        assert!(
            trace.contains("rejected: unreserve, forget, requeue"),
            "{mode:?}: {trace}"
        );
        assert!(
            trace.contains("the queue has it nowhere"),
            "{mode:?}: {trace}"
        );
    }
}

/// The order of the scheduling cycle: recording the assignment after Permit leaves a window
/// in which the pod holds a reservation no binding cycle will end (I6 at once); a decision in
/// that window — a timeout, a deleted sibling — is ignored, and the gang is left stuck (I8).
#[test]
fn recording_the_assignment_after_permit_leaks_and_strands_the_gang() {
    for mode in MODES {
        let broken = model(Preset::Small.config(mode), Some(Flaw::RecordsAfterPermit));
        let leak = counterexample(&broken, I6);
        assert!(
            leak.contains("no binding cycle to end its reservation"),
            "{mode:?}: {leak}"
        );
        let stuck = counterexample(&broken, I8);
        assert!(
            stuck.contains("record the assignment (late)"),
            "{mode:?}: {stuck}"
        );
        assert!(stuck.contains("is stuck"), "{mode:?}: {stuck}");
    }
}

/// The same presets without the planted bugs keep every one of these properties: the
/// counterexamples above are the flaws', not the presets'.
#[test]
fn without_the_flaws_the_same_presets_keep_the_properties() {
    for preset in [Preset::Small, Preset::Medium] {
        let sound = model(preset.config(Mode::Hardened), None);
        for property in [I4, I5, I6, I7, I8] {
            assert!(
                discover(&sound, property, 2).is_none(),
                "{preset:?}: {property}"
            );
        }
    }
}
