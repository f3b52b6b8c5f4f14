//! The model's [`Parts`]: the core's driver steps and gang operations run on a [`Cluster`]'s
//! pure states, exactly as the scheduler runs them on its locked components. Only how each
//! part is reached differs; the one thing the model adds is its record of what it saw — each
//! delivered decision becomes the pod's stage, and the pods allowed in a step are collected
//! for I3.

use std::collections::BTreeSet;
use std::time::Duration;

use gangsched::checking::AnyOrderJobs;
use gangsched::checking::{
    AttemptWaiting, Batch, Expire, Flaw, GangFlaw, GangParts, ModelDriver, NoTally, Parts,
};
use gangsched::gang::{GangRules, Groups, GANG_SCHEDULING};
use gangsched::queue::{QueuePlugins, QueueState};
use gangsched::scheduler::{BindError, CacheState, SchedulerPlugins};
use gangsched::waiting::{AddError, AllowOutcome, Decided};
use gangsched::GroupKey;
use gangsched::{
    Cause, Decision, GangCycle, Mode, PermitPlugins, PluginName, Pod, PodId, Status, Time,
    WaitingState,
};

use super::cluster::{Cluster, Stage, TIMEOUT};
use super::plugins::Plugins;
use super::shared::Shared;

/// A [`Cluster`] as the parts of one step.
pub(super) struct ClusterParts<'a> {
    /// The state the step changes.
    pub(super) c: &'a mut Cluster,
    mode: Mode,
    gang_cycle: GangCycle,
    flaw: Option<Flaw>,
    /// A bug planted in the gang plugin's operations (a witness's).
    pub(super) gang_flaw: Option<GangFlaw>,
    /// The placement and the Permit plugins the model runs.
    plugins: &'a Plugins,
    /// How the placement broke its contract in this step, if it did.
    pub(super) fault: Option<String>,
    /// What the binder answers in this step.
    pub(super) bind: Result<(), BindError>,
    /// The Permit plugins beside the gang's in this step (none, or a rejecting quota).
    pub(super) others: PermitPlugins,
    /// The pods allowed in this step (I3).
    pub(super) passed: BTreeSet<PodId>,
    /// The Permit plugins the model's scheduler has besides the embedder's (the quota, with
    /// `--permit-rejections`), which register no queueing hints: every event is of interest to
    /// the queue for them.
    pub(super) unhinted: &'static [PluginName],
}

impl<'a> ClusterParts<'a> {
    pub(super) fn new(
        c: &'a mut Cluster,
        (mode, gang_cycle): (Mode, GangCycle),
        flaw: Option<Flaw>,
        plugins: &'a Plugins,
    ) -> ClusterParts<'a> {
        ClusterParts {
            c,
            mode,
            gang_cycle,
            flaw,
            gang_flaw: None,
            plugins,
            fault: None,
            bind: Ok(()),
            others: plugins.permit().clone(),
            passed: BTreeSet::new(),
            unhinted: &[],
        }
    }

    /// Notes how the placement broke its contract (see [`Plugins`]), the first time in a step.
    fn note(&mut self, fault: Option<String>) {
        if self.fault.is_none() {
            self.fault = fault;
        }
    }

    /// Decisions the waiting map made reach the driver, as the scheduler's sink delivers them;
    /// the model notes each as its pod's stage.
    fn deliver(&mut self, decided: Vec<Decided<()>>) {
        for d in decided {
            let allowed = d.cause.is_allowed();
            let id = d.pod.id().clone();
            self.c.stages.insert(id.clone(), Stage::Decided { allowed });
            if allowed {
                self.passed.insert(id);
            }
            self.c.timed_out |= d.cause == Cause::TimedOut;
            let decision = Decision::new(d.pod, d.status, d.cause);
            self.c.driver.decision_delivered(decision, true);
        }
    }
}

impl Parts for ClusterParts<'_> {
    type Gang = Self;
    type Jobs = AnyOrderJobs;
    type Tally = NoTally;

    fn mode(&self) -> Mode {
        self.mode
    }

    fn gang_cycle(&self) -> GangCycle {
        self.gang_cycle
    }

    fn planted(&self, flaw: Flaw) -> bool {
        self.flaw == Some(flaw)
    }

    fn gang(&mut self) -> &mut Self {
        self
    }

    fn queue<R>(&mut self, f: impl FnOnce(&mut QueueState, &dyn QueuePlugins) -> R) -> R {
        let c = &mut *self.c;
        let unhinted = self.unhinted.iter().chain(self.plugins.permit_names());
        let plugins = SchedulerPlugins::new(&*c.groups)
            .with_unhinted(unhinted)
            .with_placement_events(self.plugins.placement_events());
        f(&mut c.queue, &plugins)
    }

    fn cache<R>(&mut self, f: impl FnOnce(&mut CacheState) -> R) -> R {
        f(&mut self.c.cache)
    }

    fn driver<R>(&mut self, f: impl FnOnce(&mut ModelDriver) -> R) -> R {
        f(&mut self.c.driver)
    }

    fn read_queue<R>(&self, f: impl FnOnce(&QueueState) -> R) -> R {
        f(&self.c.queue)
    }

    fn read_cache<R>(&self, f: impl FnOnce(&CacheState) -> R) -> R {
        f(&self.c.cache)
    }

    fn read_driver<R>(&self, f: impl FnOnce(&ModelDriver) -> R) -> R {
        f(&self.c.driver)
    }

    fn place(&mut self, pod: &Pod) -> Result<String, Status> {
        let (answer, fault) = self.plugins.place(pod, &self.c.cache);
        self.note(fault);
        answer
    }

    fn place_on(&mut self, pod: &Pod, snapshot: &CacheState) -> Result<String, Status> {
        let (answer, fault) = self.plugins.place(pod, snapshot);
        self.note(fault);
        answer
    }

    fn permit_plugins(&self) -> PermitPlugins {
        self.others.clone()
    }

    fn bind(&mut self, _: &Pod, _: &str) -> Result<(), BindError> {
        self.bind.clone()
    }
}

impl GangParts for ClusterParts<'_> {
    type Registration = ();

    fn planted(&self, flaw: GangFlaw) -> bool {
        self.gang_flaw == Some(flaw)
    }

    fn rules(&self) -> GangRules {
        GangRules::new(self.mode, TIMEOUT)
    }

    fn read_group<R>(&self, _: &GroupKey, read: impl FnOnce(&Groups) -> R) -> R {
        read(&self.c.groups)
    }

    fn write_group<R>(
        &mut self,
        _: &GroupKey,
        change: impl FnOnce(&mut Groups, &mut Batch<'_, ()>) -> R,
    ) -> R {
        self.with_batch(change)
    }

    fn add_waiting(
        &mut self,
        pod: Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<(), AddError> {
        self.c
            .waiting
            .add(pod, waits.iter().cloned(), now, ())
            .map(drop)
    }

    fn allow_waiting(&mut self, id: &PodId, plugin: &str) -> bool {
        if self.c.waiting.get(id).is_none() {
            return false; // nothing to change: the part stays shared
        }
        match self.c.waiting.allow(id, None, plugin) {
            AllowOutcome::Allowed(decided) => {
                self.deliver(vec![decided]);
                true
            }
            AllowOutcome::NotWaiting | AllowOutcome::StillPending => false,
        }
    }

    fn remove_waiting(&mut self, id: &PodId) -> bool {
        if self.c.waiting.get(id).is_none() {
            return false;
        }
        let removed = Status::unschedulable("removed");
        let decided = self.c.waiting.reject(id, None, removed, Cause::Deleted);
        let decided_one = decided.is_some();
        self.deliver(decided.into_iter().collect());
        decided_one
    }

    fn expire_waiting(&mut self, now: Time) -> Vec<PodId> {
        if self.c.waiting.next_deadline().is_none_or(|d| d > now) {
            return Vec::new();
        }
        let decided = self.c.waiting.expire(now);
        let timed_out = decided.iter().map(|d| d.pod.id().clone()).collect();
        self.deliver(decided);
        timed_out
    }

    fn next_waiting_deadline(&self) -> Option<Time> {
        self.c.waiting.next_deadline()
    }

    fn group_parts(&self) -> usize {
        1
    }

    fn part_deadline(&self, _: usize) -> Option<Time> {
        self.c.groups.next_deadline()
    }

    fn expire_part(&mut self, _: usize, expire: &mut Expire<'_, ()>) -> Vec<(Time, GroupKey)> {
        self.with_batch(expire)
    }

    fn next_attempt_deadline(&self) -> Option<Time> {
        self.c.groups.next_deadline()
    }
}

impl ClusterParts<'_> {
    /// `change` over the model's groups with its waiting map as a batch (the one part of the
    /// groups, one critical section), its decisions delivered after.
    fn with_batch<R>(&mut self, change: impl FnOnce(&mut Groups, &mut Batch<'_, ()>) -> R) -> R {
        let c = &mut *self.c;
        let mut batch = ModelBatch {
            waiting: &mut c.waiting,
            decided: Vec::new(),
        };
        let result = change(&mut c.groups, &mut batch);
        let decided = batch.decided;
        self.deliver(decided);
        result
    }
}

/// The model's waiting map as a critical section under a group's lock uses it: the same
/// operations on the pure state, the decisions kept for delivery. The part is written only
/// when an operation changes it.
struct ModelBatch<'a> {
    waiting: &'a mut Shared<WaitingState<()>>,
    decided: Vec<Decided<()>>,
}

impl AttemptWaiting for ModelBatch<'_> {
    type Registration = ();

    fn allow_all(&mut self, ids: &[PodId]) -> Result<(), PodId> {
        if ids.is_empty() {
            return Ok(());
        }
        let allowed = self.waiting.allow_all(ids, GANG_SCHEDULING.as_str())?;
        self.decided.extend(allowed);
        Ok(())
    }

    fn reject_waiting(
        &mut self,
        ids: &[PodId],
        reason: &str,
        cause: Cause,
        rejected: &mut dyn FnMut(&PodId),
    ) {
        if ids.is_empty() {
            return;
        }
        let status = Status::unschedulable(reason).with_plugin(GANG_SCHEDULING);
        let decided = self.waiting.reject_all(ids, &status, cause);
        decided.iter().for_each(|d| rejected(d.pod.id()));
        self.decided.extend(decided);
    }

    fn add_untimed(&mut self, pod: &Pod) -> Result<(), AddError> {
        self.waiting
            .add_untimed(pod.clone(), GANG_SCHEDULING, ())
            .map(drop)
    }

    fn add_timed(
        &mut self,
        pod: &Pod,
        waits: &[(PluginName, Duration)],
        now: Time,
    ) -> Result<(), AddError> {
        self.waiting
            .add(pod.clone(), waits.iter().cloned(), now, ())
            .map(drop)
    }
}
