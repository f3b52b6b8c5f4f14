//! The reservation cache: every error path, and assume / forget / finish_binding / add_bound /
//! remove_pod / remove_node sequences with a `check()` of I5 after each step; plus the witness
//! that `check()` finds a corrupted cache.

use super::*;
use crate::{Pod, PodId, Resources};

fn res(cpu: u64, mem: u64) -> Resources {
    Resources::new(cpu, mem)
}

fn pod(id: &str, cpu: u64, mem: u64) -> Pod {
    Pod::new(id, "ml", id).with_requests(res(cpu, mem))
}

fn id(s: &str) -> PodId {
    PodId::from(s)
}

/// Two nodes: "n1" 4000m/4000, "n2" 2000m/2000.
fn two_nodes() -> CacheState {
    let mut c = CacheState::new();
    c.add_node(Node::new("n1", res(4000, 4000))).unwrap();
    c.add_node(Node::new("n2", res(2000, 2000))).unwrap();
    c.check().unwrap();
    c
}

fn requested(c: &CacheState, node: &str) -> Resources {
    c.node(node).unwrap().requested().clone()
}

#[test]
fn add_node_refuses_a_duplicate_and_hands_it_back() {
    let mut c = two_nodes();
    let dup = Node::new("n1", res(1, 1));
    let err = c.add_node(dup.clone()).unwrap_err();
    assert_eq!(err.to_string(), "node n1 already exists");
    assert_eq!(err.into_node(), dup);
    assert_eq!(c.node("n1").unwrap().capacity(), &res(4000, 4000));
    assert_eq!(c.node_count(), 2);
    c.check().unwrap();
}

#[test]
fn node_views_report_capacity_requested_free_and_pods() {
    let mut c = two_nodes();
    c.assume(&pod("a", 1000, 500), "n1").unwrap();
    c.assume(&pod("b", 500, 500), "n1").unwrap();
    let n1 = c.node("n1").unwrap();
    assert_eq!(n1.name(), "n1");
    assert_eq!(n1.requested(), &res(1500, 1000));
    assert_eq!(n1.free(), res(2500, 3000));
    assert_eq!(n1.pods().cloned().collect::<Vec<_>>(), [id("a"), id("b")]);
    assert_eq!(n1.pod_count(), 2);
    assert_eq!(n1.to_node(), Node::new("n1", res(4000, 4000)));
    let names: Vec<&str> = c.nodes().map(|n| n.name()).collect();
    assert_eq!(names, ["n1", "n2"]);
    assert!(c.node("n3").is_none());
    c.check().unwrap();
}

#[test]
fn remove_node_errors_on_unknown_and_keeps_its_pods_until_they_go() {
    let mut c = two_nodes();
    let err = c.remove_node("n9").unwrap_err();
    assert_eq!(err, RemoveNodeError::UnknownNode("n9".into()));
    assert_eq!(err.to_string(), "unknown node n9");

    c.assume(&pod("b", 100, 100), "n1").unwrap();
    c.add_bound(&pod("a", 100, 100).with_node("n1")).unwrap();
    c.assume(&pod("c", 100, 100), "n2").unwrap();
    c.check().unwrap();
    assert_eq!(c.remove_node("n1").unwrap(), [id("a"), id("b")]);
    c.check().unwrap();
    // Not listed, nothing placed there, removed once only.
    assert!(c.node("n1").is_none());
    assert_eq!(c.node_count(), 1);
    assert!(c.nodes().all(|n| n.name() != "n1"));
    assert!(c.assume(&pod("d", 1, 1), "n1").is_err());
    assert!(c.remove_node("n1").is_err());
    // Its pods stay until they go, one by one.
    assert_eq!(c.phase(&id("a")), Some(PodPhase::Bound));
    assert_eq!(c.phase(&id("b")), Some(PodPhase::Assumed));
    assert_eq!((c.assumed_count(), c.bound_count()), (2, 1));
    assert_eq!(c.forget(&id("b")).as_deref(), Some("n1"));
    assert!(c.remove_pod(&id("a")).is_some());
    c.check().unwrap();
    // With the last pod the deleted node is gone: a node of its name is a new one.
    c.add_node(Node::new("n1", Resources::new(1000, 1000)))
        .unwrap();
    assert!(c.node("n1").unwrap().requested().is_zero());
    c.check().unwrap();
}

#[test]
fn the_check_finds_a_deleted_node_kept_with_no_pod() {
    let mut c = two_nodes();
    c.add_bound(&pod("a", 100, 100).with_node("n1")).unwrap();
    c.remove_node("n1").unwrap();
    c.check().unwrap();
    // The witness: the entry left behind as if its last pod had gone without taking it.
    c.pods.remove(&id("a"));
    let n1 = c.nodes.get_mut("n1").unwrap();
    crate::sync::Arc::make_mut(&mut n1.pods).clear();
    n1.requested = Resources::ZERO;
    let err = c.check().unwrap_err();
    assert!(err.contains("deleted node n1 is kept with no pod"), "{err}");
}

#[test]
fn a_deleted_node_that_comes_back_has_its_pods_again() {
    // kube-scheduler keeps a deleted node's pods: forgetting them would overcommit the node
    // when it returns before their deletes (the driver differential found gangway doing so).
    let mut c = two_nodes();
    c.add_bound(&pod("a", 600, 100).with_node("n1")).unwrap();
    c.remove_node("n1").unwrap();
    c.add_node(Node::new("n1", Resources::new(1000, 1000)))
        .unwrap();
    let n1 = c.node("n1").unwrap();
    assert_eq!(n1.requested().cpu_millis, 600, "a is on it again");
    assert!(c
        .add_node(Node::new("n1", Resources::new(1000, 1000)))
        .is_err());
    c.check().unwrap();
}

#[test]
fn assume_errors_change_nothing() {
    let mut c = two_nodes();
    let a = pod("a", 1000, 1000);
    let err = c.assume(&a, "n9").unwrap_err();
    assert_eq!(
        err,
        AssumeError::UnknownNode {
            pod: id("a"),
            node: "n9".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "pod a cannot be assumed on unknown node n9"
    );
    assert_eq!(c, two_nodes());

    c.assume(&a, "n1").unwrap();
    let before = c.clone();
    let err = c.assume(&a, "n2").unwrap_err();
    assert_eq!(err.to_string(), "pod a is already assumed on node n1");
    assert!(matches!(err, AssumeError::AlreadyAssumed { .. }));
    c.finish_binding(a.id()).unwrap();
    let err = c.assume(&a, "n1").unwrap_err();
    assert_eq!(
        err,
        AssumeError::AlreadyBound {
            pod: id("a"),
            node: "n1".into()
        }
    );
    assert_eq!(err.to_string(), "pod a is already bound to node n1");
    assert_eq!(requested(&c, "n1"), requested(&before, "n1"));
    assert_eq!(requested(&c, "n2"), Resources::ZERO);
    c.check().unwrap();
}

#[test]
fn assume_does_not_check_fit() {
    let mut c = two_nodes();
    c.assume(&pod("huge", 9000, 9000), "n2").unwrap();
    assert_eq!(requested(&c, "n2"), res(9000, 9000));
    assert_eq!(c.node("n2").unwrap().free(), Resources::ZERO);
    c.check().unwrap();
}

#[test]
fn assume_forget_releases_the_reservation() {
    let mut c = two_nodes();
    let a = pod("a", 1000, 2000);
    c.assume(&a, "n1").unwrap();
    c.check().unwrap();
    assert_eq!(c.phase(a.id()), Some(PodPhase::Assumed));
    assert_eq!(c.pod_node(a.id()), Some("n1"));
    assert_eq!(c.pod_requests(a.id()), Some(&res(1000, 2000)));
    assert_eq!(requested(&c, "n1"), res(1000, 2000));
    assert_eq!((c.assumed_count(), c.bound_count()), (1, 0));

    assert_eq!(c.forget(a.id()).as_deref(), Some("n1"));
    c.check().unwrap();
    assert_eq!(requested(&c, "n1"), Resources::ZERO);
    assert_eq!(c.phase(a.id()), None);
    assert_eq!(c.pod_node(a.id()), None);
    assert_eq!(c, two_nodes());
    // Forgetting again, or an unknown pod, is a no-op.
    assert_eq!(c.forget(a.id()), None);
    assert_eq!(c.forget(&id("zz")), None);
    // It can be assumed again afterwards, elsewhere.
    c.assume(&a, "n2").unwrap();
    assert_eq!(requested(&c, "n2"), res(1000, 2000));
    c.check().unwrap();
}

#[test]
fn forget_leaves_a_bound_pod_alone() {
    let mut c = two_nodes();
    let a = pod("a", 1000, 1000);
    c.assume(&a, "n1").unwrap();
    c.finish_binding(a.id()).unwrap();
    c.check().unwrap();
    assert_eq!(c.forget(a.id()), None);
    assert_eq!(c.phase(a.id()), Some(PodPhase::Bound));
    assert_eq!(requested(&c, "n1"), res(1000, 1000));
    assert_eq!((c.assumed_count(), c.bound_count()), (0, 1));
    c.check().unwrap();
}

#[test]
fn finish_binding_errors() {
    let mut c = two_nodes();
    let err = c.finish_binding(&id("a")).unwrap_err();
    assert_eq!(err, FinishBindingError::UnknownPod(id("a")));
    assert_eq!(err.to_string(), "pod a is not assumed");
    c.assume(&pod("a", 1, 1), "n2").unwrap();
    c.finish_binding(&id("a")).unwrap();
    c.check().unwrap();
    let err = c.finish_binding(&id("a")).unwrap_err();
    assert_eq!(
        err,
        FinishBindingError::AlreadyBound {
            pod: id("a"),
            node: "n2".into()
        }
    );
    assert_eq!(err.to_string(), "pod a is already bound to node n2");
    assert_eq!(c.assumed().count(), 0);
    c.check().unwrap();
}

#[test]
fn add_bound_errors_change_nothing() {
    let mut c = two_nodes();
    c.assume(&pod("a", 100, 100), "n1").unwrap();
    let before = c.clone();
    let err = c.add_bound(&pod("a", 100, 100)).unwrap_err();
    assert_eq!(err, AddBoundError::NoNode(id("a")));
    assert_eq!(err.to_string(), "pod a names no node");
    let err = c
        .add_bound(&pod("a", 100, 100).with_node("n9"))
        .unwrap_err();
    assert_eq!(
        err,
        AddBoundError::UnknownNode {
            pod: id("a"),
            node: "n9".into()
        }
    );
    assert_eq!(err.to_string(), "pod a is bound to unknown node n9");
    assert_eq!(c, before);
    c.check().unwrap();
}

#[test]
fn add_bound_confirms_moves_or_records_a_pod() {
    let mut c = two_nodes();
    // Unknown pod: recorded bound.
    c.add_bound(&pod("x", 500, 500).with_node("n2")).unwrap();
    c.check().unwrap();
    assert_eq!(c.phase(&id("x")), Some(PodPhase::Bound));
    assert_eq!(requested(&c, "n2"), res(500, 500));

    // Assumed on the same node: becomes bound, reservation unchanged.
    c.assume(&pod("a", 1000, 1000), "n1").unwrap();
    c.add_bound(&pod("a", 1000, 1000).with_node("n1")).unwrap();
    c.check().unwrap();
    assert_eq!(c.phase(&id("a")), Some(PodPhase::Bound));
    assert_eq!(requested(&c, "n1"), res(1000, 1000));
    assert_eq!(c.assumed_count(), 0);

    // Already bound there: a no-op.
    let before = c.clone();
    c.add_bound(&pod("a", 1000, 1000).with_node("n1")).unwrap();
    assert_eq!(c, before);

    // Assumed elsewhere: moves, releasing the old reservation.
    c.assume(&pod("b", 300, 300), "n1").unwrap();
    c.add_bound(&pod("b", 300, 300).with_node("n2")).unwrap();
    c.check().unwrap();
    assert_eq!(c.pod_node(&id("b")), Some("n2"));
    assert_eq!(requested(&c, "n1"), res(1000, 1000));
    assert_eq!(requested(&c, "n2"), res(800, 800));

    // Observed with other requests: the observation wins.
    c.add_bound(&pod("b", 100, 0).with_node("n2")).unwrap();
    c.check().unwrap();
    assert_eq!(requested(&c, "n2"), res(600, 500));
    assert_eq!(c.bound_count(), 3);
}

#[test]
fn add_bound_may_overcommit_a_node() {
    let mut c = two_nodes();
    c.add_bound(&pod("a", 1500, 1500).with_node("n2")).unwrap();
    c.add_bound(&pod("b", 1500, 1500).with_node("n2")).unwrap();
    c.check().unwrap();
    let n2 = c.node("n2").unwrap();
    assert_eq!(n2.requested(), &res(3000, 3000));
    assert_eq!(n2.free(), Resources::ZERO);
}

#[test]
fn remove_pod_releases_assumed_and_bound_pods() {
    let mut c = two_nodes();
    c.assume(&pod("a", 100, 200), "n1").unwrap();
    c.assume(&pod("b", 300, 400), "n1").unwrap();
    c.finish_binding(&id("b")).unwrap();
    c.check().unwrap();
    assert_eq!(
        c.remove_pod(&id("a")),
        Some(RemovedPod {
            node: "n1".into(),
            phase: PodPhase::Assumed
        })
    );
    c.check().unwrap();
    assert_eq!(requested(&c, "n1"), res(300, 400));
    assert_eq!(
        c.remove_pod(&id("b")),
        Some(RemovedPod {
            node: "n1".into(),
            phase: PodPhase::Bound
        })
    );
    c.check().unwrap();
    assert_eq!(c.remove_pod(&id("b")), None);
    assert_eq!(c, two_nodes());
}

#[test]
fn saturated_sums_are_recomputed_on_release() {
    let mut c = two_nodes();
    c.add_bound(&pod("a", u64::MAX, 10).with_node("n1"))
        .unwrap();
    c.add_bound(&pod("b", 5, 10).with_node("n1")).unwrap();
    c.check().unwrap();
    assert_eq!(requested(&c, "n1"), res(u64::MAX, 20));
    c.remove_pod(&id("b")).unwrap();
    c.check().unwrap();
    assert_eq!(requested(&c, "n1"), res(u64::MAX, 10));
    c.remove_pod(&id("a")).unwrap();
    c.check().unwrap();
    assert_eq!(requested(&c, "n1"), Resources::ZERO);
}

#[test]
fn a_gang_is_assumed_then_half_bound_then_released() {
    let mut c = two_nodes();
    let gang: Vec<Pod> = (0..4).map(|i| pod(&format!("g{i}"), 1000, 1000)).collect();
    for (i, p) in gang.iter().enumerate() {
        c.assume(p, if i % 2 == 0 { "n1" } else { "n2" }).unwrap();
        c.check().unwrap();
    }
    assert_eq!(c.assumed_count(), 4);
    c.finish_binding(gang[0].id()).unwrap();
    c.check().unwrap();
    // The attempt fails: the still-assumed members are forgotten; the bound one stays.
    let assumed: Vec<PodId> = c.assumed().cloned().collect();
    assert_eq!(assumed, [id("g1"), id("g2"), id("g3")]);
    for p in &assumed {
        assert!(c.forget(p).is_some());
        c.check().unwrap();
    }
    assert_eq!(requested(&c, "n1"), res(1000, 1000));
    assert_eq!(requested(&c, "n2"), Resources::ZERO);
    assert_eq!((c.assumed_count(), c.bound_count()), (0, 1));
}

#[test]
fn check_finds_a_node_whose_reservations_miss_a_pod() {
    // The witness: a pod placed without its requests being added breaks I5, and check says so.
    let mut c = two_nodes();
    c.assume(&pod("a", 100, 100), "n1").unwrap();
    c.place_unaccounted(&pod("b", 200, 200), "n1");
    let err = c.check().unwrap_err();
    assert!(err.contains("node n1"), "{err}");
    assert!(err.contains("(I5)"), "{err}");
    // A zero-request pod placed the same way is consistent: the check is not trigger-happy.
    let mut c = two_nodes();
    c.place_unaccounted(&pod("z", 0, 0), "n1");
    c.check().unwrap();
}

#[test]
fn check_finds_a_pod_naming_the_wrong_or_an_unknown_node() {
    let mut c = two_nodes();
    c.assume(&pod("a", 100, 100), "n1").unwrap();
    c.rename_pod_node(&id("a"), "n2");
    let err = c.check().unwrap_err();
    assert!(
        err.contains("pod a names node n2 but is not on it"),
        "{err}"
    );
    c.rename_pod_node(&id("a"), "n9");
    let err = c.check().unwrap_err();
    assert!(err.contains("pod a is on unknown node n9"), "{err}");
}

#[test]
fn the_locked_cache_delegates_and_clones_share_state() {
    let cache = Cache::new();
    let other = cache.clone();
    cache.add_node(Node::new("n1", res(1000, 1000))).unwrap();
    assert!(other.add_node(Node::new("n1", res(1, 1))).is_err());
    assert!(other.remove_node("n9").is_err());
    let a = pod("a", 400, 400);
    other.assume(&a, "n1").unwrap();
    assert!(cache.assume(&a, "n1").is_err());
    assert_eq!(cache.phase(a.id()), Some(PodPhase::Assumed));
    assert_eq!(cache.pod_node(a.id()).as_deref(), Some("n1"));
    assert_eq!(cache.with(|s| s.node("n1").unwrap().free()), res(600, 600));
    cache.finish_binding(a.id()).unwrap();
    assert!(cache.finish_binding(a.id()).is_err());
    assert_eq!(cache.forget(a.id()), None);
    let d = pod("d", 10, 10);
    cache.assume(&d, "n1").unwrap();
    assert_eq!(other.forget(d.id()).as_deref(), Some("n1"), "assumed there");
    cache.check().unwrap();
    let b = pod("b", 100, 100).with_node("n1");
    cache.add_bound(&b).unwrap();
    assert!(cache.add_bound(&pod("c", 0, 0)).is_err());
    assert_eq!(
        cache.remove_pod(a.id()).map(|r| r.phase),
        Some(PodPhase::Bound)
    );
    let snap = other.snapshot();
    assert_eq!(snap.bound_count(), 1);
    let on_it = cache.with_mut(|s| s.remove_node("n1")).unwrap();
    assert_eq!(on_it, [id("b")]);
    assert_eq!(Cache::from_state(snap).with(|s| s.node_count()), 1);
    other.check().unwrap();
    assert!(format!("{cache:?}").starts_with("Cache"));
}

#[test]
fn update_node_keeps_the_pods_and_says_whether_anything_changed() {
    use crate::{Taint, TaintEffect};
    let mut c = two_nodes();
    c.assume(&pod("a", 1000, 1000), "n1").unwrap();
    let cordoned = Node::new("n1", res(4000, 4000)).with_taint(Taint::new(
        "node.kubernetes.io/unschedulable",
        "",
        TaintEffect::NoSchedule,
    ));
    assert_eq!(c.update_node(cordoned.clone()), Ok(true));
    assert_eq!(
        c.update_node(cordoned),
        Ok(false),
        "a resync changes nothing"
    );
    let view = c.node("n1").unwrap();
    assert_eq!(view.taints().len(), 1);
    assert_eq!(view.pods().collect::<Vec<_>>(), [&id("a")]);
    assert_eq!(requested(&c, "n1"), res(1000, 1000));
    // Shrunk below what is assumed: overcommitted, still accounted (I5).
    let shrunk = Node::new("n1", res(500, 500)).with_label("zone", "b");
    assert_eq!(c.update_node(shrunk), Ok(true));
    assert_eq!(c.node("n1").unwrap().free(), Resources::ZERO);
    assert_eq!(c.node("n1").unwrap().labels().get("zone"), Some("b"));
    c.check().unwrap();
    let unknown = Node::new("n9", res(1, 1));
    let err = c.update_node(unknown.clone()).unwrap_err();
    assert_eq!(err.to_string(), "unknown node n9");
    assert_eq!(err.into_node(), unknown);
}

/// The planted `BindFailureReleasesTwice`'s second release takes a pod's requests off its node
/// again though the pod is still there: I5 broken, and the check says so. (Issue #43: only its
/// witnesses, in later tiers, ran it.)
#[cfg(feature = "checking")]
#[test]
fn the_planted_second_release_takes_the_requests_off_again() {
    let mut c = two_nodes();
    c.add_bound(&pod("a", 100, 10).with_node("n1")).unwrap();
    c.add_bound(&pod("b", 5, 5).with_node("n1")).unwrap();
    c.release_again("n1", &res(100, 10));
    assert_eq!(requested(&c, "n1"), res(5, 5));
    assert!(c.check().is_err(), "I5 broken");
    c.release_again("absent", &res(1, 1));
}

/// A pod on the node it names and also on another: the per-pod pass finds nothing wrong (it is
/// on its own node), and the per-node pass finds it on the other (I5). The locked cache's check
/// is the state's.
#[test]
fn check_finds_a_pod_on_a_second_node_too() {
    let mut c = two_nodes();
    c.assume(&pod("a", 100, 100), "n1").unwrap();
    let n2 = c.nodes.get_mut("n2").unwrap();
    crate::sync::Arc::make_mut(&mut n2.pods).insert(id("a"));
    n2.requested = res(100, 100);
    let err = c.check().unwrap_err();
    assert!(
        err.contains("pod a is on node n2 but names node n1"),
        "{err}"
    );
    assert_eq!(Cache::from_state(c).check(), Err(err));
}
