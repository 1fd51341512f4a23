//! [`Semaphore`], as `tokio::sync::Semaphore`: fair, closable, with owned permits.

use std::future::Future;
use std::panic::Location;
use std::sync::Arc;

use super::sem::{self, Acquire, AcquireNames, HasSem, Sem, SemLock};
use interleave_engine::primitive::{Loc, Operation, PerExecution, StateRef};

/// What reports call the operations (`acquire_many` and the owned forms as `acquire`).
const ACQUIRE: &AcquireNames = &[
    interleave_test::sync::section("tokio Semaphore acquire"),
    interleave_test::sync::section("tokio Semaphore acquire dropped"),
];
const TRY_ACQUIRE: &Operation = &interleave_test::sync::section("tokio Semaphore try_acquire");
const RELEASE: &Operation = &interleave_test::sync::section("tokio Semaphore permit drop");

/// A counting semaphore, as `tokio::sync::Semaphore`: waiters are served first come, first
/// served, and one that asks for many permits is not overtaken by later ones that ask for
/// few. Every operation is a switch point.
///
/// ```
/// use interleave_test::sync::Arc;
/// use interleave_test_tokio::{self as tokio, sync::Semaphore};
///
/// interleave_test::check_async(|| async {
///     let pool = Arc::new(Semaphore::new(1));
///     let other = Arc::clone(&pool);
///     let task = tokio::spawn(async move {
///         let _permit = other.acquire().await.unwrap();
///     });
///     drop(pool.acquire().await.unwrap());
///     task.await.unwrap();
///     assert_eq!(pool.available_permits(), 1);
/// })
/// .unwrap();
/// ```
///
/// A `static` semaphore (made by [`const_new`](Self::const_new)), or one made outside the
/// model closure, starts with its permits in every execution: each execution has a state
/// of its own, dropped when the execution ends.
#[derive(Debug)]
pub struct Semaphore {
    /// The state of each execution that uses it (one, for a semaphore made in a model).
    sems: PerExecution<SemLock>,
    /// The permits it was made with, for the states of later executions.
    permits: usize,
}

impl HasSem for Semaphore {
    /// On the calling execution's state, looked up at each poll of an acquisition.
    fn with_sem<R>(&self, loc: Loc, what: &'static Operation, f: impl FnOnce(&mut Sem) -> R) -> R {
        f(&mut sem::lock(&self.sem(), loc, what))
    }
}

/// The semaphore was closed, as `tokio::sync::AcquireError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireError(());

impl std::fmt::Display for AcquireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

/// Why a `try_acquire` failed, as `tokio::sync::TryAcquireError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore was closed.
    Closed,
    /// Not enough permits were free (or others wait for them).
    NoPermits,
}

impl std::fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
        }
    }
}

impl std::error::Error for TryAcquireError {}

/// A fresh state with `permits` free.
const fn new_state(permits: usize) -> SemLock {
    sem::new_lock(
        Sem::new(permits, "acquire a permit from"),
        "tokio Semaphore",
        None,
    )
}

fn try_error(closed: bool) -> TryAcquireError {
    match closed {
        true => TryAcquireError::Closed,
        false => TryAcquireError::NoPermits,
    }
}

impl Semaphore {
    /// The most permits a semaphore holds, as Tokio's.
    pub const MAX_PERMITS: usize = usize::MAX >> 3;

    /// A semaphore with `permits` free permits.
    ///
    /// # Panics
    /// If `permits` exceeds [`MAX_PERMITS`](Self::MAX_PERMITS); the panic is located at the
    /// caller, as Tokio's.
    #[track_caller]
    pub fn new(permits: usize) -> Semaphore {
        assert!(
            permits <= Self::MAX_PERMITS,
            "a semaphore may not have more than MAX_PERMITS permits ({})",
            Self::MAX_PERMITS
        );
        Semaphore::const_new(permits)
    }

    /// A semaphore with `permits` free permits, usable as a `static`: each execution
    /// starts with `permits` free.
    ///
    /// # Panics
    /// If `permits` exceeds [`MAX_PERMITS`](Self::MAX_PERMITS).
    pub const fn const_new(permits: usize) -> Semaphore {
        assert!(
            permits <= Self::MAX_PERMITS,
            "a semaphore may not have more than MAX_PERMITS permits"
        );
        Semaphore {
            sems: PerExecution::new(new_state(permits)),
            permits,
        }
    }

    /// The calling execution's state.
    fn sem(&self) -> StateRef<'_, SemLock> {
        self.sems.lend(|| new_state(self.permits))
    }

    /// How many permits are free now. A switch point.
    #[track_caller]
    pub fn available_permits(&self) -> usize {
        sem::lock(
            &self.sem(),
            Location::caller(),
            const { &interleave_test::sync::section("tokio Semaphore available_permits") },
        )
        .available()
    }

    /// Adds `n` permits, handed to waiters first come, first served.
    ///
    /// # Panics
    /// As Tokio's: if `n` exceeds [`MAX_PERMITS`](Self::MAX_PERMITS), or the free permits
    /// would then exceed it (they are added first, as Tokio adds them before it checks).
    #[track_caller]
    pub fn add_permits(&self, n: usize) {
        assert!(
            n <= Self::MAX_PERMITS,
            "cannot add more than MAX_PERMITS permits ({})",
            Self::MAX_PERMITS
        );
        let state = self.sem();
        let mut sem = sem::lock(
            &state,
            Location::caller(),
            const { &interleave_test::sync::section("tokio Semaphore add_permits") },
        );
        sem.release(n);
        let free = sem.available();
        // The panic comes after the lock is released: nothing panics while holding it.
        drop(sem);
        assert!(
            free <= Self::MAX_PERMITS,
            "number of added permits ({n}) would overflow MAX_PERMITS ({})",
            Self::MAX_PERMITS
        );
    }

    /// Removes up to `n` free permits for good; returns how many were removed.
    #[track_caller]
    pub fn forget_permits(&self, n: usize) -> usize {
        sem::lock(
            &self.sem(),
            Location::caller(),
            const { &interleave_test::sync::section("tokio Semaphore forget_permits") },
        )
        .forget(n)
    }

    /// Closes the semaphore: waiters and later acquisitions fail with [`AcquireError`];
    /// permits already held stay valid.
    #[track_caller]
    pub fn close(&self) {
        sem::lock(
            &self.sem(),
            Location::caller(),
            const { &interleave_test::sync::section("tokio Semaphore close") },
        )
        .close();
    }

    /// Whether it was closed.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        sem::lock(
            &self.sem(),
            Location::caller(),
            const { &interleave_test::sync::section("tokio Semaphore is_closed") },
        )
        .is_closed()
    }

    /// Waits for one permit. Cancel-safe: dropping the future gives up its place.
    #[track_caller]
    pub fn acquire(&self) -> impl Future<Output = Result<SemaphorePermit<'_>, AcquireError>> + '_ {
        self.acquire_many(1)
    }

    /// Waits for `n` permits at once.
    #[track_caller]
    pub fn acquire_many(
        &self,
        n: u32,
    ) -> impl Future<Output = Result<SemaphorePermit<'_>, AcquireError>> + '_ {
        let loc = Location::caller();
        async move {
            Acquire::new(&*self, n as usize, loc, ACQUIRE)
                .await
                .map_err(|_| AcquireError(()))?;
            Ok(SemaphorePermit {
                sem: self,
                permits: n as usize,
                loc,
            })
        }
    }

    /// One permit if one is free and nobody waits.
    #[track_caller]
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// `n` permits if they are free and nobody waits.
    #[track_caller]
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        let loc = Location::caller();
        let taken = sem::lock(&self.sem(), loc, TRY_ACQUIRE).try_acquire(n as usize);
        taken.map_err(try_error)?;
        Ok(SemaphorePermit {
            sem: self,
            permits: n as usize,
            loc,
        })
    }

    /// [`acquire`](Self::acquire) with a permit that owns a reference to the semaphore.
    #[track_caller]
    pub fn acquire_owned(
        self: Arc<Self>,
    ) -> impl Future<Output = Result<OwnedSemaphorePermit, AcquireError>> {
        self.acquire_many_owned(1)
    }

    /// [`acquire_many`](Self::acquire_many) with an owned permit.
    #[track_caller]
    pub fn acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> impl Future<Output = Result<OwnedSemaphorePermit, AcquireError>> {
        let loc = Location::caller();
        async move {
            Acquire::new(&*self, n as usize, loc, ACQUIRE)
                .await
                .map_err(|_| AcquireError(()))?;
            Ok(OwnedSemaphorePermit {
                sem: self,
                permits: n as usize,
                loc,
            })
        }
    }

    /// [`try_acquire`](Self::try_acquire) with an owned permit.
    #[track_caller]
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.try_acquire_many_owned(1)
    }

    /// [`try_acquire_many`](Self::try_acquire_many) with an owned permit.
    #[track_caller]
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        let loc = Location::caller();
        let taken = sem::lock(&self.sem(), loc, TRY_ACQUIRE).try_acquire(n as usize);
        taken.map_err(try_error)?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: n as usize,
            loc,
        })
    }

    /// [`acquire`](Self::acquire) from synchronous code (a thread, or a `spawn_blocking`
    /// task).
    ///
    /// # Panics
    /// Inside a future polled by a runtime (Tokio's rule).
    #[track_caller]
    pub fn blocking_acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.blocking_acquire_many(1)
    }

    /// [`acquire_many`](Self::acquire_many) from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a runtime (Tokio's rule).
    #[track_caller]
    pub fn blocking_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        super::no_blocking_in_async("Semaphore::blocking_acquire");
        interleave_test::future::block_on(self.acquire_many(n))
    }

    /// [`acquire_owned`](Self::acquire_owned) from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a runtime (Tokio's rule).
    #[track_caller]
    pub fn blocking_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.blocking_acquire_many_owned(1)
    }

    /// [`acquire_many_owned`](Self::acquire_many_owned) from synchronous code.
    ///
    /// # Panics
    /// Inside a future polled by a runtime (Tokio's rule).
    #[track_caller]
    pub fn blocking_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        super::no_blocking_in_async("Semaphore::blocking_acquire_owned");
        interleave_test::future::block_on(self.acquire_many_owned(n))
    }
}

/// Permits of a [`Semaphore`], given back when dropped.
#[derive(Debug)]
#[must_use]
pub struct SemaphorePermit<'a> {
    sem: &'a Semaphore,
    permits: usize,
    /// Where the program acquired it.
    loc: Loc,
}

impl SemaphorePermit<'_> {
    /// Keeps the permits from going back: the semaphore has that many fewer for good.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// How many permits it holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// The semaphore it came from.
    pub fn semaphore(&self) -> &Semaphore {
        self.sem
    }

    /// Takes `other`'s permits into this one (no switch point: the semaphore is not
    /// touched).
    ///
    /// # Panics
    /// If `other` is of another semaphore, or the sum overflows (Tokio's messages); the
    /// panic is located at the caller, as Tokio's.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            std::ptr::eq(self.sem, other.sem),
            "merging permits from different semaphore instances"
        );
        self.permits = (self.permits)
            .checked_add(other.permits)
            .expect("number of permits overflowed");
        other.permits = 0;
    }

    /// Moves `n` of its permits into a new permit; `None` if it holds fewer.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        self.permits = self.permits.checked_sub(n)?;
        Some(SemaphorePermit {
            sem: self.sem,
            permits: n,
            loc: self.loc,
        })
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        if self.permits > 0 {
            sem::lock(&self.sem.sem(), self.loc, RELEASE).release(self.permits);
        }
    }
}

/// Permits of a [`Semaphore`] in an `Arc`, owning a reference to it.
#[derive(Debug)]
#[must_use]
pub struct OwnedSemaphorePermit {
    sem: Arc<Semaphore>,
    permits: usize,
    /// Where the program acquired it.
    loc: Loc,
}

impl OwnedSemaphorePermit {
    /// Keeps the permits from going back.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// How many permits it holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// The semaphore.
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }

    /// Takes `other`'s permits into this one, as [`SemaphorePermit::merge`].
    ///
    /// # Panics
    /// If `other` is of another semaphore, or the sum overflows (Tokio's messages); the
    /// panic is located at the caller, as Tokio's.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            Arc::ptr_eq(&self.sem, &other.sem),
            "merging permits from different semaphore instances"
        );
        self.permits = (self.permits)
            .checked_add(other.permits)
            .expect("number of permits overflowed");
        other.permits = 0;
    }

    /// Moves `n` of its permits into a new permit; `None` if it holds fewer.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        self.permits = self.permits.checked_sub(n)?;
        Some(OwnedSemaphorePermit {
            sem: Arc::clone(&self.sem),
            permits: n,
            loc: self.loc,
        })
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        if self.permits > 0 {
            sem::lock(&self.sem.sem(), self.loc, RELEASE).release(self.permits);
        }
    }
}
