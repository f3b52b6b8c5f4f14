//! The decisions waiting for a binding cycle: one job per decided pod, in a queue whose order
//! the owner chooses — first come, first served for the scheduler's workers, any order for a
//! model checker (whose binding workers may finish in any order).

use std::collections::BTreeMap;
use std::fmt;

use crate::{Decision, PodId};

/// Work for a binding cycle: a pod's Permit decision.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Job {
    /// The decision: allowed, or rejected with its status and cause.
    pub decision: Decision,
    /// It came from the waiting map (the pod waited at Permit), which is when kube-scheduler
    /// observes the Permit wait.
    pub waited: bool,
}

/// Where decided pods wait for their binding cycle. A pod has at most one job at a time: it is
/// decided once per attempt (I1), and comes back to the queue only through its binding cycle
/// (or its gang's, which takes the siblings' jobs with it, H2).
pub trait JobQueue: Clone + Default + fmt::Debug + PartialEq + Eq + std::hash::Hash {
    /// Files `pod`'s decision.
    fn push(&mut self, job: Job);

    /// The next job to run, in this queue's order.
    fn pop(&mut self) -> Option<Job>;

    /// Takes the job of pod `id`, wherever it is in the order.
    fn take(&mut self, id: &PodId) -> Option<Job>;

    /// How many jobs are waiting.
    fn len(&self) -> usize;

    #[cfg(feature = "checking")]
    /// Whether no job is waiting.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every job, in pod id order.
    fn jobs(&self) -> impl Iterator<Item = &Job>;
}

/// First come, first served: the scheduler's binding workers take the oldest decision first.
/// A job taken out of turn (a gang handed back whole, H2) leaves the order with it.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct FifoJobs {
    /// The jobs by arrival number.
    order: BTreeMap<u64, Job>,
    /// Each waiting job's arrival number.
    numbers: BTreeMap<PodId, u64>,
    next: u64,
}

impl JobQueue for FifoJobs {
    fn push(&mut self, job: Job) {
        let id = job.decision.pod.id().clone();
        let earlier = self.numbers.insert(id.clone(), self.next);
        debug_assert!(earlier.is_none(), "{id} has one job at a time");
        if let Some(earlier) = earlier {
            self.order.remove(&earlier);
        }
        self.order.insert(self.next, job);
        self.next += 1;
    }

    fn pop(&mut self) -> Option<Job> {
        let (_, job) = self.order.pop_first()?;
        self.numbers.remove(job.decision.pod.id());
        Some(job)
    }

    fn take(&mut self, id: &PodId) -> Option<Job> {
        let number = self.numbers.remove(id)?;
        self.order.remove(&number)
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.numbers
            .values()
            .filter_map(|number| self.order.get(number))
    }
}

impl fmt::Debug for FifoJobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.order.values()).finish()
    }
}

#[cfg(feature = "checking")]
/// Any order: the jobs as a set, for a model checker, whose binding workers may take any
/// decision next. It forgets whether a pod waited ([`Job::waited`], read by telemetry only),
/// so that two paths that differ only there are one state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AnyOrderJobs {
    jobs: BTreeMap<PodId, Job>,
}

#[cfg(feature = "checking")]
impl JobQueue for AnyOrderJobs {
    fn push(&mut self, mut job: Job) {
        job.waited = false;
        let id = job.decision.pod.id().clone();
        let earlier = self.jobs.insert(id.clone(), job);
        debug_assert!(earlier.is_none(), "{id} has one job at a time");
    }

    fn pop(&mut self) -> Option<Job> {
        self.jobs.pop_first().map(|(_, job)| job)
    }

    fn take(&mut self, id: &PodId) -> Option<Job> {
        self.jobs.remove(id)
    }

    fn len(&self) -> usize {
        self.jobs.len()
    }

    fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }
}

#[cfg(feature = "checking")]
impl AnyOrderJobs {
    /// The jobs, by pod.
    pub fn iter(&self) -> impl Iterator<Item = (&PodId, &Job)> {
        self.jobs.iter()
    }

    pub(crate) fn from_map(jobs: BTreeMap<PodId, Job>) -> AnyOrderJobs {
        AnyOrderJobs { jobs }
    }
}
