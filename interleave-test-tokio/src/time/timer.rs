//! [`sleep`], [`sleep_until`] and [`Sleep`], over a [`Timer`] that `Interval` shares.

use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::Instant;
use interleave_engine::threads;
use interleave_engine::threads::timers::{self, Armed, TimerId};

/// A deadline and its registration with the runtime (see `runtime/timers.rs`).
#[derive(Debug)]
pub(super) struct Timer {
    deadline: Instant,
    /// The call that made it (`sleep`, `timeout`, ... and where), which reports of its
    /// firing name; a reset keeps it.
    armed: Armed,
    id: Option<TimerId>,
    /// A poll found the deadline reached since the timer was made or last reset.
    fired: bool,
}

impl Timer {
    /// A timer for `deadline`, not yet registered, made by the call `api` at the caller's
    /// location.
    ///
    /// # Panics
    /// Outside any model and any runtime's context, as Tokio's timers do (see
    /// [`require_context`]).
    #[track_caller]
    pub(super) fn new(deadline: Instant, api: &'static str) -> Timer {
        require_context();
        Timer {
            deadline,
            armed: Armed::here(api),
            id: None,
            fired: false,
        }
    }

    pub(super) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Ready once the clock reached the deadline; until then the timer wakes `cx`'s waker
    /// when it fires. Spends a unit of the task's cooperative budget, as Tokio's timers do: with none
    /// left it wakes the task and returns `Pending` without looking at the clock.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let api = "interleave_test_tokio::time::Sleep";
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        let deadline = self.deadline.since_start();
        match timers::poll(api, &mut self.id, (deadline, self.armed), cx.waker()) {
            true => {
                coop.made_progress();
                self.fired = true;
                Poll::Ready(())
            }
            false => Poll::Pending,
        }
    }

    /// Whether the timer fired, as Tokio's: a poll found its deadline reached, or it is
    /// registered (polled pending) and the clock reached its deadline since. Never before
    /// its first poll, even with its deadline already passed. Reads the clock.
    #[track_caller]
    pub(super) fn is_elapsed(&self) -> bool {
        self.fired || (self.id.is_some() && Instant::now() >= self.deadline)
    }

    /// A new deadline; the next poll registers it.
    pub(super) fn reset(&mut self, deadline: Instant) {
        self.cancel();
        self.deadline = deadline;
        self.fired = false;
    }

    fn cancel(&mut self) {
        if let Some(id) = self.id.take() {
            timers::cancel(&id);
        }
    }
}

/// Panics with Tokio's message where Tokio would have no timer: on an OS thread that runs
/// no model thread (a plain `#[test]`, whose primitives run in its one-thread execution)
/// and has entered no runtime's context. Inside a model a timer needs no runtime (any
/// `block_on` drives it, on the execution's clock), so nothing is refused there.
#[track_caller]
fn require_context() {
    if threads::in_model_thread() || crate::runtime::Handle::try_current().is_ok() {
        return;
    }
    panic!(
        "there is no reactor running, must be called from the context of a Tokio 1.x runtime \
         (a `Sleep`, `Timeout` or `Interval` is made inside `Runtime::block_on`, a task \
         spawned on a runtime, or after `Handle::enter`; inside an interleave-test model \
         any `block_on` will do)"
    );
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Waits until `duration` has passed on the virtual clock, as `tokio::time::sleep`.
/// A duration too large for the clock waits about 30 years.
///
/// # Panics
/// Outside any model, when no runtime's context was entered (Tokio's message), as Tokio's.
///
/// ```
/// use interleave_test_tokio::time::{self, Duration, Instant};
///
/// interleave_test::check_async(|| async {
///     let start = Instant::now();
///     time::sleep(Duration::from_millis(100)).await;
///     assert_eq!(start.elapsed(), Duration::from_millis(100));
/// })
/// .unwrap();
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(
        Instant::now().saturating_add(duration),
        "tokio::time::sleep",
    )
}

/// Waits until the virtual clock reaches `deadline`, as `tokio::time::sleep_until`.
///
/// # Panics
/// Outside any model, when no runtime's context was entered (Tokio's message), as Tokio's.
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(deadline, "tokio::time::sleep_until")
}

pin_project_lite::pin_project! {
    /// The future [`sleep`] and [`sleep_until`] return. As Tokio's, it is `!Unpin`: pin it
    /// (`tokio::pin!`, `Box::pin`) to poll it by reference.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Sleep {
        timer: Timer,
        #[pin]
        _pinned: PhantomPinned,
    }
}

impl Sleep {
    /// A sleep until `deadline`, made by the call `api` at the caller's location.
    #[track_caller]
    pub(super) fn new(deadline: Instant, api: &'static str) -> Sleep {
        Sleep {
            timer: Timer::new(deadline, api),
            _pinned: PhantomPinned,
        }
    }

    /// When it completes.
    pub fn deadline(&self) -> Instant {
        self.timer.deadline()
    }

    /// Whether its timer fired, as Tokio's `Sleep::is_elapsed`: it was polled and found
    /// its deadline reached, or it was polled pending and the clock reached its deadline
    /// since. `false` before its first poll, even when its deadline has passed, and after
    /// a [`reset`](Sleep::reset) until it is polled again. Reads the clock once polled.
    #[track_caller]
    pub fn is_elapsed(&self) -> bool {
        self.timer.is_elapsed()
    }

    /// Sets a new deadline, as `Sleep::reset`: it completes at `deadline`, even if it had
    /// already completed.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        self.project().timer.reset(deadline);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().timer.poll(cx)
    }
}
