//! [`Mutex`], as `tokio::sync::Mutex`: fair (first come, first served), held across
//! `.await`, with owned guards.

use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::Arc;

use parking_lot::RawMutex;
use parking_lot::lock_api::ArcMutexGuard;

use super::TryLockError;
use super::copied::Copied;
use super::sem::{self, Acquire, AcquireNames, Sem, SemLock};
use interleave_engine::primitive::{Fresh, Loc, Operation};

/// How a `static` Tokio mutex starts afresh in every execution, as a report advises.
const FRESH: Option<Fresh> = Some(Fresh {
    ty: "tokio::sync::Mutex<T>",
    or: " (or `tokio::sync::Mutex::const_new(..)`, for a value that is `Clone`)",
});

/// What reports call the operations (`lock` and `lock_owned` alike).
const LOCK: &AcquireNames = &[
    interleave_test::sync::section("tokio Mutex lock"),
    interleave_test::sync::section("tokio Mutex lock dropped"),
];
const TRY_LOCK: &Operation = &interleave_test::sync::section("tokio Mutex try_lock");
const UNLOCK: &Operation = &interleave_test::sync::section("tokio Mutex unlock");

/// An async mutex, as `tokio::sync::Mutex`: `lock().await` waits (a task wait, not a
/// blocked thread) and tasks get the lock in the order they asked for it. It does not
/// poison. Locking and unlocking are switch points.
///
/// A `static` mutex is made by [`const_new`](Self::const_new); each execution starts with
/// a copy of its value:
///
/// ```
/// use interleave_test_tokio::{self as tokio, sync::Mutex};
///
/// static COUNT: Mutex<u32> = Mutex::const_new(0);
///
/// interleave_test::check_async(|| async {
///     let task = tokio::spawn(async { *COUNT.lock().await += 1 });
///     *COUNT.lock().await += 1;
///     task.await.unwrap();
///     assert_eq!(*COUNT.lock().await, 2, "each execution starts from 0");
/// })
/// .unwrap();
/// ```
pub struct Mutex<T> {
    /// The lock and value of each execution that uses the mutex (see [`Copied`]).
    states: Copied<State<T>, T>,
}

/// The lock and value of a [`Mutex`] in one execution.
struct State<T> {
    sem: SemLock,
    /// The value; only the holder of the permit locks it, so it is never contended.
    data: Arc<parking_lot::Mutex<T>>,
}

impl<T> State<T> {
    fn new(value: T) -> Self {
        State {
            sem: sem::new_lock(Sem::new(1, "lock"), "tokio Mutex", FRESH),
            data: Arc::new(parking_lot::Mutex::new(value)),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("Mutex");
        self.states
            .debug_data(&mut out, |state| state.data.try_lock());
        out.finish()
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

impl<T> Mutex<T> {
    /// An unlocked mutex holding `value`.
    pub fn new(value: T) -> Self {
        Mutex {
            states: Copied::made(State::new(value)),
        }
    }

    /// An unlocked mutex holding `value`, usable as a `static`: each execution starts
    /// with a copy of `value` (so `T: Clone` here, unlike Tokio's, and each execution that
    /// uses the mutex keeps its small state until the mutex is dropped, for a `static`
    /// until the process exits).
    pub const fn const_new(value: T) -> Self
    where
        T: Clone,
    {
        Mutex {
            states: Copied::from_init(value, T::clone),
        }
    }

    /// The calling execution's lock and value.
    fn state(&self) -> &State<T> {
        self.states.get(State::new)
    }

    /// Waits for the lock. Cancel-safe: dropping the future gives up its place in the queue.
    /// (An `async fn` in Tokio; here a function that returns the future, so that reports
    /// show where the program called it.)
    #[track_caller]
    pub fn lock(&self) -> impl Future<Output = MutexGuard<'_, T>> + '_ {
        let loc = Location::caller();
        async move {
            let _ = Acquire::new(&self.state().sem, 1, loc, LOCK).await;
            self.guard(loc)
        }
    }

    /// The lock if it is free and nobody waits for it.
    #[track_caller]
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        let loc = Location::caller();
        match sem::lock(&self.state().sem, loc, TRY_LOCK).try_acquire(1) {
            Ok(()) => Ok(self.guard(loc)),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Waits for the lock from synchronous code (a thread, or a `spawn_blocking` task),
    /// as `blocking_lock`.
    ///
    /// # Panics
    /// Inside a future polled by a runtime (Tokio's rule: it would stall the runtime).
    #[track_caller]
    pub fn blocking_lock(&self) -> MutexGuard<'_, T> {
        super::no_blocking_in_async("Mutex::blocking_lock");
        interleave_test::future::block_on(self.lock())
    }

    /// Waits for the lock and returns a guard that owns a reference to the mutex.
    #[track_caller]
    pub fn lock_owned(self: Arc<Self>) -> impl Future<Output = OwnedMutexGuard<T>> {
        let loc = Location::caller();
        async move {
            let _ = Acquire::new(&self.state().sem, 1, loc, LOCK).await;
            self.owned_guard(loc)
        }
    }

    /// [`lock_owned`](Self::lock_owned) from synchronous code, as `blocking_lock_owned`.
    ///
    /// # Panics
    /// Inside a future polled by a runtime (Tokio's rule).
    #[track_caller]
    pub fn blocking_lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        super::no_blocking_in_async("Mutex::blocking_lock_owned");
        interleave_test::future::block_on(self.lock_owned())
    }

    /// [`try_lock`](Self::try_lock) with an owned guard.
    #[track_caller]
    pub fn try_lock_owned(self: Arc<Self>) -> Result<OwnedMutexGuard<T>, TryLockError> {
        let loc = Location::caller();
        match sem::lock(&self.state().sem, loc, TRY_LOCK).try_acquire(1) {
            Ok(()) => {}
            Err(_) => return Err(TryLockError(())),
        }
        Ok(self.owned_guard(loc))
    }

    /// The value, mutably (no lock needed: the borrow is exclusive).
    pub fn get_mut(&mut self) -> &mut T {
        let state = self.states.get_mut(State::new);
        Arc::get_mut(&mut state.data)
            .expect("no guard outlives an exclusive borrow of its mutex")
            .get_mut()
    }

    /// The value.
    pub fn into_inner(self) -> T {
        match Arc::try_unwrap(self.states.into_state(State::new).data) {
            Ok(data) => data.into_inner(),
            Err(_) => unreachable!("no guard outlives the mutex it borrows"),
        }
    }

    fn guard(&self, loc: Loc) -> MutexGuard<'_, T> {
        let state = self.state();
        MutexGuard {
            lock: self,
            data: state.data.lock(),
            permit: Permit {
                sem: &state.sem,
                loc,
            },
        }
    }

    /// Gives the lock back (a guard's drop, reported at the lock's place `loc`).
    fn unlock(&self, loc: Loc) {
        sem::give_back(&self.state().sem, 1, loc, UNLOCK);
    }

    fn owned_guard(self: Arc<Self>, loc: Loc) -> OwnedMutexGuard<T> {
        let data = parking_lot::Mutex::lock_arc(&self.state().data);
        OwnedMutexGuard {
            lock: self,
            data,
            loc,
        }
    }
}

/// The lock of a [`Mutex`], released when dropped.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T> {
    lock: &'a Mutex<T>,
    data: parking_lot::MutexGuard<'a, T>,
    /// Gives the lock back when dropped, after the value's guard (the fields' order).
    permit: Permit<'a>,
}

/// The permit of a locked [`Mutex`]: given back when dropped (reported where the program
/// took the lock, `loc`).
struct Permit<'a> {
    sem: &'a SemLock,
    loc: Loc,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        sem::give_back(self.sem, 1, self.loc, UNLOCK);
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<'a, T> MutexGuard<'a, T> {
    /// The mutex it locks.
    pub fn mutex(this: &Self) -> &'a Mutex<T> {
        this.lock
    }

    /// A guard of a part of the value, as `MutexGuard::map`: the lock is held until it is
    /// dropped. No switch point.
    pub fn map<U, F>(this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        MappedMutexGuard {
            data: parking_lot::MutexGuard::map(this.data, f),
            permit: this.permit,
        }
    }

    /// A guard of a part of the value if `f` finds one, else this guard back, as
    /// `MutexGuard::try_map`.
    pub fn try_map<U, F>(this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        match parking_lot::MutexGuard::try_map(this.data, f) {
            Ok(data) => Ok(MappedMutexGuard {
                data,
                permit: this.permit,
            }),
            Err(data) => Err(MutexGuard {
                lock: this.lock,
                data,
                permit: this.permit,
            }),
        }
    }

    /// The same lock as a [`MappedMutexGuard`] of the whole value.
    pub fn into_mapped(this: Self) -> MappedMutexGuard<'a, T> {
        MutexGuard::map(this, |value| value)
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

/// The lock of a [`Mutex`] that gives access to a part of its value, as
/// `tokio::sync::MappedMutexGuard`: made by [`MutexGuard::map`], released when dropped.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MappedMutexGuard<'a, T> {
    data: parking_lot::MappedMutexGuard<'a, T>,
    permit: Permit<'a>,
}

impl<T: std::fmt::Debug> std::fmt::Debug for MappedMutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<'a, T> MappedMutexGuard<'a, T> {
    /// A guard of a part of this part, as [`MutexGuard::map`].
    pub fn map<U, F>(this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        MappedMutexGuard {
            data: parking_lot::MappedMutexGuard::map(this.data, f),
            permit: this.permit,
        }
    }

    /// A guard of a part of this part if `f` finds one, else this guard back.
    pub fn try_map<U, F>(this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        match parking_lot::MappedMutexGuard::try_map(this.data, f) {
            Ok(data) => Ok(MappedMutexGuard {
                data,
                permit: this.permit,
            }),
            Err(data) => Err(MappedMutexGuard {
                data,
                permit: this.permit,
            }),
        }
    }
}

impl<T> Deref for MappedMutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for MappedMutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

/// The lock of a [`Mutex`] in an `Arc`, owning a reference to it.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct OwnedMutexGuard<T> {
    lock: Arc<Mutex<T>>,
    data: ArcMutexGuard<RawMutex, T>,
    /// Where the program took the lock.
    loc: Loc,
}

impl<T: std::fmt::Debug> std::fmt::Debug for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<T> OwnedMutexGuard<T> {
    /// The mutex it locks.
    pub fn mutex(this: &Self) -> &Arc<Mutex<T>> {
        &this.lock
    }
}

impl<T> Deref for OwnedMutexGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for OwnedMutexGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

impl<T> Drop for OwnedMutexGuard<T> {
    fn drop(&mut self) {
        self.lock.unlock(self.loc);
    }
}
