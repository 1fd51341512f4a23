//! The hand-off: how control passes from one model thread to another.
//!
//! Exactly one model thread holds the baton (its id is stored in `holder`); every other model
//! thread of the execution waits in [`Baton::wait`]. Passing the baton stores the next holder
//! and unparks its OS thread.
//!
//! A park/unpark round trip through the kernel costs several microseconds, longer than most
//! executions' work between two switches, while a waiter that spins sees the baton within
//! a few hundred nanoseconds. Spinning only pays when the spinner has a core of its own, so
//! the process keeps a budget of spinners: one fewer than the cores, shared by all
//! explorations running at once. A waiter that gets no spinner slot parks at once.
//!
//! This file is the only place that knows how threads are suspended and resumed; replacing
//! OS threads by another substrate means replacing this file (and `pool.rs`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::Instant;

use super::Tid;

/// Holder value meaning "the execution is being torn down": every waiter unwinds.
const ABORT: usize = usize::MAX;

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
        Baton {
            holder: AtomicUsize::new(first),
        }
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
        let turn = || match self.holder.load(Ordering::Acquire) {
            h if h == me => Some(Turn::Mine),
            ABORT => Some(Turn::Abort),
            _ => None,
        };
        if let Some(t) = spin_until(turn) {
            return t;
        }
        loop {
            // A stale unpark token only makes this return early; the loop re-checks.
            std::thread::park();
            if let Some(t) = turn() {
                return t;
            }
        }
    }
}

/// Spins until `ready` gives a value, if a spinner slot is free and spinning has been paying
/// lately; `None` means the caller must block the slow way (and re-check first).
///
/// The spin window adapts: it grows while spins end with the value and halves each time one
/// runs out, down to nothing when the cores are busy with other work (then spinning only
/// steals time from the thread being waited for). At zero, one wait in [`PROBE_EVERY`] still
/// spins briefly, to notice when the cores are free again.
pub(crate) fn spin_until<T>(mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    if let Some(v) = ready() {
        return Some(v);
    }
    let window = spin_window();
    if window == 0 {
        return None;
    }
    let _slot = SpinSlot::take()?;
    let start = Instant::now();
    loop {
        for _ in 0..32 {
            std::hint::spin_loop();
            if let Some(v) = ready() {
                spin_paid(true);
                return Some(v);
            }
        }
        if start.elapsed().as_nanos() as u64 > window {
            spin_paid(false);
            return ready();
        }
    }
}

/// Longest spin, in nanoseconds: a few kernel hand-offs.
const MAX_WINDOW: u64 = 50_000;
/// Below this the window is closed.
const MIN_WINDOW: u64 = 1_000;
/// While the window is closed, one wait in this many spins for [`MIN_WINDOW`].
const PROBE_EVERY: u64 = 64;

static WINDOW: AtomicU64 = AtomicU64::new(MAX_WINDOW / 2);
static WAITS: AtomicU64 = AtomicU64::new(0);

fn spin_window() -> u64 {
    match WINDOW.load(Ordering::Relaxed) {
        0 if WAITS.fetch_add(1, Ordering::Relaxed) % PROBE_EVERY == 0 => MIN_WINDOW,
        w => w,
    }
}

fn spin_paid(paid: bool) {
    let _ = WINDOW.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
        Some(match (paid, w) {
            (true, 0) => MIN_WINDOW,
            (true, w) => (w + w / 2).min(MAX_WINDOW),
            (false, w) if w / 2 < MIN_WINDOW => 0,
            (false, w) => w / 2,
        })
    });
}

/// One of the process's spinner slots, released on drop.
struct SpinSlot;

static SPINNERS: AtomicUsize = AtomicUsize::new(0);

impl SpinSlot {
    fn take() -> Option<SpinSlot> {
        let max = max_spinners();
        SPINNERS
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| SpinSlot)
    }
}

impl Drop for SpinSlot {
    fn drop(&mut self) {
        SPINNERS.fetch_sub(1, Ordering::Release);
    }
}

/// One spinner per core beyond the one that runs model code.
fn max_spinners() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()) - 1)
}
