//! Replaying a model-checker path against the real concurrent core: the gang plugin, waiting
//! map, scheduling queue and node cache behind their locks, each action run on the thread of
//! the actor that runs it in production (informer, scheduler, timer, binder), time from a
//! [`ManualClock`]. After every step the core's pure states must equal the model's — queue,
//! cache, groups and waiting map — and the decisions handed to binding must match the model's
//! stages, so the model and the code cannot drift apart silently.
//!
//! The glue between components follows `gangway::scheduler` (its cycle, binding cycle and
//! event handlers), split at the same points as the model's actions.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gangway::gang::{GroupKey, PodGroup, GANG_SCHEDULING};
use gangway::queue::{ClusterEvent, QueuedPodInfo, SchedulingQueue};
use gangway::scheduler::{Cache, Placement, ResourceFit, Scheduler};
use gangway::sync::channel::{self, Receiver, Sender};
use gangway::sync::thread::{self, JoinHandle};
use gangway::sync::{Arc, Mutex};
use gangway::time::{Clock, ManualClock};
use gangway::{GangScheduling, Mode, Permit, Pod, PodId, Time, WaitingPods};
use gangway_cli::check::{Action, Cluster, Stage};

/// The real components, shared by the actor threads.
struct Core {
    mode: Mode,
    pods: BTreeMap<PodId, Pod>,
    gang: GangScheduling,
    waiting: WaitingPods,
    queue: SchedulingQueue,
    cache: Cache,
    clock: ManualClock,
    /// Decisions delivered by the waiting map (or Permit itself) not yet taken by a binding
    /// cycle: allowed or rejected.
    decided: Arc<Mutex<BTreeMap<PodId, bool>>>,
    /// What the scheduling cycle popped, for the binding cycle or the hand-back.
    popped: Mutex<BTreeMap<PodId, QueuedPodInfo>>,
    /// Popped pods no node had room for.
    unfit: Mutex<BTreeSet<PodId>>,
}

type Job = Box<dyn FnOnce(&Core) -> Result<(), String> + Send>;

/// One actor: a thread that runs the jobs it is given, one at a time, and answers each.
struct Actor {
    jobs: Sender<Job>,
    done: Receiver<Result<(), String>>,
    thread: Option<JoinHandle<()>>,
}

/// A model path being replayed on the real core.
pub struct Replay {
    actors: BTreeMap<&'static str, Actor>,
    core: Arc<Core>,
    steps: usize,
}

impl Replay {
    /// The real core in `mode`, set up like the model's initial state `init` (its nodes, its
    /// PodGroups, the pods already there).
    pub fn new(mode: Mode, init: &Cluster) -> Replay {
        let decided = Arc::new(Mutex::new(BTreeMap::new()));
        let sink = decided.clone();
        let waiting = WaitingPods::with_sink(move |d: gangway::Decision| {
            sink.lock()
                .insert(d.pod.id().clone(), d.status.is_success());
        });
        let timeout = Duration::from_secs(300);
        let gang = GangScheduling::with_timeout(mode, waiting.clone(), timeout);
        let plugins = Scheduler::queue_plugins(gang.clone());
        let queue = SchedulingQueue::new(*init.queue.config(), Arc::new(plugins));
        let cache = Cache::new();
        for node in init.cache.nodes() {
            cache.add_node(node.to_node()).expect("a new node");
        }
        for group in init.groups.iter().filter_map(|g| g.group()) {
            gang.on_group_added(group.clone()).expect("a new group");
        }
        let core = Arc::new(Core {
            mode,
            pods: init.pods.clone(),
            gang,
            waiting,
            queue,
            cache,
            clock: ManualClock::new(init.now),
            decided,
            popped: Mutex::new(BTreeMap::new()),
            unfit: Mutex::new(BTreeSet::new()),
        });
        let mut actors = BTreeMap::new();
        for name in ["informer", "scheduler", "timer", "binder"] {
            actors.insert(name, Actor::spawn(name, core.clone()));
        }
        let mut replay = Replay {
            actors,
            core,
            steps: 0,
        };
        for (id, stage) in &init.stages {
            if *stage != Stage::Absent {
                replay
                    .run("informer", arrive(id.clone()))
                    .expect("an initial pod arrives");
            }
        }
        replay
    }

    /// Runs `action` on its actor's thread, then compares the core with `after`, the model's
    /// state after it. `Err` says where they differ.
    pub fn step(&mut self, action: &Action, after: &Cluster) -> Result<(), String> {
        self.steps += 1;
        let now = after.now;
        let (actor, job): (&'static str, Job) = match action.clone() {
            Action::Arrive(id) => ("informer", arrive(id)),
            Action::Schedule(id) => ("scheduler", Box::new(move |c: &Core| c.schedule(&id))),
            Action::HandBack(id) => ("scheduler", Box::new(move |c: &Core| c.hand_back(&id))),
            Action::Permit(id) => ("scheduler", Box::new(move |c: &Core| c.permit(&id))),
            Action::Deadline => ("timer", Box::new(move |c: &Core| c.deadline(now))),
            Action::FlushBackoff => (
                "timer",
                Box::new(move |c: &Core| {
                    c.clock.advance_to(now);
                    c.queue.flush_backoff_completed(now);
                    Ok(())
                }),
            ),
            Action::FlushLeftover => (
                "timer",
                Box::new(move |c: &Core| {
                    c.clock.advance_to(now);
                    c.queue.flush_unschedulable_leftover(now);
                    Ok(())
                }),
            ),
            Action::Bind(id) => ("binder", Box::new(move |c: &Core| c.bind(&id))),
            Action::BindFails(id) => ("binder", Box::new(move |c: &Core| c.bind_fails(&id))),
            Action::Release(id) => ("binder", Box::new(move |c: &Core| c.release(&id))),
            Action::Delete(id) => ("informer", Box::new(move |c: &Core| c.delete(&id))),
            Action::UpdateGroup { group, min } => (
                "informer",
                Box::new(move |c: &Core| c.update_group(&group, min)),
            ),
        };
        self.run(actor, job)
            .and_then(|()| self.compare(after))
            .map_err(|e| format!("step {} ({action:?}): {e}", self.steps))
    }

    fn run(&mut self, actor: &str, job: Job) -> Result<(), String> {
        let actor = self.actors.get(actor).expect("a known actor");
        actor.jobs.send(job).map_err(|_| "the actor is gone")?;
        actor.done.recv().map_err(|_| "the actor died")?
    }

    /// The core's states against the model's.
    fn compare(&self, model: &Cluster) -> Result<(), String> {
        let c = &self.core;
        same("queues", &c.queue.snapshot(), &model.queue)?;
        same("caches", &c.cache.snapshot(), &model.cache)?;
        same("groups", &c.gang.registry().snapshot(), &model.groups)?;
        same("waiting maps", &c.waiting.state(), &model.waiting)?;
        let decided = c.decided.lock().clone();
        let expected: BTreeMap<PodId, bool> = model
            .stages
            .iter()
            .filter_map(|(id, stage)| match stage {
                Stage::Decided { allowed } => Some((id.clone(), *allowed)),
                _ => None,
            })
            .collect();
        same("decisions", &decided, &expected)
    }
}

/// `Err` naming `what` and showing both sides if the core's and the model's differ.
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

fn arrive(id: PodId) -> Job {
    Box::new(move |c: &Core| c.arrive(&id))
}

impl Core {
    fn pod(&self, id: &PodId) -> Result<Pod, String> {
        self.pods
            .get(id)
            .cloned()
            .ok_or(format!("unknown pod {id}"))
    }

    fn now(&self) -> Time {
        self.clock.now()
    }

    fn moved(&self, event: ClusterEvent, except: &[PodId]) {
        let not_excepted = |info: &QueuedPodInfo| !except.contains(info.id());
        let precheck: Option<&dyn Fn(&QueuedPodInfo) -> bool> =
            (!except.is_empty()).then_some(&not_excepted);
        self.queue
            .move_all_to_active_or_backoff(event, precheck, self.now());
    }

    /// `Scheduler::add_pod` for an unbound pod.
    fn arrive(&self, id: &PodId) -> Result<(), String> {
        let pod = self.pod(id)?;
        self.gang
            .on_pod_added(pod.clone(), false)
            .map_err(|e| e.to_string())?;
        self.queue
            .add(pod.clone(), self.now())
            .map_err(|e| e.to_string())?;
        self.moved(ClusterEvent::UnscheduledPodAdd(pod), &[]);
        Ok(())
    }

    /// `Scheduler::update_group`: the registry, then the event.
    fn update_group(&self, key: &GroupKey, min: u32) -> Result<(), String> {
        let group = PodGroup::gang(key.namespace(), key.name(), min).map_err(|e| e.to_string())?;
        let old = self
            .gang
            .on_group_updated(group.clone())
            .map_err(|e| e.to_string())?;
        self.moved(ClusterEvent::PodGroupUpdate { old, new: group }, &[]);
        Ok(())
    }

    /// The scheduling cycle up to Reserve (`Scheduler::schedule`).
    fn schedule(&self, id: &PodId) -> Result<(), String> {
        let popped = self.queue.try_pop().ok_or("nothing to pop")?;
        if popped.info.id() != id {
            return Err(format!(
                "popped {}, the model popped {id}",
                popped.info.id()
            ));
        }
        let pod = popped.info.pod().clone();
        self.popped.lock().insert(id.clone(), popped.info);
        match self.cache.with(|cache| ResourceFit.place(&pod, cache)) {
            Ok(node) => {
                self.cache.assume(&pod, &node).map_err(|e| e.to_string())?;
                self.gang.reserve(&pod).map_err(|e| e.to_string())
            }
            Err(_) => {
                self.unfit.lock().insert(id.clone());
                Ok(())
            }
        }
    }

    /// A pod no node had room for goes back, rejected by NodeResourcesFit.
    fn hand_back(&self, id: &PodId) -> Result<(), String> {
        if !self.unfit.lock().remove(id) {
            return Err("not unfit".to_owned());
        }
        let info = self.popped.lock().remove(id).ok_or("not popped")?;
        self.queue
            .add_unschedulable_if_not_present(info.rejected_by(ResourceFit::PLUGIN), self.now())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// Permit, and what the scheduling cycle does with its verdict.
    fn permit(&self, id: &PodId) -> Result<(), String> {
        let pod = self.pod(id)?;
        match self.gang.permit(&pod, self.now()) {
            Permit::Allow => {
                self.decided.lock().insert(id.clone(), true);
            }
            Permit::Wait { activate, .. } => {
                let ids: Vec<PodId> = activate.iter().map(|p| p.id().clone()).collect();
                self.queue.activate(&ids, self.now());
            }
            Permit::Reject(_) => {
                self.decided.lock().insert(id.clone(), false);
            }
        }
        Ok(())
    }

    /// The timer's deadline expiry at `now` (`Scheduler::tick` without the flushes).
    fn deadline(&self, now: Time) -> Result<(), String> {
        self.clock.advance_to(now);
        self.waiting.expire(now);
        self.gang.expire(now);
        Ok(())
    }

    fn take_decision(&self, id: &PodId, allowed: bool) -> Result<QueuedPodInfo, String> {
        match self.decided.lock().remove(id) {
            Some(a) if a == allowed => {}
            other => return Err(format!("{id}: decision {other:?}, expected {allowed}")),
        }
        self.popped
            .lock()
            .remove(id)
            .ok_or(format!("{id} was not popped"))
    }

    /// The binding cycle of an allowed pod that binds, then the informer's event.
    fn bind(&self, id: &PodId) -> Result<(), String> {
        let pod = self.pod(id)?;
        self.take_decision(id, true)?;
        self.cache.finish_binding(id).map_err(|e| e.to_string())?;
        self.gang.on_pod_bound(&pod);
        self.queue.done(id);
        self.moved(ClusterEvent::AssignedPodAdd(pod), &[]);
        Ok(())
    }

    /// The binding cycle of an allowed pod whose bind fails (`Failure::Error`).
    fn bind_fails(&self, id: &PodId) -> Result<(), String> {
        let pod = self.pod(id)?;
        let info = self.take_decision(id, true)?;
        self.gang.unreserve(&pod);
        self.cache.forget(id);
        self.moved(ClusterEvent::AssignedPodDelete(pod), &[]);
        self.queue
            .add_unschedulable_if_not_present(info, self.now())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// The binding cycle of a rejected pod (`Failure::Rejected`; Hardened: the whole gang's
    /// rejected members at once, H2).
    fn release(&self, id: &PodId) -> Result<(), String> {
        let pod = self.pod(id)?;
        let mut members = vec![id.clone()];
        if self.mode == Mode::Hardened {
            let decided = self.decided.lock();
            members.extend(
                decided
                    .iter()
                    .filter(|(o, allowed)| {
                        *o != id && !**allowed && self.pods[*o].group() == pod.group()
                    })
                    .map(|(o, _)| o.clone()),
            );
        }
        let mut infos = Vec::new();
        for m in &members {
            let info = self.take_decision(m, false)?;
            self.gang.unreserve(&self.pod(m)?);
            self.cache.forget(m);
            infos.push(info.rejected_by(GANG_SCHEDULING));
        }
        let now = self.now();
        if self.mode == Mode::Hardened {
            self.queue
                .add_gang_unschedulable(infos, now)
                .map_err(|e| e.to_string())?;
        } else {
            let info = infos.pop().ok_or("no member")?;
            self.queue
                .add_unschedulable_if_not_present(info, now)
                .map_err(|e| e.to_string())?;
        }
        self.moved(ClusterEvent::AssignedPodDelete(pod), &members);
        Ok(())
    }

    /// `Scheduler::delete_pod`, and for a waiting pod the binding cycle that finds it deleted.
    fn delete(&self, id: &PodId) -> Result<(), String> {
        let pod = self.pod(id)?;
        let waiting = self.waiting.get(id).is_some();
        self.gang.on_pod_deleted(&pod);
        self.queue.delete(id);
        if !waiting {
            // A bound pod's room is freed and announced (`Scheduler::delete_pod`).
            if self.cache.remove_pod(id).is_some() {
                self.moved(ClusterEvent::AssignedPodDelete(pod), &[]);
            }
            return Ok(());
        }
        self.waiting
            .reject(id, GANG_SCHEDULING, "pod deleted while waiting");
        self.decided.lock().remove(id);
        self.popped.lock().remove(id);
        self.gang.unreserve(&pod);
        self.cache.forget(id);
        self.queue.done(id);
        self.moved(ClusterEvent::AssignedPodDelete(pod), &[]);
        Ok(())
    }
}
