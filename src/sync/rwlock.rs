//! [`RwLock`]: shared reads or one writer, with std's poisoning.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use super::poison;
use crate::primitive::{
    self, Blocked, Effect, Fresh, Loc, ObjId, ObjectHandle, ObjectState, OpKind, Operation, Role,
    Tid, Waits,
};

/// `read`: takes the lock shared, waiting while a writer holds it.
const READ: OpKind = OpKind::new(
    &Operation::new("rwlock read")
        .access(Role::ReadAcquire)
        .waits("read-lock")
        .observes_only(),
);
/// `write`: takes the lock exclusively, waiting while any thread holds it.
const WRITE: OpKind = OpKind::new(
    &Operation::new("rwlock write")
        .access(Role::Acquire)
        .waits("write-lock")
        .observes_only(),
);
/// `try_read`: a read, since readers do not exclude each other.
const TRY_READ: OpKind = OpKind::new(&try_op("rwlock try_read", Role::Read));
/// `try_write`.
const TRY_WRITE: OpKind = OpKind::new(&try_op("rwlock try_write", Role::Write));
/// A read guard's drop: it only observes, as the lock stays shared by the other readers.
const READ_UNLOCK: OpKind = OpKind::new(
    &Operation::new("rwlock read unlock")
        .access(Role::ReadRelease)
        .observes_only(),
);
/// A write guard's drop.
const WRITE_UNLOCK: OpKind =
    OpKind::new(&Operation::new("rwlock write unlock").access(Role::Release));

/// A try named `name` that accesses the lock as `role` when it succeeds.
const fn try_op(name: &'static str, role: Role) -> Operation {
    Operation::new(name)
        .access(role)
        .effect(Effect::Try)
        .observes_only()
}

/// Who holds a reader-writer lock, in the execution's arena.
#[derive(Debug, Default)]
struct RwLockState {
    writer: Option<(Tid, Loc)>,
    /// One entry per live read guard (a thread may hold several).
    readers: Vec<(Tid, Loc)>,
}

impl ObjectState for RwLockState {
    fn holders(&self) -> Vec<(Tid, Loc)> {
        self.writer.iter().chain(&self.readers).copied().collect()
    }

    fn enabled(&self, kind: OpKind, _me: Tid) -> bool {
        if kind == READ {
            self.writer.is_none()
        } else if kind == WRITE {
            self.writer.is_none() && self.readers.is_empty()
        } else {
            true
        }
    }
}

/// Which side of the lock an operation takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Read,
    Write,
}

impl RwLockState {
    /// Takes the lock for `side` if that is possible now.
    fn try_take(&mut self, side: Side, me: Tid, loc: Loc) -> bool {
        match side {
            Side::Read if self.writer.is_none() => self.readers.push((me, loc)),
            Side::Write if self.writer.is_none() && self.readers.is_empty() => {
                self.writer = Some((me, loc))
            }
            _ => return false,
        }
        true
    }

    /// Gives up one hold of `side` by `me` (taken at `loc`); returns whether the lock is free.
    fn release(&mut self, side: Side, me: Tid, loc: Loc) -> bool {
        match side {
            Side::Write => self.writer = None,
            Side::Read => {
                let mine = |&(t, l): &(Tid, Loc)| t == me && std::ptr::eq(l, loc);
                let at = self
                    .readers
                    .iter()
                    .position(mine)
                    .or_else(|| self.readers.iter().position(|r| r.0 == me));
                if let Some(at) = at {
                    self.readers.remove(at);
                }
            }
        }
        self.writer.is_none() && self.readers.is_empty()
    }
}

/// A reader-writer lock, as [`std::sync::RwLock`].
///
/// # Differences from std
/// - `read`, `write`, `try_read`, `try_write` and the guards' drops are switch points.
/// - Policy: a reader enters whenever no writer holds the lock, even while a writer waits
///   (std's policy depends on the platform). A writer can therefore be starved by readers
///   that keep taking turns; the explorer reports that as a livelock, not a deadlock.
/// - A thread that takes the write lock while it holds a read lock, or a read lock while it
///   holds the write lock, is reported as a deadlock naming both places (std may deadlock or
///   panic). Reading twice in one thread succeeds.
/// - Waiters are woken all at once on release and race for the lock, so every order in
///   which they may take it is explored.
/// - `Debug` shows only whether the lock is poisoned (reading the data would be a switch
///   point).
pub struct RwLock<T: ?Sized> {
    handle: ObjectHandle,
    poison: poison::Flag,
    data: parking_lot::RwLock<T>,
}

/// Shared access to an [`RwLock`]'s data, as [`std::sync::RwLockReadGuard`]; releases it
/// when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    inner: Option<parking_lot::RwLockReadGuard<'a, T>>,
    /// The lock's id in the model.
    obj: ObjId,
    /// Where the lock was taken, for reports.
    loc: Loc,
}

/// Exclusive access to an [`RwLock`]'s data, as [`std::sync::RwLockWriteGuard`]; releases
/// it when dropped, poisoning the lock if the thread is panicking.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    inner: Option<parking_lot::RwLockWriteGuard<'a, T>>,
    /// The lock's id in the model.
    obj: ObjId,
    /// Where the lock was taken, for reports.
    loc: Loc,
    /// For the poison rule (`poison.rs`).
    poison: poison::Guard,
    /// Whether the data was borrowed mutably (see `MutexGuard::wrote`).
    wrote: bool,
}

impl<T> RwLock<T> {
    /// A new unlocked lock.
    pub const fn new(value: T) -> Self {
        RwLock {
            handle: ObjectHandle::new("RwLock").fresh(Some(Fresh {
                ty: "RwLock<T>",
                or: "",
            })),
            poison: poison::Flag::new(),
            data: parking_lot::RwLock::new(value),
        }
    }

    /// Consumes the lock and returns its value (an `Err` holding it if poisoned).
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.poison.get();
        poison::result(poisoned, self.data.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Takes shared access, blocking while a writer holds the lock.
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        self.read_at(Location::caller())
    }

    /// [`read`](Self::read) for an operation of the program at `loc`: for a primitive
    /// layered over this crate, its caller (`#[track_caller]` does not cross a `poll`).
    pub fn read_at(&self, loc: Loc) -> LockResult<RwLockReadGuard<'_, T>> {
        let obj = self.obj(primitive::switch_point(READ, Some(&self.handle), loc));
        self.acquire(Side::Read, obj, loc);
        self.result(self.read_guard(obj, loc))
    }

    /// Takes exclusive access, blocking while any thread holds the lock.
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let loc = Location::caller();
        let obj = self.obj(primitive::switch_point(WRITE, Some(&self.handle), loc));
        self.acquire(Side::Write, obj, loc);
        self.result(self.write_guard(obj, loc))
    }

    /// Takes shared access if no writer holds the lock, as [`std::sync::RwLock::try_read`].
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let loc = Location::caller();
        let obj = self.obj(primitive::switch_point(TRY_READ, Some(&self.handle), loc));
        if !self.try_acquire(Side::Read, obj, loc) {
            primitive::failed_try("interleave_test::sync::RwLock::try_read");
            return Err(TryLockError::WouldBlock);
        }
        self.result(self.read_guard(obj, loc))
            .map_err(TryLockError::Poisoned)
    }

    /// Takes exclusive access if no thread holds the lock, as
    /// [`std::sync::RwLock::try_write`].
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let loc = Location::caller();
        let obj = self.obj(primitive::switch_point(TRY_WRITE, Some(&self.handle), loc));
        if !self.try_acquire(Side::Write, obj, loc) {
            primitive::failed_try("interleave_test::sync::RwLock::try_write");
            return Err(TryLockError::WouldBlock);
        }
        self.result(self.write_guard(obj, loc))
            .map_err(TryLockError::Poisoned)
    }

    fn acquire(&self, side: Side, obj: ObjId, loc: Loc) {
        let what = match side {
            Side::Read => Waits::To(READ.waits_to()),
            Side::Write => Waits::To(WRITE.waits_to()),
        };
        while !self.try_acquire(side, obj, loc) {
            primitive::block(Blocked {
                what,
                obj: Some(obj),
                thread: None,
                deadline: None,
                loc,
            });
        }
    }

    fn try_acquire(&self, side: Side, obj: ObjId, loc: Loc) -> bool {
        primitive::with_state("interleave_test::sync::RwLock::lock", |a| {
            let me = a.me();
            a.obj::<RwLockState>(obj).try_take(side, me, loc)
        })
    }

    /// Whether a thread panicked while holding the write lock.
    pub fn is_poisoned(&self) -> bool {
        self.poison.get()
    }

    /// Clears the poisoned state.
    pub fn clear_poison(&self) {
        self.poison.clear();
    }

    /// A mutable reference to the value; no locking is needed.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = self.poison.get();
        poison::result(poisoned, self.data.get_mut())
    }

    fn obj(&self, obj: Option<ObjId>) -> ObjId {
        obj.expect("a switch point on an object returns its id")
    }

    /// A read guard; the model already granted the lock, so the real one is free and a
    /// failure to take it is a bug of this crate, not a hang.
    fn read_guard(&self, obj: ObjId, loc: Loc) -> RwLockReadGuard<'_, T> {
        let inner = self
            .data
            .try_read()
            .expect("interleave-test bug: the model granted a read lock the data lock refuses");
        RwLockReadGuard {
            lock: self,
            inner: Some(inner),
            obj,
            loc,
        }
    }

    /// A write guard; see [`read_guard`](Self::read_guard).
    fn write_guard(&self, obj: ObjId, loc: Loc) -> RwLockWriteGuard<'_, T> {
        let inner = self
            .data
            .try_write()
            .expect("interleave-test bug: the model granted a write lock the data lock refuses");
        RwLockWriteGuard {
            lock: self,
            inner: Some(inner),
            obj,
            loc,
            poison: poison::Flag::guard(),
            wrote: false,
        }
    }

    fn result<G>(&self, guard: G) -> LockResult<G> {
        self.poison.result(guard)
    }

    /// The switch point of a guard's drop, then the release in the model.
    fn unlock(&self, side: Side, obj: ObjId, loc: Loc) {
        let kind = match side {
            Side::Read => READ_UNLOCK,
            Side::Write => WRITE_UNLOCK,
        };
        primitive::switch_point(kind, Some(&self.handle), loc);
        primitive::with_state("interleave_test::sync::RwLock::unlock", |a| {
            let me = a.me();
            if a.obj::<RwLockState>(obj).release(side, me, loc) {
                a.wake_all(obj);
            }
        });
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        drop(self.inner.take());
        self.lock.unlock(Side::Read, self.obj, self.loc);
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.poison.done(&self.poison);
        drop(self.inner.take());
        self.lock.unlock(Side::Write, self.obj, self.loc);
        if !self.wrote && !std::thread::panicking() {
            primitive::unchanged();
        }
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner.as_ref().expect("a live guard holds the lock")
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner.as_ref().expect("a live guard holds the lock")
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.wrote = true;
        self.inner.as_mut().expect("a live guard holds the lock")
    }
}

super::guard_fmt!(RwLockReadGuard);

super::guard_fmt!(RwLockWriteGuard);

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

impl<T: ?Sized> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RwLock")
            .field("poisoned", &self.is_poisoned())
            .finish_non_exhaustive()
    }
}
