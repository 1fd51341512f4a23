//! The baton: how control passes between model threads that run on OS threads of their own
//! (every thread on the OS-thread substrate, scoped threads on either) and the driver.
//!
//! Exactly one holder runs: a model thread (its id is stored in `holder`) or the driver
//! ([`DRIVER`], which runs every coroutine of the execution). Every other OS thread of the
//! execution waits in [`Baton::wait`]. Passing the baton stores the next holder and unparks
//! its OS thread.
//!
//! A park/unpark round trip through the kernel costs several microseconds, longer than most
//! executions' work between two switches, while a waiter that spins sees the baton within
//! a few hundred nanoseconds. Spinning only pays when the spinner has a core of its own, so
//! the process keeps a budget of spinners: one fewer than the cores, shared by all
//! explorations running at once. A waiter that gets no spinner slot parks at once.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// The holder value of the driver thread.
pub(crate) const DRIVER: usize = usize::MAX;

/// The token that serializes the OS threads of one execution.
#[derive(Debug)]
pub(crate) struct Baton {
    holder: AtomicUsize,
}

impl Default for Baton {
    fn default() -> Self {
        Baton {
            holder: AtomicUsize::new(DRIVER),
        }
    }
}

impl Baton {
    /// Gives the baton to `to` (a thread id or [`DRIVER`]), whose OS thread is `os`. The
    /// caller must then stop running model code (wait, or exit).
    pub(crate) fn pass(&self, to: usize, os: &Thread) {
        self.holder.store(to, Ordering::Release);
        os.unpark();
    }

    /// Blocks the calling OS thread until `me` holds the baton. `spin`: the baton may come
    /// back soon, so spin before parking.
    pub(crate) fn wait(&self, me: usize, spin: bool) {
        let mine = || (self.holder.load(Ordering::Acquire) == me).then_some(());
        if if spin { spin_until(mine) } else { mine() }.is_some() {
            return;
        }
        loop {
            // A stale unpark token only makes this return early; the loop re-checks.
            std::thread::park();
            if mine().is_some() {
                return;
            }
        }
    }
}

/// Spins until `ready` gives a value, if a spinner slot is free and spinning has been paying
/// lately; `None` means the caller must block the slow way (and re-check first).
///
/// Spinning pays when the baton comes back within [`SPIN_WINDOW`], which is the common case
/// on an idle machine. When the cores are busy with other work, spinning steals time from the
/// very thread being waited for, and most spins run out. So the process keeps a score:
/// a paid spin adds one, a spin that ran out takes [`MISS_COST`] off; waiters spin only
/// while the score is not negative (at least three spins in four pay). Below that, one wait
/// in [`PROBE_EVERY`] spins anyway, to notice when the cores are free again.
pub(crate) fn spin_until<T>(mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    if let Some(v) = ready() {
        return Some(v);
    }
    if super::affinity::pinning() || !spinning_pays() {
        // Pinned threads share their core with the thread they wait for: never spin.
        return None;
    }
    let _slot = match take_slot(&mut ready) {
        Ok(slot) => slot,
        Err(early) => return early,
    };
    let start = Instant::now();
    loop {
        for _ in 0..32 {
            std::hint::spin_loop();
            if let Some(v) = ready() {
                score(true);
                return Some(v);
            }
        }
        if start.elapsed() > SPIN_WINDOW {
            score(false);
            return ready();
        }
    }
}

/// Takes a spinner slot. The thread the caller just handed the baton to may hold it for a
/// few hundred nanoseconds more, before it notices; so this retries briefly, watching
/// `ready` meanwhile (`Err(Some(v))`: the value came first; `Err(None)`: no slot).
fn take_slot<T>(ready: &mut impl FnMut() -> Option<T>) -> Result<SpinSlot, Option<T>> {
    for _ in 0..64 {
        if let Some(slot) = SpinSlot::take() {
            return Ok(slot);
        }
        std::hint::spin_loop();
        if let Some(v) = ready() {
            return Err(Some(v));
        }
    }
    Err(None)
}

/// How long a waiter spins before it parks: a few kernel hand-offs on a virtual machine.
const SPIN_WINDOW: Duration = Duration::from_micros(50);
/// What a spin that ran out takes off the score (a paid one adds 1).
const MISS_COST: i64 = 3;
/// Bounds of the score, so that it reacts within a few dozen waits.
const SCORE_MAX: i64 = 32;
/// While the score is negative, one wait in this many spins anyway.
const PROBE_EVERY: u64 = 16;

static SCORE: AtomicI64 = AtomicI64::new(0);
static WAITS: AtomicU64 = AtomicU64::new(0);

fn spinning_pays() -> bool {
    SCORE.load(Ordering::Relaxed) >= 0
        || WAITS
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(PROBE_EVERY)
}

fn score(paid: bool) {
    let delta = if paid { 1 } else { -MISS_COST };
    let _ = SCORE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| {
        Some((s + delta).clamp(-SCORE_MAX, SCORE_MAX))
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
