//! Modelled synchronization primitives, with the names, paths and signatures of
//! [`std::sync`]. Every operation is a switch point: the explorer may run another thread
//! just before it takes effect.
//!
//! [`Arc`] and [`Weak`] are std's own: reference counts do not order memory in this model.

mod condvar;
mod mutex;
// (one line per primitive module below; keep alphabetical)

pub use condvar::{Condvar, WaitTimeoutResult};
pub use mutex::{Mutex, MutexGuard};
// (one `pub use` line per primitive module below; keep alphabetical)

pub use std::sync::{Arc, LockResult, PoisonError, TryLockError, TryLockResult, Weak};
