//! `tokio::time` details Tokio's own tests pin: a `Sleep` is elapsed only once its timer
//! fired (never before its first poll, even with its deadline already reached), and
//! `advance` past a deadline wakes the waker that the pending timer holds.

use std::future::Future;
use std::sync::Arc as StdArc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use interleave_test_tokio::time::{self, Instant};

use crate::support::{every_execution, poll_once};

const MS: Duration = Duration::from_millis(1);

/// A waker that counts its wakes.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: StdArc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Tokio's `is_elapsed` says whether the timer fired, not whether the clock passed the
/// deadline: a sleep until now is not elapsed before its first poll. The model read the
/// clock, and said it was.
#[test]
fn a_sleep_until_now_is_elapsed_only_once_polled() {
    every_execution(|| async {
        let mut sleep = Box::pin(time::sleep_until(Instant::now()));
        assert!(!sleep.is_elapsed(), "elapsed before its first poll");
        sleep.as_mut().await;
        assert!(sleep.is_elapsed());
        // Reset to a later deadline, it is no longer elapsed.
        sleep.as_mut().reset(Instant::now() + MS);
        assert!(!sleep.is_elapsed());
    });
}

/// Under paused time a sleep polled pending is elapsed once `advance` reaches its
/// deadline, before it is polled again (the timer fired).
#[test]
fn a_pending_sleep_is_elapsed_once_the_paused_clock_reaches_its_deadline() {
    every_execution(|| async {
        time::pause();
        let mut sleep = Box::pin(time::sleep(10 * MS));
        assert!(!poll_once(sleep.as_mut()).await);
        assert!(!sleep.is_elapsed());
        time::advance(9 * MS).await;
        assert!(!sleep.is_elapsed());
        time::advance(MS).await;
        assert!(sleep.is_elapsed());
    });
}

/// A timeout polled by hand with its own waker, then `advance` past its deadline: the
/// waker is woken (Tokio's driver fires the timer as the clock moves), and the next poll
/// gives `Elapsed`.
#[test]
fn advance_past_a_deadline_wakes_the_waker_of_the_pending_timeout() {
    every_execution(|| async {
        time::pause();
        let counting = StdArc::new(Counting::default());
        let waker = Waker::from(StdArc::clone(&counting));
        let deadline = Instant::now() + 300 * MS;
        let mut late = Box::pin(time::timeout_at(deadline, std::future::pending::<()>()));
        let mut cx = Context::from_waker(&waker);
        assert!(late.as_mut().poll(&mut cx).is_pending());
        time::advance(301 * MS).await;
        assert_eq!(counting.0.load(Ordering::Relaxed), 1, "not woken");
        assert!(matches!(
            late.as_mut().poll(&mut cx),
            std::task::Poll::Ready(Err(_))
        ));
    });
}
