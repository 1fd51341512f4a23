//! [`RwLock`], as `tokio::sync::RwLock`: fair (a reader that comes after a waiting writer
//! waits behind it), with owned guards.

use std::future::Future;
use std::panic::Location;
use std::sync::Arc;

use super::TryLockError;
use super::copied::Copied;
use super::rwlock_guards::{RwLockReadGuard, RwLockWriteGuard};
use super::rwlock_owned::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard};
use super::sem::{self, Acquire, AcquireNames, Sem, SemLock};
use interleave_engine::primitive::{Fresh, Loc, Operation};

/// How a `static` Tokio `RwLock` starts afresh in every execution, as a report advises.
const FRESH: Option<Fresh> = Some(Fresh {
    ty: "tokio::sync::RwLock<T>",
    or: " (or `tokio::sync::RwLock::const_new(..)`, for a value that is `Clone`)",
});

/// What reports call the operations (owned or not alike).
const READ: &AcquireNames = &[
    interleave_test::sync::section("tokio RwLock read"),
    interleave_test::sync::section("tokio RwLock read dropped"),
];
const WRITE: &AcquireNames = &[
    interleave_test::sync::section("tokio RwLock write"),
    interleave_test::sync::section("tokio RwLock write dropped"),
];
const TRY_READ: &Operation = &interleave_test::sync::section("tokio RwLock try_read");
const TRY_WRITE: &Operation = &interleave_test::sync::section("tokio RwLock try_write");
pub(super) const READ_UNLOCK: &Operation =
    &interleave_test::sync::section("tokio RwLock read unlock");
pub(super) const WRITE_UNLOCK: &Operation =
    &interleave_test::sync::section("tokio RwLock write unlock");
pub(super) const DOWNGRADE: &Operation = &interleave_test::sync::section("tokio RwLock downgrade");

/// The readers a lock admits at once by default, as Tokio's.
const MAX_READS: u32 = u32::MAX >> 3;

/// Tokio's rules for the readers a lock admits (its messages; 536870911 is `MAX_READS`).
const _: () = assert!(MAX_READS == 536_870_911);
#[track_caller]
const fn check_max_reads(max_reads: u32) {
    assert!(
        max_reads <= MAX_READS,
        "a RwLock may not be created with more than 536870911 readers"
    );
    assert!(max_reads > 0, "a RwLock may not be created with 0 readers");
}

/// An async reader-writer lock, as `tokio::sync::RwLock`: readers take one permit of a
/// fair semaphore, a writer takes them all, so requests are served in the order they
/// came (a writer is not starved by a stream of readers, and a reader that asks after a
/// waiting writer waits for it). Holding a read guard across an `.await` while another
/// task asks to write, and then asking to read again, deadlocks as in Tokio, and the
/// search finds it. Locking and unlocking are switch points.
///
/// A `static` lock is made by [`const_new`](Self::const_new); each execution starts with a
/// copy of its value.
pub struct RwLock<T> {
    /// The lock and value of each execution that uses the lock (see [`Copied`]).
    states: Copied<State<T>, T>,
    /// The readers it admits at once.
    pub(super) max: u32,
}

/// The lock and value of a [`RwLock`] in one execution.
pub(super) struct State<T> {
    sem: SemLock,
    /// The value; locked only as the permits held allow, so never contended.
    pub(super) data: Arc<parking_lot::RwLock<T>>,
}

impl<T> State<T> {
    fn new(value: T, max: u32) -> Self {
        State {
            sem: sem::new_lock(Sem::new(max as usize, "lock"), "tokio RwLock", FRESH),
            data: Arc::new(parking_lot::RwLock::new(value)),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("RwLock");
        self.states
            .debug_data(&mut out, |state| state.data.try_read());
        out.field("max_readers", &self.max).finish()
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(value: T) -> Self {
        RwLock::new(value)
    }
}

impl<T> RwLock<T> {
    /// An unlocked lock holding `value`.
    #[track_caller]
    pub fn new(value: T) -> Self {
        RwLock::with_max_readers(value, MAX_READS)
    }

    /// A lock that admits at most `max_reads` readers at once.
    ///
    /// # Panics
    /// If `max_reads` is 0 or more than `u32::MAX >> 3` (Tokio's rules); the panic is
    /// located at the caller, as Tokio's.
    #[track_caller]
    pub fn with_max_readers(value: T, max_reads: u32) -> Self {
        check_max_reads(max_reads);
        RwLock {
            states: Copied::made(State::new(value, max_reads)),
            max: max_reads,
        }
    }

    /// An unlocked lock holding `value`, usable as a `static`: each execution starts with
    /// a copy of `value` (so `T: Clone` here, unlike Tokio's, and each execution that uses
    /// the lock keeps its small state until the lock is dropped, for a `static` until the
    /// process exits).
    pub const fn const_new(value: T) -> Self
    where
        T: Clone,
    {
        RwLock::const_with_max_readers(value, MAX_READS)
    }

    /// [`const_new`](Self::const_new) admitting at most `max_reads` readers at once.
    ///
    /// # Panics
    /// As [`with_max_readers`](Self::with_max_readers) (at compile time in a `static`).
    pub const fn const_with_max_readers(value: T, max_reads: u32) -> Self
    where
        T: Clone,
    {
        check_max_reads(max_reads);
        RwLock {
            states: Copied::from_init(value, T::clone),
            max: max_reads,
        }
    }

    /// The calling execution's lock and value.
    pub(super) fn state(&self) -> &State<T> {
        self.states.get(|value| State::new(value, self.max))
    }

    /// Waits to read. Cancel-safe. (An `async fn` in Tokio; here a function that returns
    /// the future, so that reports show where the program called it.)
    #[track_caller]
    pub fn read(&self) -> impl Future<Output = RwLockReadGuard<'_, T>> + '_ {
        let loc = Location::caller();
        async move {
            let _ = Acquire::new(&self.state().sem, 1, loc, READ).await;
            self.read_guard(loc)
        }
    }

    /// Waits to write. Cancel-safe.
    #[track_caller]
    pub fn write(&self) -> impl Future<Output = RwLockWriteGuard<'_, T>> + '_ {
        let loc = Location::caller();
        async move {
            let _ = Acquire::new(&self.state().sem, self.max as usize, loc, WRITE).await;
            self.write_guard(loc)
        }
    }

    /// A read guard if no writer holds or waits for the lock.
    #[track_caller]
    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        let loc = Location::caller();
        self.try_take(1, loc, TRY_READ)?;
        Ok(self.read_guard(loc))
    }

    /// A write guard if nobody holds or waits for the lock.
    #[track_caller]
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        let loc = Location::caller();
        self.try_take(self.max, loc, TRY_WRITE)?;
        Ok(self.write_guard(loc))
    }

    /// Waits to read from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a `block_on` (Tokio's rule).
    #[track_caller]
    pub fn blocking_read(&self) -> RwLockReadGuard<'_, T> {
        super::no_blocking_in_async("RwLock::blocking_read");
        interleave_test::future::block_on(self.read())
    }

    /// Waits to write from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a `block_on` (Tokio's rule).
    #[track_caller]
    pub fn blocking_write(&self) -> RwLockWriteGuard<'_, T> {
        super::no_blocking_in_async("RwLock::blocking_write");
        interleave_test::future::block_on(self.write())
    }

    /// [`read`](Self::read) with a guard that owns a reference to the lock.
    #[track_caller]
    pub fn read_owned(self: Arc<Self>) -> impl Future<Output = OwnedRwLockReadGuard<T>> {
        let loc = Location::caller();
        async move {
            let _ = Acquire::new(&self.state().sem, 1, loc, READ).await;
            OwnedRwLockReadGuard::new(self, loc)
        }
    }

    /// [`write`](Self::write) with a guard that owns a reference to the lock.
    #[track_caller]
    pub fn write_owned(self: Arc<Self>) -> impl Future<Output = OwnedRwLockWriteGuard<T>> {
        let loc = Location::caller();
        async move {
            let _ = Acquire::new(&self.state().sem, self.max as usize, loc, WRITE).await;
            OwnedRwLockWriteGuard::new(self, loc)
        }
    }

    /// [`try_read`](Self::try_read) with an owned guard.
    #[track_caller]
    pub fn try_read_owned(self: Arc<Self>) -> Result<OwnedRwLockReadGuard<T>, TryLockError> {
        let loc = Location::caller();
        self.try_take(1, loc, TRY_READ)?;
        Ok(OwnedRwLockReadGuard::new(self, loc))
    }

    /// [`try_write`](Self::try_write) with an owned guard.
    #[track_caller]
    pub fn try_write_owned(self: Arc<Self>) -> Result<OwnedRwLockWriteGuard<T>, TryLockError> {
        let loc = Location::caller();
        self.try_take(self.max, loc, TRY_WRITE)?;
        Ok(OwnedRwLockWriteGuard::new(self, loc))
    }

    /// The value, mutably (no lock needed: the borrow is exclusive).
    pub fn get_mut(&mut self) -> &mut T {
        let max = self.max;
        let state = self.states.get_mut(|value| State::new(value, max));
        Arc::get_mut(&mut state.data)
            .expect("no guard outlives an exclusive borrow of its lock")
            .get_mut()
    }

    /// The value.
    pub fn into_inner(self) -> T {
        let max = self.max;
        let state = self.states.into_state(|value| State::new(value, max));
        match Arc::try_unwrap(state.data) {
            Ok(data) => data.into_inner(),
            Err(_) => unreachable!("no guard outlives the lock it borrows"),
        }
    }

    fn try_take(&self, n: u32, loc: Loc, what: &'static Operation) -> Result<(), TryLockError> {
        sem::lock(&self.state().sem, loc, what)
            .try_acquire(n as usize)
            .map_err(|_| TryLockError(()))
    }

    fn read_guard(&self, loc: Loc) -> RwLockReadGuard<'_, T> {
        let state = self.state();
        RwLockReadGuard::new(state.data.read(), &state.sem, loc)
    }

    fn write_guard(&self, loc: Loc) -> RwLockWriteGuard<'_, T> {
        let state = self.state();
        RwLockWriteGuard::new(state.data.write(), &state.sem, self.max, loc)
    }

    /// Gives `n` permits back (a guard's drop or downgrade `what`, reported at the lock's
    /// place `loc`).
    pub(super) fn release(&self, n: u32, loc: Loc, what: &'static Operation) {
        sem::give_back(&self.state().sem, n as usize, loc, what);
    }
}
