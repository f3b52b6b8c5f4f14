//! The checker's own walk over the model's state space, breadth first or depth first, on any
//! number of threads.
//!
//! It explores what stateright's checkers explore — the model's initial states, each enabled
//! action's successor, every property judged on every state taken from the queue, the same
//! counts (states generated, distinct states, depth) — with less memory and less work per
//! state: a job is a state, its fingerprint and its depth, and the path to a state is kept
//! once, as each distinct state's parent (a fingerprint per state, not a path per job: a
//! breadth-first frontier of hundreds of thousands of jobs held one `Vec` of action indices
//! each). A discovery's path is rebuilt by walking the parents back to an initial state and
//! replaying, from it, the actions that lead to each fingerprint in turn. A property already
//! discovered is not judged again.
//!
//! Work is shared as stateright shares it: each thread works on its own queue (first in,
//! first out for breadth first, so that counterexamples are shortest on one thread and short
//! on several; last in, first out for depth first) and hands half of it to a thread that has
//! none. The walk ends when no thread has work, or when every property (or the one asked for)
//! has its discovery.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use gangsched::sync::{Condvar, Mutex};
use stateright::{Expectation, Model};

use super::cluster::Cluster;
use super::paths::Path;
use super::protocol::GangProtocol;
use super::shared::{PartHasher, PassThrough};

/// The order of the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// Breadth first.
    Breadth,
    /// Depth first.
    Depth,
}

/// What a walk found, as it goes and once it is over.
pub(crate) struct Walk<'m> {
    model: &'m GangProtocol,
    properties: Vec<stateright::Property<GangProtocol>>,
    /// The key a state is known by: its fingerprint, or its representative's.
    key: fn(&Cluster) -> u64,
    /// Each distinct state's parent, by key (an initial state is its own parent).
    parents: Vec<Mutex<HashMap<u64, u64, BuildHasherDefault<PassThrough>>>>,
    /// Each property's discovery: the key of the state that showed it.
    discoveries: Vec<Mutex<Option<u64>>>,
    /// Whether each property has its discovery (read at every state, without a lock).
    found: Vec<AtomicBool>,
    discovered: AtomicUsize,
    /// Stop once this property is discovered (`None`: once every one is).
    goal: Option<usize>,
    generated: AtomicUsize,
    max_depth: AtomicUsize,
    stop: AtomicBool,
}

/// A state to expand: the state, its key, its depth.
type Job = (Cluster, u64, usize);

const SHARDS: usize = 64;

/// The shard of `key`, by its top bits (the tables within use its low ones).
fn shard_of(key: u64) -> usize {
    (key >> 58) as usize
}

/// A state's fingerprint.
pub(crate) fn fingerprint(state: &Cluster) -> u64 {
    let mut hasher = PartHasher::default();
    state.hash(&mut hasher);
    hasher.finish()
}

/// The fingerprint of a state's representative (symmetry reduction).
pub(crate) fn representative_fingerprint(state: &Cluster) -> u64 {
    fingerprint(&super::symmetry::representative(state))
}

impl<'m> Walk<'m> {
    /// A walk of `model`, knowing states by `key`; it stops at `goal`'s discovery if one is
    /// named.
    pub(crate) fn new(
        model: &'m GangProtocol,
        key: fn(&Cluster) -> u64,
        goal: Option<&str>,
    ) -> Walk<'m> {
        let properties = model.properties();
        assert!(
            properties
                .iter()
                .all(|p| p.expectation != Expectation::Eventually),
            "the walk judges always and sometimes properties only"
        );
        let goal = goal.map(|name| {
            properties
                .iter()
                .position(|p| p.name == name)
                .unwrap_or_else(|| panic!("{name} is not a property of the model"))
        });
        Walk {
            model,
            discoveries: properties.iter().map(|_| Mutex::new(None)).collect(),
            found: properties.iter().map(|_| AtomicBool::new(false)).collect(),
            properties,
            key,
            parents: (0..SHARDS)
                .map(|_| Mutex::new(HashMap::default()))
                .collect(),
            discovered: AtomicUsize::new(0),
            goal,
            generated: AtomicUsize::new(0),
            max_depth: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        }
    }

    /// States generated so far (duplicates included).
    pub(crate) fn generated(&self) -> usize {
        self.generated.load(Ordering::Relaxed)
    }

    /// Distinct states so far.
    pub(crate) fn distinct(&self) -> usize {
        self.parents.iter().map(|shard| shard.lock().len()).sum()
    }

    /// The longest path so far.
    pub(crate) fn max_depth(&self) -> usize {
        self.max_depth.load(Ordering::Relaxed)
    }

    /// Walks the state space in `order` on `threads` threads; returns when it is over.
    pub(crate) fn run(&self, order: Order, threads: usize) {
        let mut init = Vec::new();
        for state in self.model.init_states() {
            let key = (self.key)(&state);
            // An initial state counts as generated, as stateright counts it.
            self.generated.fetch_add(1, Ordering::Relaxed);
            if self.remember(key, key) {
                init.push((state, key, 1));
            }
        }
        let market = Market {
            batches: Mutex::new((vec![init], 0)),
            wake: Condvar::new(),
            threads: threads.max(1),
            idle: AtomicUsize::new(0),
        };
        std::thread::scope(|scope| {
            for _ in 0..market.threads {
                scope.spawn(|| self.work(&market, order));
            }
        });
    }

    /// One thread's work: jobs from its own queue, or from the market when it has none.
    fn work(&self, market: &Market, order: Order) {
        let mut queue: VecDeque<Job> = VecDeque::new();
        let mut actions = Vec::new();
        loop {
            if queue.is_empty() {
                match market.take() {
                    Some(batch) => queue.extend(batch),
                    None => return,
                }
            }
            for _ in 0..512 {
                let job = match order {
                    Order::Breadth => queue.pop_front(),
                    Order::Depth => queue.pop_back(),
                };
                let Some(job) = job else { break };
                self.expand(job, &mut queue, &mut actions);
            }
            if self.stop.load(Ordering::Relaxed) {
                market.close();
                return;
            }
            if queue.len() > 1 && market.idle.load(Ordering::Relaxed) > 0 {
                let half = queue.len() / 2;
                let shared: Vec<Job> = match order {
                    Order::Breadth => queue.drain(..half).collect(),
                    Order::Depth => queue.drain(..half).collect(),
                };
                market.give(shared);
            }
        }
    }

    /// Judges `job`'s state and queues its successors that are new.
    fn expand(
        &self,
        (state, key, depth): Job,
        queue: &mut VecDeque<Job>,
        actions: &mut Vec<super::Action>,
    ) {
        self.max_depth.fetch_max(depth, Ordering::Relaxed);
        self.judge(&state, key);
        actions.clear();
        self.model.actions(&state, actions);
        // The last action steps from the state itself, which the walk is then done with.
        let last = actions.pop();
        for action in actions.drain(..) {
            let next = self.model.next_state(&state, action);
            self.offer(next, key, depth, queue);
        }
        if let Some(action) = last {
            let next = self.model.next_state_from(state, action);
            self.offer(next, key, depth, queue);
        }
    }

    /// Counts a successor `next` of the state `parent` at `depth`, and queues it if it is new.
    fn offer(&self, next: Option<Cluster>, parent: u64, depth: usize, queue: &mut VecDeque<Job>) {
        let Some(next) = next else { return };
        self.generated.fetch_add(1, Ordering::Relaxed);
        let key = (self.key)(&next);
        if self.remember(key, parent) {
            queue.push_back((next, key, depth + 1));
        }
    }

    /// Records `key`'s parent if `key` is new; whether it was.
    fn remember(&self, key: u64, parent: u64) -> bool {
        let mut shard = self.parents[shard_of(key)].lock();
        match shard.entry(key) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(entry) => {
                entry.insert(parent);
                true
            }
        }
    }

    /// Each property not yet discovered, judged on `state`.
    fn judge(&self, state: &Cluster, key: u64) {
        for (i, property) in self.properties.iter().enumerate() {
            if self.found[i].load(Ordering::Relaxed) {
                continue;
            }
            let holds = (property.condition)(self.model, state);
            let found = match property.expectation {
                Expectation::Always => !holds,
                _ => holds,
            };
            if !found {
                continue;
            }
            let mut discovery = self.discoveries[i].lock();
            if discovery.is_some() {
                continue;
            }
            *discovery = Some(key);
            self.found[i].store(true, Ordering::Relaxed);
            let all = self.discovered.fetch_add(1, Ordering::Relaxed) + 1 == self.properties.len();
            if all || self.goal == Some(i) {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The path to property `name`'s discovery, replayed from an initial state; `None` if it
    /// has none. A model whose steps are not a function of the state (an embedder's placement
    /// with a memory of its own) may not lead to it again: the path then ends where the replay
    /// lost it.
    pub(crate) fn discovery(&self, name: &str) -> Option<Path> {
        let i = self.properties.iter().position(|p| p.name == name)?;
        let target = (*self.discoveries[i].lock())?;
        let mut keys = vec![target];
        loop {
            let key = *keys.last().expect("one key");
            let parent = *self.parents[shard_of(key)]
                .lock()
                .get(&key)
                .expect("a discovered state was remembered");
            if parent == key {
                break;
            }
            keys.push(parent);
        }
        keys.reverse();
        let mut state = self
            .model
            .init_states()
            .into_iter()
            .find(|s| (self.key)(s) == keys[0])?;
        let mut path = Vec::new();
        let mut actions = Vec::new();
        for &next_key in &keys[1..] {
            actions.clear();
            self.model.actions(&state, &mut actions);
            let step = actions.drain(..).find_map(|action| {
                let next = self.model.next_state(&state, action.clone())?;
                ((self.key)(&next) == next_key).then_some((action, next))
            });
            let Some((action, next)) = step else { break };
            path.push((std::mem::replace(&mut state, next), Some(action)));
        }
        path.push((state, None));
        Some(path)
    }
}

/// Where threads with work leave some for threads without.
struct Market {
    /// The batches left, and whether the walk is over (`1`).
    batches: Mutex<(Vec<Vec<Job>>, u8)>,
    wake: Condvar,
    threads: usize,
    idle: AtomicUsize,
}

impl Market {
    /// A batch to work on, waiting for one while another thread works; `None` once no thread
    /// has work left or the walk is over.
    fn take(&self) -> Option<Vec<Job>> {
        let mut market = self.batches.lock();
        loop {
            if market.1 != 0 {
                return None;
            }
            if let Some(batch) = market.0.pop() {
                return Some(batch);
            }
            if self.idle.load(Ordering::Relaxed) + 1 == self.threads {
                // Everyone else waits for work: there is none left.
                market.1 = 1;
                self.wake.notify_all();
                return None;
            }
            self.idle.fetch_add(1, Ordering::Relaxed);
            self.wake.wait(&mut market);
            self.idle.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Leaves `jobs` for a thread without work.
    fn give(&self, jobs: Vec<Job>) {
        self.batches.lock().0.push(jobs);
        self.wake.notify_one();
    }

    /// Ends the walk for every thread.
    fn close(&self) {
        self.batches.lock().1 = 1;
        self.wake.notify_all();
    }
}
