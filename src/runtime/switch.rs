//! The hand-off: how control passes from one model thread to another.
//!
//! Exactly one model thread holds the baton (its id is stored in `holder`); every other model
//! thread of the execution waits in [`Baton::wait`]. Passing the baton stores the next holder
//! and unparks its OS thread. A waiter spins briefly before parking, because in the common
//! ping-pong between two threads the baton comes back within a few hundred nanoseconds, far
//! sooner than a park/unpark round trip through the kernel.
//!
//! This file is the only place that knows how threads are suspended and resumed; replacing
//! OS threads by another substrate means replacing this file (and `pool.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::Thread;

use super::Tid;

/// Holder value meaning "the execution is being torn down": every waiter unwinds.
const ABORT: usize = usize::MAX;

/// Iterations of busy spinning before a waiter yields its core.
const SPIN_LIMIT: u32 = 1 << 10;
/// `yield_now` calls before a waiter parks.
const YIELD_LIMIT: u32 = 4;

/// What a waiting thread learns when it wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// The baton is ours: run.
    Mine,
    /// The execution is over: unwind without running model code.
    Abort,
}

/// The token that serializes the model threads of one execution.
#[derive(Debug)]
pub(crate) struct Baton {
    holder: AtomicUsize,
}

impl Baton {
    /// A baton held by thread `first`.
    pub(crate) fn new(first: Tid) -> Self {
        Baton { holder: AtomicUsize::new(first) }
    }

    /// Gives the baton to `to`, whose OS thread is `os`. The caller must then stop running
    /// model code (wait, or exit).
    pub(crate) fn pass(&self, to: Tid, os: &Thread) {
        self.holder.store(to, Ordering::Release);
        os.unpark();
    }

    /// Ends the execution: every current and future waiter gets [`Turn::Abort`].
    pub(crate) fn abort<'a>(&self, waiters: impl Iterator<Item = &'a Thread>) {
        self.holder.store(ABORT, Ordering::Release);
        for os in waiters {
            os.unpark();
        }
    }

    /// Whether the execution is being torn down.
    pub(crate) fn aborted(&self) -> bool {
        self.holder.load(Ordering::Acquire) == ABORT
    }

    /// Blocks the calling OS thread until model thread `me` holds the baton or the execution
    /// is torn down.
    pub(crate) fn wait(&self, me: Tid) -> Turn {
        let mut spins = 0u32;
        let mut yields = 0u32;
        loop {
            match self.holder.load(Ordering::Acquire) {
                h if h == me => return Turn::Mine,
                ABORT => return Turn::Abort,
                _ => {}
            }
            if spins < SPIN_LIMIT {
                spins += 1;
                std::hint::spin_loop();
            } else if yields < YIELD_LIMIT {
                yields += 1;
                std::thread::yield_now();
            } else {
                // A stale unpark token only makes this return early; the loop re-checks.
                std::thread::park();
            }
        }
    }
}
