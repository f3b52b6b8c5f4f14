//! Loom models of a group becoming a gang while a member waits at Permit for another plugin,
//! on the real `GangScheduling` and `WaitingPods` (Hardened).
//!
//! Run: `RUSTFLAGS="--cfg loom -C debug-assertions" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! gangway-tests --release --test loom_group_becomes_a_gang --target-dir target/loom`.
//!
//! `p0`, a member of the Basic group `g`, is held at Permit by the embedder's `Quota` plugin,
//! which will reject it; `g` becomes a gang of two; then `p1` reaches Permit. Whatever the
//! interleaving, `p1` must not pass: `p0` never does (I3). Two races lead there:
//! - (a) `p0`'s Permit — it looks at the group, sees no gang, registers the pod — against the
//!   change. Witness: [`GangFlaw::LooksThenRegisters`], the look and the registration in two
//!   critical sections, is found.
//! - (b) `p0`'s wait ending — its timer, or the embedder's rejection — against the change,
//!   with `p0`'s binding cycle still to come. Witness:
//!   [`GangFlaw::ConversionForgetsOnlyWaiters`] (the `scheduler_events` fuzz target's fourth
//!   find, before its fix) is found.
//!
//! After the race every rejected member is unreserved (its binding cycle), then I5 holds and
//! nothing is left waiting or reserved (I6).

use std::time::Duration;

use gangsched::checking::gang_ops;
use gangsched::checking::{gang_parts, GangFlaw, PlantedGang};
use gangsched::gang::{GangScheduling, Permit};
use gangsched::sync::{model, thread, Arc};
use gangsched::{GroupKey, PodGroup, Policy};
use gangsched::{
    Mode, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, Time, WaitingPods,
};

const NS: &str = "ml";
/// `Quota`'s wait.
const QUOTA_WAIT: Duration = Duration::from_secs(60);
/// Long after every deadline of the models.
const EVENTUALLY: Time = Time::from_secs(3_600);

/// The embedder's plugin: holds `p0` at Permit, allows every other pod.
struct Quota;

impl PermitPlugin for Quota {
    fn name(&self) -> PluginName {
        "Quota".into()
    }
    fn permit(&self, pod: &Pod, _: &str) -> PermitVerdict {
        if pod.name() == "p0" {
            PermitVerdict::wait(QUOTA_WAIT)
        } else {
            PermitVerdict::Allow
        }
    }
}

fn quota() -> PermitPlugins {
    PermitPlugins::new([Arc::new(Quota) as Arc<dyn PermitPlugin>]).unwrap()
}

/// Hardened, the Basic group `g` with members `p0` and `p1`, `p0` reserved.
fn basic_group() -> (GangScheduling, Vec<Pod>) {
    let gang =
        GangScheduling::with_timeout(Mode::Hardened, WaitingPods::new(), Duration::from_secs(300));
    gang.on_group_added(PodGroup::new(NS, "g", Policy::Basic).unwrap())
        .unwrap();
    let pods: Vec<Pod> = (0..2)
        .map(|i| Pod::new(format!("p{i}"), NS, &format!("p{i}")).with_group("g"))
        .collect();
    for pod in &pods {
        gang.on_pod_added(pod.clone(), false).unwrap();
    }
    gang.reserve(&pods[0]).unwrap();
    (gang, pods)
}

/// `p0`'s Permit with `Quota` beside the gang, through the real parts or with `flaw` planted.
fn permit_p0(gang: &GangScheduling, p0: &Pod, flaw: Option<GangFlaw>) -> Permit {
    let others = quota();
    match flaw {
        None => gang.permit_with(p0, "n", &others, Time::ZERO),
        Some(flaw) => {
            let mut planted = PlantedGang {
                parts: gang_parts(gang),
                flaw,
            };
            gang_ops::permit_with(&mut planted, p0, "n", &others, Time::ZERO)
        }
    }
}

/// `g` becomes a gang of two, through the real parts or with `flaw` planted.
fn becomes_a_gang(gang: &GangScheduling, flaw: Option<GangFlaw>) {
    let gang_of_two = PodGroup::gang(NS, "g", 2).unwrap();
    match flaw {
        None => drop(gang.on_group_updated(gang_of_two).unwrap()),
        Some(flaw) => {
            let mut planted = PlantedGang {
                parts: gang_parts(gang),
                flaw,
            };
            drop(gang_ops::group_updated(&mut planted, gang_of_two).unwrap());
        }
    }
}

/// After the race: `Quota` rejects `p0` if it still waits; `p1` is scheduled; every timer
/// fires. `p1` must not pass (I3: `p0` never does), and once both binding cycles have
/// unreserved them nothing is reserved or waiting (I5, I6).
fn p1_must_not_pass(gang: &GangScheduling, pods: &[Pod]) {
    gang.waiting().reject(pods[0].id(), "Quota", "over quota");
    gang.reserve(&pods[1]).unwrap();
    let p1_passed = match gang.permit(&pods[1], Time::ZERO) {
        Permit::Allow => true,
        Permit::Reject { .. } => false,
        Permit::Wait { waiting, .. } => {
            gang.waiting().expire(EVENTUALLY);
            gang.expire(EVENTUALLY);
            waiting.wait().is_success()
        }
    };
    assert!(
        !p1_passed,
        "I3 violated: p1 passed Permit alone in a gang of two whose p0 was rejected"
    );
    for pod in pods {
        gang.unreserve(pod);
    }
    let groups = gang.registry().snapshot();
    groups.check().expect("I5");
    assert!(gang.waiting().is_empty(), "nothing is left waiting");
    let state = groups.get(&GroupKey::new(NS, "g")).expect("the group");
    assert!(state.assumed().is_empty(), "I6: nothing is left reserved");
}

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::spawn("model", f)
}

/// (a) `p0`'s Permit against the change.
fn permit_vs_becoming_a_gang(flaw: Option<GangFlaw>) {
    model(move || {
        let (gang, pods) = basic_group();
        let gang = Arc::new(gang);
        let pods = Arc::new(pods);
        let permit = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || match permit_p0(&gang, &pods[0], flaw) {
                Permit::Wait { .. } | Permit::Reject { .. } => {}
                Permit::Allow => panic!("Quota holds p0"),
            }
        });
        let change = spawn({
            let gang = gang.clone();
            move || becomes_a_gang(&gang, flaw)
        });
        permit.join().unwrap();
        change.join().unwrap();
        p1_must_not_pass(&gang, &pods);
    });
}

#[test]
fn a_permit_of_a_member_vs_its_group_becoming_a_gang() {
    permit_vs_becoming_a_gang(None);
}

/// Witness: with the look and the registration apart, the change can fall between them and
/// find nothing to take out of the quorum.
#[cfg(loom)]
#[test]
#[should_panic(expected = "I3 violated")]
fn witness_a_looking_then_registering_is_found() {
    permit_vs_becoming_a_gang(Some(GangFlaw::LooksThenRegisters));
}

/// How `p0`'s wait ends in model (b).
#[derive(Clone, Copy)]
enum WaitEnds {
    /// `Quota`'s timer (the waiting map's expiry).
    TimesOut,
    /// The embedder rejects it through the waiting map.
    Rejected,
}

/// (b) `p0`'s wait ending against the change, its binding cycle still to come.
fn decided_vs_becoming_a_gang(ends: WaitEnds, flaw: Option<GangFlaw>) {
    model(move || {
        let (gang, pods) = basic_group();
        let Permit::Wait { .. } = permit_p0(&gang, &pods[0], None) else {
            panic!("Quota holds p0 while g is no gang");
        };
        let gang = Arc::new(gang);
        let pods = Arc::new(pods);
        let decide = spawn({
            let (gang, pods) = (gang.clone(), pods.clone());
            move || match ends {
                WaitEnds::TimesOut => drop(gang.waiting().expire(Time::ZERO + QUOTA_WAIT)),
                WaitEnds::Rejected => {
                    gang.waiting().reject(pods[0].id(), "Quota", "over quota");
                }
            }
        });
        let change = spawn({
            let gang = gang.clone();
            move || becomes_a_gang(&gang, flaw)
        });
        decide.join().unwrap();
        change.join().unwrap();
        p1_must_not_pass(&gang, &pods);
    });
}

#[test]
fn b_a_timed_out_member_vs_its_group_becoming_a_gang() {
    decided_vs_becoming_a_gang(WaitEnds::TimesOut, None);
}

#[test]
fn b_a_rejected_member_vs_its_group_becoming_a_gang() {
    decided_vs_becoming_a_gang(WaitEnds::Rejected, None);
}

/// Witness: the fourth find's bug — a member whose wait is over keeps counting.
#[cfg(loom)]
#[test]
#[should_panic(expected = "I3 violated")]
fn witness_b_forgetting_only_waiters_is_found() {
    decided_vs_becoming_a_gang(
        WaitEnds::TimesOut,
        Some(GangFlaw::ConversionForgetsOnlyWaiters),
    );
}
