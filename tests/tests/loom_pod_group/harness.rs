//! What the pod-group loom models share (`loom_pod_group.rs`, `loom_pod_group_release.rs`,
//! each including this file by `#[path]`): a Hardened or Upstream pod-group [`Scheduler`] with
//! its gangs ([`Core`]), its cycles and binding cycles run as the driver runs them or, with a
//! [`Flaw`] planted, as the core's own steps on a [`Planted`] wrapper, the threads, the loom
//! run that counts its interleavings, and the checks once every binding cycle has run.

use gangsched::checking::{self, steps, Flaw, JobQueue, Parts, Planted};
use gangsched::queue::QueuePlace;
use gangsched::scheduler::{CycleOutcome, InMemoryBinder, Node, PodPhase};
use gangsched::sync::{model, thread, Arc, Mutex};
use gangsched::{
    GangCycle, GroupKey, Mode, Pod, PodGroup, PodId, Resources, Scheduler, SchedulerConfig, Time,
};
use std::sync::atomic::{AtomicUsize, Ordering};

const NS: &str = "ml";
/// What each member requests: one CPU.
const CPU: u64 = 1_000;
/// When the race's cycles and binding cycles run.
pub const NOW: Time = Time::from_secs(1);

/// A gang of the model: its key, min count, members, and those bound before the race.
pub struct Gang {
    pub key: GroupKey,
    pub min_count: usize,
    pub members: Vec<Pod>,
    pub bound: Vec<PodId>,
}

/// The model's scheduler, its binder, and the flaw its cycles and binding cycles run with.
pub struct Core {
    pub s: Scheduler,
    pub binder: InMemoryBinder,
    pub flaw: Option<Flaw>,
    pub gangs: Vec<Gang>,
    /// The pods whose binding cycle has begun, in order.
    pub begun: Mutex<Vec<PodId>>,
}

/// Member `i` of `group`, one CPU.
pub fn member(group: &str, i: usize) -> Pod {
    let name = format!("{group}-{i}");
    Pod::new(name.as_str(), NS, &name)
        .with_group(group)
        .with_requests(Resources::new(CPU, 1 << 30))
}

impl Core {
    /// A Hardened or Upstream pod-group scheduler on `nodes` (name, CPUs) whose binder fails
    /// every bind of a pod that `fails`.
    pub fn new(
        mode: Mode,
        flaw: Option<Flaw>,
        nodes: &[(&str, u64)],
        fails: impl Fn(&Pod) -> bool + Send + Sync + 'static,
    ) -> Core {
        let binder = InMemoryBinder::new().with_failures(move |pod, _| fails(pod));
        let config = SchedulerConfig::default()
            .with_mode(mode)
            .with_gang_cycle(GangCycle::PodGroup);
        let s = Scheduler::builder(config).binder(binder.clone()).build();
        for (name, cpus) in nodes {
            let node = Node::new(name, Resources::new(cpus * CPU, 64 << 30));
            s.add_node(node, Time::ZERO).unwrap();
        }
        Core {
            s,
            binder,
            flaw,
            gangs: Vec::new(),
            begun: Mutex::default(),
        }
    }

    /// Gang `name` of `min_count` with `size` members, the first `bound` of them bound to
    /// `node` already; returns its members.
    pub fn gang(&mut self, name: &str, min_count: u32, size: usize, bound: usize) -> Vec<Pod> {
        let group = PodGroup::gang(NS, name, min_count).unwrap();
        self.s.add_group(group, Time::ZERO).unwrap();
        let members: Vec<Pod> = (0..size).map(|i| member(name, i)).collect();
        for (i, pod) in members.iter().enumerate() {
            let pod = if i < bound {
                pod.clone().with_node("n")
            } else {
                pod.clone()
            };
            self.s.add_pod(pod, Time::from_millis(i as u64)).unwrap();
        }
        self.gangs.push(Gang {
            key: GroupKey::new(NS, name),
            min_count: min_count as usize,
            bound: members[..bound].iter().map(|p| p.id().clone()).collect(),
            members: members.clone(),
        });
        members
    }

    /// The scheduling thread's next cycle: `schedule_one`, or its steps with the flaw.
    pub fn cycle(&self) -> Option<CycleOutcome> {
        let Some(flaw) = self.flaw else {
            return self.s.schedule_one(NOW);
        };
        let popped = self.s.queue().try_pop()?;
        let group = popped.info.pod().group_key().cloned().expect("a member");
        let mut p = self.planted(flaw);
        Some(match steps::gather(&mut p, popped, group, NOW) {
            Err(outcome) => outcome,
            Ok(gathered) => {
                let simulation = steps::simulate(&mut p, gathered);
                steps::commit(&mut p, simulation, NOW)
            }
        })
    }

    /// One binding cycle, if a decision waits: the oldest decision's `steps::binding_cycle` on
    /// the scheduler's parts, as `run_binding_cycle` runs it (its outcomes are not delivered),
    /// noted as begun first; with the flaw planted, on the wrapper.
    pub fn bind_one(&self) -> bool {
        match self.flaw {
            None => self.run_job(&mut checking::scheduler_parts(&self.s)),
            Some(flaw) => self.run_job(&mut self.planted(flaw)),
        }
    }

    fn run_job(&self, p: &mut impl Parts) -> bool {
        let Some(job) = p.driver(|d| d.next_job()) else {
            return false;
        };
        self.begun.lock().push(job.decision.pod.id().clone());
        steps::binding_cycle(p, job, NOW);
        true
    }

    fn planted(&self, flaw: Flaw) -> Planted<impl Parts + '_> {
        let parts = checking::scheduler_parts(&self.s);
        Planted { parts, flaw }
    }
}

/// `check()`, its violation as a panic that names the invariant.
pub fn checked(s: &Scheduler) {
    if let Err(v) = s.check() {
        panic!("{} violated: {}", v.invariant, v.detail);
    }
}

/// The checks every model makes once its threads have joined, `deleted` saying of each pod
/// the model deleted whether its binding had begun (or the binder had bound it) by the end of
/// its delete: `check()` (I4–I6, I9), no pod waiting at Permit for its gang holding room (I9),
/// a decision for every pod in binding (I9); then, every binding cycle run, `check()` again,
/// nothing left in binding or assumed (I6), and every pod accounted for (I4) — bound (in the
/// cache, by the binder, or before the race), back in the queue, or, deleted, gone from queue
/// and cache, and bound only by a binding cycle begun before its delete was done.
pub fn settled(core: &Core, deleted: impl Fn(&PodId) -> Option<bool>) {
    let s = &core.s;
    checked(s);
    let held = s.held_and_waiting();
    assert!(
        held.is_empty(),
        "I9 violated: {held:?} wait for their gang holding room"
    );
    let in_binding = s.in_binding();
    let driver = checking::driver_state(s);
    for id in &in_binding {
        let decided = driver.jobs().jobs().any(|j| j.decision.pod.id() == id);
        assert!(
            decided,
            "I9 violated: {id} holds room with no decision to end it"
        );
    }
    while core.bind_one() {}
    checked(s);
    let in_binding = s.in_binding();
    assert!(
        in_binding.is_empty(),
        "I6 violated: {in_binding:?} left in binding"
    );
    let assumed = s.cache().snapshot().assumed_count();
    assert_eq!(
        assumed, 0,
        "I6 violated: reservations left after every binding cycle"
    );
    for pod in core.gangs.iter().flat_map(|g| &g.members) {
        let id = pod.id();
        let by_binder = core.binder.binding(id).is_some();
        let place = s.queue().place(id);
        if let Some(bind_begun) = deleted(id) {
            assert!(
                bind_begun || !by_binder,
                "I4 violated: {id} was bound after its delete, by a binding cycle begun later"
            );
            let phase = s.cache().phase(id);
            assert!(
                place.is_none() && phase.is_none(),
                "I4 violated: deleted {id} is still in the queue ({place:?}) or cache ({phase:?})"
            );
            continue;
        }
        let bound = s.cache().phase(id) == Some(PodPhase::Bound);
        let queued = place.is_some_and(|p| p != QueuePlace::InFlight);
        let prebound = core.gangs.iter().any(|g| g.bound.contains(id));
        assert!(
            bound != queued && (bound == by_binder || prebound),
            "I4 violated: {id} bound {bound} (binder {by_binder}), in the queue {place:?}"
        );
    }
}

/// A model thread.
pub fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::spawn("model", f)
}

/// Runs `f` under loom (once without it) and reports how many interleavings it explored.
pub fn explore(name: &str, f: impl Fn() + Send + Sync + 'static) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    model(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f();
    });
    eprintln!("{name}: {} interleavings", runs.load(Ordering::Relaxed));
}

/// The scheduling thread's one pod-group cycle.
pub fn schedule(core: &Arc<Core>) -> thread::JoinHandle<CycleOutcome> {
    let core = core.clone();
    spawn(move || core.cycle().expect("a member is active"))
}
