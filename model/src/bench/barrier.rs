//! The permit barrier as the benchmarks drive it: one scheduling thread (the caller) runs
//! Reserve and Permit pod by pod; decided pods reach a pool of binding workers through the
//! waiting map's decision sink (the pod that reaches quorum goes to them directly); each worker
//! binds with a no-op and tells the gang plugin the pod is bound.

use gangway::sync::channel::{self, Sender};
use gangway::sync::thread::{self, JoinHandle};
use gangway::sync::Arc;
use gangway::{Decision, GangScheduling, Mode, Permit, Pod, PodGroup, Time, WaitingPods};

/// What a binding worker is handed.
enum Job {
    /// A decided pod: bind it if allowed, drop it if rejected.
    Decided(Decision),
    /// No more work.
    Stop,
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
        let (jobs, inbox) = channel::unbounded::<Job>();
        let inbox = Arc::new(inbox);
        let sink = jobs.clone();
        let waiting = WaitingPods::with_sink(move |d: Decision| {
            let _ = sink.send(Job::Decided(d));
        });
        let gang = GangScheduling::new(mode, waiting);
        for (group, pods) in gangs {
            gang.on_group_added(group.clone()).expect("a new group");
            for pod in pods {
                gang.on_pod_added(pod.clone(), false).expect("a new member");
            }
        }
        let workers = (0..workers.max(1))
            .map(|i| {
                let inbox = inbox.clone();
                let gang = gang.clone();
                thread::spawn(&format!("binder-{i}"), move || {
                    let (mut bound, mut rejected) = (0, 0);
                    while let Ok(Job::Decided(d)) = inbox.recv() {
                        if d.status.is_success() {
                            // The bind itself is a no-op; the informer then sees it bound.
                            gang.on_pod_bound(&d.pod);
                            bound += 1;
                        } else {
                            gang.unreserve(&d.pod);
                            rejected += 1;
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
                let decision = Decision {
                    pod: pod.clone(),
                    status: gangway::Status::success(),
                };
                let _ = self.jobs.send(Job::Decided(decision));
                Ok(())
            }
            Permit::Wait { .. } => Ok(()),
            Permit::Reject(status) => Err(format!("{} rejected at Permit: {status}", pod.id())),
        }
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
            .snapshot()
            .iter()
            .map(|g| g.assumed().len())
            .sum();
        BarrierOutcome {
            bound,
            rejected,
            waiting: self.gang.waiting().len(),
            assumed,
        }
    }
}
