//! Time on the execution's virtual clock, with the names of `tokio::time`: [`sleep`],
//! [`sleep_until`], [`timeout`], [`interval`](fn@interval), [`Instant`], and [`pause`] / [`advance`] /
//! [`resume`].
//!
//! A timer never completes before its deadline. When it fires, the virtual clock jumps to
//! its deadline. It fires when nothing else can act (every thread and task waits), or
//! while others still could: a decision of the search, as for a timed wait of
//! `interleave_test::sync`, so the races of a `timeout` against the work it bounds are
//! explored, not avoided, and every schedule replays exactly. No test waits in real time.
//!
//! A failure whose execution had a timer fire early lists it
//! ([`Failure::early_timers`](interleave_test::Failure::early_timers)): the call that armed it
//! (`tokio::time::timeout` and where) and its deadline against the clock.
//!
//! # Paused time
//! After [`pause`] (or a runtime built with `start_paused(true)`), time moves as in a
//! paused Tokio runtime: only by [`advance`], or when every thread and task is idle
//! (auto-advance), never while others could act. [`resume`] turns the decision back on.
//! A test that assumes generous timeouts on any runtime flavour (Tokio refuses
//! `start_paused` on a multi-thread runtime) runs on the paused clock from its start with
//! [`Clock::Paused`](interleave_test::Clock::Paused) (`Builder::clock`, `#[interleave(clock =
//! "paused")]`); [`resume`] then leaves time paused.
//!
//! # Differences from Tokio
//! - Instants are points on the execution's clock (far from their origin, so a duration
//!   can be subtracted from the first `now` as from a real one: see [`interleave_test::time`]);
//!   [`Instant::from_std`] takes this crate's [`interleave_test::time::Instant`].
//! - Timers have no granularity: a deadline is exact to the nanosecond (Tokio's timer
//!   wheel rounds up to the millisecond). An [`Interval`] counts a tick as missed when it
//!   is polled more than 5 ms after its deadline, as Tokio's does.
//! - Tokio's cooperative budget is modelled (`task::coop`): a sleep's poll spends a unit.
//! - Inside a model a timer needs no runtime: any `block_on` (`check_async`, say) drives
//!   it. Outside any model, a `Sleep`, `Timeout` or `Interval` made where no runtime's
//!   context was entered panics with Tokio's message, as Tokio's does.

mod interval;
mod timer;

use std::future::{Future, IntoFuture};
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::pin::Pin;
use std::task::{Context, Poll};
/// `std::time::Duration`, as Tokio re-exports it.
pub use std::time::Duration;

use interleave_engine::threads::timers;

pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub use timer::{Sleep, sleep, sleep_until};

/// Errors of this module.
pub mod error {
    /// A [`timeout`](super::timeout) elapsed before its future completed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Elapsed(pub(super) ());

    impl std::fmt::Display for Elapsed {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("deadline has elapsed")
        }
    }

    impl std::error::Error for Elapsed {}

    impl From<Elapsed> for std::io::Error {
        fn from(_: Elapsed) -> std::io::Error {
            std::io::ErrorKind::TimedOut.into()
        }
    }
}

/// A point on the execution's virtual clock, as `tokio::time::Instant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(interleave_test::time::Instant);

impl Instant {
    /// The current virtual time, as [`interleave_test::time::Instant::now`].
    #[track_caller]
    pub fn now() -> Instant {
        Instant(interleave_test::time::Instant::now())
    }

    /// The same point as an instant of this crate's `std`-shaped [`interleave_test::time`].
    pub fn from_std(std: interleave_test::time::Instant) -> Instant {
        Instant(std)
    }

    /// This point as an instant of [`interleave_test::time`].
    pub fn into_std(self) -> interleave_test::time::Instant {
        self.0
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.0.duration_since(earlier.0)
    }

    /// Time from `earlier` to `self`, `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.0.checked_duration_since(earlier.0)
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.0.duration_since(earlier.0)
    }

    /// Virtual time since `self`.
    #[track_caller]
    pub fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }

    /// `self + d`, `None` on overflow.
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        self.0.checked_add(d).map(Instant)
    }

    /// `self - d`, `None` far before the start of the clock (see
    /// [`interleave_test::time::Instant::checked_sub`]).
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        self.0.checked_sub(d).map(Instant)
    }

    /// Its time since the start of the clock (zero before it).
    fn since_start(self) -> Duration {
        self.0.since_start()
    }

    /// `self + d`, or about 30 years after `self` when that overflows (as Tokio's
    /// far-future deadline).
    fn saturating_add(self, d: Duration) -> Instant {
        let far = Duration::from_secs(86_400 * 365 * 30);
        self.checked_add(d)
            .or_else(|| self.checked_add(far))
            .unwrap_or(self)
    }
}

impl From<interleave_test::time::Instant> for Instant {
    fn from(std: interleave_test::time::Instant) -> Instant {
        Instant(std)
    }
}

impl From<Instant> for interleave_test::time::Instant {
    fn from(i: Instant) -> interleave_test::time::Instant {
        i.0
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    #[track_caller]
    fn add(self, d: Duration) -> Instant {
        Instant(self.0 + d)
    }
}

impl AddAssign<Duration> for Instant {
    #[track_caller]
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    #[track_caller]
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0 - d)
    }
}

impl SubAssign<Duration> for Instant {
    #[track_caller]
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, other: Instant) -> Duration {
        self.duration_since(other)
    }
}

/// Awaits `future` for at most `duration`, as `tokio::time::timeout`: its output, or
/// [`error::Elapsed`] when the deadline passed first in this execution. The future is
/// polled first at each poll, so one that completes at the deadline wins.
///
/// ```
/// use interleave_test_tokio::time::{self, Duration};
///
/// interleave_test::check_async(|| async {
///     let late = time::timeout(Duration::from_millis(10), time::sleep(Duration::from_secs(1)));
///     assert!(late.await.is_err());
///     let soon = time::timeout(Duration::from_secs(1), async { 7 });
///     assert_eq!(soon.await, Ok(7));
/// })
/// .unwrap();
/// ```
///
/// # Panics
/// Outside any model, when no runtime's context was entered (Tokio's message).
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    let deadline = Instant::now().saturating_add(duration);
    Timeout {
        value: future.into_future(),
        delay: Sleep::new(deadline, "tokio::time::timeout"),
    }
}

/// [`timeout`] with a deadline rather than a duration, as `tokio::time::timeout_at`.
///
/// # Panics
/// Outside any model, when no runtime's context was entered (Tokio's message).
#[track_caller]
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        value: future.into_future(),
        delay: Sleep::new(deadline, "tokio::time::timeout_at"),
    }
}

pin_project_lite::pin_project! {
    /// The future [`timeout`] returns.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Timeout<T> {
        #[pin]
        value: T,
        #[pin]
        delay: Sleep,
    }
}

impl<T> Timeout<T> {
    /// The future it bounds.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The future it bounds, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// The future it bounds, without the bound.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: Future> Future for Timeout<T> {
    type Output = Result<T::Output, error::Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.project();
        let had_budget = crate::task::coop::has_budget_remaining();
        if let Poll::Ready(v) = me.value.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        // A future that spent the task's last unit does not keep its deadline from
        // being seen, as in Tokio.
        let spent_by_future = had_budget && !crate::task::coop::has_budget_remaining();
        let delay = me.delay;
        let poll_delay = |cx: &mut Context<'_>| delay.poll(cx).map(|()| Err(error::Elapsed(())));
        match spent_by_future {
            true => crate::task::coop::without_budget(|| poll_delay(cx)),
            false => poll_delay(cx),
        }
    }
}

/// Pauses time for the rest of the execution, as `tokio::time::pause`: it then moves only
/// by [`advance`], or when every thread and task is idle.
///
/// # Panics
/// If time is already paused (Tokio's message).
#[track_caller]
pub fn pause() {
    let api = "interleave_test_tokio::time::pause";
    assert!(!timers::paused(api), "time is already frozen");
    timers::set_paused(api, true);
}

/// Lets time move again while others could act, as `tokio::time::resume`.
///
/// # Panics
/// If time is not paused (Tokio's message).
#[track_caller]
pub fn resume() {
    let api = "interleave_test_tokio::time::resume";
    assert!(timers::paused(api), "time is not frozen");
    timers::set_paused(api, false);
}

/// Moves the paused clock forward by `duration` and yields, as `tokio::time::advance`:
/// every timer the clock reaches fires.
///
/// # Panics
/// If time is not paused (Tokio's message).
pub async fn advance(duration: Duration) {
    let api = "interleave_test_tokio::time::advance";
    assert!(timers::paused(api), "time is not frozen");
    timers::advance(api, duration);
    interleave_test::future::yield_now().await;
}
