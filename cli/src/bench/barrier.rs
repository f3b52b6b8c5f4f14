//! The permit barrier as the benchmarks drive it: one scheduling thread (the caller) runs
//! Reserve and Permit pod by pod; decided pods reach a pool of binding workers through the
//! waiting map's decision sink (the pod that reaches quorum goes to them directly); each worker
//! binds with a no-op and tells the gang plugin the pod is bound.

use std::time::Duration;

use gangsched::gang::DEFAULT_PERMIT_TIMEOUT;
use gangsched::sync::channel::{self, Sender};
use gangsched::sync::thread::{self, JoinHandle};
use gangsched::sync::Arc;
use gangsched::{
    Decision, DecisionSink, GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPods,
};

/// Called by binding worker `worker` (0-based) on each decided pod as it arrives, before the
/// bind or unreserve — where the Go program stamps `returnedAt`.
pub type OnDecided = Arc<dyn Fn(usize, &Decision) + Send + Sync>;

/// What a binding worker is handed.
enum Job {
    /// A decided pod: bind it if allowed, drop it if rejected.
    Decided(Decision),
    /// Pods decided together (a gang at quorum or rejected whole), this worker's share.
    Batch(Vec<Decision>),
    /// No more work.
    Stop,
}

/// The waiting map's sink: a single decision is one job; the decisions of one step are split
/// into one share per worker, so a gang of 10,000 wakes each worker once instead of being
/// 10,000 messages. A share is split off only if it carries at least [`MIN_SHARE`] decisions.
struct WorkerSink {
    jobs: Sender<Job>,
    workers: usize,
}

/// The fewest decisions worth waking another worker for. Binding one pod here is a registry
/// update (well under a microsecond); waking a sleeping worker is a futex wake and a context
/// switch (several microseconds) and puts one more thread on the registry lock. So a gang of 8
/// goes to one worker as one job, and a gang of 10,000 is shared by all.
const MIN_SHARE: usize = 64;

impl DecisionSink for WorkerSink {
    fn deliver(&self, decision: Decision) {
        let _ = self.jobs.send(Job::Decided(decision));
    }

    fn deliver_all(&self, mut decisions: Vec<Decision>) {
        let share = decisions.len().div_ceil(self.workers).max(MIN_SHARE);
        while decisions.len() > share {
            let rest = decisions.split_off(share);
            let _ = self.jobs.send(Job::Batch(decisions));
            decisions = rest;
        }
        let _ = self.jobs.send(Job::Batch(decisions));
    }
}

/// The gang plugin over a waiting map whose decisions go to `workers` binding threads.
pub struct Barrier {
    gang: GangScheduling,
    jobs: Sender<Job>,
    workers: Vec<JoinHandle<(usize, usize)>>,
}

/// How the pods ended: bound or rejected, counted by the binding workers, and what is left in
/// the waiting map and the groups' assumed sets (both must be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierOutcome {
    /// Pods bound.
    pub bound: usize,
    /// Pods rejected.
    pub rejected: usize,
    /// Pods still in the waiting map.
    pub waiting: usize,
    /// Pods still assumed in their groups.
    pub assumed: usize,
}

impl Barrier {
    /// A barrier in `mode` with `workers` binding threads, the groups of `gangs` created and
    /// their pods known to the plugin (as the informer would have it before scheduling).
    pub fn new(mode: Mode, workers: usize, gangs: &[(PodGroup, Vec<Pod>)]) -> Barrier {
        Barrier::with_timeout(mode, workers, gangs, DEFAULT_PERMIT_TIMEOUT, None)
    }

    /// [`new`](Barrier::new) with a Permit wait of `timeout` (applied by whoever calls the gang
    /// plugin's `expire`, e.g. a `TimerDriver` over [`gang`](Barrier::gang)), and `on_decided`
    /// called by the workers on every decision they receive.
    pub fn with_timeout(
        mode: Mode,
        workers: usize,
        gangs: &[(PodGroup, Vec<Pod>)],
        timeout: Duration,
        on_decided: Option<OnDecided>,
    ) -> Barrier {
        let (jobs, inbox) = channel::unbounded::<Job>();
        let inbox = Arc::new(inbox);
        let workers = workers.max(1);
        let waiting = WaitingPods::with_sink(WorkerSink {
            jobs: jobs.clone(),
            workers,
        });
        let gang = GangScheduling::with_timeout(mode, waiting, timeout);
        for (group, pods) in gangs {
            gang.on_group_added(group.clone()).expect("a new group");
            for pod in pods {
                gang.on_pod_added(pod.clone(), false).expect("a new member");
            }
        }
        let workers = (0..workers)
            .map(|i| {
                let inbox = inbox.clone();
                let gang = gang.clone();
                let on_decided = on_decided.clone();
                thread::spawn(&format!("binder-{i}"), move || {
                    let (mut bound, mut rejected) = (0, 0);
                    let mut bind = |d: Decision| {
                        if let Some(f) = &on_decided {
                            f(i, &d);
                        }
                        if d.status.is_success() {
                            // The bind itself is a no-op; the informer then sees it bound.
                            gang.on_pod_bound(&d.pod);
                            bound += 1;
                        } else {
                            gang.unreserve(&d.pod);
                            rejected += 1;
                        }
                    };
                    loop {
                        match inbox.recv() {
                            Ok(Job::Decided(d)) => bind(d),
                            Ok(Job::Batch(batch)) => batch.into_iter().for_each(&mut bind),
                            Ok(Job::Stop) | Err(_) => break,
                        }
                    }
                    (bound, rejected)
                })
            })
            .collect();
        Barrier {
            gang,
            jobs,
            workers,
        }
    }

    /// One scheduling cycle's gang part for `pod`: Reserve, then Permit at `now`. A pod that
    /// passes goes to the binding workers; one that waits is decided later by a sibling or its
    /// deadline. Fails on a Reserve error or a rejection at Permit.
    pub fn schedule(&self, pod: &Pod, now: Time) -> Result<(), String> {
        self.gang.reserve(pod).map_err(|e| e.to_string())?;
        match self.gang.permit(pod, now) {
            Permit::Allow => {
                let decision = Decision::allowed(pod.clone());
                let _ = self.jobs.send(Job::Decided(decision));
                Ok(())
            }
            Permit::Wait { .. } => Ok(()),
            Permit::Reject { status, .. } => {
                Err(format!("{} rejected at Permit: {status}", pod.id()))
            }
        }
    }

    /// The gang plugin (for a timer over its attempts' deadlines).
    pub fn gang(&self) -> &GangScheduling {
        &self.gang
    }

    /// The waiting map (for deadlines and counts).
    pub fn waiting(&self) -> &WaitingPods {
        self.gang.waiting()
    }

    /// Lets the workers finish what was handed to them, then counts the outcome.
    pub fn finish(self) -> BarrierOutcome {
        for _ in &self.workers {
            let _ = self.jobs.send(Job::Stop);
        }
        let (mut bound, mut rejected) = (0, 0);
        for worker in self.workers {
            let (b, r) = worker.join().expect("a binding worker panicked");
            bound += b;
            rejected += r;
        }
        let assumed = self
            .gang
            .registry()
            .with_groups(|groups| groups.iter().map(|g| g.assumed().len()).sum());
        BarrierOutcome {
            bound,
            rejected,
            waiting: self.gang.waiting().len(),
            assumed,
        }
    }
}
