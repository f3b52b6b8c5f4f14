//! The Permit barrier on its own: the waiting-pod map and the gang plugin, no scheduler.
//!
//! 1. Gang `ml/trainer` (min count 3): two members wait at Permit, the third reaches quorum
//!    and all three pass together.
//! 2. Gang `ml/eval` (min count 3): two members wait, the third is late. A [`TimerDriver`] on
//!    a [`ManualClock`] applies the attempt's one deadline ([`GangScheduling::expire`]) and
//!    every waiting member is rejected in the same critical section. The late member is
//!    rejected too while the failed attempt holds reservations; once they are released, the
//!    gang tries again and passes whole.
//!
//! Run it with `cargo run -p gangsched --example permit_barrier`. Every outcome is asserted, so
//! the example fails if the behaviour changes.

use std::time::Duration;

use gangsched::waiting::Receiver;
use gangsched::{
    Clock, Decision, GangScheduling, GroupKey, ManualClock, Mode, Permit, Pod, PodGroup, Time,
    TimerDriver, WaitingPod, WaitingPods,
};

const PERMIT_TIMEOUT: Duration = Duration::from_secs(60);

fn main() {
    // Decisions about waiting pods go to a channel (binding workers would read it), delivered
    // after every gangway lock is released.
    let (waiting, decisions) = WaitingPods::with_channel();
    let clock = ManualClock::new(Time::ZERO);
    let gang = GangScheduling::with_timeout(Mode::Hardened, waiting.clone(), PERMIT_TIMEOUT);
    // One timer thread for every gang attempt's deadline. It reads `clock`, which moves only
    // when this example advances it.
    let timer = TimerDriver::spawn(gang.clone(), clock.clone());

    let barrier = Barrier {
        gang,
        waiting,
        decisions,
        clock,
    };
    barrier.quorum();
    barrier.timeout();

    timer.shutdown();
    println!("\nevery outcome as expected");
}

struct Barrier {
    gang: GangScheduling,
    waiting: WaitingPods,
    decisions: Receiver<Decision>,
    clock: ManualClock,
}

impl Barrier {
    /// Part 1: two members wait, the third reaches quorum and allows them.
    fn quorum(&self) {
        println!("== gang ml/trainer, min count 3: quorum");
        let (key, pods) = self.members("trainer", 3);
        let now = self.clock.now();

        let parked: Vec<WaitingPod> = pods[..2].iter().map(|p| self.wait(p, now)).collect();
        assert_eq!(self.waiting.len(), 2);
        let deadline = self.attempt_deadline(&key);
        log(
            now,
            format!("2 waiting; the attempt's deadline is {deadline}"),
        );

        assert!(matches!(self.permit(&pods[2], now), Permit::Allow));
        // Quorum allowed both waiting siblings in one critical section of the waiting map
        // (H1); each decision is delivered exactly once (I1).
        self.delivered(now, 2, |d| d.status.is_success());
        assert!(parked.iter().all(|w| w.wait().is_success()));
        assert!(self.waiting.is_empty());

        // Their binding cycles succeed: the group counts all three assigned.
        assert!(pods.iter().all(|pod| self.gang.on_pod_bound(pod)));
        let assigned = self.with_group(&key, |s| s.assigned().len());
        log(now, format!("bound: {assigned} of 3 members assigned"));
        assert_eq!(assigned, 3);
    }

    /// Part 2: the third member is late; the attempt's deadline rejects the whole gang.
    fn timeout(&self) {
        println!("\n== gang ml/eval, min count 3: the third member is late");
        let (key, pods) = self.members("eval", 3);
        let start = self.clock.now();

        let parked: Vec<WaitingPod> = pods[..2].iter().map(|p| self.wait(p, start)).collect();
        let deadline = self.attempt_deadline(&key);
        log(
            start,
            format!("2 waiting; one deadline for the attempt: {deadline}"),
        );
        assert_eq!(deadline, start + PERMIT_TIMEOUT);

        // A second early: nothing is due. (The timer thread calls `expire` too when the clock
        // moves; either call finds nothing to do.)
        let now = self.clock.advance(PERMIT_TIMEOUT - Duration::from_secs(1));
        assert!(self.gang.expire(now).is_empty());
        assert!(self.decisions.try_recv().is_none());
        assert!(parked.iter().all(|w| w.decision().is_none()));
        log(now, "nothing due: both still waiting");

        // The deadline passes: advancing the clock rings the timer thread, which fails the
        // attempt. Both members were rejected in one critical section before anything was
        // delivered, so when the first rejection arrives its sibling is decided too (H1).
        let now = self.clock.advance(Duration::from_secs(1));
        log(
            now,
            "the clock reaches the deadline and wakes the timer thread",
        );
        let first = self
            .decisions
            .recv()
            .expect("the timer delivers a rejection");
        assert!(parked.iter().all(|w| w.decision().is_some()));
        self.show(now, &first);
        let timed_out = |d: &Decision| {
            d.status.is_rejected()
                && d.status.message()
                    == "rejected due to timeout after waiting 1m0s at plugin GangScheduling"
        };
        assert!(timed_out(&first));
        self.delivered(now, 1, timed_out);
        assert!(parked.iter().all(|w| w.wait().is_rejected()));
        assert!(self.waiting.is_empty());

        // The late member reaches Permit while the failed attempt still holds reservations: it
        // is rejected as well, so no member of the lost attempt passes alone (I3).
        let late = self.permit(&pods[2], now);
        assert!(matches!(late, Permit::Reject { ref status, .. } if status.is_rejected()));

        // The two rejected members' binding cycles run their failure path: Unreserve.
        for pod in &pods[..2] {
            self.gang.unreserve(pod);
        }
        let assumed = self.with_group(&key, |s| s.assumed().len());
        log(
            now,
            format!("unreserved: {assumed} members hold a reservation"),
        );
        assert_eq!(assumed, 0);

        // Back from the queue (together, after one backoff in a real scheduler), the three try
        // again and pass as one.
        let now = self.clock.advance(Duration::from_secs(1));
        log(now, "the gang tries again");
        let parked: Vec<WaitingPod> = pods[..2].iter().map(|p| self.wait(p, now)).collect();
        assert!(matches!(self.permit(&pods[2], now), Permit::Allow));
        self.delivered(now, 2, |d| d.status.is_success());
        assert!(parked.iter().all(|w| w.wait().is_success()));
        assert_eq!(self.gang.next_deadline(), None, "no attempt left open");
    }

    /// A gang `name` of `size` pods in namespace `ml`, known to the plugin and past PreEnqueue.
    fn members(&self, name: &str, size: u32) -> (GroupKey, Vec<Pod>) {
        let group = PodGroup::gang("ml", name, size).unwrap();
        let key = group.key().clone();
        self.gang.on_group_added(group).unwrap();
        let pods: Vec<Pod> = (0..size)
            .map(|i| Pod::new(format!("{name}-uid-{i}"), "ml", &format!("{name}-{i}")))
            .map(|pod| pod.with_group(name))
            .collect();
        for pod in &pods {
            self.gang.on_pod_added(pod.clone(), false).unwrap();
        }
        // PreEnqueue lets the gang into the queue once min-count members exist.
        assert!(pods.iter().all(|p| self.gang.pre_enqueue(p).is_success()));
        (key, pods)
    }

    /// The end of a member's scheduling cycle: Reserve, then Permit.
    fn permit(&self, pod: &Pod, now: Time) -> Permit {
        self.gang.reserve(pod).unwrap();
        let permit = self.gang.permit(pod, now);
        let verdict = match &permit {
            Permit::Allow => "Allow (quorum: the waiting siblings are allowed with it)".into(),
            Permit::Wait { activate, .. } => {
                let pods = self.gang.activated(activate);
                let names: Vec<&str> = pods.iter().map(Pod::name).collect();
                format!("Wait (and activate unscheduled {})", names.join(", "))
            }
            Permit::Reject { status, cause, .. } => format!("Reject ({cause}): {status}"),
        };
        log(now, format!("{}: reserve, Permit -> {verdict}", pod.name()));
        permit
    }

    /// A member that must wait for its siblings: its registration in the waiting map.
    fn wait(&self, pod: &Pod, now: Time) -> WaitingPod {
        match self.permit(pod, now) {
            Permit::Wait { waiting, .. } => waiting,
            other => panic!("{} should wait at Permit, got {other:?}", pod.name()),
        }
    }

    /// Receives `n` decisions, prints them and checks each with `expected`.
    fn delivered(&self, now: Time, n: usize, expected: impl Fn(&Decision) -> bool) {
        for _ in 0..n {
            let decision = self.decisions.recv().expect("a decision");
            self.show(now, &decision);
            assert!(expected(&decision), "unexpected decision {decision}");
        }
        assert!(self.decisions.try_recv().is_none(), "exactly {n} decisions");
    }

    fn show(&self, now: Time, decision: &Decision) {
        log(
            now,
            format!("  -> {} decided: {}", decision.pod.name(), decision.status),
        );
    }

    fn attempt_deadline(&self, key: &GroupKey) -> Time {
        self.with_group(key, |s| s.attempt().map(|a| a.deadline()))
            .expect("an open attempt")
    }

    fn with_group<R>(&self, key: &GroupKey, read: impl FnOnce(&gangsched::GroupState) -> R) -> R {
        self.gang
            .registry()
            .with_state(key, read)
            .expect("the group exists")
    }
}

fn log(now: Time, line: impl AsRef<str>) {
    println!("{:>7}  {}", now.to_string(), line.as_ref());
}
