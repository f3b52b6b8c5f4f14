use std::collections::BTreeMap;
use std::fmt;

use super::node_index::NodeIndex;
use super::CacheState;
use crate::queue::EventKind;
use crate::vocabulary::untolerated;
use crate::{Code, Labels, Pod, Status};
use crate::{Resources, Taint};

/// Chooses the node a pod is assumed on: kube-scheduler's Filter and Score steps, folded into
/// one call over the cache's state, and the events that may change its mind about a pod it
/// turned away (their queueing hints).
///
/// Its contract, which `gangway-check` verifies of an embedder's placement: `place` is a
/// function of the pod and the cache it is given (no state of its own between calls), and the
/// node it names has room for the pod there; a pod it turns away is retried on the events of
/// [`requeue_on`](Placement::requeue_on), which must include every event that can give such a
/// pod room (I7).
pub trait Placement: Send + Sync {
    /// The name of the node to place `pod` on, which must be a node of `cache` with room for
    /// it; or a status saying the pod is unschedulable, naming the plugin that rejected it.
    fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status>;

    /// The kinds of cluster event after which a pod this placement turned away (its status
    /// names a plugin other than the gang's and the Permit plugins') may fit: kube-scheduler's
    /// `EnqueueExtensions`. The queue retries such a pod on each of them; on any other, it
    /// waits for the unschedulable pool's leftover flush (5 minutes). Read once, when the
    /// scheduler is built — no user code runs under the queue's lock (H5).
    ///
    /// The default is every kind ([`EventKind::ALL`]), as kube-scheduler registers a plugin
    /// that declares no hints: never a lost event, at the cost of retries that cannot help.
    /// [`ResourceFit`] declares [`ResourceFit::HINT_EVENTS`].
    fn requeue_on(&self) -> &'static [EventKind] {
        &EventKind::ALL
    }
}

/// Any `Fn(&Pod, &CacheState) -> Result<String, Status>` is a placement.
impl<F> Placement for F
where
    F: Fn(&Pod, &CacheState) -> Result<String, Status> + Send + Sync,
{
    fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status> {
        self(pod, cache)
    }
}

/// The default placement: kube-scheduler's TaintToleration filter, NodeAffinity filter (for
/// `spec.nodeSelector`) and NodeResourcesFit filter, in that order, with a most-allocated
/// score, so that pods pack tightly and whole gangs still find room.
///
/// A node passes when the pod tolerates each of its `NoSchedule` and `NoExecute` taints
/// ([`Pod::tolerations`]), its labels match [`Pod::node_selector`] and its free resources fit
/// [`Pod::requests`] — every resource, extended ones (GPUs, hugepages, …) by name, so a node
/// never holds more of any resource than it has. Among those it picks the one with the least
/// left after placing: the smallest sum of the fractions of CPU and of memory capacity that
/// would stay free (a resource a node has none of counts as fully used). Ties go to the node
/// whose name sorts first. If no node passes, the pod is unschedulable: `Code::Unschedulable`
/// from plugin [`NodeResourcesFit`](ResourceFit::PLUGIN), with kube-scheduler's message —
/// each node counted under the first filter it fails, the reasons sorted:
/// "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node
/// affinity/selector." With no node at all it is kube-scheduler's `ErrNoNodesAvailable`, an
/// error and not a verdict ([`ResourceFit::NO_NODES`]): the pod backs off as an error.
///
/// Placing on the chosen node keeps it within capacity, so assumed pods never overcommit a
/// node (only pods observed bound can, see [`CacheState::add_bound`]).
///
/// ```
/// use gangsched::scheduler::{CacheState, Node, Placement, ResourceFit};
/// use gangsched::{Labels, Pod, Resources};
///
/// let mut cache = CacheState::new();
/// cache.add_node(Node::new("big", Resources::new(8000, 32 << 30))).unwrap();
/// cache.add_node(Node::new("small", Resources::new(2000, 8 << 30))).unwrap();
/// let gpus = Resources::new(8000, 64 << 30).with_extended("nvidia.com/gpu", 8);
/// cache.add_node(Node::new("gpu", gpus).with_label("accelerator", "h100")).unwrap();
/// let pod = Pod::new("a", "ml", "worker").with_requests(Resources::new(1000, 4 << 30));
/// assert_eq!(ResourceFit.place(&pod, &cache).unwrap(), "small");
/// let trainer = Pod::new("b", "ml", "trainer")
///     .with_requests(Resources::new(1000, 4 << 30).with_extended("nvidia.com/gpu", 8))
///     .with_node_selector(Labels::new().with("accelerator", "h100"));
/// assert_eq!(ResourceFit.place(&trainer, &cache).unwrap(), "gpu");
/// cache.assume(&trainer, "gpu").unwrap();
/// let status = ResourceFit.place(&trainer, &cache).unwrap_err();
/// assert_eq!(
///     status.message(),
///     "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, \
///      2 node(s) didn't match Pod's node affinity/selector."
/// );
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceFit;

impl ResourceFit {
    /// The plugin named in the status of a pod that fits nowhere.
    pub const PLUGIN: &'static str = "NodeResourcesFit";

    /// The events its queueing hint answers `Queue` to: freed resources (a bound pod deleted,
    /// a reservation released), a new node, or a node's update (more capacity, new labels,
    /// a taint gone) may give a pod that fit nowhere its room (I7) — upstream's
    /// NodeResourcesFit, NodeAffinity and TaintToleration register the same.
    pub const HINT_EVENTS: [EventKind; 3] = [
        EventKind::AssignedPodDelete,
        EventKind::NodeAdd,
        EventKind::NodeUpdate,
    ];

    /// NodeAffinity's reason for a node whose labels do not match the pod's node selector.
    pub const SELECTOR_MISMATCH: &'static str = "node(s) didn't match Pod's node affinity/selector";

    /// kube-scheduler's `ErrNoNodesAvailable`: the cluster has no node at all. An error (the pod
    /// backs off as one), written as an `Unschedulable` condition.
    pub const NO_NODES: &'static str = "no nodes available to schedule pods";
}

/// Fixed-point scale of the free fractions: the score is exact integer arithmetic.
const SCALE: u128 = 1 << 32;

/// `part / whole` in units of `1 / SCALE`; a resource the node has none of counts as used.
fn fraction(part: u64, whole: u64) -> u128 {
    if whole == 0 {
        0
    } else {
        u128::from(part) * SCALE / u128::from(whole)
    }
}

/// How much of a node of `capacity` with `requested` on it stays free after placing
/// `requests` there (lower packs tighter), or `None` if they do not fit.
fn score(capacity: &Resources, requested: &Resources, requests: &Resources) -> Option<u128> {
    if !requests.fits_beside(requested, capacity) {
        return None;
    }
    let left = |have: u64, used: u64, want: u64| have.saturating_sub(used) - want;
    let cpu = left(
        capacity.cpu_millis,
        requested.cpu_millis,
        requests.cpu_millis,
    );
    let memory = left(
        capacity.memory_bytes,
        requested.memory_bytes,
        requests.memory_bytes,
    );
    Some(fraction(cpu, capacity.cpu_millis) + fraction(memory, capacity.memory_bytes))
}

/// The node index's answer when the cache has one, the full scan's otherwise: the same node
/// either way (`node_index.rs`; tests/tests/prop_placement_index.rs runs both side by side).
impl Placement for ResourceFit {
    fn place(&self, pod: &Pod, cache: &CacheState) -> Result<String, Status> {
        let best = match cache.node_index() {
            Some(index) => best_indexed(pod, index),
            None => best_scanned(pod, cache),
        };
        best.map(str::to_owned)
            .ok_or_else(|| unschedulable(pod, cache))
    }

    fn requeue_on(&self) -> &'static [EventKind] {
        &Self::HINT_EVENTS
    }
}

/// The node with the least (score, name) among those that pass every filter, node by node.
fn best_scanned<'a>(pod: &Pod, cache: &'a CacheState) -> Option<&'a str> {
    let requests = pod.requests();
    let selector = pod.node_selector();
    cache
        .nodes()
        .filter(|node| untolerated(node.taints(), pod.tolerations()).is_none())
        .filter(|node| selector.matches(node.labels()))
        .filter_map(|node| {
            score(node.capacity(), node.requested(), requests).map(|s| (s, node.name()))
        })
        .min()
        .map(|(_, name)| name)
}

/// [`best_scanned`]'s node, class by class and bucket by bucket. The filters are the same
/// for a whole class (taints and labels are part of it) and a bucket's nodes have the same
/// requested resources, hence the same fit and score for any pod: its first name is the least
/// (score, name) among its nodes, and the least over the buckets is the least over the
/// nodes. Skipped unseen, exactly: classes whose capacity does not hold the requests (no
/// node of theirs can); buckets with less CPU free than requested (they do not fit); and,
/// since a class's buckets come by free CPU ascending and the score is at least the CPU
/// fraction left, which grows with it, the rest of a class once that fraction alone exceeds
/// the best score found (those scores are greater, not equal: no tie is lost).
fn best_indexed<'a>(pod: &Pod, index: &'a NodeIndex) -> Option<&'a str> {
    let requests = pod.requests();
    let mut best: Option<(u128, &str)> = None;
    for class in index.classes() {
        let capacity = class.capacity();
        if filtered_by(pod, class.taints(), class.labels()).is_some() || !requests.fits_in(capacity)
        {
            continue;
        }
        for (requested, name) in class.with_free_cpu(requests.cpu_millis) {
            let cpu_left =
                capacity.cpu_millis.saturating_sub(requested.cpu_millis) - requests.cpu_millis;
            if best.is_some_and(|(s, _)| fraction(cpu_left, capacity.cpu_millis) > s) {
                break;
            }
            if let Some(s) = score(capacity, requested, requests) {
                if best.is_none_or(|b| (s, &**name) < b) {
                    best = Some((s, name));
                }
            }
        }
    }
    best.map(|(_, name)| name)
}

/// `None` if a node with `taints` and `labels` passes TaintToleration and NodeAffinity for
/// `pod`; else the reason of the first that fails.
fn filtered_by<'a>(pod: &Pod, taints: &'a [Taint], labels: &Labels) -> Option<Reason<'a>> {
    if let Some(taint) = untolerated(taints, pod.tolerations()) {
        return Some(Reason::Taint(taint));
    }
    (!pod.node_selector().matches(labels)).then_some(Reason::Selector)
}

/// One filter's reason for a node, borrowed from the pod and the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reason<'a> {
    /// TaintToleration: a taint the pod does not tolerate.
    Taint(&'a Taint),
    /// NodeAffinity: the node selector does not match.
    Selector,
    /// NodeResourcesFit: too little of this resource is free.
    Insufficient(&'a str),
}

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Taint(taint) => write!(f, "node(s) had untolerated taint {taint}"),
            Reason::Selector => f.write_str(ResourceFit::SELECTOR_MISMATCH),
            Reason::Insufficient(name) => write!(f, "Insufficient {name}"),
        }
    }
}

/// Why no node passes, as kube-scheduler words it: each node counted under the reasons of the
/// first filter it fails (TaintToleration, NodeAffinity, then NodeResourcesFit), the reasons
/// sorted. With the node index, a class's filter reasons count all its nodes at once and a
/// bucket's missing resources all of its nodes: the same counts (see [`best_indexed`]).
fn unschedulable(pod: &Pod, cache: &CacheState) -> Status {
    let n = cache.node_count();
    if n == 0 {
        return Status::with_reason(Code::Error, ResourceFit::NO_NODES);
    }
    let message = {
        let mut reasons: BTreeMap<Reason<'_>, usize> = BTreeMap::new();
        let mut count = |reason, nodes| *reasons.entry(reason).or_default() += nodes;
        match cache.node_index() {
            Some(index) => {
                for class in index.classes() {
                    if let Some(reason) = filtered_by(pod, class.taints(), class.labels()) {
                        count(reason, class.node_count());
                        continue;
                    }
                    for (requested, nodes) in class.buckets() {
                        let free = class.capacity().saturating_sub(requested);
                        for name in pod.requests().insufficient(&free) {
                            count(Reason::Insufficient(name), nodes);
                        }
                    }
                }
            }
            None => {
                for node in cache.nodes() {
                    if let Some(reason) = filtered_by(pod, node.taints(), node.labels()) {
                        count(reason, 1);
                        continue;
                    }
                    let free = node.free();
                    for name in pod.requests().insufficient(&free) {
                        count(Reason::Insufficient(name), 1);
                    }
                }
            }
        }
        // Formatted once per reason, not once per node; sorted as strings, as upstream does.
        let mut reasons: Vec<String> = reasons
            .into_iter()
            .map(|(reason, count)| format!("{count} {reason}"))
            .collect();
        reasons.sort();
        format!("0/{n} nodes are available: {}.", reasons.join(", "))
    };
    Status::with_reason(Code::Unschedulable, message).with_plugin(ResourceFit::PLUGIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::Node;

    fn cache(nodes: &[(&str, u64, u64)]) -> CacheState {
        let mut cache = CacheState::new();
        for &(name, cpu, mem) in nodes {
            cache
                .add_node(Node::new(name, Resources::new(cpu, mem)))
                .unwrap();
        }
        cache
    }

    fn pod(id: &str, cpu: u64, mem: u64) -> Pod {
        Pod::new(id, "ml", id).with_requests(Resources::new(cpu, mem))
    }

    /// A closure is a placement: it places as it answers, and, declaring no hints, asks to be
    /// retried on every kind of event (kube-scheduler's default for a plugin without hints).
    #[test]
    fn a_closure_is_a_placement_retried_on_every_event() {
        let pick_b = |_: &Pod, _: &CacheState| -> Result<String, Status> { Ok("b".into()) };
        let c = cache(&[("a", 1000, 1000), ("b", 1000, 1000)]);
        assert_eq!(pick_b.place(&pod("p", 1, 1), &c), Ok("b".to_owned()));
        assert_eq!(pick_b.requeue_on(), &EventKind::ALL[..]);
    }

    #[test]
    fn packs_onto_the_node_left_fullest() {
        let mut c = cache(&[("a", 4000, 4000), ("b", 4000, 4000), ("c", 1000, 1000)]);
        // "c" is left empty by a 1000/1000 pod: the tightest fit.
        assert_eq!(ResourceFit.place(&pod("p", 1000, 1000), &c).unwrap(), "c");
        // Too big for "c": "a" and "b" tie, the name breaks it.
        assert_eq!(ResourceFit.place(&pod("q", 2000, 2000), &c).unwrap(), "a");
        // Once "b" is partly used, it is the tighter fit.
        c.assume(&pod("r", 1000, 1000), "b").unwrap();
        assert_eq!(ResourceFit.place(&pod("q", 2000, 2000), &c).unwrap(), "b");
    }

    #[test]
    fn the_score_is_a_sum_of_fractions_not_of_raw_amounts() {
        let mut c = cache(&[("a", 10_000, 10), ("b", 100, 1_000_000)]);
        c.assume(&pod("x", 4000, 0), "a").unwrap();
        c.assume(&pod("y", 0, 500_000), "b").unwrap();
        // Left free: "a" 60% cpu + 100% memory = 1.6 (6010 raw units), "b" 100% cpu + 50%
        // memory = 1.5 (500_100 raw units). Fractions pick "b"; raw amounts would pick "a".
        assert_eq!(ResourceFit.place(&pod("p", 0, 0), &c).unwrap(), "b");
        // A node with no memory at all counts it as fully used.
        let c = cache(&[("a", 1000, 1000), ("m", 1000, 0)]);
        assert_eq!(ResourceFit.place(&pod("p", 500, 0), &c).unwrap(), "m");
    }

    #[test]
    fn nothing_fits_is_unschedulable_from_node_resources_fit() {
        let mut c = cache(&[("a", 1000, 1000), ("b", 2000, 500)]);
        let status = ResourceFit.place(&pod("p", 1500, 600), &c).unwrap_err();
        assert_eq!(status.code(), Code::Unschedulable);
        assert_eq!(
            status.plugin().map(|p| p.as_str()),
            Some("NodeResourcesFit")
        );
        assert_eq!(
            status.message(),
            "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."
        );
        // Fits by capacity, but not in what is free.
        c.assume(&pod("x", 600, 0), "a").unwrap();
        assert!(ResourceFit.place(&pod("p", 500, 500), &c).is_ok());
        assert!(ResourceFit.place(&pod("p", 500, 600), &c).is_err());
        let none = ResourceFit
            .place(&pod("p", 0, 0), &CacheState::new())
            .unwrap_err();
        assert_eq!(none.message(), ResourceFit::NO_NODES);
        assert_eq!(
            none.code(),
            Code::Error,
            "an error, as upstream's ErrNoNodesAvailable"
        );
    }

    #[test]
    fn taints_then_the_selector_then_resources_each_node_under_its_first_failure() {
        use crate::Labels;
        use crate::{Taint, TaintEffect, Toleration};
        const GPU: &str = "nvidia.com/gpu";
        let mut c = CacheState::new();
        let gpus = |n| Resources::new(8000, 8000).with_extended(GPU, n);
        let tainted = Taint::new(GPU, "present", TaintEffect::NoSchedule);
        c.add_node(Node::new("cpu", Resources::new(8000, 8000)))
            .unwrap();
        c.add_node(
            Node::new("small", gpus(2))
                .with_label("acc", "h100")
                .with_taint(tainted.clone()),
        )
        .unwrap();
        c.add_node(
            Node::new("big", gpus(8))
                .with_label("acc", "a100")
                .with_taint(tainted.clone()),
        )
        .unwrap();
        let trainer = Pod::new("t", "ml", "t")
            .with_requests(Resources::new(1000, 1000).with_extended(GPU, 4))
            .with_node_selector(Labels::new().with("acc", "h100"));
        // Untolerated everywhere it matters.
        let status = ResourceFit.place(&trainer, &c).unwrap_err();
        assert_eq!(
            status.message(),
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, \
             2 node(s) had untolerated taint {nvidia.com/gpu: present}."
        );
        let trainer = trainer.with_toleration(Toleration::exists(GPU));
        let status = ResourceFit.place(&trainer, &c).unwrap_err();
        assert_eq!(
            status.message(),
            "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, \
             2 node(s) didn't match Pod's node affinity/selector."
        );
        let fits = trainer
            .clone()
            .with_requests(Resources::new(1000, 1000).with_extended(GPU, 2));
        assert_eq!(ResourceFit.place(&fits, &c).unwrap(), "small");
        // A toleration for another effect does not help; PreferNoSchedule never filters.
        let wrong = Pod::new("w", "ml", "w")
            .with_toleration(Toleration::exists(GPU).with_effect(TaintEffect::NoExecute));
        assert_eq!(ResourceFit.place(&wrong, &c).unwrap(), "cpu");
        let mut soft = CacheState::new();
        let prefer = Taint::new("spot", "", TaintEffect::PreferNoSchedule);
        soft.add_node(Node::new("s", Resources::new(1, 1)).with_taint(prefer))
            .unwrap();
        assert_eq!(ResourceFit.place(&pod("p", 0, 0), &soft).unwrap(), "s");
        // The node view gives the node back whole.
        let node = c.node("small").unwrap().to_node();
        assert_eq!(
            (node.labels().get("acc"), node.taints()),
            (Some("h100"), &[tainted][..])
        );
    }

    #[test]
    fn a_zero_request_fits_even_an_overcommitted_node() {
        let mut c = cache(&[("a", 1000, 1000)]);
        c.add_bound(&pod("big", 5000, 5000).with_node("a")).unwrap();
        assert_eq!(c.node("a").unwrap().free(), Resources::ZERO);
        assert_eq!(ResourceFit.place(&pod("p", 0, 0), &c).unwrap(), "a");
        assert!(ResourceFit.place(&pod("p", 1, 0), &c).is_err());
    }

    #[test]
    fn closures_are_placements() {
        let fixed = |_: &Pod, _: &CacheState| -> Result<String, Status> { Ok("n9".into()) };
        let boxed: Box<dyn Placement> = Box::new(fixed);
        assert_eq!(
            boxed.place(&pod("p", 0, 0), &CacheState::new()).unwrap(),
            "n9"
        );
    }
}

#[cfg(test)]
#[path = "placement_index_tests.rs"]
mod index_tests;
