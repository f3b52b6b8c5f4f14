#![cfg(not(loom))]
//! Conformance: kube-scheduler's GangScheduling unit tests, re-expressed as tables of data run
//! by one driver each, against [`gangsched::GangScheduling`].
//!
//! Tests ported from kube-scheduler and rewritten as tables for gangway:
//!
//! - `TestGangSchedulingFlow` → [`FLOW`], run by [`run_flow`] in `Mode::Upstream` (the upstream
//!   behaviour) and again in `Mode::Hardened` with the same expectations: the modes differ only
//!   in races and failures, never in these sequential cases.
//! - `Test_isSchedulableAfterPodAdded`, `Test_isSchedulableAfterPodGroupAdded`,
//!   `Test_isSchedulableAfterPodGroupUpdated` → [`POD_ADDED`], [`GROUP_ADDED`],
//!   [`GROUP_UPDATED`], run by [`run_hints`].
//!
//! Adaptations:
//!
//! - Pods and PodGroups are gangway's [`Pod`] and [`PodGroup`]: a pod's uid is its name (as in
//!   the upstream fixtures), and it has no node name and no workload reference. Filling the
//!   PodGroup informer store and the cache (`AddPodGroupMember`) becomes `on_group_added` and
//!   `on_pod_added(pod, false)`; the pod under test is added as a member too, as upstream's
//!   `cache.AddPodGroupMember(tt.pod)`.
//! - Upstream assumes each of `podsWaitingOnPermit` in the cache and calls Permit, expecting
//!   `Wait`; the framework, not the plugin, would then park it, and the test never does, so
//!   its "allowed pods are gone from the waiting map" check holds vacuously. Here each of them
//!   is `reserve`d and `permit`ted, gangway's Permit parks it in the waiting map itself, and
//!   the check is real: an allowed pod has left the map and its `WaitingPod::decision()` is
//!   `Success`, while every other waiting pod (the other gang's) still waits.
//! - Upstream's Permit `Wait` status ("waiting for minCount pods from a gang to be
//!   scheduled") has no gangway counterpart: `Permit::Wait` carries the pod's `WaitingPod`
//!   instead. The table asserts the `Wait` variant, that the pod is in the waiting map and that
//!   its `pending_plugins()` is `["GangScheduling"]`. A `nil` status is `Status::success()`
//!   for PreEnqueue and `Permit::Allow` for Permit.
//! - Upstream returns right after a `Wait`, so its `wantActivatedPods` is never compared; here
//!   the activated pods (`Permit::Wait::activate`) are compared in every case (an `Allow`
//!   activates nothing).
//! - Upstream's `wantAllowedPods` lists `p1, p2, p3`, `p1` being the pod under test; here the
//!   pod under test's outcome is the `permit` column, and `allowed` lists the waiting siblings
//!   it allowed (`p2, p3`).
//! - Composite pod groups (every "CPG" case and the `isCompositePodGroupEnabled` variants) are
//!   left out: gangway has none. The row run during a pod-group scheduling cycle
//!   (`isDuringPodGroupSchedulingCycle`) is ported in `conformance_pod_group.rs` instead, through
//!   a `Scheduler` in `GangCycle::PodGroup`: gangway asks the gang's quorum on the snapshot
//!   inside that cycle, not through a public Permit call.
//! - The queueing hints are `GangScheduling::queueing_hint` on a `GangEvent`; upstream's
//!   `mockPodGroupManager` and informer objects are not needed, as the hints read only the
//!   pod and the event. "add a newPod with NodeName set" is the same `PodAdded` event (one
//!   event covers unscheduled and assigned pods). Fixtures without a namespace upstream are
//!   given `default` here (`PodGroup::new` refuses an empty namespace).
//! - The PreEnqueue message is 1.36's, `pods's` included (master has since changed it to
//!   `pod's`).
//! - Two PodGroup-update rows marked "(gangway)" are not upstream's: gang → Basic and Basic →
//!   gang, both `QueueSkip` under the same rule ("both gangs and the min count lowered").
//!
//! Source:
//!   - kubernetes/kubernetes, `pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go`:
//!     the 1.36 version (`scheduling/v1alpha2` PodGroup API, Permit still in the plugin) for
//!     `TestGangSchedulingFlow` and the PodAdded / PodGroupAdded hints; later master (commit
//!     `03789157`, `scheduling/v1beta1`) for `Test_isSchedulableAfterPodGroupUpdated` and the
//!     "newPod with NodeName set" row, which the 1.36 file does not have.
//!
//! Copyright & License:
//!   - Copyright 2025 The Kubernetes Authors
//!   - Apache License, Version 2.0
//!   - http://www.apache.org/licenses/LICENSE-2.0

use std::collections::BTreeMap;

use gangsched::gang::{GangEvent, GANG_SCHEDULING};
use gangsched::{
    GangScheduling, Mode, Permit, Pod, PodGroup, Policy, QueueingHint, Status, Time, WaitingPod,
    WaitingPods,
};
use gangway_tests::gang_flow::{group, pod, FlowCase, WantPermit, FLOW};

// ---------------------------------------------------------------------------------------------
// TestGangSchedulingFlow
// ---------------------------------------------------------------------------------------------

fn check(gang: &GangScheduling, ctx: &str) {
    if let Err(e) = gang.registry().snapshot().check() {
        panic!("{ctx}: groups: {e}");
    }
    if let Err(e) = gangsched::checking::waiting_state(gang.waiting()).check() {
        panic!("{ctx}: waiting map: {e}");
    }
}

fn names(pods: &[Pod]) -> Vec<&str> {
    pods.iter().map(Pod::name).collect()
}

/// Asserts that `handle`'s pod is parked in `gang`'s waiting map for GangScheduling only.
fn assert_waiting(gang: &GangScheduling, handle: &WaitingPod, ctx: &str) {
    let name = handle.pod().name();
    assert!(
        gang.waiting().get(handle.id()).is_some(),
        "{ctx}: {name} is in the waiting map"
    );
    assert_eq!(handle.decision(), None, "{ctx}: {name} is undecided");
    assert_eq!(
        handle.pending_plugins(),
        [GANG_SCHEDULING],
        "{ctx}: {name} waits for GangScheduling only"
    );
}

/// Runs one row of [`FLOW`] in `mode`: builds the cluster, runs PreEnqueue on the pod under
/// test, parks the waiting pods, runs Reserve + Permit on the pod under test and compares
/// every column.
fn run_flow(mode: Mode, case: &FlowCase) {
    let ctx = format!("{mode:?}: {}", case.name);
    let gang = GangScheduling::new(mode, WaitingPods::new());
    for name in case.groups {
        gang.on_group_added(group(name)).unwrap();
    }
    for name in case.pods.iter().chain([&case.pod]) {
        gang.on_pod_added(pod(name), false).unwrap();
    }
    check(&gang, &ctx);

    let under_test = pod(case.pod);
    let pre_enqueue = gang.pre_enqueue(&under_test);
    assert_eq!(pre_enqueue, case.pre_enqueue.status(), "{ctx}: PreEnqueue");
    if !pre_enqueue.is_success() {
        assert_eq!(case.permit, None, "{ctx}: a gated pod never reaches Permit");
        return;
    }

    // Other pods have already reached Permit and wait there.
    let mut parked: BTreeMap<&str, WaitingPod> = BTreeMap::new();
    for name in case.waiting {
        let p = pod(name);
        gang.reserve(&p).unwrap();
        match gang.permit(&p, Time::ZERO) {
            Permit::Wait { waiting, .. } => {
                parked.insert(*name, waiting);
            }
            other => panic!("{ctx}: {name} should wait at Permit, got {other:?}"),
        }
    }
    check(&gang, &ctx);

    gang.reserve(&under_test).unwrap();
    let permit = gang.permit(&under_test, Time::ZERO);
    let want = case
        .permit
        .expect("PreEnqueue passed, so the case wants a Permit outcome");
    match (want, permit) {
        (WantPermit::Allow, Permit::Allow) => {
            assert!(case.activated.is_empty(), "{ctx}: Allow activates nothing");
            assert!(gang.waiting().get(under_test.id()).is_none());
        }
        (
            WantPermit::Wait,
            Permit::Wait {
                waiting, activate, ..
            },
        ) => {
            assert_eq!(
                names(&gang.activated(&activate)),
                case.activated,
                "{ctx}: activated pods"
            );
            assert_eq!(waiting.id(), under_test.id());
            assert_waiting(&gang, &waiting, &ctx);
        }
        (WantPermit::Reject(code), Permit::Reject { status, .. }) => {
            assert_eq!(status.code(), code, "{ctx}: Permit rejection {status}");
        }
        (want, got) => panic!("{ctx}: Permit: want {want:?}, got {got:?}"),
    }

    for name in case.allowed {
        assert!(
            parked.contains_key(name),
            "{ctx}: allowed {name} never waited"
        );
    }
    for (name, handle) in &parked {
        if case.allowed.contains(name) {
            assert!(
                gang.waiting().get(handle.id()).is_none(),
                "{ctx}: allowed {name} left the waiting map"
            );
            assert_eq!(
                handle.decision(),
                Some(Status::success()),
                "{ctx}: {name} allowed"
            );
        } else {
            assert_waiting(&gang, handle, &ctx);
        }
    }
    check(&gang, &ctx);
}

#[test]
fn gang_scheduling_flow_upstream() {
    for case in FLOW {
        run_flow(Mode::Upstream, case);
    }
}

#[test]
fn gang_scheduling_flow_hardened_matches_upstream() {
    for case in FLOW {
        run_flow(Mode::Hardened, case);
    }
}

// ---------------------------------------------------------------------------------------------
// Queueing hints
// ---------------------------------------------------------------------------------------------

/// A pod `name` in `ns`, naming `group` if any.
fn member(ns: &str, name: &str, group: Option<&str>) -> Pod {
    let pod = Pod::new(format!("{ns}/{name}"), ns, name);
    match group {
        Some(g) => pod.with_group(g),
        None => pod,
    }
}

fn gang_group(ns: &str, name: &str, min_count: u32) -> PodGroup {
    PodGroup::gang(ns, name, min_count).expect("valid fixture")
}

fn basic_group(ns: &str, name: &str) -> PodGroup {
    PodGroup::new(ns, name, Policy::Basic).expect("valid fixture")
}

/// A pod: (namespace, name, group).
type PodSpec = (&'static str, &'static str, Option<&'static str>);
/// A PodGroup: (namespace, name, min count; `None` for Basic).
type GroupSpec = (&'static str, &'static str, Option<u32>);

fn build_group((ns, name, min): GroupSpec) -> PodGroup {
    match min {
        Some(min) => gang_group(ns, name, min),
        None => basic_group(ns, name),
    }
}

/// `Test_isSchedulableAfterPodAdded`: (name, pod, new pod, hint).
const POD_ADDED: &[(&str, PodSpec, PodSpec, QueueingHint)] = &[
    (
        "add a newPod which matches the pod's scheduling group",
        ("default", "p", Some("pg")),
        ("default", "new", Some("pg")),
        QueueingHint::Queue,
    ),
    (
        "add a newPod with NodeName set which matches the pod's scheduling group",
        ("default", "p", Some("pg")),
        ("default", "bound", Some("pg")),
        QueueingHint::Queue,
    ),
    (
        "add a newPod which doesn't match the pod's namespace",
        ("default", "p", Some("pg")),
        ("foo", "new", Some("pg")),
        QueueingHint::QueueSkip,
    ),
    (
        "add a newPod which doesn't match the pod's pod group name",
        ("default", "p", Some("pg1")),
        ("default", "new", Some("pg2")),
        QueueingHint::QueueSkip,
    ),
];

/// `Test_isSchedulableAfterPodGroupAdded`: (name, pod, new group, hint).
const GROUP_ADDED: &[(&str, PodSpec, GroupSpec, QueueingHint)] = &[
    (
        "add a pod group which matches the pod's pod group name",
        ("default", "p", Some("pg")),
        ("default", "pg", Some(1)),
        QueueingHint::Queue,
    ),
    (
        "add a pod group which doesn't match the pod's scheduling group name",
        ("default", "p", Some("pg1")),
        ("default", "pg2", Some(1)),
        QueueingHint::QueueSkip,
    ),
    (
        "add a pod group which doesn't match the pod's scheduling group namespace",
        ("ns1", "p", Some("pg")),
        ("ns2", "pg", Some(1)),
        QueueingHint::QueueSkip,
    ),
];

/// `Test_isSchedulableAfterPodGroupUpdated`: (name, pod, old group, new group, hint).
const GROUP_UPDATED: &[(&str, PodSpec, GroupSpec, GroupSpec, QueueingHint)] = &[
    (
        "minCount decreased matches target pod",
        ("ns1", "p", Some("pg")),
        ("ns1", "pg", Some(4)),
        ("ns1", "pg", Some(3)),
        QueueingHint::Queue,
    ),
    (
        "update Basic policy",
        ("ns1", "p", Some("pg")),
        ("ns1", "pg", None),
        ("ns1", "pg", None),
        QueueingHint::QueueSkip,
    ),
    (
        "minCount increased matches target pod",
        ("ns1", "p", Some("pg")),
        ("ns1", "pg", Some(3)),
        ("ns1", "pg", Some(4)),
        QueueingHint::QueueSkip,
    ),
    (
        "minCount unchanged matches target pod",
        ("ns1", "p", Some("pg")),
        ("ns1", "pg", Some(3)),
        ("ns1", "pg", Some(3)),
        QueueingHint::QueueSkip,
    ),
    (
        "minCount decreased but pod group name doesn't match target pod",
        ("ns1", "p", Some("pg-other")),
        ("ns1", "pg", Some(4)),
        ("ns1", "pg", Some(3)),
        QueueingHint::QueueSkip,
    ),
    (
        "minCount decreased but pod group namespace doesn't match target pod",
        ("ns-other", "p", Some("pg")),
        ("ns1", "pg", Some(4)),
        ("ns1", "pg", Some(3)),
        QueueingHint::QueueSkip,
    ),
    (
        "pod without a scheduling group is skipped",
        ("ns1", "p", None),
        ("ns1", "pg", Some(4)),
        ("ns1", "pg", Some(3)),
        QueueingHint::QueueSkip,
    ),
    // Not upstream rows, but the same rule ("both gangs and the min count lowered"):
    (
        "gang becomes Basic (gangway)",
        ("ns1", "p", Some("pg")),
        ("ns1", "pg", Some(4)),
        ("ns1", "pg", None),
        QueueingHint::QueueSkip,
    ),
    (
        "Basic becomes a gang (gangway)",
        ("ns1", "p", Some("pg")),
        ("ns1", "pg", None),
        ("ns1", "pg", Some(1)),
        QueueingHint::QueueSkip,
    ),
];

/// Runs every hint table in `mode`; hints do not depend on the mode or on any state.
fn run_hints(mode: Mode) {
    let gang = GangScheduling::new(mode, WaitingPods::new());
    let spec = |(ns, name, group): PodSpec| member(ns, name, group);
    for &(name, p, new, want) in POD_ADDED {
        let got = gang.queueing_hint(&spec(p), GangEvent::PodAdded(&spec(new)));
        assert_eq!(got, want, "{mode:?}: pod added: {name}");
    }
    for &(name, p, new, want) in GROUP_ADDED {
        let new = build_group(new);
        let got = gang.queueing_hint(&spec(p), GangEvent::GroupAdded(&new));
        assert_eq!(got, want, "{mode:?}: pod group added: {name}");
    }
    for &(name, p, old, new, want) in GROUP_UPDATED {
        let (old, new) = (build_group(old), build_group(new));
        let event = GangEvent::GroupUpdated {
            old: &old,
            new: &new,
        };
        let got = gang.queueing_hint(&spec(p), event);
        assert_eq!(got, want, "{mode:?}: pod group updated: {name}");
    }
}

#[test]
fn queueing_hints_upstream() {
    run_hints(Mode::Upstream);
}

#[test]
fn queueing_hints_hardened() {
    run_hints(Mode::Hardened);
}
