//! Virtual time, with the names of [`std::time`].
//!
//! Each execution has its own clock, starting at zero, and tests never wait in real time.
//! Its instants lie far from their origin (2^32 seconds), as a real `Instant` does, so
//! `Instant::now() - Duration::from_secs(1)` at the start of an execution is an instant one
//! second before it, not an overflow; reports still give times since the start.
//! The clock moves:
//! - when every live thread is blocked and some of them wait with a deadline
//!   ([`crate::thread::sleep`], `wait_timeout`, `recv_timeout`, `park_timeout`): it jumps to
//!   the earliest deadline and those waits end;
//! - when a timed wait times out while other threads could still act, as std allows (a
//!   decision the search explores: the deadline passes at once, and every wait whose
//!   deadline that reaches ends too);
//! - when a thread spins (`yield_now`, `hint::spin_loop`): by 1 µs, doubling with each spin
//!   in a row, so a loop that polls [`Instant::now`] against a deadline ends.
//!
//! The last two are the loaded clock's ([`Clock::Loaded`](crate::Clock::Loaded), the
//! default); on the paused clock ([`Clock::Paused`](crate::Clock::Paused)) time moves only
//! the first way, when every thread waits.
//!
//! Every change is recorded in the schedule, so replay stays exact.
//!
//! Outside a model (an OS thread that runs no model thread, as a plain `#[test]`) the OS
//! thread has a clock of its own, also starting at zero, that moves only when the thread
//! waits: a timed wait nobody can end times out at once, the clock moving to its deadline.
//!
//! # Differences from std
//! [`Instant`] is a point on the execution's virtual clock; comparing instants of different
//! executions is meaningless. A loop that polls [`Instant::now`] without blocking or
//! spinning sees time stand still.

use std::ops::{Add, Sub};
use std::time::Duration;

use crate::primitive;

/// How far an execution's start lies from the origin of its [`Instant`]s: 2^32 seconds,
/// about 136 years. A real `Instant` is far from its origin (the boot, on Linux), and code
/// subtracts durations from `Instant::now()` (a deadline already past, an age); with the
/// clock's start at the origin that would overflow at once.
const EPOCH: Duration = Duration::from_secs(1 << 32);

/// A point on the execution's virtual clock, as [`std::time::Instant`]. Its `Debug` form
/// gives its time since the start of the clock (negative before it).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(
    /// Time since the origin, [`EPOCH`] before the start of the execution.
    Duration,
);

impl Instant {
    /// The current virtual time (outside a model, the OS thread's clock: see the
    /// [module](self)).
    #[track_caller]
    pub fn now() -> Instant {
        let now = primitive::with_state("interleave_test::time::Instant::now", |a| a.now());
        Instant(EPOCH.saturating_add(now))
    }

    /// Virtual time since `self`.
    #[track_caller]
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// Time from `earlier` to `self`, `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0)
    }

    /// `self + d`, `None` on overflow.
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        self.0.checked_add(d).map(Instant)
    }

    /// `self - d`, `None` when that is more than 2^32 seconds (about 136 years) before the
    /// start of the clock.
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        self.0.checked_sub(d).map(Instant)
    }

    /// Its time since the start of the execution's clock, zero for an instant before it (a
    /// deadline already past when the execution started).
    pub fn since_start(self) -> Duration {
        self.0.saturating_sub(EPOCH)
    }
}

impl std::fmt::Debug for Instant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.checked_sub(EPOCH) {
            Some(since) => write!(f, "Instant({since:?})"),
            None => write!(f, "Instant(-{:?})", EPOCH - self.0),
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    #[track_caller]
    fn add(self, d: Duration) -> Instant {
        self.checked_add(d)
            .expect("overflow when adding a duration to an instant")
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    #[track_caller]
    fn sub(self, d: Duration) -> Instant {
        self.checked_sub(d)
            .expect("overflow when subtracting a duration from an instant")
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, other: Instant) -> Duration {
        self.duration_since(other)
    }
}
