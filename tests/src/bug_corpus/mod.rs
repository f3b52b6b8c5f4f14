//! The bug corpus: real gang-scheduling bugs from kube-scheduler and peer schedulers, each
//! planted in gangway's own code (behind the `checking` seam) and found by the checker that
//! should find it; the bugs `Mode::Upstream` reproduces as upstream behaviour; and the bugs
//! the suite cannot reproduce yet, with why. `docs/bug-corpus.md` is rendered from these
//! tables ([`render`]); `tests/tests/regression_bug_corpus.rs` holds the model checker's
//! finds and checks that every test named here exists and that the page is up to date.

pub mod model_checker;
mod render;

pub use render::render;

/// A real bug planted in gangway's own code.
#[derive(Clone, Copy, Debug)]
pub struct Bug {
    /// Its source's id, e.g. `kubernetes#138422`.
    pub id: &'static str,
    /// Its issue, pull request or commit.
    pub sources: &'static [&'static str],
    /// What went wrong there, and when.
    pub upstream: &'static str,
    /// The flaw planted in gangway's code, by its name in `gangsched::checking` (or, in the
    /// scheduler binary, the `faults` feature's flag that plants it).
    pub flaw: &'static str,
    /// What the flaw does in gangway, and how faithful it is to the source.
    pub planted: &'static str,
    /// The invariant it breaks.
    pub breaks: &'static str,
    /// The checkers that find it, each with the test that shows it.
    pub found_by: &'static [Find],
}

/// A checker finding a bug, and the test that shows it.
#[derive(Clone, Copy, Debug)]
pub struct Find {
    /// The checker and where it looks (preset, mode, gang cycle).
    pub checker: &'static str,
    /// The test: `path::function`.
    pub test: &'static str,
}

/// A real bug `Mode::Upstream` reproduces as the behaviour of the release it follows: no flaw
/// to plant, the checker finds it in the mode itself.
#[derive(Clone, Copy, Debug)]
pub struct UpstreamBug {
    /// Its source's id.
    pub id: &'static str,
    /// Its issue or pull request.
    pub sources: &'static [&'static str],
    /// What went wrong there.
    pub upstream: &'static str,
    /// The checker that finds it in `Mode::Upstream`, and what Hardened does instead.
    pub found_by: Find,
    /// Why Hardened cannot.
    pub hardened: &'static str,
}

/// A real bug the suite cannot reproduce yet: a finding, with what closes it.
#[derive(Clone, Copy, Debug)]
pub struct Gap {
    /// Its source's id.
    pub id: &'static str,
    /// Its issue or pull request.
    pub sources: &'static [&'static str],
    /// What went wrong there.
    pub upstream: &'static str,
    /// Why gangway's code has nowhere to plant it, or no checker finds it yet, and what
    /// closes the gap.
    pub why: &'static str,
}

/// The corpus: real bugs planted in gangway's own code, each found.
pub const BUGS: &[Bug] = &[
    Bug {
        id: "kubernetes#88179",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/88179",
            "https://github.com/kubernetes/kubernetes/pull/88199",
        ],
        upstream: "Permit ran in the binding goroutine, so the scheduling thread could run a \
                   sibling's Permit, which allows the waiting pods it finds, before the pod \
                   that returned Wait was in the waiting map: that pod was never allowed \
                   (fixed in 1.18 by running Permit at the end of the scheduling cycle).",
        flaw: "Flaw::RecordsAfterPermit",
        planted: "The same window on gangway's own record: the scheduling cycle records what \
                  the binding cycle needs only after Permit, so a decision that comes at once \
                  (a timeout, a sibling's failure) finds nothing to act on.",
        breaks: "I6, I8",
        found_by: &[
            Find {
                checker: "model checker: small, Hardened, Permit barrier",
                test: "tests/tests/regression_bug_corpus.rs::kubernetes_88179_a_decision_before_the_record_is_lost",
            },
            Find {
                checker: "loom: a sibling's registration vs the timeout vs the binding worker",
                test: "tests/tests/loom_binding_cycle.rs::witness_b_recording_after_permit_strands_a_reservation",
            },
        ],
    },
    Bug {
        id: "kubernetes#138422",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/138422",
            "https://github.com/kubernetes/kubernetes/pull/138445",
        ],
        upstream: "When an assumed member got a deletion timestamp, the cache's ForgetPod put \
                   it back among its group's unscheduled pods, where it was counted until its \
                   Delete event (fixed by PR #138445's RemoveAssumedPod).",
        flaw: "GangFlaw::ForgetRestoresDeletedMember",
        planted: "The Unreserve of a member deleted while assumed puts it back among its \
                  group's unscheduled pods.",
        breaks: "I4",
        found_by: &[Find {
            checker: "model checker: small, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_138422_a_deleted_assumed_member_is_counted_on",
        }],
    },
    Bug {
        id: "kubernetes PR #137804",
        sources: &[
            "https://github.com/kubernetes/kubernetes/pull/137804",
            "https://github.com/kubernetes/kubernetes/issues/137803",
        ],
        upstream: "PR #137073 left the pod-group state's mutators without the state's lock: \
                   the cache wrote the group's pod sets while the scheduling cycle read them \
                   through locked getters (a data race the -race canary caught; fixed two \
                   days later, in no release).",
        flaw: "Flaw::CommitTrustsTheSnapshot",
        planted: "Safe Rust rejects the data race itself; the nearest race it allows is the \
                  cycle acting on a view of the group that a concurrent change has made \
                  stale: the pod-group cycle admits the gang its snapshot found feasible \
                  without checking the quorum again on the real state.",
        breaks: "I3",
        found_by: &[
            Find {
                checker: "model checker: small, Hardened, pod-group cycle",
                test: "tests/tests/regression_bug_corpus.rs::kubernetes_pr_137804_the_cycle_acts_on_a_stale_view_of_the_group",
            },
            Find {
                checker: "loom: the cycle's commit vs a member's delete",
                test: "tests/tests/loom_pod_group.rs::witness_a2_commit_trusting_the_snapshot_admits_a_partial_gang",
            },
        ],
    },
    Bug {
        id: "kubernetes PR #139418",
        sources: &["https://github.com/kubernetes/kubernetes/pull/139418"],
        upstream: "DRA: a claim's reservation count was decremented in PreBind's failure path \
                   and again in Unreserve, dropping the entry while a sibling still needed it \
                   (in 1.36.3; fixed in 1.37).",
        flaw: "Flaw::BindFailureReleasesTwice",
        planted: "A failed bind takes the pod's requests off its node twice: the failure \
                  path's release and the Unreserve's.",
        breaks: "I5",
        found_by: &[Find {
            checker: "model checker: small, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_pr_139418_a_failed_bind_releases_twice",
        }],
    },
    Bug {
        id: "kubernetes#84554",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/84554",
            "https://github.com/kubernetes/kubernetes/pull/84578",
        ],
        upstream: "A pod deleted while it waited at Permit stayed in the waiting-pods map, \
                   holding its reservation until its timeout (fixed in 1.17: the delete \
                   handler rejects the waiting pod).",
        flaw: "Flaw::DeleteLeavesPodWaiting",
        planted: "The delete marks the pod deleted but leaves it in the waiting map. Hardened \
                  masks it for a gang's member: the delete fails the gang's attempt, which \
                  rejects every waiting member, the deleted one included (H1).",
        breaks: "I6",
        found_by: &[Find {
            checker: "model checker: small, Upstream, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_84554_a_deleted_pod_keeps_waiting",
        }],
    },
    Bug {
        id: "kubernetes#96478",
        sources: &["https://github.com/kubernetes/kubernetes/issues/96478"],
        upstream: "Rejecting a waiting pod (a preemption victim) failed its binding cycle \
                   through a path that announced no assigned-pod delete, so the pod waiting \
                   for its room was not moved and waited for the flush.",
        flaw: "Flaw::ReleaseAnnouncesNothing",
        planted: "A rejected pod's binding cycle frees its room without announcing it.",
        breaks: "I7",
        found_by: &[Find {
            checker: "model checker: medium, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_96478_a_release_wakes_nobody",
        }],
    },
    Bug {
        id: "kubernetes PR #73309",
        sources: &["https://github.com/kubernetes/kubernetes/pull/73309"],
        upstream: "A global 'move request received' flag, cleared by any Pop, stood for 'an \
                   event came during this pod's attempt': another pod's Pop erased it before \
                   the failing pod came back, and it parked until an unrelated event or the \
                   flush (fixed in 2019, cherry-picked to 1.12 and 1.13).",
        flaw: "QueueFlaw::ForgetsEventsInFlight",
        planted: "A pod handed back after its attempt ignores the cluster events recorded \
                  while it was in flight: the same lost event, on gangway's per-pod log.",
        breaks: "I7",
        found_by: &[
            Find {
                checker: "proptest: the queue in lockstep with the reference model, 10 seeds",
                test: "tests/tests/prop_bug_corpus.rs::kubernetes_pr_73309_an_event_during_the_attempt_is_lost",
            },
            Find {
                checker: "cargo-fuzz queue_moves (differential against the reference model): its committed witness",
                test: "fuzz/src/queue_moves/tests.rs::queue_moves_witnesses_find_their_planted_flaws",
            },
        ],
    },
    Bug {
        id: "kubernetes-sigs/scheduler-plugins PR #957",
        sources: &[
            "https://github.com/kubernetes-sigs/scheduler-plugins/pull/957",
            "pfnet/scheduler-plugins PR #7 (commit f1406bd)",
        ],
        upstream: "Coscheduling's Permit wrote the group's assigned-pod set holding only the \
                   read lock (pfnet's PreFilter read the gang's pod map with no lock at all), \
                   racing the event handlers: a quorum computed on a half-updated member set.",
        flaw: "GangFlaw::LooksThenRegisters",
        planted: "Safe Rust rejects the unlocked access; the race it allows is the look and \
                  the write in two critical sections: Hardened Permit looks at the group in \
                  one and registers the pod in another, and a change that makes the group a \
                  gang falls between them.",
        breaks: "I3",
        found_by: &[Find {
            checker: "loom: a member's Permit vs its group becoming a gang",
            test: "tests/tests/loom_group_becomes_a_gang.rs::witness_a_looking_then_registering_is_found",
        }],
    },
    Bug {
        id: "kubernetes PR #135854",
        sources: &["https://github.com/kubernetes/kubernetes/pull/135854"],
        upstream: "A bind that fails after the gang passed Permit leaves the gang partly \
                   bound: an acknowledged gap (the integration test that shows it is parked), \
                   open in 1.36 and 1.37.",
        flaw: "Flaw::ShortGangKeepsBinding",
        planted: "Hardened's fix taken out: a pod-group gang left short of its quorum while \
                  it binds keeps its other members binding.",
        breaks: "I9",
        found_by: &[Find {
            checker: "model checker: small, Hardened, pod-group cycle",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_pr_135854_a_short_gang_keeps_binding",
        }],
    },
    Bug {
        id: "YUNIKORN-2953",
        sources: &[
            "https://issues.apache.org/jira/browse/YUNIKORN-2953",
            "apache/yunikorn-core commit 6ef347b3",
        ],
        upstream: "On a gang's placeholder timeout, the allocated placeholders were released \
                   twice, once as asks and once as allocations (fixed in 2024).",
        flaw: "Flaw::TimeoutReleasesTwice",
        planted: "A pod whose Permit wait timed out has its reservation taken off its node \
                  twice by its binding cycle.",
        breaks: "I5",
        found_by: &[Find {
            checker: "model checker: tiny, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::yunikorn_2953_a_timeout_releases_twice",
        }],
    },
    Bug {
        id: "kubernetes#118226",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/118226",
            "https://github.com/kubernetes/kubernetes/pull/125578",
        ],
        upstream: "An update of a pod being scheduled found it in none of activeQ, backoffQ \
                   and unschedulablePods, and added it to activeQ: in flight and queued at \
                   once, popped a second time (fixed by recording the update as an event of \
                   the attempt, PR #125578).",
        flaw: "QueueFlaw::UpdateQueuesPodInFlight",
        planted: "The queue's update of a pod in flight adds it to the active queue.",
        breaks: "I4",
        found_by: &[Find {
            checker: "proptest: the queue in lockstep with the reference model, 10 seeds",
            test: "tests/tests/prop_bug_corpus.rs::kubernetes_118226_an_update_queues_a_pod_in_flight",
        }],
    },
    Bug {
        id: "kubernetes PR #120334",
        sources: &["https://github.com/kubernetes/kubernetes/pull/120334"],
        upstream: "A pod's UnschedulablePlugins were never cleared between attempts: after a \
                   rejection by X, an attempt that failed with a transient error parked the \
                   pod as unschedulable by X, waiting for an event that was not coming, until \
                   the flush.",
        flaw: "QueueFlaw::KeepsStaleRejectors",
        planted: "A pop keeps the rejectors of the pod's last attempt.",
        breaks: "I7",
        found_by: &[Find {
            checker: "proptest: the queue in lockstep with the reference model, 10 seeds",
            test: "tests/tests/prop_bug_corpus.rs::kubernetes_pr_120334_stale_rejectors_park_a_failed_pod",
        }],
    },
    Bug {
        id: "kubernetes PR #119785",
        sources: &["https://github.com/kubernetes/kubernetes/pull/119785"],
        upstream: "A rejection at WaitOnPermit was returned as it was, so the rejecting plugin \
                   was not recorded: the pod was retried after a backoff whatever happened, \
                   ignoring that plugin's events (fixed in 1.29).",
        flaw: "Flaw::WaitRejectionForgetsItsPlugin",
        planted: "A pod rejected while it waited at Permit goes back to the queue without \
                  the plugin that rejected it.",
        breaks: "fidelity to v1.36.3",
        found_by: &[Find {
            checker: "the driver differential against kube-scheduler v1.36.3's ScheduleOne, on its recorded traces",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_pr_119785_a_rejection_at_wait_on_permit_forgets_its_plugin",
        }],
    },
    Bug {
        id: "kubernetes PR #135719",
        sources: &["https://github.com/kubernetes/kubernetes/pull/135719"],
        upstream: "Preemption stopped a victim waiting at Permit with Reject, which the \
                   executor trusted unconditionally: a victim already allowed, now binding, was \
                   taken as preempted and never deleted, and the preemptor counted on its room \
                   (fixed in 1.36: Preempt and Reject report whether they decided).",
        flaw: "WaitingFlaw::RejectClaimsADecidedPod",
        planted: "A rejection or preemption of a pod no longer waiting still reports that it \
                  decided.",
        breaks: "H4",
        found_by: &[Find {
            checker: "proptest: the sharded waiting map in lockstep with the reference model, 10 seeds",
            test: "tests/tests/prop_bug_corpus.rs::kubernetes_pr_135719_a_rejection_claims_a_decided_pod",
        }],
    },
    Bug {
        id: "kubernetes PR #119784",
        sources: &["https://github.com/kubernetes/kubernetes/pull/119784"],
        upstream: "With queueing hints, AddUnschedulableIfNotPresent could requeue a pod \
                   straight to activeQ without cond.Broadcast(): a Pop asleep on the empty \
                   queue was not woken, and on a quiet cluster the pod was not scheduled \
                   (fixed in 1.28).",
        flaw: "QueueFlaw::HandBackWakesNobody",
        planted: "A hand-back that makes its pod poppable at once wakes no blocked pop.",
        breaks: "I2",
        found_by: &[Find {
            checker: "loom: a popper blocked on the empty queue vs the hand-back",
            test: "tests/tests/loom_queue.rs::kubernetes_pr_119784_a_hand_back_to_the_active_queue_wakes_nobody",
        }],
    },
    Bug {
        id: "kubernetes#130976",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/130976",
            "https://github.com/kubernetes/kubernetes/pull/139884",
        ],
        upstream: "Pop checks the backoff queue's length under one lock and waits on a \
                   condition that is broadcast under none: a pod entering backoffQ, and its \
                   broadcast, between the check and the wait are missed (open in 1.36 and \
                   1.37).",
        flaw: "QueueFlaw::ChecksThenSleeps",
        planted: "A blocking pop looks for a pod in one critical section and sleeps in another.",
        breaks: "I2",
        found_by: &[Find {
            checker: "loom: a popper blocked on the empty queue vs an add",
            test: "tests/tests/loom_queue.rs::kubernetes_130976_a_pop_that_checks_then_sleeps_misses_an_add",
        }],
    },
    Bug {
        id: "YUNIKORN-3355",
        sources: &[
            "https://issues.apache.org/jira/browse/YUNIKORN-3355",
            "https://github.com/apache/yunikorn-k8shim/pull/1066",
        ],
        upstream: "After a failed bind, the shim's forgetPod re-added the cached pod, which \
                   still carried its assumed node, to that node before clearing the assumed \
                   mark: the node's capacity stayed booked to a pod that never ran (unfixed at \
                   the k8shim's head in August 2026; kubernetes#28883 is the 2016 original).",
        flaw: "Flaw::BindFailureKeepsNodeReservation",
        planted: "A failed bind releases the gang's reservation but not the node's.",
        breaks: "I5",
        found_by: &[Find {
            checker: "model checker: small, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::yunikorn_3355_a_failed_bind_keeps_the_node_reservation",
        }],
    },
    Bug {
        id: "kubernetes#49314",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/49314",
            "https://github.com/kubernetes/kubernetes/pull/50106",
        ],
        upstream: "When ForgetPod failed after a failed bind, bind returned at once, skipping \
                   Error(), the only call that requeued the pod: Pending for ever, until the \
                   scheduler restarted (fixed in 2017).",
        flaw: "Flaw::BindFailureLosesPod",
        planted: "A failed bind ends the pod's attempt without handing it back to the queue.",
        breaks: "I4",
        found_by: &[Find {
            checker: "model checker: small, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_49314_a_failed_bind_loses_the_pod",
        }],
    },
    Bug {
        id: "kubernetes#93830",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/93830",
            "https://github.com/kubernetes/kubernetes/pull/93831",
        ],
        upstream: "PR #93511 moved the assume before Reserve, but the Reserve-failure path ran \
                   Unreserve and no ForgetPod: the plugins' reservations were released and the \
                   pod stayed assumed on its node (a regression fixed before 1.19).",
        flaw: "Flaw::ReleaseKeepsNodeReservation",
        planted: "The release of a pod rejected at Permit runs the plugins' Unreserve but not \
                  the cache's forget (the same omission on gangway's Permit path, where \
                  upstream's was at Reserve).",
        breaks: "I5",
        found_by: &[
            Find {
                checker: "model checker: small, Hardened, Permit barrier",
                test: "tests/tests/regression_bug_corpus.rs::kubernetes_93830_a_release_keeps_the_node_reservation",
            },
            Find {
                checker: "loom: a rejected pod's binding cycle vs a sibling's cycle and a delete",
                test: "tests/tests/loom_binding_cycle.rs::witness_a_release_that_keeps_the_node_reservation_leaks",
            },
        ],
    },
    Bug {
        id: "kubernetes#139186",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/139186",
            "https://github.com/kubernetes/kubernetes/pull/139450",
        ],
        upstream: "AddUnschedulableIfNotPresent woke Pop before the deferred Done: a Pop in \
                   that window found the pod still in flight, discarded it as a duplicate, and \
                   the pod was in no queue (in 1.36.3; the fix is merged, and 1.37.2 still \
                   defers Done for a pod outside a pod group).",
        flaw: "Flaw::RejectedNotRequeued",
        planted: "The same loss by a shorter road: a rejected pod's binding cycle ends its \
                  attempt without handing it back (gangway's hand-back and pop take one lock, \
                  so the window itself cannot open).",
        breaks: "I4",
        found_by: &[Find {
            checker: "model checker: small, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_139186_a_rejected_pod_is_in_no_queue",
        }],
    },
    Bug {
        id: "kubernetes PR #134157",
        sources: &["https://github.com/kubernetes/kubernetes/pull/134157"],
        upstream: "A pod deleted during its binding cycle stayed assumed until the cycle \
                   failed, holding its room with no event to tell the pods waiting for it \
                   (fixed in 1.35: forget it at the delete and announce the assigned-pod \
                   delete).",
        flaw: "Flaw::DeleteAnnouncesNothing",
        planted: "The binding cycle of a pod deleted while in binding frees its room without \
                  announcing it.",
        breaks: "I7",
        found_by: &[Find {
            checker: "model checker: medium, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::kubernetes_pr_134157_a_delete_in_binding_wakes_nobody",
        }],
    },
    Bug {
        id: "kubernetes-sigs/scheduler-plugins#125",
        sources: &[
            "https://github.com/kubernetes-sigs/scheduler-plugins/issues/125",
            "https://github.com/kubernetes-sigs/scheduler-plugins/issues/397",
        ],
        upstream: "Coscheduling parked a member its PreFilter turned away for too few \
                   siblings; the siblings' arrival was an unscheduled-pod add that moved \
                   nobody, so the member waited 60-90 s for the flush, or never met its \
                   siblings (#397, still open).",
        flaw: "Flaw::ArrivalSkipsMoveEvent",
        planted: "A pod's arrival does not announce the pod-add event, so gated siblings are \
                  never asked again.",
        breaks: "I8",
        found_by: &[Find {
            checker: "model checker: two gangs of two arriving, room for one, Hardened, Permit barrier",
            test: "tests/tests/regression_bug_corpus.rs::scheduler_plugins_125_a_sibling_arrival_wakes_nobody",
        }],
    },
    Bug {
        id: "kubernetes#138316",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/138316",
            "https://github.com/kubernetes/kubernetes/pull/138324",
        ],
        upstream: "handleSchedulingFailure looked the failed pod up again by namespace/name; \
                   deleted and recreated in that window, the pod came back with a new uid, \
                   and AddUnschedulableIfNotPresent's deferred Done ended the new uid's \
                   attempt, which did not exist: the popped uid stayed in inFlightPods for \
                   ever, and inFlightEvents, pruned only up to the oldest attempt in flight, \
                   grew without bound (fixed by PR #138324, cherry-picked to 1.34 and 1.35).",
        flaw: "QueueFlaw::DeletedPodStaysInFlight",
        planted: "gangway keys a pod by its uid (`PodId`) and looks nothing up by name, so the \
                  lookup cannot go wrong; what it broke is planted: the hand-back of a pod \
                  deleted during its attempt does not end that attempt.",
        breaks: "I4",
        found_by: &[Find {
            checker: "proptest: the queue in lockstep with the reference model, 10 seeds",
            test: "tests/tests/prop_bug_corpus.rs::kubernetes_138316_a_deleted_pod_s_attempt_never_ends",
        }],
    },
    Bug {
        id: "kubernetes-sigs/scheduler-plugins#293",
        sources: &[
            "https://github.com/kubernetes-sigs/scheduler-plugins/issues/293",
            "https://github.com/kubernetes/kubernetes/pull/106816",
        ],
        upstream: "A member of a gang that failed to schedule kept the \
                   status.nominatedNodeName its preemption had set, for as long as the gang \
                   could not start: the node's room stayed reserved for it (fixed in \
                   kube-scheduler by clearing the nomination of a rejected waiting pod, PR \
                   #106816).",
        flaw: "gangway-scheduler --keep-released-nominations",
        planted: "gangway-scheduler nominates every member of a gang before its first bind \
                  (the placement record, H7) and clears the nomination of a member released \
                  instead of bound; the flag (the `faults` feature) leaves it set.",
        breaks: "H7 (a record of a placement given up)",
        found_by: &[Find {
            checker: "end-to-end, on a real kube-apiserver: a gang of three recorded, one \
                      member deleted before the binds",
            test: "scheduler/tests/e2e_released_nominations.rs::scheduler_plugins_293_a_released_member_keeps_its_nominated_node",
        }],
    },
];

/// Real bugs `Mode::Upstream` reproduces: the checker finds them in the mode itself.
pub const UPSTREAM_BUGS: &[UpstreamBug] = &[
    UpstreamBug {
        id: "kubernetes-sigs/scheduler-plugins#117, koordinator#872",
        sources: &[
            "https://github.com/kubernetes-sigs/scheduler-plugins/issues/117",
            "https://github.com/koordinator-sh/koordinator/issues/872",
        ],
        upstream: "Members of several gangs interleave through Permit, each gang holds part \
                   of the room, none reaches its quorum: hold-and-wait until the timeouts.",
        found_by: Find {
            checker: "model checker: medium, Upstream, Permit barrier, hold-and-wait checked",
            test: "tests/tests/regression_bug_corpus.rs::scheduler_plugins_117_gangs_hold_and_wait",
        },
        hardened: "The pod-group cycle places a gang whole or holds nothing (I9).",
    },
    UpstreamBug {
        id: "kubernetes#139162",
        sources: &["https://github.com/kubernetes/kubernetes/pull/139162"],
        upstream: "The queue's early skip of gated pods also skipped the flush's wildcard \
                   event, so a gated pod past the flush stayed stale and a pod rejected during \
                   each flush backed off instead of parking (in 1.36.3; fixed in 1.37).",
        found_by: Find {
            checker: "proptest through the differential against kube-scheduler v1.36.3's queue",
            test:
                "tests/tests/prop_differential.rs::kube_schedulers_queue_agrees_on_generated_inputs",
        },
        hardened: "Both modes follow v1.36.3 by default; `QueueConfig::wildcards_move_gated` \
                   turns the fix on (docs/races.md).",
    },
];

/// Real bugs the suite cannot reproduce yet, and why.
pub const GAPS: &[Gap] = &[
    Gap {
        id: "volcano#2627, kubernetes#140423, kubernetes#138709, kubernetes PR #140871, \
             kubernetes PR #140590, kubernetes PRs #80254 and #100325",
        sources: &[
            "https://github.com/volcano-sh/volcano/issues/2627",
            "https://github.com/kubernetes/kubernetes/issues/140423",
            "https://github.com/kubernetes/kubernetes/issues/138709",
            "https://github.com/kubernetes/kubernetes/pull/140871",
            "https://github.com/kubernetes/kubernetes/pull/140590",
            "https://github.com/kubernetes/kubernetes/pull/80254",
        ],
        upstream: "Preemption: a preemptor's minimum ignored (over-eviction), victim order from \
                   the clock, reprieval placing fewer preemptor pods, a nested cycle \
                   overwriting the pod-group cycle's state, nominations lost, waiting victims \
                   not rejected.",
        why: "gangway has no preemption yet: the code these bugs live in does not exist. Issue \
              #46 (workload-aware preemption) brings it, and each of these is planted there.",
    },
    Gap {
        id: "KAI-Scheduler#1968",
        sources: &["https://github.com/NVIDIA/KAI-Scheduler/issues/1968"],
        upstream: "Stale-gang eviction's guard (a Succeeded pod means the gang is finishing) \
                   became dead code once the informer filtered Succeeded pods out: finishing \
                   gangs were evicted.",
        why: "gangway evicts nothing; gangway-scheduler's mirror drops finished pods and no \
              later step reads them. Preemption (#46) is where a guard of this kind comes back.",
    },
    Gap {
        id: "KAI-Scheduler#1217",
        sources: &["https://github.com/NVIDIA/KAI-Scheduler/issues/1217"],
        upstream: "A DRA gang fails in the live scheduler and places after a restart; the root \
                   cause was never found.",
        why: "No mechanism to plant. gangway models no DRA.",
    },
    Gap {
        id: "koordinator PR #2956",
        sources: &["https://github.com/koordinator-sh/koordinator/pull/2956"],
        upstream: "An unlocked check of `alreadyAttemptedPods` before a locked insert in \
                   `NextPod`.",
        why: "Not a bug: the PR was closed unmerged, and only one goroutine calls `NextPod`, \
              so the same pod cannot be returned twice. Left out.",
    },
    Gap {
        id: "kubernetes#137617, kubernetes PR #140269, volcano PRs #5102 and #5103",
        sources: &[
            "https://github.com/kubernetes/kubernetes/issues/137617",
            "https://github.com/kubernetes/kubernetes/pull/140269",
        ],
        upstream: "DRA with gangs: a shared claim each member sees as being allocated by the \
                   other (an endless loop); an in-flight record restoring an older claim; a \
                   discarded session leaking in-flight allocations.",
        why: "gangway models no DRA claims.",
    },
];
