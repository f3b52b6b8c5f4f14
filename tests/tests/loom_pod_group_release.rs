//! A loom model of an admitted pod-group gang's own release (Hardened, `GangCycle::PodGroup`,
//! `core/src/scheduler/steps/admitted.rs`) racing the commit of the same gang's next attempt,
//! on a real `Scheduler` (the harness of `loom_pod_group.rs`, `loom_pod_group/harness.rs`).
//!
//! Gang `g` (min count 2) was admitted with `g-0` and `g-1`; `g-2` arrived after that cycle and
//! is queued alone. `g-0`'s bind fails, which leaves the gang short of quorum, so its binding
//! cycle releases the members whose binding has not begun: `DriverState::release_admitted`
//! marks them rejected (and removes the gang's admission), then each is unreserved in its group
//! — two critical sections. Meanwhile the scheduling thread runs `g-2`'s pod-group cycle: its
//! snapshot counts `g-1`, and so can its commit on the real state between the two critical
//! sections (`g-1` marked rejected but still counted). The commit then admits `g-2` alone — a
//! new admission, the old one gone — and its own quorum check after the admission still sees
//! `g-1`. (The cycle may also gather `g-0`, once its failed bind has handed it back.) Once the
//! release unreserves `g-1`, `g-2` is admitted short of quorum, allowed and
//! waiting to bind, with nobody else to release it: the release asks the quorum once more after
//! unreserving (`GroupState::short_of_quorum`) and releases `g-2` too. Two threads beside the
//! main one: the scheduling thread's `schedule_one`, and a binding worker running one binding
//! cycle, the oldest decision's: `g-0`'s. The other binding cycles run after the join, so a
//! gang left admitted short stays so until the check, as it would for a slow worker.
//!
//! After joining, the harness's checks (`loom_pod_group.rs`'s module docs): `check()` — whose
//! I9 part, `checking::short_gangs_binding`, names an admitted gang short of quorum with a
//! member still waiting to bind — no pod waiting at Permit holding room, a decision for every
//! pod in binding; then every binding cycle run, `check()` again, nothing left in binding or
//! assumed, and every pod bound or back in the queue; and, with one binding worker, I3 for the
//! gang: none or at least its minimum bound (no other binding of it is under way when `g-0`'s
//! bind leaves it short, so a short gang binds nothing more). With two, a member whose binding
//! began before the release binds alone by design (a bind under way is the binder's to end).
//!
//! In 13 of d's interleavings `g-0`'s release is spurious: `release_if_short` asks the quorum
//! (the group's critical section) before `release_admitted` (the driver's), and `g-2`'s commit
//! in between brings the gang back to quorum and joins the admission, so `g-1` and `g-2` are
//! released though together they make it. Safe — nothing is held, both go back to the queue —
//! but an attempt lost; in 13 others the re-check after unreserving releases `g-2` (the race
//! above).
//!
//! The witness plants `Flaw::ReleaseSkipsQuorumRecheck` (the release does not ask the quorum
//! again) and expects loom to find the interleaving above, reported by `check()` as I9.
//!
//! A second binding worker (d2) found another race on the real code, now fixed: see
//! `d2_release_vs_next_attempt_commit_two_workers_hardened`.
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_pod_group_release --target-dir target/loom`. Without
//! `--cfg loom` the model runs once on real threads and the witness is skipped.

#[path = "loom_pod_group/harness.rs"]
mod harness;

use gangsched::checking::Flaw;
use gangsched::queue::QueuePlace;
use gangsched::scheduler::CycleOutcome;
use gangsched::sync::Arc;
use gangsched::{Mode, Time};
use harness::{explore, member, schedule, settled, spawn, Core};

/// (d) The release of gang `g`, admitted with two of its three members on a node of three
/// CPUs, after `g-0`'s bind fails, while `g-2`'s pod-group cycle runs (see the module docs);
/// `workers` binding workers run one binding cycle each.
fn release_vs_next_attempt(name: &'static str, workers: usize, flaw: Option<Flaw>) {
    explore(name, move || {
        let mut core = Core::new(Mode::Hardened, flaw, &[("n", 3)], |pod| pod.name() == "g-0");
        core.gang("g", 2, 2, 0);
        let first = core.s.schedule_one(Time::ZERO).expect("g is active");
        assert!(
            matches!(first, CycleOutcome::PodGroup { admitted: true, ref members, .. }
                if members.len() == 2),
            "g-0 and g-1 fit: {first:?}"
        );
        let late = member("g", 2);
        core.s.add_pod(late.clone(), Time::from_millis(2)).unwrap();
        let place = core.s.queue().place(late.id());
        assert!(
            matches!(place, Some(QueuePlace::Active(_))),
            "g-2 is queued to be popped: {place:?}"
        );
        core.gangs[0].members.push(late);
        let core = Arc::new(core);
        let scheduler = schedule(&core);
        let binders: Vec<_> = (0..workers)
            .map(|_| {
                let core = core.clone();
                spawn(move || core.bind_one())
            })
            .collect();
        let cycle = scheduler.join().unwrap();
        assert!(
            matches!(cycle, CycleOutcome::PodGroup { .. }),
            "g's next pod-group cycle: {cycle:?}"
        );
        // One worker runs g-0's cycle. Another finds g-1's allowed job if it takes it before
        // the release — or nothing, once g-0's failed bind has handed g-1 back with it in one
        // backoff (H2), job and all — or g-2's, if its commit came first.
        let ran: Vec<bool> = binders.into_iter().map(|b| b.join().unwrap()).collect();
        assert!(ran.iter().any(|r| *r), "g-0's decision was there");
        settled(&core, |_| None);
        if workers > 1 {
            return;
        }
        let gang = &core.gangs[0];
        let bound: Vec<_> = gang
            .members
            .iter()
            .filter(|pod| core.binder.binding(pod.id()).is_some())
            .map(|pod| pod.id())
            .collect();
        assert!(
            bound.is_empty() || bound.len() >= gang.min_count,
            "I3 violated: of {}, only {bound:?} bound",
            gang.key
        );
    });
}

/// One binding worker: the race's binding cycle is `g-0`'s.
#[test]
fn d_release_vs_next_attempt_commit_hardened() {
    release_vs_next_attempt("d", 1, None);
}

/// Witness: a release that does not ask the quorum again after unreserving leaves `g-2`,
/// admitted between the release's two critical sections on `g-1`'s count, admitted short and
/// waiting to bind (`check()`'s I9).
#[cfg(loom)]
#[test]
#[should_panic(expected = "I9 violated: admitted gangs short of quorum still binding")]
fn witness_d_release_without_the_recheck_leaves_the_next_attempt_short() {
    release_vs_next_attempt("d", 1, Some(Flaw::ReleaseSkipsQuorumRecheck));
}

/// (d2) The same with two binding workers, so that `g-1`'s binding cycle may run beside the
/// release (each runs at most one; the I3 check at the end is skipped, see the module docs).
/// It found another race on the real code: a worker takes `g-1`'s allowed job
/// (`DriverState::next_job`, one critical section) before the release and claims it
/// (`begin_binding`, the next) after; `release_admitted` in between found `g-1` unclaimed,
/// marked it rejected, unreserved it and queued its rejection beside the job already taken, and
/// the worker's claim still succeeded and bound `g-1` — leaving the rejection queued for a pod
/// no longer in binding (`check()`: "I4 violated: g-1 has a decision but is not in binding").
/// Fixed: `release_admitted` leaves a member whose job a worker has taken to that worker.
///
/// Once a failed bind handed its released siblings back with it (H2, issue #43) it found a
/// third: a worker took `g-1`'s *rejection* and had not claimed it when `g-0`'s failed bind
/// handed `g-1` back; `g-1` came back at once (`g-2`'s arrival, recorded while it was in
/// flight, is an event the gang plugin queues it for), was admitted again with `g-0` and
/// `g-2`, and the worker's claim met the new attempt and ended it with the old rejection,
/// leaving the new attempt's allow queued for a pod no longer in binding. Fixed: taking a job
/// claims its pod in the same critical section (`DriverState::next_job`), so no decision
/// outlives its attempt.
#[test]
fn d2_release_vs_next_attempt_commit_two_workers_hardened() {
    release_vs_next_attempt("d2", 2, None);
}
