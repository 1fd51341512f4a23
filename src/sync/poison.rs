//! Poisoning, shared by the lock types as in std: a lock is poisoned when a guard is dropped
//! by a thread that started panicking while it held the lock, and every later lock (and
//! `into_inner`, `get_mut`) returns its value inside a `PoisonError`. A thread unwound by
//! the crate's own teardown poisons nothing (`primitive::poisons`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LockResult, PoisonError};

use crate::primitive;

/// A lock's poison flag. Relaxed: only the running model thread touches it, and hand-offs
/// order everything.
#[derive(Debug)]
pub(super) struct Flag(AtomicBool);

/// What a guard remembers for the poison rule: whether its thread was already panicking
/// when it took the lock (then its drop poisons nothing, as in std).
#[derive(Debug)]
pub(super) struct Guard {
    panicking: bool,
}

impl Flag {
    pub(super) const fn new() -> Self {
        Flag(AtomicBool::new(false))
    }

    pub(super) fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub(super) fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    /// A guard taken now.
    pub(super) fn guard() -> Guard {
        Guard {
            panicking: primitive::poisons(),
        }
    }

    /// The lock of `guard` is released: poisons it if the thread began panicking since.
    pub(super) fn done(&self, guard: &Guard) {
        if !guard.panicking && primitive::poisons() {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    /// `value`, in a `PoisonError` if the lock is poisoned.
    pub(super) fn result<G>(&self, value: G) -> LockResult<G> {
        result(self.get(), value)
    }
}

/// `value`, in a `PoisonError` if `poisoned` (for a lock already taken apart).
pub(super) fn result<T>(poisoned: bool, value: T) -> LockResult<T> {
    match poisoned {
        true => Err(PoisonError::new(value)),
        false => Ok(value),
    }
}
