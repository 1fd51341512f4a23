//! Synchronization for tasks, with the names of `tokio::sync`: [`Mutex`], [`RwLock`],
//! [`Semaphore`], [`Notify`], [`Barrier`], [`OnceCell`], [`SetOnce`], and [`mpsc`],
//! [`oneshot`], [`watch`] and [`broadcast`] channels.
//!
//! Each primitive keeps its state in a modelled mutex of `interleave_test::sync`, so every
//! operation is a switch point the search orders, and a wait is a task's wait for a wake
//! (with spurious polls explored, as for every future). Fairness and wake order follow
//! Tokio's documentation: locks, permits and `notify_one` are first come, first served;
//! where Tokio leaves an order open, the search explores it.
//!
//! A `static` `OnceCell`, `SetOnce`, `Semaphore` or `Notify` (their `const_new`), or one
//! made outside the model closure, has a state of its own in each execution, as it was made
//! (the engine's `PerExecution`); so has a `Mutex` or `RwLock` made by `const_new`, with a
//! copy of its value (`copied.rs`). Any other `Mutex`, `RwLock`, `Barrier` or channel is one
//! execution's: a second execution that uses it is `Misuse`, with what to write instead.

/// `Debug` for channel handles without a `T: Debug` bound, as Tokio's (`Sender { .. }`):
/// a `#[derive(Debug)]` struct that holds a channel of a type without `Debug` compiles.
macro_rules! debug_without_bound {
    ($($name:ident $(<$lt:lifetime>)?),* $(,)?) => {$(
        impl<$($lt,)? T> std::fmt::Debug for $name<$($lt,)? T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    )*};
}

/// `Display` for lock guards, showing the value, as Tokio's (`T: Display`).
macro_rules! display_as_value {
    ($($name:ident $(<$lt:lifetime>)?),* $(,)?) => {$(
        impl<$($lt,)? T: std::fmt::Display> std::fmt::Display for $name<$($lt,)? T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&**self, f)
            }
        }
    )*};
}

display_as_value!(
    MutexGuard<'a>,
    MappedMutexGuard<'a>,
    OwnedMutexGuard,
    RwLockReadGuard<'a>,
    RwLockWriteGuard<'a>,
    RwLockMappedWriteGuard<'a>,
    OwnedRwLockReadGuard,
    OwnedRwLockWriteGuard,
);

mod barrier;
pub mod broadcast;
mod copied;
pub mod mpsc;
mod mutex;
mod notify;
mod once_cell;
pub mod oneshot;
mod rwlock;
mod rwlock_guards;
mod rwlock_owned;
mod sem;
mod semaphore;
mod set_once;
mod wake_list;
pub mod watch;

/// The named futures of this module's primitives, at Tokio's path
/// (`tokio::sync::futures::Notified`).
pub mod futures {
    pub use super::notify::{Notified, OwnedNotified};
}

pub use barrier::{Barrier, BarrierWaitResult};
pub use mutex::{MappedMutexGuard, Mutex, MutexGuard, OwnedMutexGuard};
pub use notify::{Notified, Notify};
pub use once_cell::{OnceCell, SetError};
pub use rwlock::RwLock;
pub use rwlock_guards::{RwLockMappedWriteGuard, RwLockReadGuard, RwLockWriteGuard};
pub use rwlock_owned::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard};
pub use semaphore::{
    AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError,
};
pub use set_once::{SetOnce, SetOnceError};

/// A `try_lock` found the lock held (or waited for), as `tokio::sync::TryLockError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TryLockError(pub(super) ());

impl std::fmt::Display for TryLockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("operation would block")
    }
}

impl std::error::Error for TryLockError {}

/// Panics, with Tokio's message, when synchronous blocking is asked for inside a future
/// polled by a `block_on` or in a task a runtime spawned (`blocking_lock`, `blocking_recv`,
/// `blocking_send`); a `spawn_blocking` closure or a plain thread may block.
#[track_caller]
fn no_blocking_in_async(what: &str) {
    assert!(
        !interleave_test::future::in_block_on() && !crate::runtime::drives_tasks(),
        "Cannot block the current thread from within a runtime. This happens because a \
         function attempted to block the current thread while the thread is being used to \
         drive asynchronous tasks ({what}; use `.await`, or call it from a thread or \
         spawn_blocking)."
    );
}
