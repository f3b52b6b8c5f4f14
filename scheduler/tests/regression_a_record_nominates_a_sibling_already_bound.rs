//! Found by `e2e_crash` (2026-12-07, the kill at 345 ms): a gang's placement record read the
//! gang's reserved members, then waited for the gang's record lock, then wrote each nomination
//! not yet written. A sibling whose own bind finished in that wait had its record forgotten, so
//! the record nominated it again; the API refuses a nomination for a bound pod, and the failed
//! record released the pod that asked for it — a part-bound gang, which a crash then makes
//! permanent (I10). The record now asks the core's cache again under the gang's lock and skips
//! a member no longer reserved.
//!
//! The race ordered by hand: the first member's bind is held (`--pause-at
//! placement-read:1:MILLIS`, the `faults` feature) after it has read the placement and before
//! the lock, while its sibling records, binds and is forgotten. Without the fix the held record
//! asks the API to nominate the bound sibling: refused, and either the bind fails ("placement
//! record failed") or the refusal's fallback asks the API whether the sibling is bound ("member
//! bound meanwhile") — the test forbids both, so it fails without the cache check.

mod support;

use std::time::Duration;

use support::cluster::Cluster;
use support::scheduler::SchedulerProcess;
use support::*;

const WAIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_held_while_a_sibling_binds_does_not_nominate_the_bound_sibling() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let client = cluster.client().await;
    for i in 0..2 {
        create(&client, &node(&format!("gpu-{i}"), 32, 8)).await;
    }
    namespace(&client, "held").await;
    create_in(&client, "held", &gang("held", "x", 2)).await;
    for i in 0..2 {
        create_in(
            &client,
            "held",
            &pod("held", &format!("x-{i}"), Some("x"), 1, 8),
        )
        .await;
    }
    let scheduler = SchedulerProcess::start(
        &cluster,
        &[
            "--leader-elect=false",
            "--workers=2",
            "--pause-at=placement-read:1:5000",
        ],
    );
    scheduler.wait_for("held at placement-read:1", WAIT);
    // The precondition of the race: while one member's record is held, its sibling binds.
    eventually(
        "the sibling bound while the first is held",
        WAIT,
        || async { (bound_count(&client, "held").await == 1).then_some(()) },
    )
    .await;
    assert!(
        !scheduler.logged("going on from placement-read:1"),
        "the sibling bound only after the hold ended: the race was not ordered; the log:\n{}",
        scheduler.log()
    );
    scheduler.wait_for("going on from placement-read:1", WAIT);
    eventually("the whole gang bound", WAIT, || async {
        (bound_count(&client, "held").await == 2).then_some(())
    })
    .await;
    let log = scheduler.log();
    for refused in ["placement record failed", "member bound meanwhile"] {
        assert!(
            !log.contains(refused),
            "the held record wrote a nomination for the sibling bound meanwhile ({refused:?}); \
             the log:\n{log}"
        );
    }
}
