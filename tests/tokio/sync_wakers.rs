//! A waker whose `wake` or `drop` calls back into the primitive that holds it: Tokio wakes
//! and drops the wakers of its waiter lists with no lock held (its regression tests for
//! each list: `sync_semaphore`, `sync_notify`, `sync_broadcast`, `sync_mpsc`), so such a
//! call goes through. Here the model once woke them under the primitive's own lock, and
//! reported the call back as a deadlock of the thread with itself. Each model polls by hand
//! with such a waker, then makes the primitive wake or drop it.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Wake, Waker};

use interleave_test_tokio::sync::{Notify, Semaphore, broadcast, mpsc, oneshot, watch};

use crate::support::every_execution;

/// A waker that runs `on_wake` when woken and `on_drop` when its last clone is dropped.
struct Hooks {
    on_wake: Box<dyn Fn() + Send + Sync>,
    on_drop: Box<dyn Fn() + Send + Sync>,
}

impl Wake for Hooks {
    fn wake(self: Arc<Self>) {
        (self.on_wake)();
    }
}

impl Drop for Hooks {
    fn drop(&mut self) {
        (self.on_drop)();
    }
}

fn hooked(
    on_wake: impl Fn() + Send + Sync + 'static,
    on_drop: impl Fn() + Send + Sync + 'static,
) -> Waker {
    Waker::from(Arc::new(Hooks {
        on_wake: Box::new(on_wake),
        on_drop: Box::new(on_drop),
    }))
}

/// A waker whose last drop drops `value` (a permit, a channel's handle).
fn dropping<T: Send + 'static>(value: T) -> Waker {
    let held = StdMutex::new(Some(value));
    hooked(|| {}, move || drop(held.lock().unwrap().take()))
}

/// Polls `fut` once with `waker`.
fn poll_with<F: Future + ?Sized>(fut: std::pin::Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    fut.poll(&mut Context::from_waker(waker))
}

#[test]
fn semaphore_close_drops_a_waiter_waker_that_releases_a_permit() {
    every_execution(|| async {
        let sem = Arc::new(Semaphore::new(1));
        let permit = Arc::clone(&sem).try_acquire_owned().unwrap();
        let mut acquire = pin!(sem.acquire());
        assert!(poll_with(acquire.as_mut(), &dropping(permit)).is_pending());
        // The semaphore holds the waker's last clone: waking it on close drops it, and
        // with it the permit, which goes back to the semaphore.
        sem.close();
        assert_eq!(sem.available_permits(), 1);
        assert!(poll_with(acquire, Waker::noop()).is_ready());
    });
}

#[test]
fn semaphore_close_wakes_a_waker_that_adds_permits() {
    every_execution(|| async {
        let sem = Arc::new(Semaphore::new(0));
        let adder = Arc::clone(&sem);
        let waker = hooked(move || adder.add_permits(1), || {});
        let mut acquire = pin!(sem.acquire());
        assert!(poll_with(acquire.as_mut(), &waker).is_pending());
        sem.close();
        assert_eq!(sem.available_permits(), 1);
    });
}

#[test]
fn notify_waiters_drops_a_waker_that_notifies_the_same_notify() {
    every_execution(|| async {
        let notify = Arc::new(Notify::new());
        let inner = Arc::clone(&notify);
        let waker = hooked(|| {}, move || inner.notify_waiters());
        let mut notified = pin!(notify.notified());
        assert!(poll_with(notified.as_mut(), &waker).is_pending());
        drop(waker);
        notify.notify_waiters();
        assert!(poll_with(notified, Waker::noop()).is_ready());
    });
}

#[test]
fn broadcast_send_wakes_and_drops_a_waker_that_sends_on_the_same_channel() {
    every_execution(|| async {
        let (tx, mut rx) = broadcast::channel(4);
        let inner = tx.clone();
        let waker = hooked(
            || {},
            move || {
                let _ = inner.send(2);
            },
        );
        {
            let mut recv = pin!(rx.recv());
            assert!(poll_with(recv.as_mut(), &waker).is_pending());
            drop(waker);
            // The send wakes the receiver's waker, whose drop sends again.
            tx.send(1).unwrap();
            assert_eq!(poll_with(recv, Waker::noop()), Poll::Ready(Ok(1)));
        }
        assert_eq!(rx.try_recv(), Ok(2));
    });
}

#[test]
fn broadcast_last_receiver_drop_wakes_a_closed_waker_that_queries_the_sender() {
    every_execution(|| async {
        let (tx, rx) = broadcast::channel::<()>(1);
        tx.send(()).unwrap();
        let probe = tx.clone();
        let woken = Arc::new(StdMutex::new(None));
        let seen = Arc::clone(&woken);
        let waker = hooked(
            move || {
                let send = probe.send(()).is_err();
                *seen.lock().unwrap() = Some((probe.receiver_count(), probe.len(), send));
            },
            || {},
        );
        let mut closed = pin!(tx.closed());
        assert!(poll_with(closed.as_mut(), &waker).is_pending());
        drop(rx);
        assert_eq!(*woken.lock().unwrap(), Some((0, 0, true)));
        assert!(poll_with(closed, &waker).is_ready());
    });
}

#[test]
fn mpsc_receiver_drop_drops_a_sender_waker_that_releases_a_permit() {
    every_execution(|| async {
        let (tx, rx) = mpsc::channel::<u8>(2);
        let permit = tx.clone().try_reserve_owned().unwrap();
        tx.try_send(1).unwrap();
        let mut reserve = pin!(tx.reserve());
        assert!(poll_with(reserve.as_mut(), &dropping(permit)).is_pending());
        // Closing wakes the waiting `reserve`, dropping its waker's last clone and the
        // permit inside it, which gives its slot back to the channel.
        drop(rx);
        assert!(matches!(
            poll_with(reserve, Waker::noop()),
            Poll::Ready(Err(_))
        ));
    });
}

#[test]
fn watch_send_wakes_a_waker_that_borrows_the_value() {
    every_execution(|| async {
        let (tx, mut rx) = watch::channel(0);
        let tx = Arc::new(tx);
        let probe = Arc::clone(&tx);
        let woken = Arc::new(StdMutex::new(None));
        let seen = Arc::clone(&woken);
        let waker = hooked(
            move || *seen.lock().unwrap() = Some((*probe.borrow(), probe.receiver_count())),
            || {},
        );
        let mut changed = pin!(rx.changed());
        assert!(poll_with(changed.as_mut(), &waker).is_pending());
        tx.send(7).unwrap();
        assert_eq!(*woken.lock().unwrap(), Some((7, 1)));
        assert_eq!(poll_with(changed, Waker::noop()), Poll::Ready(Ok(())));
    });
}

#[test]
fn oneshot_closed_drops_a_replaced_waker_that_drops_the_receiver() {
    every_execution(|| async {
        let (mut tx, rx) = oneshot::channel::<u8>();
        assert!(
            tx.poll_closed(&mut Context::from_waker(&dropping(rx)))
                .is_pending()
        );
        // A poll with another waker replaces the first, whose drop drops the receiver.
        assert!(
            tx.poll_closed(&mut Context::from_waker(Waker::noop()))
                .is_pending()
        );
        assert!(tx.is_closed());
        assert!(
            tx.poll_closed(&mut Context::from_waker(Waker::noop()))
                .is_ready()
        );
    });
}
