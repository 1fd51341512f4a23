//! Modelled synchronization primitives, with the names, paths and signatures of
//! [`std::sync`]. Every operation is a switch point: the explorer may run another thread
//! just before it takes effect.
//!
//! [`Arc`] and [`Weak`] are modelled too: their drops synchronize as std's reference counts
//! do, and an `Arc` left alive at the end of an execution is a leak.

mod arc;
pub mod atomic;
mod barrier;
/// `Debug` and `Display` of a lock guard: those of the value it guards, as std's.
macro_rules! guard_fmt {
    ($guard:ident) => {
        impl<T: ?Sized + fmt::Debug> fmt::Debug for $guard<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }

        impl<T: ?Sized + fmt::Display> fmt::Display for $guard<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }
    };
}
use guard_fmt;

mod condvar;
mod lazy_lock;
pub mod mpsc;
mod mutex;
mod once;
mod once_lock;
mod poison;
mod rwlock;
mod values;
// (one line per primitive module below; keep alphabetical)

pub use arc::{Arc, Weak};
pub use barrier::{Barrier, BarrierWaitResult};
pub use condvar::{Condvar, WaitTimeoutResult};
pub use lazy_lock::LazyLock;
pub use mutex::section;
pub use mutex::{Mutex, MutexGuard};
pub use once::{Once, OnceState};
pub use once_lock::OnceLock;
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
// (one `pub use` line per primitive module below; keep alphabetical)

pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};
