//! The owned guards of [`RwLock`]: [`OwnedRwLockReadGuard`] and [`OwnedRwLockWriteGuard`].
//! As the borrowed ones, each holds the value's lock and, in a field of its own
//! ([`OwnedPermits`]), the semaphore permits it gives back when dropped, after the value's
//! lock; so a write guard can be downgraded without a `Drop` in the way.

use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::Arc;

use parking_lot::RawRwLock;
use parking_lot::lock_api::{ArcRwLockReadGuard, ArcRwLockWriteGuard};

use super::rwlock::{DOWNGRADE, READ_UNLOCK, RwLock, WRITE_UNLOCK};
use interleave_engine::primitive::{Loc, Operation};

/// `n` permits of `lock`'s semaphore, given back when dropped (as `what`, reported where
/// the program took the lock, `loc`).
struct OwnedPermits<T> {
    lock: Arc<RwLock<T>>,
    n: u32,
    loc: Loc,
    what: &'static Operation,
}

impl<T> Drop for OwnedPermits<T> {
    fn drop(&mut self) {
        self.lock.release(self.n, self.loc, self.what);
    }
}

/// Shared access to a [`RwLock`] in an `Arc`, owning a reference to it.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockReadGuard<T> {
    data: ArcRwLockReadGuard<RawRwLock, T>,
    permits: OwnedPermits<T>,
}

impl<T> OwnedRwLockReadGuard<T> {
    /// The guard of a read lock taken at `loc` (its permit is held).
    pub(super) fn new(lock: Arc<RwLock<T>>, loc: Loc) -> Self {
        OwnedRwLockReadGuard {
            data: parking_lot::RwLock::read_arc(&lock.state().data),
            permits: OwnedPermits {
                lock,
                n: 1,
                loc,
                what: READ_UNLOCK,
            },
        }
    }

    /// The lock it reads.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.permits.lock
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for OwnedRwLockReadGuard<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<T> Deref for OwnedRwLockReadGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

/// Exclusive access to a [`RwLock`] in an `Arc`, owning a reference to it.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockWriteGuard<T> {
    data: ArcRwLockWriteGuard<RawRwLock, T>,
    permits: OwnedPermits<T>,
}

impl<T> OwnedRwLockWriteGuard<T> {
    /// The guard of a write lock taken at `loc` (all its permits are held).
    pub(super) fn new(lock: Arc<RwLock<T>>, loc: Loc) -> Self {
        OwnedRwLockWriteGuard {
            data: parking_lot::RwLock::write_arc(&lock.state().data),
            permits: OwnedPermits {
                n: lock.max,
                lock,
                loc,
                what: WRITE_UNLOCK,
            },
        }
    }

    /// The lock it writes.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.permits.lock
    }

    /// Turns the write access into a read access without letting a writer in between, as
    /// `OwnedRwLockWriteGuard::downgrade`. A switch point (the permits given back).
    #[track_caller]
    pub fn downgrade(self) -> OwnedRwLockReadGuard<T> {
        let OwnedRwLockWriteGuard { data, mut permits } = self;
        let data = ArcRwLockWriteGuard::downgrade(data);
        let loc = Location::caller();
        // All but one permit go back now; the one left is the read guard's.
        let all = std::mem::replace(&mut permits.n, 1);
        permits.what = READ_UNLOCK;
        permits.loc = loc;
        permits.lock.release(all - 1, loc, DOWNGRADE);
        OwnedRwLockReadGuard { data, permits }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for OwnedRwLockWriteGuard<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<T> Deref for OwnedRwLockWriteGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for OwnedRwLockWriteGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}
