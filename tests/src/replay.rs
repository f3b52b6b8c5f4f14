//! Replaying a model-checker path on a real [`Scheduler`]: each action runs, through the same
//! mapping the checker used ([`drive`]), the scheduler's own driver steps on its locked
//! components, on the thread of the actor that runs it in production (informer, scheduler,
//! timer, binder), at the model's time. After every step the scheduler's states must equal
//! the model's — queue, cache, groups, waiting map and the driver's assignments and pending
//! decisions — so the model and the code cannot drift apart silently. Nothing here decides
//! anything: the replay only sets up the scheduler, picks the actor, says what the binder
//! answers, and compares.

use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::checking::{self, JobQueue, Tally};
use gangsched::queue::QueueConfig;
use gangsched::scheduler::{InMemoryBinder, ResourceFit, Scheduler, SchedulerConfig};
use gangsched::sync::atomic::{AtomicBool, Ordering};
use gangsched::sync::channel::{self, Receiver, Sender};
use gangsched::sync::thread::{self, JoinHandle};
use gangsched::sync::{Arc, Mutex};
use gangsched::{Decision, GangCycle, Mode, Pod, PodId, Time};
use gangway_check::{drive, Action, Cluster, InCycle, Quota};

/// The real scheduler, shared by the actor threads, and what the replay keeps beside it.
struct Core {
    scheduler: Scheduler,
    pods: BTreeMap<PodId, Pod>,
    /// The pod (or gang) the scheduling thread holds between the steps of its cycle.
    cycle: Mutex<Option<InCycle>>,
    /// Whether the binder fails the next bind (a `BindFails` action).
    fail_binds: Arc<AtomicBool>,
    /// Whether the Permit plugin beside the gang's rejects (a `PermitRejected` action).
    quota_rejects: Arc<AtomicBool>,
}

type Job = Box<dyn FnOnce(&Core) -> Result<(), String> + Send>;

/// One actor: a thread that runs the jobs it is given, one at a time, and answers each.
struct Actor {
    jobs: Sender<Job>,
    done: Receiver<Result<(), String>>,
    thread: Option<JoinHandle<()>>,
}

/// A model path being replayed on a real scheduler.
pub struct Replay {
    actors: BTreeMap<&'static str, Actor>,
    core: Arc<Core>,
    steps: usize,
}

impl Replay {
    /// A real scheduler in `mode` with the Permit barrier, set up like the model's initial
    /// state `init` (its nodes, its PodGroups, the pods already there), with the model's queue
    /// timing and Permit wait.
    pub fn new(mode: Mode, init: &Cluster) -> Replay {
        Replay::with_cycle(mode, GangCycle::PermitBarrier, init)
    }

    /// [`new`](Self::new), scheduling gangs with `cycle`.
    pub fn with_cycle(mode: Mode, cycle: GangCycle, init: &Cluster) -> Replay {
        let fail_binds = Arc::new(AtomicBool::new(false));
        let binder = InMemoryBinder::default().with_failures({
            let fail = fail_binds.clone();
            move |_, _| fail.load(Ordering::SeqCst)
        });
        let config = SchedulerConfig::default()
            .with_mode(mode)
            .with_gang_cycle(cycle)
            .with_queue(*init.queue.config())
            .with_permit_timeout(Duration::from_secs(300));
        assert_eq!(
            *init.queue.config(),
            QueueConfig::default(),
            "the model's queue"
        );
        let quota_rejects = Arc::new(AtomicBool::new(false));
        let mut builder = Scheduler::builder(config)
            .placement(ResourceFit)
            .binder(binder);
        // The model's scheduler has the quota only with permit rejections to spend: a plugin
        // without queueing hints makes every event one the queue records.
        if init.budget.permit_rejections > 0 {
            builder = builder.permit_plugins(Quota::new(quota_rejects.clone()).plugins());
        }
        let scheduler = builder.build();
        for node in init.cache.nodes() {
            scheduler
                .add_node(node.to_node(), init.now)
                .expect("a new node");
        }
        for group in init.groups.iter().filter_map(|g| g.group()) {
            scheduler
                .add_group(group.clone(), init.now)
                .expect("a new group");
        }
        let core = Arc::new(Core {
            scheduler,
            pods: init.pods.clone(),
            cycle: Mutex::new(None),
            fail_binds,
            quota_rejects,
        });
        let mut actors = BTreeMap::new();
        for name in ["informer", "scheduler", "timer", "binder", "embedder"] {
            actors.insert(name, Actor::spawn(name, core.clone()));
        }
        let mut replay = Replay {
            actors,
            core,
            steps: 0,
        };
        for (id, stage) in &*init.stages {
            if *stage != gangway_check::Stage::Absent {
                replay
                    .run("informer", Action::Arrive(id.clone()), init.now)
                    .expect("an initial pod arrives");
            }
        }
        replay
    }

    /// Runs `action` on its actor's thread at the model's time after it, then compares the
    /// scheduler with `after`, the model's state after the action. `Err` says where they
    /// differ.
    pub fn step(&mut self, action: &Action, after: &Cluster) -> Result<(), String> {
        self.steps += 1;
        self.run(action.thread(), action.clone(), after.now)
            .and_then(|()| self.compare(after))
            .map_err(|e| format!("step {} ({action:?}): {e}", self.steps))
    }

    fn run(&mut self, actor: &str, action: Action, now: Time) -> Result<(), String> {
        let job: Job = Box::new(move |core: &Core| {
            let fails = matches!(action, Action::BindFails(_));
            core.fail_binds.store(fails, Ordering::SeqCst);
            let rejects = matches!(action, Action::PermitRejected(_));
            core.quota_rejects.store(rejects, Ordering::SeqCst);
            let mut parts = checking::scheduler_parts(&core.scheduler);
            let mut cycle = core.cycle.lock();
            drive(&mut parts, &mut cycle, &core.pods, &action, now)
                .map(drop)
                .ok_or_else(|| format!("the scheduler refused {action:?}"))
        });
        let actor = self.actors.get(actor).expect("a known actor");
        actor.jobs.send(job).map_err(|_| "the actor is gone")?;
        actor.done.recv().map_err(|_| "the actor died")?
    }

    /// The scheduler's states against the model's.
    fn compare(&self, model: &Cluster) -> Result<(), String> {
        let s = &self.core.scheduler;
        same("queues", &s.queue().snapshot(), &model.queue)?;
        same("caches", &s.cache().snapshot(), &model.cache)?;
        same("groups", &s.gang().registry().snapshot(), &model.groups)?;
        same(
            "waiting maps",
            &checking::waiting_state(s.waiting()),
            &model.waiting,
        )?;
        same("scheduling cycles", &*self.core.cycle.lock(), &*model.cycle)?;
        let driver = checking::driver_state(s);
        same(
            "assignments",
            &assignments(&driver),
            &assignments(&model.driver),
        )?;
        same(
            "pending decisions",
            &decisions(driver.jobs()),
            &decisions(model.driver.jobs()),
        )
    }
}

/// The assignments by pod, without the time each was recorded (the model keeps none).
fn assignments<J: JobQueue, T: Tally>(
    driver: &checking::DriverState<J, T>,
) -> BTreeMap<PodId, (gangsched::Pod, String, bool, bool, bool)> {
    driver
        .assignments()
        .map(|(id, a)| {
            let entry = (
                a.pod.clone(),
                a.node.to_string(),
                a.deleted,
                a.rejected,
                a.claimed,
            );
            (id.clone(), entry)
        })
        .collect()
}

/// The pending decisions, in pod id order.
fn decisions(jobs: &impl JobQueue) -> Vec<Decision> {
    jobs.jobs().map(|j| j.decision.clone()).collect()
}

/// `Err` naming `what` and showing both sides if the scheduler's and the model's differ.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, core: &T, model: &T) -> Result<(), String> {
    if core == model {
        Ok(())
    } else {
        Err(format!("{what} differ:\ncore  {core:?}\nmodel {model:?}"))
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        for actor in self.actors.values_mut() {
            let (jobs, _) = channel::unbounded();
            drop(std::mem::replace(&mut actor.jobs, jobs));
            if let Some(thread) = actor.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

impl Actor {
    fn spawn(name: &str, core: Arc<Core>) -> Actor {
        let (jobs, inbox) = channel::unbounded::<Job>();
        let (answers, done) = channel::unbounded();
        let thread = thread::spawn(name, move || {
            while let Ok(job) = inbox.recv() {
                if answers.send(job(&core)).is_err() {
                    return;
                }
            }
        });
        Actor {
            jobs,
            done,
            thread: Some(thread),
        }
    }
}
