//! Wakers woken and dropped with no lock held, as Tokio does: an operation on a primitive's
//! state takes the wakers it must wake (and the ones it replaces or forgets) out of its
//! wait queues (the engine's `WaitQueue`) into the state's [`WakeList`] while the state is
//! locked, and the [`Section`] that holds the lock wakes and drops them after releasing it.
//!
//! A waker is the program's code: its `wake` or its `drop` may call back into the same
//! primitive (Tokio's own tests do: a waker whose drop sends on the channel it waits on,
//! or releases a permit of the semaphore). Called under the state's lock, that call would
//! wait for a lock its own thread holds, which the model reports as a deadlock that the
//! real primitive never has.

use std::ops::{Deref, DerefMut};

pub(super) use interleave_engine::primitive::WakeList;
use interleave_engine::primitive::{Loc, Operation};
use interleave_test::sync::{Mutex, MutexGuard};

/// A primitive's state that keeps a [`WakeList`] (or several: a channel's own and its
/// semaphore's).
pub(super) trait Deferred {
    /// Takes out what this state's operations left to wake or drop.
    fn deferred(&mut self) -> WakeList;
}

impl Deferred for WakeList {
    fn deferred(&mut self) -> WakeList {
        self.take()
    }
}

/// A primitive's state, locked for one operation; releasing it (dropping it, or
/// [`unlock`](Self::unlock)) releases the lock first and only then wakes and drops the
/// wakers the operation left in the state's [`WakeList`].
#[derive(Debug)]
pub(super) struct Section<'a, S: Deferred> {
    guard: Option<MutexGuard<'a, S>>,
}

/// Locks `state` for the program's operation `what` at `loc`, as
/// [`Mutex::lock_section_at`]: one step of the model.
pub(super) fn section<'a, S: Deferred>(
    state: &'a Mutex<S>,
    loc: Loc,
    what: &'static Operation,
) -> Section<'a, S> {
    Section {
        guard: Some(state.lock_section_at(loc, what)),
    }
}

impl<S: Deferred> Section<'_, S> {
    /// Releases the lock and returns the wakers to wake and drop, for an operation that
    /// must release another lock first (watch's value lock) before it runs them.
    pub(super) fn unlock(mut self) -> WakeList {
        let mut guard = self.guard.take().expect("a section is released once");
        let later = guard.deferred();
        drop(guard);
        later
    }
}

impl<S: Deferred> Drop for Section<'_, S> {
    fn drop(&mut self) {
        if let Some(mut guard) = self.guard.take() {
            let later = guard.deferred();
            drop(guard);
            later.run();
        }
    }
}

impl<S: Deferred> Deref for Section<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        self.guard.as_ref().expect("held until dropped")
    }
}

impl<S: Deferred> DerefMut for Section<'_, S> {
    fn deref_mut(&mut self) -> &mut S {
        self.guard.as_mut().expect("held until dropped")
    }
}
