//! [`interval`], [`Interval`] and [`MissedTickBehavior`].

use std::task::{Context, Poll};
use std::time::Duration;

use super::Instant;
use super::timer::Timer;

/// How late a tick may be polled and still not count as missed, as in Tokio's `Interval`
/// (its schedule then stays on the grid).
const LATE: Duration = Duration::from_millis(5);

/// What an [`Interval`] does when a tick is missed (polled more than 5 ms after its
/// deadline), as Tokio's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissedTickBehavior {
    /// Ticks as fast as it can until it caught up with the schedule (the default).
    #[default]
    Burst,
    /// The next tick is one period after the late one.
    Delay,
    /// Skips the missed ticks: the next is the first one of the original schedule after
    /// now.
    Skip,
}

impl MissedTickBehavior {
    /// The deadline after a tick due at `due`, polled at `now`.
    fn next(self, due: Instant, now: Instant, period: Duration) -> Instant {
        match self {
            MissedTickBehavior::Burst => due.saturating_add(period),
            MissedTickBehavior::Delay => now.saturating_add(period),
            MissedTickBehavior::Skip => {
                let late = now.duration_since(due).as_nanos();
                let behind = Duration::from_nanos((late % period.as_nanos()) as u64);
                now.saturating_add(period - behind)
            }
        }
    }
}

/// Ticks every `period`, the first tick at once, as `tokio::time::interval`.
///
/// ```
/// use interleave_test_tokio::time::{self, Duration, Instant};
///
/// interleave_test::check_async(|| async {
///     let start = Instant::now();
///     let mut every = time::interval(Duration::from_millis(10));
///     for n in 0..3 {
///         assert_eq!(every.tick().await - start, Duration::from_millis(10) * n);
///     }
/// })
/// .unwrap();
/// ```
///
/// # Panics
/// If `period` is zero, or outside any model when no runtime's context was entered
/// (Tokio's messages).
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    Interval::new(Instant::now(), period, "tokio::time::interval")
}

/// Ticks every `period`, the first tick at `start`, as `tokio::time::interval_at`.
///
/// # Panics
/// If `period` is zero, or outside any model when no runtime's context was entered
/// (Tokio's messages).
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    Interval::new(start, period, "tokio::time::interval_at")
}

/// A stream of ticks, as `tokio::time::Interval`.
#[derive(Debug)]
pub struct Interval {
    timer: Timer,
    period: Duration,
    missed: MissedTickBehavior,
}

impl Interval {
    /// An interval made by the call `api` at the caller's location.
    #[track_caller]
    fn new(start: Instant, period: Duration, api: &'static str) -> Interval {
        assert!(period > Duration::ZERO, "`period` must be non-zero.");
        Interval {
            timer: Timer::new(start, api),
            period,
            missed: MissedTickBehavior::Burst,
        }
    }

    /// Waits for the next tick and returns when it was due.
    pub async fn tick(&mut self) -> Instant {
        std::future::poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick: when it was due, once the clock reached it.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if self.timer.poll(cx).is_pending() {
            return Poll::Pending;
        }
        let due = self.timer.deadline();
        let now = Instant::now();
        let next = match now > due.saturating_add(LATE) {
            true => self.missed.next(due, now, self.period),
            false => due.saturating_add(self.period),
        };
        self.timer.reset(next);
        Poll::Ready(due)
    }

    /// The next tick is one period from now.
    #[track_caller]
    pub fn reset(&mut self) {
        self.timer.reset(Instant::now().saturating_add(self.period));
    }

    /// The next tick is now.
    #[track_caller]
    pub fn reset_immediately(&mut self) {
        self.timer.reset(Instant::now());
    }

    /// The next tick is `after` from now.
    #[track_caller]
    pub fn reset_after(&mut self, after: Duration) {
        self.timer.reset(Instant::now().saturating_add(after));
    }

    /// The next tick is at `deadline`.
    pub fn reset_at(&mut self, deadline: Instant) {
        self.timer.reset(deadline);
    }

    /// What it does when a tick is late.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed
    }

    /// Sets what it does when a tick is late.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed = behavior;
    }

    /// Its period.
    pub fn period(&self) -> Duration {
        self.period
    }
}
