//! Each checker thread works on states of its own allocations.
//!
//! A state's pods, ids, group keys and node names are reference-counted, and every state the
//! checker generates descends from one initial state: without care, both checker threads
//! clone and drop the same few allocations millions of times, and each count's cache line
//! passes between the cores on every clone. Two threads then took more than twice one
//! thread's CPU time per state and finished later than one thread alone
//! (`docs/benchmarks.md`). So a state remembers the thread that built it ([`Home`]), and a
//! thread about to step from a state built elsewhere first makes an equal copy of it in
//! allocations of its own ([`FreshCopies`]); every state it derives from the copy is then its
//! own. The walk (`state_space.rs`) hands states between threads in batches, so copies are
//! rare.

use std::cell::RefCell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::thread::{self, ThreadId};

use gangsched::checking::symmetry::{FreshCopies, Relabel, Renamed};

use super::cluster::Cluster;
use super::protocol::Action;

/// The thread whose allocations a state's values live in. Not part of the state: every
/// `Home` equals every other and hashes as nothing, so a copy is the same state to the
/// checker.
#[derive(Clone, Copy)]
pub struct Home(ThreadId);

impl Home {
    /// The current thread.
    pub fn here() -> Home {
        HERE.with(|here| Home(*here))
    }

    /// Whether this is the current thread.
    pub fn is_here(self) -> bool {
        HERE.with(|here| self.0 == *here)
    }
}

impl PartialEq for Home {
    fn eq(&self, _: &Home) -> bool {
        true
    }
}

impl Eq for Home {}

impl Hash for Home {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl fmt::Debug for Home {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Home({:?})", self.0)
    }
}

thread_local! {
    static HERE: ThreadId = thread::current().id();
    /// This thread's copies of every value it has met in another thread's states.
    static COPIES: FreshCopies = FreshCopies::new();
    /// The last state copied here, with its copy: the walk asks for every action's successor
    /// of a state in turn, and the state is copied once.
    static LAST: RefCell<Option<(Cluster, Cluster)>> = const { RefCell::new(None) };
}

/// `step(state, action)`, on this thread's copy of `state` and `action` if `state` was built
/// on another thread.
pub fn at_home<T>(state: &Cluster, action: Action, step: impl FnOnce(&Cluster, Action) -> T) -> T {
    if state.home.is_here() {
        return step(state, action);
    }
    let local = LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((copied, local)) if copied == state => local.clone(),
            _ => {
                let local = COPIES.with(|copies| state.renamed(copies));
                *last = Some((state.clone(), local.clone()));
                local
            }
        }
    });
    let action = COPIES.with(|copies| action.renamed(copies));
    step(&local, action)
}

/// The action on the pod's (or group's) image.
impl Renamed for Action {
    fn renamed<R: Relabel + ?Sized>(&self, r: &R) -> Action {
        match self {
            Action::Arrive(id) => Action::Arrive(r.id(id)),
            Action::Schedule(id) => Action::Schedule(r.id(id)),
            Action::HandBack(id) => Action::HandBack(r.id(id)),
            Action::Permit(id) => Action::Permit(r.id(id)),
            Action::Record(id) => Action::Record(r.id(id)),
            Action::Bind(id) => Action::Bind(r.id(id)),
            Action::BindFails(id) => Action::BindFails(r.id(id)),
            Action::PermitRejected(id) => Action::PermitRejected(r.id(id)),
            Action::Release(id) => Action::Release(r.id(id)),
            Action::Delete(id) => Action::Delete(r.id(id)),
            Action::ScheduleGroup(id) => Action::ScheduleGroup(r.id(id)),
            Action::Commit(id) => Action::Commit(r.id(id)),
            Action::UpdateGroup { group, min } => Action::UpdateGroup {
                group: r.group_key(group),
                min: *min,
            },
            Action::PluginAllows { pod, plugin } => Action::PluginAllows {
                pod: r.id(pod),
                plugin: plugin.clone(),
            },
            Action::Deadline | Action::FlushBackoff | Action::FlushLeftover => self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use gangsched::Mode;
    use stateright::Model;

    use super::*;
    use crate::{GangProtocol, Preset};

    /// Every state on a short walk of the standard preset, built on another thread, with its
    /// successors stepped there: stepped here, each successor is equal, and this thread's.
    #[test]
    fn a_state_from_another_thread_steps_to_the_same_successors() {
        let model = GangProtocol::new(Preset::Standard.config(Mode::Hardened));
        type Successors = Vec<(Action, Option<Cluster>)>;
        let walk = |model: &GangProtocol| {
            let mut state = model.init_states().remove(0);
            let mut walked: Vec<(Cluster, Successors)> = Vec::new();
            for depth in 0..12 {
                let mut actions = Vec::new();
                model.actions(&state, &mut actions);
                let successors: Successors = actions
                    .iter()
                    .map(|a| (a.clone(), model.next_state(&state, a.clone())))
                    .collect();
                let enabled: Vec<Cluster> =
                    successors.iter().filter_map(|(_, s)| s.clone()).collect();
                let next = enabled.get(depth % enabled.len().max(1)).cloned();
                walked.push((state, successors));
                let Some(next) = next else { break };
                state = next;
            }
            walked
        };
        let theirs = thread::scope(|s| s.spawn(|| walk(&model)).join().unwrap());
        assert!(theirs.len() > 10);
        for (state, successors) in &theirs {
            assert!(!state.home.is_here());
            for (action, there) in successors {
                let here = model.next_state(state, action.clone());
                assert_eq!(&here, there, "{action:?}");
                assert!(here.is_none_or(|next| next.home.is_here()));
            }
        }
    }
}
