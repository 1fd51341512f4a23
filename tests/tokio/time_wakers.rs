//! A timer's stored waker may own other timers: dropping it (when its `Sleep` is dropped,
//! polled with another waker, or fires) may drop a `Sleep` and so call back into the
//! timers. The wakers are taken out under the execution's lock and dropped after it is
//! released, as Tokio's timer driver does.

use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use interleave_test_tokio::time::{self, Sleep};

use crate::support::{every_execution, poll_once};

const HOUR: Duration = Duration::from_secs(3600);

/// A waker that owns a pending `Sleep` and drops it when the waker itself is dropped;
/// counts its drops in `dropped`.
struct OwnsSleep {
    sleep: std::sync::Mutex<Option<Pin<Box<Sleep>>>>,
    dropped: &'static AtomicUsize,
}

impl Wake for OwnsSleep {
    fn wake(self: StdArc<Self>) {}
}

impl Drop for OwnsSleep {
    fn drop(&mut self) {
        drop(self.sleep.lock().unwrap().take());
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// A waker owning a `Sleep` that was polled (so registered with the timers) with a no-op
/// waker.
async fn waker_owning_a_timer(dropped: &'static AtomicUsize) -> Waker {
    let mut owned = Box::pin(time::sleep(HOUR));
    assert!(!poll_once(owned.as_mut()).await);
    Waker::from(StdArc::new(OwnsSleep {
        sleep: std::sync::Mutex::new(Some(owned)),
        dropped,
    }))
}

/// Polls `sleep` once with `waker`: whether it completed.
fn poll_with(sleep: Pin<&mut Sleep>, waker: &Waker) -> bool {
    sleep.poll(&mut Context::from_waker(waker)).is_ready()
}

use std::future::Future;

// Before the fix each of these spun for ever: the inner `Sleep`'s drop took the
// execution's lock again while the outer timer operation still held it.

#[test]
fn dropping_a_sleep_whose_waker_owns_another_sleep_drops_both() {
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    every_execution(|| async {
        let waker = waker_owning_a_timer(&DROPPED).await;
        let mut outer = Box::pin(time::sleep(HOUR));
        assert!(!poll_with(outer.as_mut(), &waker));
        drop(waker);
        let before = DROPPED.load(Ordering::Relaxed);
        drop(outer);
        assert_eq!(DROPPED.load(Ordering::Relaxed), before + 1);
    });
}

#[test]
fn polling_a_sleep_with_a_new_waker_drops_the_old_one_outside_the_timers() {
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    every_execution(|| async {
        let waker = waker_owning_a_timer(&DROPPED).await;
        let mut outer = Box::pin(time::sleep(HOUR));
        assert!(!poll_with(outer.as_mut(), &waker));
        drop(waker);
        let before = DROPPED.load(Ordering::Relaxed);
        assert!(!poll_once(outer.as_mut()).await);
        assert_eq!(DROPPED.load(Ordering::Relaxed), before + 1);
    });
}

#[test]
fn a_sleep_that_fires_drops_its_stored_waker_outside_the_timers() {
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    every_execution(|| async {
        time::pause();
        let waker = waker_owning_a_timer(&DROPPED).await;
        let mut outer = Box::pin(time::sleep(Duration::from_millis(1)));
        assert!(!poll_with(outer.as_mut(), &waker));
        drop(waker);
        let before = DROPPED.load(Ordering::Relaxed);
        time::advance(Duration::from_millis(1)).await;
        assert!(poll_once(outer.as_mut()).await);
        assert_eq!(DROPPED.load(Ordering::Relaxed), before + 1);
    });
}
