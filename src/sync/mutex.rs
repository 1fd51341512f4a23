//! [`Mutex`]: mutual exclusion, with std's poisoning.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use super::poison;
use crate::primitive::{
    self, Blocked, Effect, Fresh, Loc, ObjId, ObjectHandle, ObjectState, OpKind, Operation, Role,
    Tid, Waits,
};

/// `lock`.
const LOCK: OpKind = OpKind::new(&lock_op("mutex lock"));
/// Taking the mutex back after a condvar wait.
pub(super) const RELOCK: OpKind = OpKind::new(&lock_op("mutex lock (after wait)"));
/// `try_lock`: a write, since it takes the mutex when it succeeds.
const TRY_LOCK: OpKind = OpKind::new(
    &Operation::new("mutex try_lock")
        .access(Role::Write)
        .effect(Effect::Try)
        .observes_only(),
);
/// A guard's drop.
const UNLOCK: OpKind = OpKind::new(&Operation::new("mutex unlock").access(Role::Release));

/// An operation named `name` that takes the mutex: it waits while another thread holds it,
/// and changes nothing until it takes it.
const fn lock_op(name: &'static str) -> Operation {
    Operation::new(name)
        .access(Role::Acquire)
        .waits("lock")
        .observes_only()
}

/// For a primitive layered over this crate: one step of a primitive whose state a model
/// mutex keeps (see [`Mutex::lock_section_at`]), named after what the program called
/// (`tokio mpsc send`): to the engine, a lock of that mutex. Declare it as a constant:
/// `static SEND: Operation = section("tokio mpsc send");`.
pub const fn section(name: &'static str) -> Operation {
    lock_op(name).in_section()
}

/// Who holds a mutex, in the execution's arena.
#[derive(Debug, Default)]
struct MutexState {
    owner: Option<(Tid, Loc)>,
}

impl ObjectState for MutexState {
    fn holders(&self) -> Vec<(Tid, Loc)> {
        self.owner.into_iter().collect()
    }

    fn enabled(&self, kind: OpKind, _me: Tid) -> bool {
        // Every operation that takes the mutex waits for it (`lock`, the relock after a
        // condvar wait, a section); `try_lock` and `unlock` never wait.
        !kind.can_wait() || self.owner.is_none()
    }
}

/// Takes mutex `obj` for the calling thread at `loc` if it is free; whether it did.
fn take(a: &mut primitive::Access<'_>, obj: ObjId, loc: Loc) -> bool {
    let me = a.me();
    let state = a.obj::<MutexState>(obj);
    if state.owner.is_some() {
        return false;
    }
    state.owner = Some((me, loc));
    true
}

/// A mutual exclusion lock, as [`std::sync::Mutex`].
///
/// # Differences from std
/// - `lock`, `try_lock` and the guard's drop are switch points.
/// - Locking a mutex the thread already holds is reported as a deadlock naming both places
///   (std may deadlock or panic).
/// - Waiters are woken all at once on unlock and race for the lock, so every order in which
///   they may take it is explored.
pub struct Mutex<T: ?Sized> {
    handle: ObjectHandle,
    poison: poison::Flag,
    data: parking_lot::Mutex<T>,
}

/// Releases the lock when dropped, as [`std::sync::MutexGuard`].
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
    inner: Option<parking_lot::MutexGuard<'a, T>>,
    /// The mutex's id in the model; `None` once released for a condvar wait.
    obj: Option<ObjId>,
    /// Where the lock was taken, for reports.
    loc: Loc,
    /// For the poison rule (`poison.rs`).
    poison: poison::Guard,
    /// Whether the data was borrowed mutably: if not, taking and releasing the lock changed
    /// nothing another thread could see afterwards (see `runtime/spins.rs`).
    wrote: bool,
    /// Taken by [`Mutex::lock_section_at`]: released with no switch point of its own.
    section: bool,
}

impl<T> Mutex<T> {
    /// A new unlocked mutex.
    pub const fn new(value: T) -> Self {
        Mutex {
            handle: ObjectHandle::new("Mutex").fresh(Some(Fresh {
                ty: "Mutex<T>",
                or: "",
            })),
            poison: poison::Flag::new(),
            data: parking_lot::Mutex::new(value),
        }
    }

    /// For a primitive layered over this crate: an unlocked mutex that keeps that
    /// primitive's state, which reports call `kind` (`tokio mpsc channel`: its operations
    /// are listed under that name), and whose `static` can start afresh in every execution
    /// as `fresh` says (`None`: it cannot, and a second execution's use is a `Misuse` with
    /// `fresh`'s advice).
    pub const fn named(value: T, kind: &'static str, fresh: Option<Fresh>) -> Self {
        Mutex {
            handle: ObjectHandle::new(kind).fresh(fresh),
            poison: poison::Flag::new(),
            data: parking_lot::Mutex::new(value),
        }
    }

    /// Consumes the mutex and returns its value (an `Err` holding it if poisoned).
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.poison.get();
        poison::result(poisoned, self.data.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Takes the lock, blocking while another thread holds it.
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        self.lock_at(Location::caller())
    }

    fn lock_at(&self, loc: Loc) -> LockResult<MutexGuard<'_, T>> {
        let obj = self.obj(primitive::switch_point(LOCK, Some(&self.handle), loc));
        self.acquire(obj, loc);
        self.result(self.guard(Some(obj), loc))
    }

    /// Takes the lock for a short critical section, as [`lock`](Self::lock), but the
    /// guard's drop releases it with no switch point: the section is one step of the
    /// model, like an atomic read-modify-write on the mutex. The Tokio crate keeps each
    /// primitive's state this way.
    ///
    /// Sound as long as no switch point runs between `lock_section_at` and the guard's
    /// drop: then no other thread runs while the lock is held, and the unlock's switch
    /// point would only offer to run others between the release and this thread's next
    /// switch point, where this thread touches nothing they can see. Every order of the
    /// sections is still explored, since each begins with a switch point. If a section
    /// does reach a switch point, others that want the lock block on it as usual, so the
    /// lock stays correct; only that section's own release is not a switch point.
    ///
    /// The operation is `what` (`tokio mpsc send`, declared by [`section`]),
    /// recorded at `loc`: the Tokio primitive's caller in the program, which the section's
    /// code cannot see through `.await` (`#[track_caller]` does not cross a future's
    /// `poll`). To the search it is this mutex's lock; schedules and reports name it.
    pub fn lock_section_at(&self, loc: Loc, what: &'static Operation) -> MutexGuard<'_, T> {
        // The switch point and the first try share one hold of the state.
        let (obj, taken) =
            primitive::switch_point_then(OpKind::new(what), &self.handle, loc, |a, obj| {
                (obj, take(a, obj, loc))
            });
        if !taken {
            self.acquire(obj, loc);
        }
        let mut guard = self.guard(Some(obj), loc);
        guard.section = true;
        guard
    }

    /// Takes the lock without the switch point of `lock` (condvar re-acquisition).
    pub(crate) fn acquire(&self, obj: ObjId, loc: Loc) {
        while !self.try_acquire(obj, loc) {
            primitive::block(Blocked {
                what: Waits::To(LOCK.waits_to()),
                obj: Some(obj),
                thread: None,
                deadline: None,
                loc,
            });
        }
    }

    fn try_acquire(&self, obj: ObjId, loc: Loc) -> bool {
        primitive::with_state("interleave_test::sync::Mutex::lock", |a| take(a, obj, loc))
    }

    /// Takes the lock if it is free, as [`std::sync::Mutex::try_lock`].
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let loc = Location::caller();
        let obj = self.obj(primitive::switch_point(TRY_LOCK, Some(&self.handle), loc));
        if !self.try_acquire(obj, loc) {
            primitive::failed_try("interleave_test::sync::Mutex::try_lock");
            return Err(TryLockError::WouldBlock);
        }
        self.result(self.guard(Some(obj), loc))
            .map_err(TryLockError::Poisoned)
    }

    /// Whether a thread panicked while holding the lock.
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

    fn guard(&self, obj: Option<ObjId>, loc: Loc) -> MutexGuard<'_, T> {
        MutexGuard {
            lock: self,
            inner: Some(self.data.lock()),
            obj,
            loc,
            poison: poison::Flag::guard(),
            wrote: false,
            section: false,
        }
    }

    fn result<G>(&self, guard: G) -> LockResult<G> {
        self.poison.result(guard)
    }

    /// The mutex's handle, for `Condvar`.
    pub(crate) fn handle(&self) -> &ObjectHandle {
        &self.handle
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// Releases the lock without a switch point (condvar wait) and returns the mutex and
    /// its id, to re-acquire it later.
    pub(crate) fn release_for_wait(mut self) -> (&'a Mutex<T>, Option<ObjId>) {
        self.release(false);
        let obj = self.obj.take();
        (self.lock, obj)
    }

    /// Gives the lock back; `unchanged`: the holder changed nothing another thread could
    /// see (said first, as [`primitive::unchanged`] would, under the same hold of the state).
    fn release(&mut self, unchanged: bool) {
        self.lock.poison.done(&self.poison);
        drop(self.inner.take());
        let wrote = self.wrote;
        if let Some(obj) = self.obj {
            primitive::with_state("interleave_test::sync::MutexGuard::drop", |a| {
                if unchanged {
                    a.unchanged();
                }
                a.releases(obj, wrote);
                a.obj::<MutexState>(obj).owner = None;
                a.wake_all(obj);
            });
        }
    }

    /// A guard for a lock re-acquired after a condvar wait.
    pub(crate) fn reacquired(lock: &'a Mutex<T>, obj: Option<ObjId>, loc: Loc) -> Self {
        MutexGuard {
            lock,
            inner: Some(lock.data.lock()),
            obj,
            loc,
            poison: poison::Flag::guard(),
            wrote: false,
            section: false,
        }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        if self.inner.is_none() {
            return; // released for a condvar wait
        }
        if self.obj.is_some() && !self.section {
            primitive::switch_point(UNLOCK, Some(&self.lock.handle), self.loc);
        }
        let unchanged = !self.wrote && !std::thread::panicking();
        self.release(unchanged);
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner.as_ref().expect("a live guard holds the lock")
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.wrote = true;
        self.inner.as_mut().expect("a live guard holds the lock")
    }
}

super::guard_fmt!(MutexGuard);

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

impl<T: ?Sized> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutex")
            .field("poisoned", &self.is_poisoned())
            .finish_non_exhaustive()
    }
}
