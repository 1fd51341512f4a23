//! The borrowed guards of [`RwLock`](super::RwLock): [`RwLockReadGuard`],
//! [`RwLockWriteGuard`] and [`RwLockMappedWriteGuard`]. Each holds the value's lock and,
//! in a field of its own ([`Permits`]), the semaphore permits it gives back when dropped,
//! after the value's lock; so a guard can be mapped to a part of the value, as Tokio's.

use std::ops::{Deref, DerefMut};
use std::panic::Location;

use super::rwlock::{DOWNGRADE, READ_UNLOCK, WRITE_UNLOCK};
use super::sem::{self, SemLock};
use interleave_engine::primitive::{Loc, Operation};

/// Permits of a lock's semaphore, given back when dropped (as `what`, reported where the
/// program took the lock, `loc`).
struct Permits<'a> {
    sem: &'a SemLock,
    n: u32,
    loc: Loc,
    what: &'static Operation,
}

impl Drop for Permits<'_> {
    fn drop(&mut self) {
        sem::give_back(self.sem, self.n as usize, self.loc, self.what);
    }
}

/// Shared access to a [`RwLock`](super::RwLock)'s value (or, mapped, a part of it),
/// released when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T> {
    data: parking_lot::MappedRwLockReadGuard<'a, T>,
    permits: Permits<'a>,
}

impl<'a, T> RwLockReadGuard<'a, T> {
    /// The guard of a read lock taken at `loc`: `data`, one permit of `sem`.
    pub(super) fn new(
        data: parking_lot::RwLockReadGuard<'a, T>,
        sem: &'a SemLock,
        loc: Loc,
    ) -> Self {
        RwLockReadGuard {
            data: parking_lot::RwLockReadGuard::map(data, |value| value),
            permits: Permits {
                sem,
                n: 1,
                loc,
                what: READ_UNLOCK,
            },
        }
    }

    /// A guard of a part of the value, as `RwLockReadGuard::map`: the lock is held until it
    /// is dropped. No switch point.
    pub fn map<F, U>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        RwLockReadGuard {
            data: parking_lot::MappedRwLockReadGuard::map(this.data, f),
            permits: this.permits,
        }
    }

    /// A guard of a part of the value if `f` finds one, else this guard back.
    pub fn try_map<F, U>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        match parking_lot::MappedRwLockReadGuard::try_map(this.data, f) {
            Ok(data) => Ok(RwLockReadGuard {
                data,
                permits: this.permits,
            }),
            Err(data) => Err(RwLockReadGuard {
                data,
                permits: this.permits,
            }),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<T> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

/// Exclusive access to a [`RwLock`](super::RwLock)'s value, released when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T> {
    data: parking_lot::RwLockWriteGuard<'a, T>,
    permits: Permits<'a>,
}

impl<'a, T> RwLockWriteGuard<'a, T> {
    /// The guard of a write lock taken at `loc`: `data`, all `max` permits of `sem`.
    pub(super) fn new(
        data: parking_lot::RwLockWriteGuard<'a, T>,
        sem: &'a SemLock,
        max: u32,
        loc: Loc,
    ) -> Self {
        RwLockWriteGuard {
            data,
            permits: Permits {
                sem,
                n: max,
                loc,
                what: WRITE_UNLOCK,
            },
        }
    }

    /// Turns the write access into a read access without letting a writer in between.
    #[track_caller]
    pub fn downgrade(self) -> RwLockReadGuard<'a, T> {
        let RwLockWriteGuard { data, mut permits } = self;
        let data = parking_lot::RwLockWriteGuard::downgrade(data);
        let loc = Location::caller();
        // All but one permit go back now; the one left is the read guard's.
        let all = std::mem::replace(&mut permits.n, 1);
        permits.what = READ_UNLOCK;
        permits.loc = loc;
        sem::give_back(permits.sem, all as usize - 1, loc, DOWNGRADE);
        RwLockReadGuard {
            data: parking_lot::RwLockReadGuard::map(data, |value| value),
            permits,
        }
    }

    /// Maps the guard to a part of the value and downgrades it to a read access (see
    /// [`downgrade`](Self::downgrade)), as `RwLockWriteGuard::downgrade_map`: `f` runs
    /// while the write access is still held, so no reader gets the lock before it returns.
    #[track_caller]
    pub fn downgrade_map<F, U>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        match Self::try_downgrade_map(this, |value| Some(f(value))) {
            Ok(guard) => guard,
            Err(_) => unreachable!("the map function found its part"),
        }
    }

    /// As [`downgrade_map`](Self::downgrade_map) if `f` finds a part of the value, else
    /// this write guard back, still writing, as `RwLockWriteGuard::try_downgrade_map`.
    #[track_caller]
    pub fn try_downgrade_map<F, U>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let RwLockWriteGuard { data, mut permits } = this;
        // The value is read through a read guard while the semaphore's permits, which keep
        // every other task out, are all still held.
        let read = parking_lot::RwLockWriteGuard::downgrade(data);
        let data = match parking_lot::RwLockReadGuard::try_map(read, f) {
            Ok(data) => data,
            Err(read) => {
                // No switch point since the write guard: the value's lock is free for it.
                let lock = parking_lot::RwLockReadGuard::rwlock(&read);
                drop(read);
                let data = lock
                    .try_write()
                    .expect("only this guard's holder uses the value");
                return Err(RwLockWriteGuard { data, permits });
            }
        };
        let loc = Location::caller();
        // All but one permit go back now; the one left is the read guard's.
        let all = std::mem::replace(&mut permits.n, 1);
        permits.what = READ_UNLOCK;
        permits.loc = loc;
        sem::give_back(permits.sem, all as usize - 1, loc, DOWNGRADE);
        Ok(RwLockReadGuard { data, permits })
    }

    /// A guard of a part of the value, as `RwLockWriteGuard::map`: the write lock is held
    /// until it is dropped. No switch point.
    pub fn map<F, U>(this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        RwLockMappedWriteGuard {
            data: parking_lot::RwLockWriteGuard::map(this.data, f),
            permits: this.permits,
        }
    }

    /// A guard of a part of the value if `f` finds one, else this guard back.
    pub fn try_map<F, U>(this: Self, f: F) -> Result<RwLockMappedWriteGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        match parking_lot::RwLockWriteGuard::try_map(this.data, f) {
            Ok(data) => Ok(RwLockMappedWriteGuard {
                data,
                permits: this.permits,
            }),
            Err(data) => Err(RwLockWriteGuard {
                data,
                permits: this.permits,
            }),
        }
    }

    /// The same lock as a [`RwLockMappedWriteGuard`] of the whole value.
    pub fn into_mapped(this: Self) -> RwLockMappedWriteGuard<'a, T> {
        Self::map(this, |value| value)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<T> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

/// Exclusive access to a part of a [`RwLock`](super::RwLock)'s value, as
/// `tokio::sync::RwLockMappedWriteGuard`: made by [`RwLockWriteGuard::map`], released when
/// dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockMappedWriteGuard<'a, T> {
    data: parking_lot::MappedRwLockWriteGuard<'a, T>,
    permits: Permits<'a>,
}

impl<'a, T> RwLockMappedWriteGuard<'a, T> {
    /// A guard of a part of this part, as [`RwLockWriteGuard::map`].
    pub fn map<F, U>(this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        RwLockMappedWriteGuard {
            data: parking_lot::MappedRwLockWriteGuard::map(this.data, f),
            permits: this.permits,
        }
    }

    /// A guard of a part of this part if `f` finds one, else this guard back.
    pub fn try_map<F, U>(this: Self, f: F) -> Result<RwLockMappedWriteGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        match parking_lot::MappedRwLockWriteGuard::try_map(this.data, f) {
            Ok(data) => Ok(RwLockMappedWriteGuard {
                data,
                permits: this.permits,
            }),
            Err(data) => Err(RwLockMappedWriteGuard {
                data,
                permits: this.permits,
            }),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for RwLockMappedWriteGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.data, f)
    }
}

impl<T> Deref for RwLockMappedWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for RwLockMappedWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}
