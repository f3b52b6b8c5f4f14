//! Upstream's `fakePodGroupPlugin` (`schedule_one_podgroup_test.go`) for gangway: its Filter as
//! the scheduler's placement, its Permit as a Permit plugin beside the gang's, both answering
//! per pod from a case's table and logging every call, in order.

use std::time::Duration;

use gangsched::scheduler::{CacheState, Node};
use gangsched::sync::{Arc, Mutex};
use gangsched::{
    Code, GangCycle, Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, Resources,
    Scheduler, SchedulerConfig, Status, Time,
};

/// The fake's name.
pub const FAKE: &str = "FakePodGroupPlugin";
/// The cluster's one node (`st.MakeNode().Name("node1")`).
pub const NODE: &str = "node1";
/// `RunFilterPlugins`' error for the fake's `fwk.NewStatus(fwk.Error)`, as `schedulePod`
/// returns it.
pub const FILTER_ERROR: &str = "running \"FakePodGroupPlugin\" filter plugin: ";
/// `RunPermitPlugins`' error for the fake's `fwk.NewStatus(fwk.Error)`.
pub const PERMIT_ERROR: &str = "running Permit plugin \"FakePodGroupPlugin\": ";

/// A status in upstream's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum S {
    /// `nil`: success.
    Nil,
    /// `fwk.NewStatus(fwk.Wait)`.
    Wait,
    /// `fwk.NewStatus(fwk.Unschedulable)`.
    Unsched,
    /// `fwk.NewStatus(fwk.UnschedulableAndUnresolvable)`.
    Unresolvable,
    /// `fwk.NewStatus(fwk.Error)`.
    Error,
}

/// One call the fake saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// Its Filter (the placement) on the pod.
    Filter(String),
    /// Its Permit on the pod, on the node.
    Permit(String, String),
}

/// Per-pod Filter and Permit answers (`filterStatus`, `permitStatus`), and every call seen.
pub struct Fake {
    filter: &'static [(&'static str, S)],
    permit: &'static [(&'static str, S)],
    calls: Mutex<Vec<Call>>,
}

/// `pod`'s entry in `table`.
pub fn answer(table: &[(&str, S)], pod: &str) -> Option<S> {
    table.iter().find(|(p, _)| *p == pod).map(|&(_, s)| s)
}

impl Fake {
    /// The fake with these tables.
    pub fn new(
        filter: &'static [(&'static str, S)],
        permit: &'static [(&'static str, S)],
    ) -> Arc<Fake> {
        Arc::new(Fake {
            filter,
            permit,
            calls: Mutex::new(Vec::new()),
        })
    }

    /// The calls so far.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().clone()
    }

    /// `schedulePod` over the fake Filter on the one node: the node if it passes; a rejection
    /// becomes the `FitError`, `Unschedulable` whatever the filter's code (`schedulingAlgorithm`);
    /// an error stays one. A pod missing from the table gets the fake's default failure.
    fn place(&self, pod: &Pod) -> Result<String, Status> {
        self.calls.lock().push(Call::Filter(pod.name().to_owned()));
        let fit_error = |why: &str| {
            let message = format!("0/1 nodes are available: 1 {why}.");
            Status::with_reason(Code::Unschedulable, message).with_plugin(FAKE)
        };
        match answer(self.filter, pod.name()) {
            Some(S::Nil) => Ok(NODE.to_owned()),
            Some(S::Unsched | S::Unresolvable) => Err(fit_error("fake filter failure")),
            Some(S::Error) => Err(Status::with_reason(Code::Error, FILTER_ERROR)),
            Some(S::Wait) => unreachable!("no table has a Filter wait"),
            None => Err(fit_error("default fake filter failure")),
        }
    }
}

/// The fake's Permit. Its first call for a pod is the simulation's
/// (`podGroupPodSchedulingAlgorithm`) and answers from the table; a later one is the commit's
/// (`prepareForBindingCycle`), which `TestSubmitPodGroupAlgorithmResult` runs on a framework
/// without the fake: it allows.
struct FakePermit(Arc<Fake>);

impl PermitPlugin for FakePermit {
    fn name(&self) -> PluginName {
        FAKE.into()
    }

    fn permit(&self, pod: &Pod, node: &str) -> PermitVerdict {
        let mut calls = self.0.calls.lock();
        let again = calls
            .iter()
            .any(|c| matches!(c, Call::Permit(p, _) if p == pod.name()));
        calls.push(Call::Permit(pod.name().to_owned(), node.to_owned()));
        if again {
            return PermitVerdict::Allow;
        }
        match answer(self.0.permit, pod.name()) {
            Some(S::Nil) => PermitVerdict::Allow,
            Some(S::Wait) => PermitVerdict::wait(Duration::from_secs(10)),
            Some(S::Unsched) => PermitVerdict::Reject(Status::new(Code::Unschedulable)),
            Some(S::Unresolvable) => {
                PermitVerdict::Reject(Status::new(Code::UnschedulableAndUnresolvable))
            }
            Some(S::Error) => PermitVerdict::Reject(Status::new(Code::Error)),
            None => PermitVerdict::reject("default fake permit failure"),
        }
    }
}

/// A scheduler in `mode` and `cycle` with the one node and `fake` as its placement and its one
/// Permit plugin besides the gang's.
pub fn fake_scheduler(mode: Mode, cycle: GangCycle, fake: &Arc<Fake>) -> Scheduler {
    let config = SchedulerConfig::default()
        .with_mode(mode)
        .with_gang_cycle(cycle);
    let placing = fake.clone();
    let permit = Arc::new(FakePermit(fake.clone())) as Arc<dyn PermitPlugin>;
    let s = Scheduler::builder(config)
        .placement(move |pod: &Pod, _: &CacheState| placing.place(pod))
        .permit_plugins(PermitPlugins::new([permit]).expect("one plugin"))
        .build();
    let node = Node::new(NODE, Resources::new(64_000, 256 << 30));
    s.add_node(node, Time::ZERO).expect("the node");
    s
}
