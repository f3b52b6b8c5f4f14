//! gangway-check on an embedder's own placement: `cargo run --release -p gangway-check
//! --example own_placement` checks three placements (`placements.rs`) on a cluster where two
//! gangs of two compete for one node with room for three (the `medium` preset: a permit
//! deadline, a delete and a bind failure may happen), in `Mode::Hardened`, and prints each
//! report. The two plausible mistakes are found, each with a counterexample timeline; the
//! corrected placement verifies.

mod placements;

use std::process::ExitCode;

use gangsched::scheduler::Placement;
use gangsched::Mode;
use gangway_check::{Check, CheckReport, Preset, PLACEMENT};

use placements::{FirstFit, RememberedRoom};

/// Checks `placement` on the medium preset, in Hardened mode.
fn check(name: &str, placement: impl Placement + 'static) -> CheckReport {
    Check::new(Preset::Medium, Mode::Hardened)
        .placement(name, placement)
        .run()
        .expect("the medium preset can be checked")
}

fn main() -> ExitCode {
    let only_new_nodes = check(
        "FirstFit (retried on new nodes only)",
        FirstFit::only_new_nodes(),
    );
    println!("{only_new_nodes}");
    let remembered = check("RememberedRoom", RememberedRoom::new());
    println!("{remembered}");
    let corrected = check("FirstFit (corrected)", FirstFit::corrected());
    println!("{corrected}");
    let found =
        |report: &CheckReport, property: &str| report.verdict(property).is_some_and(|v| !v.holds);
    let as_expected = found(&only_new_nodes, "I7 no lost event")
        && found(&remembered, PLACEMENT)
        && corrected.all_hold();
    if as_expected {
        println!("both mistakes found; the corrected placement verifies");
        ExitCode::SUCCESS
    } else {
        println!("unexpected: a mistake was not found, or the corrected placement fails");
        ExitCode::FAILURE
    }
}
