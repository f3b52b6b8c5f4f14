//! Loom models of the pod-group cycle's commit (`GangCycle::PodGroup`) racing the events that
//! can change the real state after its snapshot: (a) a member's delete — a member the cycle
//! placed, or a bound member its quorum counted — (b) the removal of a node the snapshot placed
//! a member on, and (c) another gang's binding failure, whose release frees room and whose pod
//! goes back to the queue. Each model runs on a real `Scheduler` (the harness,
//! `loom_pod_group/harness.rs`, shared with `loom_pod_group_release.rs`): the scheduling
//! thread's `schedule_one`, the informer's `delete_pod` or `delete_node`, and a binding worker
//! that runs each decision's `steps::binding_cycle` on the scheduler's parts, as
//! `run_binding_cycle` does, noting first which pod's cycle begins: three threads per model.
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_pod_group --target-dir target/loom`. Without `--cfg
//! loom` each model runs once on real threads (a smoke test) and the witnesses are skipped.
//!
//! Every model asserts, in Hardened mode, once its threads have joined:
//! - `Scheduler::check()` (I4–I6, and I9 since the cycle is the pod-group one);
//! - I9: no pod waits at Permit for its gang holding a reservation, no member of a gang the
//!   cycle did not admit holds one, and every pod in binding has a decision to end it;
//! - I3: an admitted gang had its quorum on the real state. A thread that deletes a member
//!   then looks whether any other member holds a reservation or is in binding, or a binding
//!   cycle of the gang has begun; if not, the commit's quorum check comes after the delete,
//!   so that member must not count;
//! - after every binding cycle has run: `check()` again, nothing left in binding or assumed
//!   (I6), and every pod accounted for (I4) — bound (in the cache, by the binder), back in the
//!   queue, or, deleted, gone from queue and cache, and bound only by a binding cycle begun
//!   before its delete was done;
//! - (c) also I7: the room the failed bind freed is not lost on the other gang, which is
//!   admitted or has a member the queue will pop again without the leftover flush.
//!
//! The `witness_*` tests run the same models with a flaw planted in the core's own steps
//! (`gangsched::checking::Flaw`, through the harness's `Planted` wrapper around the scheduler's
//! parts: the cycle and the binding cycles then run as `steps::gather`/`simulate`/`commit` and
//! `steps::binding_cycle` on it), or in Mode::Upstream, and expect loom to find the
//! interleaving that breaks the property. The wrapper holds no step gate (`Parts::unobserved`
//! cannot be forwarded), which only `check()` during a step would notice; the models check
//! after joining.

#[path = "loom_pod_group/harness.rs"]
mod harness;

use gangsched::checking::{self, Flaw};
use gangsched::queue::QueuePlace;
use gangsched::scheduler::CycleOutcome;
use gangsched::sync::{thread, Arc};
use gangsched::{Mode, Pod, PodId, Time};
use harness::{explore, schedule, settled, spawn, Core, NOW};

impl Core {
    /// Deletes `pod` (the informer) and says, as of the delete's end, whether no other member
    /// of its gang held a reservation (assumed or bound in the cache) or was in binding and no
    /// binding cycle of the gang had begun, and whether `pod`'s own binding had begun.
    fn delete(&self, pod: &Pod) -> Deleted {
        assert!(
            self.s.delete_pod(pod, NOW).unwrap(),
            "{} was known",
            pod.id()
        );
        let key = pod.group_key().expect("a member");
        let gang = self.gangs.iter().find(|g| &g.key == key).expect("a gang");
        let in_binding = self.s.in_binding();
        let reserved = gang.members.iter().map(Pod::id).any(|id| {
            id != pod.id() && (in_binding.contains(id) || self.s.cache().phase(id).is_some())
        });
        // Read last: a reservation of an admitted member ends only in a binding cycle of the
        // gang (its own, or a sibling's hand-back), noted before it begins.
        let begun = self
            .begun
            .lock()
            .iter()
            .any(|id| gang.members.iter().any(|m| m.id() == id));
        let driver = checking::driver_state(&self.s);
        let claimed = driver.assignment(pod.id()).is_some_and(|a| a.claimed);
        Deleted {
            pod: pod.id().clone(),
            before_commit: !reserved && !begun,
            bind_begun: self.binder.binding(pod.id()).is_some() || claimed,
        }
    }
}

/// A delete the model made, and whether it was done before the cycle reserved any other
/// member of the gang — so before the commit's quorum check, which must then see it.
struct Deleted {
    pod: PodId,
    before_commit: bool,
    /// Whether its binding cycle had begun by then (a binding worker's bind under way is the
    /// binder's to end), or the binder had bound it.
    bind_begun: bool,
}

/// The checks of the module docs, after the race, `cycle` the race's pod-group cycle.
fn settle(core: &Core, cycle: &CycleOutcome, deleted: &[Deleted]) {
    let s = &core.s;
    let in_binding = s.in_binding();
    let CycleOutcome::PodGroup {
        group,
        admitted,
        members,
        ..
    } = cycle
    else {
        panic!("not a pod-group cycle: {cycle:?}");
    };
    let gang = core.gangs.iter().find(|g| &g.key == group).expect("a gang");
    let before = |id: &PodId| deleted.iter().any(|d| &d.pod == id && d.before_commit);
    // Through Permit in this cycle: allowed, or (Upstream) waiting for a later member's.
    let allowed: Vec<&PodId> = members
        .iter()
        .filter_map(|m| match m {
            CycleOutcome::Allowed { pod, .. } | CycleOutcome::Waiting { pod, .. } => Some(pod),
            _ => None,
        })
        .collect();
    let any_allowed = members
        .iter()
        .any(|m| matches!(m, CycleOutcome::Allowed { .. }));
    for m in members.iter().filter(|_| !admitted) {
        let id = match m {
            CycleOutcome::Unschedulable { pod, .. } => pod,
            // A member deleted while the cycle ran is gone, not handed back.
            CycleOutcome::Dropped { pod } if deleted.iter().any(|d| &d.pod == pod) => pod,
            other => panic!("I9 violated: {group} not admitted, yet {other:?}"),
        };
        let holds = in_binding.contains(id) || s.cache().phase(id).is_some();
        assert!(
            !holds,
            "I9 violated: {id} of {group}, not admitted, holds room"
        );
    }
    let passed = allowed.iter().filter(|&&id| !before(id)).count();
    let bound = gang.bound.iter().filter(|&id| !before(id)).count();
    assert!(
        !any_allowed || passed + bound >= gang.min_count,
        "I3 violated: {group} admitted with {passed} members and {bound} bound when its commit \
         checked, short of min count {} (a member was deleted before)",
        gang.min_count
    );
    settled(core, |id| {
        let d = deleted.iter().find(|d| &d.pod == id)?;
        Some(d.bind_begun)
    });
}

/// A binding worker: runs the binding cycles of the decisions there are until none is left
/// (those that come later run after the race); returns how many it ran.
fn worker(core: &Arc<Core>) -> thread::JoinHandle<usize> {
    let core = core.clone();
    spawn(move || std::iter::from_fn(|| core.bind_one().then_some(())).count())
}

/// (a1) A member the snapshot placed is deleted while its gang — two of min count 2 — is
/// gathered, simulated and committed. The delete may land between that member's reserve and
/// its record, where only the commit's quorum check on the real state sees it.
fn placed_member_deleted(mode: Mode, flaw: Option<Flaw>) {
    member_deleted_vs_commit("a1", mode, flaw, 0, 1);
}

/// A gang `g` of two (min count 2) with `bound` members bound, on one node of two CPUs, its
/// member `deleted` deleted while the scheduling thread runs its cycle and a worker binds.
fn member_deleted_vs_commit(
    name: &'static str,
    mode: Mode,
    flaw: Option<Flaw>,
    bound: usize,
    deleted: usize,
) {
    explore(name, move || {
        let mut core = Core::new(mode, flaw, &[("n", 2)], |_| false);
        let g = core.gang("g", 2, 2, bound);
        let core = Arc::new(core);
        let scheduler = schedule(&core);
        let deleter = spawn({
            let core = core.clone();
            move || core.delete(&g[deleted])
        });
        let binding = worker(&core);
        let cycle = scheduler.join().unwrap();
        let deleted = deleter.join().unwrap();
        binding.join().unwrap();
        settle(&core, &cycle, &[deleted]);
    });
}

#[test]
fn a1_placed_member_deleted_vs_commit_hardened() {
    placed_member_deleted(Mode::Hardened, None);
}

/// Witness: a commit that trusts its snapshot admits the gang although the member was deleted
/// between its reserve and its quorum check. Whichever interleaving loom reaches first tells:
/// the gang binding short of quorum (`check()`'s I9), or — the delete done before the member
/// was recorded, so nothing marks it deleted — its binding cycle binding it after its delete
/// (I4).
#[cfg(loom)]
#[test]
#[should_panic(expected = "violated")]
fn witness_a1_commit_trusting_the_snapshot_admits_without_a_deleted_member() {
    placed_member_deleted(Mode::Hardened, Some(Flaw::CommitTrustsTheSnapshot));
}

/// Witness: upstream commits member by member through Permit; once the second is gone the
/// first waits at Permit holding its room.
#[cfg(loom)]
#[test]
#[should_panic(expected = "I9 violated")]
fn witness_a1_upstream_holds_and_waits() {
    placed_member_deleted(Mode::Upstream, None);
}

/// (a2) A bound member the snapshot counted towards quorum is deleted while the gang's last
/// member — its one pending one — is committed: min count 2, one bound, one placed.
fn counted_member_deleted(mode: Mode, flaw: Option<Flaw>) {
    member_deleted_vs_commit("a2", mode, flaw, 1, 0);
}

#[test]
fn a2_counted_member_deleted_vs_commit_hardened() {
    counted_member_deleted(Mode::Hardened, None);
}

/// Witness: the commit admits what the snapshot counted, the bound member deleted before it
/// checked: one member of a gang of two admitted (I3; or `check()`'s I9, the gang binding
/// short of quorum, in an interleaving where the delete ends after the member's reserve).
#[cfg(loom)]
#[test]
#[should_panic(expected = "violated")]
fn witness_a2_commit_trusting_the_snapshot_admits_a_partial_gang() {
    counted_member_deleted(Mode::Hardened, Some(Flaw::CommitTrustsTheSnapshot));
}

/// Witness: upstream's Permit on the real state finds the quorum gone and parks the member,
/// holding its room (I9).
#[cfg(loom)]
#[test]
#[should_panic(expected = "I9 violated")]
fn witness_a2_upstream_holds_and_waits() {
    counted_member_deleted(Mode::Upstream, None);
}

/// (b) The node the snapshot placed the second member on is removed while the gang — two of
/// min count 2, on two nodes of one CPU each — is committed. Removed before that member's
/// assume, the commit fails there and releases the first member in the same step.
fn node_removed(mode: Mode) {
    explore("b", move || {
        let mut core = Core::new(mode, None, &[("n1", 1), ("n2", 1)], |_| false);
        core.gang("g", 2, 2, 0);
        let core = Arc::new(core);
        let scheduler = schedule(&core);
        let remover = spawn({
            let core = core.clone();
            move || core.s.delete_node("n2", NOW).unwrap()
        });
        let binding = worker(&core);
        let cycle = scheduler.join().unwrap();
        let on_it = remover.join().unwrap();
        binding.join().unwrap();
        assert!(
            on_it.len() <= 1,
            "at most the second member is on n2: {on_it:?}"
        );
        settle(&core, &cycle, &[]);
    });
}

#[test]
fn b_node_removed_vs_commit_hardened() {
    node_removed(Mode::Hardened);
}

/// Witness: upstream's first member passes its Reserve and waits at Permit; the second's
/// assume fails on the removed node, and the first is left holding its room (I9).
#[cfg(loom)]
#[test]
#[should_panic(expected = "I9 violated")]
fn witness_b_upstream_holds_and_waits() {
    node_removed(Mode::Upstream);
}

/// (c) Gang `b` (two of min count 2) is admitted on a node of three CPUs and its binder fails.
/// The binding worker runs b's cycles — the first bind fails, frees its room (announced) and
/// hands the member back to the queue; Hardened releases the other member in the same step, the
/// gang short of quorum, and hands it back with the failed one in one backoff (H2) — while gang `a` (two of min count 2, which fits
/// only in the room freed) has its pod-group cycle.
fn other_gang_bind_fails(mode: Mode, flaw: Option<Flaw>) {
    explore("c", move || {
        let mut core = Core::new(mode, flaw, &[("n", 3)], |pod| pod.group() == Some("b"));
        core.gang("b", 2, 2, 0);
        let admitted = core.s.schedule_one(Time::ZERO).expect("b is active");
        assert!(
            matches!(admitted, CycleOutcome::PodGroup { admitted: true, .. }),
            "b fits: {admitted:?}"
        );
        let a = core.gang("a", 2, 2, 0);
        let core = Arc::new(core);
        let scheduler = schedule(&core);
        let binding = worker(&core);
        let cycle = scheduler.join().unwrap();
        // Upstream runs b's two binding cycles; Hardened's first hands back both members.
        let cycles = if mode == Mode::Hardened { 1 } else { 2 };
        assert!(
            binding.join().unwrap() >= cycles,
            "b's decisions were there"
        );
        let CycleOutcome::PodGroup { admitted, .. } = &cycle else {
            panic!("not a pod-group cycle: {cycle:?}");
        };
        let retried = a.iter().any(|pod| {
            let place = core.s.queue().place(pod.id());
            !matches!(
                place,
                Some(QueuePlace::Unschedulable | QueuePlace::InFlight) | None
            )
        });
        settle(&core, &cycle, &[]);
        assert!(
            *admitted || retried,
            "I7 violated: the room b's failed bind freed is lost on gang a, every member parked"
        );
    });
}

#[test]
fn c_other_gang_bind_fails_vs_commit_hardened() {
    other_gang_bind_fails(Mode::Hardened, None);
}

/// Witness: a failed bind that keeps the node's reservation leaves it with no binding cycle
/// to end it (I6).
#[cfg(loom)]
#[test]
#[should_panic(expected = "I6 violated")]
fn witness_c_failed_bind_keeps_the_room() {
    other_gang_bind_fails(Mode::Hardened, Some(Flaw::BindFailureKeepsNodeReservation));
}

/// Witness: a failed bind that does not hand its pod back loses it (I4).
#[cfg(loom)]
#[test]
#[should_panic(expected = "I4 violated: b-0 bound false")]
fn witness_c_failed_bind_loses_the_pod() {
    other_gang_bind_fails(Mode::Hardened, Some(Flaw::BindFailureLosesPod));
}
