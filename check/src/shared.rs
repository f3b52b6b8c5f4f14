//! Copy-on-write parts of a [`Cluster`](super::Cluster), each with its hash cached.
//!
//! The checker clones a state for every successor it generates and fingerprints every one.
//! A step writes three or four of a state's six parts on average (the queue, the stages and
//! the groups most often, the pods never), so a successor shares the others with its parent:
//! cloning a state copies six pointers, a part is copied only when a step writes to it
//! ([`DerefMut`]), and a part's hash and its own consistency check are computed once per
//! value, not once per state that holds it.
//!
//! Parts are also hash-consed ([`Shared::intern`]): a part a step wrote is replaced by an
//! equal one this thread already holds, if any. Most of a state's parts take a few thousand
//! values over millions of states (the driver's, the cache's, the groups'…), so states reached
//! by different paths share them: a breadth-first frontier holds each such value once, and an
//! equal pair of parts compares by pointer.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use gangsched::checking::steps::Placed;
use gangsched::checking::{JobQueue, ModelDriver};
use gangsched::gang::Groups;
use gangsched::queue::QueueState;
use gangsched::scheduler::CacheState;
use gangsched::sync::{Arc, Weak};
use gangsched::{Pod, PodId, WaitingState};

use super::cluster::Stage;
use super::drive::InCycle;

/// A part of a state, shared between states until one of them writes to it. Reads go through
/// [`Deref`]; a write ([`DerefMut`]) first copies the part if another state holds it too.
///
/// Equality and `Debug` are the part's own. `Hash` writes one `u64`: the part's hash with a
/// fixed-key hasher, computed on first use and kept until the part is written to, so equal
/// parts hash alike in every state and on every thread.
///
/// Deliberately not `Clone`: `state.part.clone()` is the part itself (through `Deref`), as it
/// was before parts were shared; [`Shared::share`] is the cheap copy.
pub struct Shared<T>(Arc<Part<T>>);

struct Part<T> {
    value: T,
    /// The value's [`PartHash`], once asked; 0 while unknown (a hash of 0 is stored as 1).
    /// Threads that race to compute it store the same number, so a relaxed atomic does what a
    /// `OnceLock` did for less: its slow path was 2.4% of a depth-first check.
    hash: AtomicU64,
    /// Memoized [`Shared::checked`] verdict (a pure function of `value`).
    checked: OnceLock<Result<(), String>>,
}

/// A copy is made only to be written to ([`DerefMut`]): it starts with nothing cached.
impl<T: Clone> Clone for Part<T> {
    fn clone(&self) -> Part<T> {
        Part {
            value: self.value.clone(),
            hash: AtomicU64::new(0),
            checked: OnceLock::new(),
        }
    }
}

impl<T> Shared<T> {
    /// A part of its own.
    pub fn new(value: T) -> Shared<T> {
        Shared(Arc::new(Part {
            value,
            hash: AtomicU64::new(0),
            checked: OnceLock::new(),
        }))
    }

    /// Another handle on the same part (no copy).
    pub fn share(&self) -> Shared<T> {
        Shared(Arc::clone(&self.0))
    }

    /// `check(part)`, computed once per value of the part: a state that kept its parent's part
    /// unchanged gets the parent's verdict. `check` must be a pure function of the part, and
    /// each part must be checked with one function only.
    pub fn checked(&self, check: impl FnOnce(&T) -> Result<(), String>) -> Result<(), String> {
        self.0.checked.get_or_init(|| check(&self.0.value)).clone()
    }
}

/// One thread's parts of one type, by hash: weak handles, so a part lives only as long as a
/// state holds it.
pub struct Interner<T> {
    parts: HashMap<u64, Weak<Part<T>>, std::hash::BuildHasherDefault<PassThrough>>,
    /// Insertions since the dead handles were last swept out.
    since_sweep: usize,
}

impl<T> Default for Interner<T> {
    fn default() -> Interner<T> {
        Interner {
            parts: HashMap::default(),
            since_sweep: 0,
        }
    }
}

/// The part hashes are well mixed already: a table keyed by them uses them as they are.
#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The parts whose values this thread interns, one table per type.
pub trait Interned: PartHash + Eq + Sized + 'static {
    /// Runs `f` on this thread's table of this type.
    fn with_interner<R>(f: impl FnOnce(&mut Interner<Self>) -> R) -> R;
}

macro_rules! interned {
    ($($t:ty => $table:ident),* $(,)?) => {
        thread_local! {
            $(static $table: RefCell<Interner<$t>> = RefCell::new(Interner::default());)*
        }
        $(impl Interned for $t {
            fn with_interner<R>(f: impl FnOnce(&mut Interner<Self>) -> R) -> R {
                $table.with(|table| f(&mut table.borrow_mut()))
            }
        })*
    };
}

interned!(
    Groups => GROUPS,
    WaitingState<()> => WAITING,
    CacheState => CACHES,
    QueueState => QUEUES,
    ModelDriver => DRIVERS,
    BTreeMap<PodId, Stage> => STAGES,
);

impl<T: Interned> Shared<T> {
    /// This part, or an equal one this thread holds already (which this one then shares).
    /// Only a part no other state holds yet — one a step just wrote — is looked up.
    pub fn intern(&mut self) {
        if Arc::strong_count(&self.0) != 1 {
            return;
        }
        let hash = self.hash_value();
        T::with_interner(|table| {
            if let Some(known) = table.parts.get(&hash).and_then(Weak::upgrade) {
                if known.value == self.0.value {
                    // An equal part with its hash and verdict already known.
                    self.0 = known;
                }
                return;
            }
            table.parts.insert(hash, Arc::downgrade(&self.0));
            table.since_sweep += 1;
            // A dead handle keeps its part's allocation (the value is dropped, the
            // `Arc`'s block is not): sweeping once the table grew by an eighth keeps that
            // under an eighth of the live parts, for one pass over the table per eighth.
            if table.since_sweep > (table.parts.len() / 8).max(1 << 14) {
                table.parts.retain(|_, part| part.strong_count() > 0);
                table.since_sweep = 0;
            }
        });
    }
}

impl<T: PartHash> Shared<T> {
    fn hash_value(&self) -> u64 {
        let known = self.0.hash.load(Ordering::Relaxed);
        if known != 0 {
            return known;
        }
        let mut hasher = PartHasher::default();
        self.0.value.part_hash(&mut hasher);
        let hash = hasher.finish().max(1);
        self.0.hash.store(hash, Ordering::Relaxed);
        hash
    }
}

/// How a part is hashed: one function per type, consistent with its `Eq` (equal parts feed
/// the hasher alike).
pub trait PartHash {
    /// Feeds the part to `hasher`.
    fn part_hash(&self, hasher: &mut PartHasher);
}

/// Parts whose own `Hash` is used as is.
macro_rules! part_hash_by_hash {
    ($($t:ty),* $(,)?) => {
        $(impl PartHash for $t {
            fn part_hash(&self, hasher: &mut PartHasher) {
                self.hash(hasher);
            }
        })*
    };
}

part_hash_by_hash!(
    WaitingState<()>,
    CacheState,
    QueueState,
    BTreeMap<PodId, Stage>,
    BTreeMap<PodId, Pod>,
);

/// The driver by what tells its states apart: each assignment's pod, node and marks, each
/// pending decision's pod and cause, without hashing whole pods (equal values still hash
/// alike: this reads a part of what `Eq` compares).
impl PartHash for ModelDriver {
    fn part_hash(&self, hasher: &mut PartHasher) {
        for (id, a) in self.assignments() {
            id.hash(hasher);
            a.node.hash(hasher);
            hasher.write_u8(
                u8::from(a.deleted) | u8::from(a.rejected) << 1 | u8::from(a.claimed) << 2,
            );
        }
        hasher.write_u8(0xff);
        for job in self.jobs().jobs() {
            job.decision.pod.id().hash(hasher);
            job.decision.cause.hash(hasher);
        }
        hasher.write_u8(u8::from(self.is_shut_down()));
    }
}

/// The scheduling thread's pod by its id, its step and its node; a pod group's simulation by
/// each member's id and trial.
impl PartHash for Option<InCycle> {
    fn part_hash(&self, hasher: &mut PartHasher) {
        match self {
            None => hasher.write_u8(0),
            Some(InCycle::Group(simulation)) => {
                hasher.write_u8(4);
                for (m, trial) in &simulation.members {
                    m.info.id().hash(hasher);
                    trial.hash(hasher);
                }
            }
            Some(InCycle::Pod(Placed::Reserved { pod, node })) => {
                hasher.write_u8(1);
                pod.id().hash(hasher);
                node.hash(hasher);
            }
            Some(InCycle::Pod(Placed::Unfit { pod, .. })) => {
                hasher.write_u8(2);
                pod.id().hash(hasher);
            }
            Some(InCycle::Permitted { pod, node }) => {
                hasher.write_u8(3);
                pod.id().hash(hasher);
                node.hash(hasher);
            }
        }
    }
}

/// Each group's state in key order, through this hasher. `Groups`' own `Hash` sums per-group
/// hashes from the core's table hasher (order-independent, mixed enough for a table); a
/// fingerprint that must tell millions of states apart gets every group through this one.
impl PartHash for Groups {
    fn part_hash(&self, hasher: &mut PartHasher) {
        hasher.write_usize(self.len());
        for state in self.iter() {
            state.hash(hasher);
        }
    }
}

/// The parts' hasher: a multiply-fold hash with fixed keys (the construction of aHash's
/// portable fallback). The state fingerprint the walk computes over the parts' hashes
/// must tell millions of states apart, so this needs a well-mixed 64-bit result, not a
/// cryptographic one; SipHash costs several times more per pod id and per number written,
/// and a part is hashed whenever a step writes to it.
pub struct PartHasher(u64);

const SEED: u64 = 0x243F_6A88_85A3_08D3;
const MULTIPLE: u64 = 0x5851_F42D_4C95_7F2D;
const PAD: u64 = 0x1319_8A2E_0370_7344;

impl Default for PartHasher {
    fn default() -> PartHasher {
        PartHasher(SEED)
    }
}

/// The 128-bit product of `a` and `b`, its halves xored.
fn folded_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

impl Hasher for PartHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.write_u64(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.write_u64(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(last));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = folded_multiply(self.0 ^ n, MULTIPLE);
    }

    #[inline]
    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        let rotation = (self.0 & 63) as u32;
        folded_multiply(self.0, PAD).rotate_left(rotation)
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0.value
    }
}

/// A write: the part is copied first if another state shares it, and its cached hash and
/// verdict are dropped.
impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        let part = Arc::make_mut(&mut self.0);
        *part.hash.get_mut() = 0;
        part.checked.take();
        &mut part.value
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Shared<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.value == other.0.value
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: PartHash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash_value());
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}

impl<'a, T> IntoIterator for &'a Shared<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        IntoIterator::into_iter(&self.0.value)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::hash::{DefaultHasher, Hash, Hasher};

    use super::{PartHash, PartHasher, Shared};

    impl PartHash for BTreeMap<i32, &str> {
        fn part_hash(&self, hasher: &mut PartHasher) {
            self.hash(hasher);
        }
    }

    fn hash_of(value: &impl Hash) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn a_write_copies_a_shared_part_and_forgets_its_hash() {
        let a = Shared::new(BTreeMap::from([(1, "one")]));
        let mut b = a.share();
        assert_eq!(hash_of(&a), hash_of(&b));
        assert_eq!(a.checked(|_| Err("first".into())), Err("first".into()));
        b.insert(2, "two");
        assert_eq!((a.len(), b.len()), (1, 2), "a is untouched");
        assert_ne!(hash_of(&a), hash_of(&b));
        assert!(a != b);
        assert_eq!(b.checked(|_| Ok(())), Ok(()), "b's verdict is its own");
        assert_eq!(
            a.checked(|_| Ok(())),
            Err("first".into()),
            "a's is memoized"
        );
        b.remove(&2);
        assert!(a == b);
        assert_eq!(hash_of(&a), hash_of(&b), "equal parts hash alike");
        let copy: BTreeMap<i32, &str> = b.clone();
        assert_eq!(copy.len(), 1);
    }
}
