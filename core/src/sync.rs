//! The sync facade: every lock, condition variable, channel and thread gangway uses.
//!
//! This is the only file that names `parking_lot`, `crossbeam_channel`, `std::sync` locks,
//! `loom` or `shuttle` (clippy's `disallowed-types` and `disallowed-methods` enforce it). A
//! normal build gets parking_lot locks and crossbeam channels; a build with `RUSTFLAGS="--cfg
//! loom"` gets loom's instrumented types behind the *same* API, so loom explores every
//! interleaving of the real code, and one with `--cfg shuttle` gets shuttle's, so shuttle's
//! schedulers (random, PCT) run the whole threaded scheduler. The API is parking_lot-shaped: `lock()` returns a bare guard (no poisoning) and
//! [`Condvar::wait`] takes the guard by `&mut`.
//!
//! The module is public, and hidden from the documentation, so that gangway's own crates (the
//! checkers, the tests, the benches) run on the same primitives as the core; it is not part of
//! the API and not semver-stable. [`model`] runs a closure under loom or shuttle (or once,
//! without either).

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::time::Duration;

pub use std::sync::{Arc, Weak};

#[cfg(not(any(loom, shuttle)))]
mod imp {
    pub(super) type RawMutex<T> = parking_lot::Mutex<T>;
    pub(super) type RawGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
    pub(super) type RawCondvar = parking_lot::Condvar;
    pub(super) type RawRwLock<T> = parking_lot::RwLock<T>;
    pub(super) type RawReadGuard<'a, T> = parking_lot::RwLockReadGuard<'a, T>;
    pub(super) type RawWriteGuard<'a, T> = parking_lot::RwLockWriteGuard<'a, T>;
}

#[cfg(all(shuttle, loom))]
compile_error!(
    "--cfg loom and --cfg shuttle exclude each other: build them in their own target dirs"
);

#[cfg(shuttle)]
mod imp {
    pub(super) type RawMutex<T> = shuttle::sync::Mutex<T>;
    pub(super) type RawGuard<'a, T> = shuttle::sync::MutexGuard<'a, T>;
    pub(super) type RawCondvar = shuttle::sync::Condvar;
    pub(super) type RawRwLock<T> = shuttle::sync::RwLock<T>;
    pub(super) type RawReadGuard<'a, T> = shuttle::sync::RwLockReadGuard<'a, T>;
    pub(super) type RawWriteGuard<'a, T> = shuttle::sync::RwLockWriteGuard<'a, T>;
}

#[cfg(loom)]
mod imp {
    pub(super) type RawMutex<T> = loom::sync::Mutex<T>;
    pub(super) type RawGuard<'a, T> = loom::sync::MutexGuard<'a, T>;
    pub(super) type RawCondvar = loom::sync::Condvar;
    pub(super) type RawRwLock<T> = loom::sync::RwLock<T>;
    pub(super) type RawReadGuard<'a, T> = loom::sync::RwLockReadGuard<'a, T>;
    pub(super) type RawWriteGuard<'a, T> = loom::sync::RwLockWriteGuard<'a, T>;
}

/// A mutual-exclusion lock without poisoning: parking_lot's, or loom's (shuttle's) under
/// `--cfg loom` (`--cfg shuttle`).
pub struct Mutex<T> {
    raw: imp::RawMutex<T>,
}

/// Holds a [`Mutex`] locked; the lock is released when the guard is dropped.
pub struct MutexGuard<'a, T> {
    // Always `Some` outside of `Condvar::wait`, which takes the raw guard out while it sleeps.
    raw: Option<imp::RawGuard<'a, T>>,
}

impl<T> Mutex<T> {
    /// A new unlocked mutex holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            raw: imp::RawMutex::new(value),
        }
    }

    /// Blocks until the lock is held. A panic while the lock was held does not poison it.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(not(any(loom, shuttle)))]
        let raw = self.raw.lock();
        #[cfg(any(loom, shuttle))]
        let raw = self.raw.lock().unwrap_or_else(|p| p.into_inner());
        MutexGuard { raw: Some(raw) }
    }

    /// Consumes the mutex and returns the value inside.
    pub fn into_inner(self) -> T {
        #[cfg(not(any(loom, shuttle)))]
        return self.raw.into_inner();
        #[cfg(any(loom, shuttle))]
        return self.raw.into_inner().unwrap_or_else(|p| p.into_inner());
    }
}

impl<T: fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutex").finish_non_exhaustive()
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.raw
            .as_ref()
            .expect("guard is held outside of Condvar::wait")
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.raw
            .as_mut()
            .expect("guard is held outside of Condvar::wait")
    }
}

/// A condition variable used with one [`Mutex`]. Always re-check the predicate in a loop.
pub struct Condvar {
    raw: imp::RawCondvar,
}

impl Condvar {
    /// A new condition variable.
    pub fn new() -> Self {
        Self {
            raw: imp::RawCondvar::new(),
        }
    }

    /// Atomically releases the guard's lock and sleeps until notified, then re-locks.
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        #[cfg(not(any(loom, shuttle)))]
        self.raw.wait(guard.raw.as_mut().expect("guard is held"));
        #[cfg(any(loom, shuttle))]
        {
            let raw = guard.raw.take().expect("guard is held");
            guard.raw = Some(self.raw.wait(raw).unwrap_or_else(|p| p.into_inner()));
        }
    }

    /// Like [`wait`](Self::wait) but gives up after `timeout`; returns `true` if it timed out.
    ///
    /// Under loom and shuttle there is no time: this never times out and behaves like `wait`.
    pub fn wait_for<T>(&self, guard: &mut MutexGuard<'_, T>, timeout: Duration) -> bool {
        #[cfg(not(any(loom, shuttle)))]
        return self
            .raw
            .wait_for(guard.raw.as_mut().expect("guard is held"), timeout)
            .timed_out();
        #[cfg(any(loom, shuttle))]
        {
            let _ = timeout;
            self.wait(guard);
            false
        }
    }

    /// Wakes one thread waiting on this condition variable.
    pub fn notify_one(&self) {
        self.raw.notify_one();
    }

    /// Wakes every thread waiting on this condition variable.
    pub fn notify_all(&self) {
        self.raw.notify_all();
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar").finish_non_exhaustive()
    }
}

/// A reader-writer lock without poisoning: parking_lot's, or loom's (shuttle's). Many
/// readers or one writer; readers do not wait for each other.
pub struct RwLock<T> {
    raw: imp::RawRwLock<T>,
}

/// Shared access to an [`RwLock`]'s value; released when dropped.
pub type RwLockReadGuard<'a, T> = imp::RawReadGuard<'a, T>;

/// Exclusive access to an [`RwLock`]'s value; released when dropped.
pub type RwLockWriteGuard<'a, T> = imp::RawWriteGuard<'a, T>;

impl<T> RwLock<T> {
    /// A new unlocked lock holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            raw: imp::RawRwLock::new(value),
        }
    }

    /// Blocks until shared access is held.
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        #[cfg(not(any(loom, shuttle)))]
        return self.raw.read();
        #[cfg(any(loom, shuttle))]
        return self.raw.read().unwrap_or_else(|p| p.into_inner());
    }

    /// Blocks until exclusive access is held.
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        #[cfg(not(any(loom, shuttle)))]
        return self.raw.write();
        #[cfg(any(loom, shuttle))]
        return self.raw.write().unwrap_or_else(|p| p.into_inner());
    }

    /// Exclusive access if nobody holds the lock now; `None` otherwise.
    pub fn try_write(&self) -> Option<RwLockWriteGuard<'_, T>> {
        #[cfg(not(any(loom, shuttle)))]
        return self.raw.try_write();
        #[cfg(any(loom, shuttle))]
        return self.raw.try_write().ok();
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RwLock").finish_non_exhaustive()
    }
}

/// Atomic integers: std's, or loom's (shuttle's) under `--cfg loom` (`--cfg shuttle`), so the
/// checker sees every access.
pub mod atomic {
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    #[cfg(shuttle)]
    pub use shuttle::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    #[cfg(not(any(loom, shuttle)))]
    pub use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
}

/// A number no earlier call in this process returned: a stamp that marks one version of some
/// state, so that a cache derived from that state can tell whether it is still current (the
/// queue's record of which gang members are past Reserve, checked against the gang's stamp:
/// issue #23). std's atomic under every cfg: a stamp orders nothing and is only ever compared
/// for equality, so there is nothing here for loom or shuttle to explore.
pub fn fresh_stamp() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Unbounded multi-producer channels: crossbeam-channel, or under `--cfg loom` and `--cfg
/// shuttle` a small channel built from the facade's own [`Mutex`] and [`Condvar`], so that the
/// checker sees every send and every blocking receive (loom's mpsc receiver is not `Sync` and
/// crossbeam is invisible to both).
pub mod channel {
    use std::fmt;

    #[cfg(not(any(loom, shuttle)))]
    type RawSender<T> = crossbeam_channel::Sender<T>;
    #[cfg(not(any(loom, shuttle)))]
    type RawReceiver<T> = crossbeam_channel::Receiver<T>;
    #[cfg(any(loom, shuttle))]
    type RawSender<T> = modelled::Sender<T>;
    #[cfg(any(loom, shuttle))]
    type RawReceiver<T> = modelled::Receiver<T>;

    /// The sending half of a channel; cheap to clone.
    pub struct Sender<T> {
        raw: RawSender<T>,
    }

    /// The receiving half of a channel.
    pub struct Receiver<T> {
        raw: RawReceiver<T>,
    }

    /// An error returned from [`Sender::send`]: the receiver is gone; the value is handed back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    /// An error returned from [`Receiver::recv`]: every sender is gone and the channel is empty.
    #[derive(Debug, PartialEq, Eq, Clone, Copy, thiserror::Error)]
    #[error("receiving on an empty and disconnected channel")]
    pub struct RecvError;

    impl<T> fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("SendError(..)")
        }
    }

    impl<T> fmt::Display for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("sending on a disconnected channel")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

    /// Creates an unbounded channel.
    pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
        #[cfg(not(any(loom, shuttle)))]
        let (tx, rx) = crossbeam_channel::unbounded();
        #[cfg(any(loom, shuttle))]
        let (tx, rx) = modelled::unbounded();
        (Sender { raw: tx }, Receiver { raw: rx })
    }

    impl<T> Sender<T> {
        /// Sends without blocking; fails only when the receiver has been dropped.
        pub fn send(&self, value: T) -> Result<(), SendError<T>> {
            #[cfg(not(any(loom, shuttle)))]
            return self.raw.send(value).map_err(|e| SendError(e.0));
            #[cfg(any(loom, shuttle))]
            return self.raw.send(value).map_err(SendError);
        }
    }

    impl<T> Clone for Sender<T> {
        fn clone(&self) -> Self {
            Self {
                raw: self.raw.clone(),
            }
        }
    }

    impl<T> Receiver<T> {
        /// Blocks until a value arrives, or fails once every sender is gone.
        pub fn recv(&self) -> Result<T, RecvError> {
            self.raw.recv().map_err(|_| RecvError)
        }

        /// Takes a value if one is ready.
        pub fn try_recv(&self) -> Option<T> {
            self.raw.try_recv().ok()
        }

        /// Takes every value that is ready now.
        pub fn drain(&self) -> Vec<T> {
            std::iter::from_fn(|| self.try_recv()).collect()
        }
    }

    impl<T> fmt::Debug for Sender<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Sender { .. }")
        }
    }

    impl<T> fmt::Debug for Receiver<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Receiver { .. }")
        }
    }

    #[cfg(any(loom, shuttle))]
    mod modelled {
        use std::collections::VecDeque;

        use super::super::{Arc, Condvar, Mutex};

        struct Chan<T> {
            state: Mutex<State<T>>,
            ready: Condvar,
        }

        struct State<T> {
            queue: VecDeque<T>,
            senders: usize,
            receiver_alive: bool,
        }

        pub(super) struct Sender<T>(Arc<Chan<T>>);
        pub(super) struct Receiver<T>(Arc<Chan<T>>);

        pub(super) fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
            let chan = Arc::new(Chan {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    senders: 1,
                    receiver_alive: true,
                }),
                ready: Condvar::new(),
            });
            (Sender(chan.clone()), Receiver(chan))
        }

        impl<T> Sender<T> {
            pub(super) fn send(&self, value: T) -> Result<(), T> {
                let mut state = self.0.state.lock();
                if !state.receiver_alive {
                    return Err(value);
                }
                state.queue.push_back(value);
                self.0.ready.notify_all();
                Ok(())
            }
        }

        impl<T> Clone for Sender<T> {
            fn clone(&self) -> Self {
                self.0.state.lock().senders += 1;
                Sender(self.0.clone())
            }
        }

        impl<T> Drop for Sender<T> {
            fn drop(&mut self) {
                self.0.state.lock().senders -= 1;
                self.0.ready.notify_all();
            }
        }

        impl<T> Receiver<T> {
            pub(super) fn recv(&self) -> Result<T, ()> {
                let mut state = self.0.state.lock();
                loop {
                    if let Some(value) = state.queue.pop_front() {
                        return Ok(value);
                    }
                    if state.senders == 0 {
                        return Err(());
                    }
                    self.0.ready.wait(&mut state);
                }
            }

            pub(super) fn try_recv(&self) -> Result<T, ()> {
                self.0.state.lock().queue.pop_front().ok_or(())
            }
        }

        impl<T> Drop for Receiver<T> {
            fn drop(&mut self) {
                self.0.state.lock().receiver_alive = false;
            }
        }
    }
}

/// Threads: `std::thread`, or loom's (shuttle's) modelled threads under `--cfg loom`
/// (`--cfg shuttle`).
pub mod thread {
    #[cfg(loom)]
    pub use loom::thread::{yield_now, JoinHandle};
    #[cfg(shuttle)]
    pub use shuttle::thread::{yield_now, JoinHandle};
    #[cfg(not(any(loom, shuttle)))]
    pub use std::thread::{yield_now, JoinHandle};

    /// Spawns a thread running `f`. `name` labels it in debuggers and panics (not under loom).
    pub fn spawn<F, T>(name: &str, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        #[cfg(not(any(loom, shuttle)))]
        return std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(f)
            .expect("the operating system refused to start a thread");
        #[cfg(loom)]
        {
            let _ = name;
            loom::thread::spawn(f)
        }
        #[cfg(shuttle)]
        return shuttle::thread::Builder::new()
            .name(name.to_owned())
            .spawn(f)
            .expect("shuttle starts every thread");
    }
}

/// Runs `f` under loom's model checker (every interleaving, bounded by `LOOM_MAX_PREEMPTIONS`),
/// under shuttle's random scheduler (`SHUTTLE_ITERATIONS` schedules, default 100), or once, on
/// real threads, in a normal build.
pub fn model<F>(f: F)
where
    F: Fn() + Send + Sync + 'static,
{
    #[cfg(loom)]
    loom::model(f);
    #[cfg(shuttle)]
    shuttle::check_random(
        f,
        std::env::var("SHUTTLE_ITERATIONS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(100),
    );
    #[cfg(not(any(loom, shuttle)))]
    f();
}

#[cfg(test)]
#[path = "sync_tests.rs"]
mod tests;
