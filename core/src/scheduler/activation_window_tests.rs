//! The window in a Permit's activation of its gang's unscheduled members (`steps/activate.rs`,
//! issue #23). The activation reads the group's unscheduled stamp, asks the queue for the
//! candidates at that stamp — which leaves out the members an earlier activation found past
//! Reserve — and then asks the registry which of them are unscheduled. Between those critical
//! sections another thread can make a member unscheduled: the embedder rejects a waiting member
//! and its binding cycle unreserves it and hands it back.
//!
//! Here the two threads run one inside the other, on a scheduler whose queue keeps its group
//! index and on one whose queue lists every member of the group (the full walk): the other
//! thread's whole change before each critical section of the activating member's scheduling
//! cycle in turn (and after the last), and that whole cycle before each critical section of the
//! change in turn — every interleaving with at most two context switches (loom's bound in CI)
//! at the grain of the driver's steps, one `Parts` call each.
//! After each, the two schedulers are in the same state — queue, registry, waiting map and
//! driver — so the index changes nothing observable, whenever the change lands. The witness:
//! [`Flaw::ActivationTrustsItsFirstStamp`], the stamp not read again, planted in the indexed
//! scheduler, leaves a member unactivated that the full walk activates.

use std::cell::Cell;
use std::time::Duration;

use crate::gang::plugin::LockedGang;
use crate::gang::Groups;
use crate::queue::{Popped, QueuePlugins, QueueState};
use crate::waiting::WaitingState;
use crate::{Mode, Pod, PodGroup, PodId, Resources, Status, Time};

use super::flaw::Flaw;
use super::locked::SchedulerParts;
use super::parts::Parts;
use super::steps::{self, Placed};
use super::{BindError, CacheState, DriverState, Node, Scheduler, SchedulerConfig};

const NS: &str = "ml";
/// The gang's size and minimum: the third member to reach Permit still waits.
const MEMBERS: usize = 4;
const NOW: Time = Time::from_secs(1);

/// A scheduler's parts, counting their critical sections: before the one numbered `before`
/// (from 0) the other thread's whole part runs; `flaw`, if any, is planted.
struct Interrupted<'a> {
    parts: SchedulerParts<'a>,
    flaw: Option<Flaw>,
    before: usize,
    sections: Cell<usize>,
    other_thread: Cell<Option<Box<dyn FnOnce() + 'a>>>,
}

impl<'a> Interrupted<'a> {
    fn new(
        s: &'a Scheduler,
        flaw: Option<Flaw>,
        before: usize,
        other_thread: impl FnOnce() + 'a,
    ) -> Interrupted<'a> {
        Interrupted {
            parts: s.parts(),
            flaw,
            before,
            sections: Cell::new(0),
            other_thread: Cell::new(Some(Box::new(other_thread))),
        }
    }

    /// Parts that nothing interrupts.
    fn alone(s: &'a Scheduler, flaw: Option<Flaw>) -> Interrupted<'a> {
        Interrupted::new(s, flaw, usize::MAX, || {})
    }

    /// A critical section is about to begin (no lock is held between two of them).
    fn section(&self) {
        if self.sections.get() == self.before {
            self.run_the_other_thread();
        }
        self.sections.set(self.sections.get() + 1);
    }

    fn run_the_other_thread(&self) {
        if let Some(other_thread) = self.other_thread.take() {
            other_thread();
        }
    }

    /// This thread is done: the other thread, if its point was past the last section, runs
    /// now. How many critical sections this thread had.
    fn done(self) -> usize {
        self.run_the_other_thread();
        self.sections.get()
    }
}

impl<'a> Parts for Interrupted<'a> {
    type Gang = LockedGang<'a>;
    type Jobs = super::jobs::FifoJobs;
    type Tally = super::tally::SchedulerTally;

    fn mode(&self) -> Mode {
        self.parts.mode()
    }
    fn gang_cycle(&self) -> crate::GangCycle {
        self.parts.gang_cycle()
    }
    fn planted(&self, flaw: Flaw) -> bool {
        self.flaw == Some(flaw)
    }
    fn gang(&mut self) -> &mut LockedGang<'a> {
        self.section();
        self.parts.gang()
    }
    fn queue<R>(&mut self, f: impl FnOnce(&mut QueueState, &dyn QueuePlugins) -> R) -> R {
        self.section();
        self.parts.queue(f)
    }
    fn cache<R>(&mut self, f: impl FnOnce(&mut CacheState) -> R) -> R {
        self.section();
        self.parts.cache(f)
    }
    fn driver<R>(&mut self, f: impl FnOnce(&mut DriverState) -> R) -> R {
        self.section();
        self.parts.driver(f)
    }
    fn read_queue<R>(&self, f: impl FnOnce(&QueueState) -> R) -> R {
        self.section();
        self.parts.read_queue(f)
    }
    fn read_cache<R>(&self, f: impl FnOnce(&CacheState) -> R) -> R {
        self.section();
        self.parts.read_cache(f)
    }
    fn read_driver<R>(&self, f: impl FnOnce(&DriverState) -> R) -> R {
        self.section();
        self.parts.read_driver(f)
    }
    fn place(&mut self, pod: &Pod) -> Result<String, Status> {
        self.section();
        self.parts.place(pod)
    }
    fn place_on(&mut self, pod: &Pod, snapshot: &CacheState) -> Result<String, Status> {
        self.parts.place_on(pod, snapshot)
    }
    fn bind(&mut self, pod: &Pod, node: &str) -> Result<(), BindError> {
        self.section();
        self.parts.bind(pod, node)
    }
}

/// The activating thread: the third member's scheduling cycle through Permit, which waits and
/// activates the gang's unscheduled members.
fn third_members_cycle(p: &mut Interrupted<'_>, popped: Popped) {
    if let Ok(Placed::Reserved { pod, node }) = steps::place_and_reserve(p, popped, NOW) {
        let _ = steps::permit(p, pod, node, NOW);
    }
}

/// The other thread: the embedder rejects `g-0`, waiting at Permit, and the binding cycles of
/// the decided pods run (unreserve, hand-back).
fn first_member_rejected(s: &Scheduler, p: &mut Interrupted<'_>) {
    p.section();
    if let Some(waiting) = s.waiting().get(&PodId::from("g-0")) {
        waiting.reject("Quota", "over quota");
    }
    while let Some(job) = p.driver(|d| d.next_job()) {
        steps::binding_cycle(p, job, NOW);
    }
}

/// Which thread runs with the other inside it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outer {
    Activation,
    Rejection,
}

/// Gang `g` of [`MEMBERS`] on a node with room for all, its first two members waiting at
/// Permit (the second's activation found the first past Reserve, which the indexed queue
/// notes), the third popped; with `indexed`, the queue keeps its group index although it is
/// small.
fn third_member_popped(mode: Mode, indexed: bool) -> (Scheduler, Popped) {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_permit_timeout(Duration::from_secs(300));
    let s = Scheduler::new(config);
    let node = Node::new("n", Resources::new(MEMBERS as u64 * 1000, 64 << 30));
    s.add_node(node, Time::ZERO).unwrap();
    s.add_group(PodGroup::gang(NS, "g", MEMBERS as u32).unwrap(), Time::ZERO)
        .unwrap();
    for i in 0..MEMBERS {
        let name = format!("g-{i}");
        let pod = Pod::new(name.as_str(), NS, &name)
            .with_group("g")
            .with_requests(Resources::new(1000, 1 << 30));
        s.add_pod(pod, Time::from_millis(i as u64)).unwrap();
    }
    if indexed {
        s.queue().critical_section(|q, _| q.build_indexes());
    }
    for _ in 0..2 {
        let outcome = s.schedule_one(NOW).expect("a member is active");
        assert!(
            matches!(outcome, super::CycleOutcome::Waiting { .. }),
            "{outcome:?}"
        );
    }
    let popped = s.queue().try_pop().expect("the third member is active");
    (s, popped)
}

/// Everything observable of `s`: its queue, registry, waiting map and driver.
type Observed = (QueueState, Groups, WaitingState<()>, DriverState);

fn observed(s: &Scheduler) -> Observed {
    (
        s.queue().critical_section(|q, _| q.clone()),
        s.gang().registry().snapshot(),
        s.waiting().state(),
        s.inner.driver.snapshot(),
    )
}

/// The two threads, `outer`'s with the other's whole part before its critical section
/// `before`; what the scheduler holds after both, and how many critical sections `outer` had.
fn race(
    mode: Mode,
    indexed: bool,
    flaw: Option<Flaw>,
    outer: Outer,
    before: usize,
) -> (Observed, usize) {
    let (s, popped) = third_member_popped(mode, indexed);
    let s = &s;
    let sections = match outer {
        Outer::Activation => {
            let rejection = move || first_member_rejected(s, &mut Interrupted::alone(s, flaw));
            let mut p = Interrupted::new(s, flaw, before, rejection);
            third_members_cycle(&mut p, popped);
            p.done()
        }
        Outer::Rejection => {
            let activation = move || third_members_cycle(&mut Interrupted::alone(s, flaw), popped);
            let mut p = Interrupted::new(s, flaw, before, activation);
            first_member_rejected(s, &mut p);
            p.done()
        }
    };
    s.check().expect("I4-I6 after the race");
    (observed(s), sections)
}

/// For every interleaving, the indexed scheduler (with `flaw`) and the full walk alike? The
/// interleavings where they differ.
fn where_the_index_shows(mode: Mode, flaw: Option<Flaw>) -> Vec<(Outer, usize)> {
    let mut differ = Vec::new();
    for outer in [Outer::Activation, Outer::Rejection] {
        let (_, sections) = race(mode, false, None, outer, usize::MAX);
        assert!(
            sections > 5,
            "{outer:?} has its critical sections: {sections}"
        );
        for before in 0..=sections {
            let full_walk = race(mode, false, None, outer, before).0;
            let indexed = race(mode, true, flaw, outer, before).0;
            if full_walk != indexed {
                differ.push((outer, before));
            }
        }
    }
    differ
}

#[test]
fn a_member_unscheduled_during_an_activation_is_activated_as_by_the_full_walk() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        assert_eq!(where_the_index_shows(mode, None), [], "{mode:?}");
    }
}

#[test]
fn witness_an_activation_that_trusts_its_first_stamp_differs_from_the_full_walk() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let found = where_the_index_shows(mode, Some(Flaw::ActivationTrustsItsFirstStamp));
        // Where the member is rejected and handed back between the queue's list and the
        // registry's answer.
        assert!(!found.is_empty(), "{mode:?}: the flaw is found");
    }
}

/// The index's own work (issue #23): an activation that finds a member in flight past Reserve
/// notes it, so the gang's next activation is not offered it. After the second member's
/// Permit, the queue's candidates at the group's stamp leave out the first, waiting at Permit.
/// The steps' mutants of 2026-12-07 that kept the note from being made (the stamp's re-read
/// made to fail always, or to pass only when the stamp moved) change no decision — the full
/// walk activates the same pods, which is why the race above cannot see them — so this asks
/// for the note itself.
#[test]
fn an_activation_notes_the_members_it_finds_past_reserve() {
    for mode in [Mode::Upstream, Mode::Hardened] {
        let (s, _third) = third_member_popped(mode, true);
        let key = crate::GroupKey::new(NS, "g");
        let stamp = s
            .gang()
            .registry()
            .snapshot()
            .get(&key)
            .map(crate::gang::GroupState::unscheduled_stamp)
            .expect("g is registered");
        let offered: Vec<String> = s.queue().critical_section(|q, _| {
            q.activation_candidates(&key, stamp)
                .into_iter()
                .map(|(id, _)| id.as_str().to_owned())
                .collect()
        });
        assert!(
            !offered.iter().any(|id| id == "g-0"),
            "{mode:?}: g-0, waiting at Permit, is not offered again: {offered:?}"
        );
    }
}
