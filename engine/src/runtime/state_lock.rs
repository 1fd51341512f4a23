//! The lock of an execution's state ([`StateLock`]), which knows the OS thread that holds
//! it.
//!
//! It is a spin lock whose waiter yields its OS thread. One model thread runs at a time, so
//! the lock is all but never contended (by the watchdog's look, and for a moment at a
//! hand-off between OS threads); its release is a plain store, where a parking lock's is an
//! atomic read-modify-write. It is taken several times per step: measured, 6% more
//! executions per second than parking_lot's (`compare/benches/tokio.rs`'s models and a
//! three-thread mutex model, coroutines).
//!
//! A spin lock never wakes a thread that waits for itself: if code the runtime runs while
//! it holds the lock (a waker's `Drop`, a destructor) calls back into the runtime, the
//! thread would spin for ever. So the holder writes its OS thread's token beside the lock,
//! and a `lock` that finds the lock taken checks it first (only then: the uncontended path
//! is one more plain store on taking and one on release, on the lock's own cache line):
//! taken by the calling OS thread itself, it panics with [`Reentered`], which the thread's
//! body turns into the execution's failure once the unwinding has released the lock.
//!
//! The watchdog (`watchdog.rs`) tells a lock held all along from one taken again and again
//! by marking the holder's token ([`StateLock::mark_held`]): taking the lock writes a
//! token without the mark and releasing it writes 0, so a mark still there at the next look
//! means that the lock has not been released in between.

use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

type Inner<T> = spin::mutex::SpinMutex<T, spin::relax::Yield>;

/// The lock of an execution's state (see the module's doc).
pub(crate) struct StateLock<T> {
    inner: Inner<T>,
    /// The token ([`token`]) of the OS thread that holds the lock through [`StateLock::lock`]
    /// or [`StateLock::try_lock`], maybe with the watchdog's [`MARK`]; 0 when it is free or
    /// the watchdog looks. Only the holder writes a token or 0, so a thread that reads its
    /// own token (marked or not) holds the lock.
    holder: AtomicUsize,
}

/// The watchdog's mark on a holder's token (a token is the address of a 2-aligned
/// thread-local, so its lowest bit is free).
const MARK: usize = 1;

/// A guard of [`StateLock`]: the state, while the lock is held.
pub(crate) struct StateGuard<'a, T> {
    inner: spin::mutex::SpinMutexGuard<'a, T>,
    holder: &'a AtomicUsize,
}

/// The payload of the panic of a thread that took the lock of its execution's state again
/// while it held it (see the module's doc); `at` is where it tried.
#[derive(Debug)]
pub(crate) struct Reentered {
    pub(crate) at: &'static Location<'static>,
}

/// Whether `payload` is the panic of a thread that took its execution's lock again: it must
/// reach the thread's body, which records it (a task's poll passes it on).
pub fn is_reentry(payload: &(dyn std::any::Any + Send)) -> bool {
    payload.is::<Reentered>()
}

/// Runs `f` while the calling model thread holds the lock of its execution's state, as the
/// runtime runs a destructor or a waker under it: what the tests of a callback into the
/// runtime (`f` uses a primitive) and of a lock held too long (`f` does not return) run.
#[track_caller]
pub fn holding_state<R>(f: impl FnOnce() -> R) -> R {
    super::with_ctx("interleave_test::__private::holding_state", |ctx| {
        let _held = ctx.exec.state.lock();
        f()
    })
}

std::thread_local! {
    /// Only its address is used: a token of the OS thread, distinct from every other live
    /// thread's.
    static TOKEN: u16 = const { 0 };
}

/// The calling OS thread's token: never 0, lowest bit clear.
#[inline]
fn token() -> usize {
    TOKEN.with(|t| std::ptr::from_ref(t) as usize)
}

impl<T> StateLock<T> {
    /// A free lock of `value`.
    pub(crate) const fn new(value: T) -> Self {
        StateLock {
            inner: Inner::new(value),
            holder: AtomicUsize::new(0),
        }
    }

    /// Takes the lock, waiting while another OS thread holds it. Panics with [`Reentered`] if
    /// the calling OS thread holds it.
    #[inline]
    #[track_caller]
    pub(crate) fn lock(&self) -> StateGuard<'_, T> {
        match self.inner.try_lock() {
            Some(inner) => self.held(inner),
            None => self.lock_contended(),
        }
    }

    #[cold]
    #[track_caller]
    fn lock_contended(&self) -> StateGuard<'_, T> {
        if self.holder.load(Relaxed) & !MARK == token() {
            std::panic::panic_any(Reentered {
                at: Location::caller(),
            });
        }
        self.held(self.inner.lock())
    }

    /// Takes the lock if it is free.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<StateGuard<'_, T>> {
        self.inner.try_lock().map(|inner| self.held(inner))
    }

    /// The watchdog's look: the state if the lock is free, not recorded as held by the
    /// calling thread.
    pub(crate) fn peek(&self) -> Option<spin::mutex::SpinMutexGuard<'_, T>> {
        self.inner.try_lock()
    }

    /// The watchdog's mark, for a lock it found taken: `true` if the holder's token was
    /// already marked (the lock has been held since the mark was placed), `false` if it was
    /// just placed, or could not be (no token: the lock is being taken or released).
    pub(crate) fn mark_held(&self) -> bool {
        let holder = self.holder.load(Relaxed);
        if holder == 0 || holder & MARK != 0 {
            return holder != 0;
        }
        let _ = self
            .holder
            .compare_exchange(holder, holder | MARK, Relaxed, Relaxed);
        false
    }

    #[inline]
    fn held<'a>(&'a self, inner: spin::mutex::SpinMutexGuard<'a, T>) -> StateGuard<'a, T> {
        self.holder.store(token(), Relaxed);
        StateGuard {
            inner,
            holder: &self.holder,
        }
    }
}

impl<T> std::fmt::Debug for StateLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateLock")
            .field("held", &(self.holder.load(Relaxed) != 0))
            .finish_non_exhaustive()
    }
}

impl<T> Drop for StateGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Before `inner` releases the lock (fields drop after this).
        self.holder.store(0, Relaxed);
    }
}

impl<T> Deref for StateGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for StateGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taking_it_again_on_the_same_thread_panics_instead_of_spinning() {
        let lock = StateLock::new(1);
        let guard = lock.lock();
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *lock.lock()));
        let payload = again.expect_err("a second `lock` on the holder's thread must panic");
        let at = payload.downcast_ref::<Reentered>().expect("the payload").at;
        assert_eq!(at.file(), file!());
        assert!(!lock.mark_held(), "the mark is placed");
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *lock.lock()));
        assert!(again.is_err(), "a marked token is still the holder's");
        assert_eq!(*guard, 1);
        drop(guard);
        assert_eq!(*lock.lock(), 1, "released, it is taken again");
    }

    #[test]
    fn the_mark_stays_until_the_lock_is_released() {
        let lock = StateLock::new(0);
        assert!(!lock.mark_held(), "free: nothing to mark");
        let guard = lock.lock();
        assert!(!lock.mark_held(), "placed");
        assert!(lock.mark_held(), "still there: held all along");
        drop(guard);
        let guard = lock.lock();
        assert!(!lock.mark_held(), "taken again: a new mark");
        drop(guard);
    }

    #[test]
    fn another_thread_waits_for_the_holder() {
        let lock = StateLock::new(0);
        let guard = lock.lock();
        assert!(lock.peek().is_none());
        std::thread::scope(|s| {
            let waiter = s.spawn(|| *lock.lock() += 1);
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(guard);
            waiter.join().unwrap();
        });
        assert_eq!(*lock.lock(), 1);
    }
}
