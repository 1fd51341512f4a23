//! Behaviours of `tokio::sync` that Tokio's own tests pin (`sync_mpsc`, `sync_oneshot`,
//! `sync_notify`, `sync_semaphore`, `sync_rwlock`), where the model once disagreed: each
//! model polls by hand, so it checks the exact state Tokio's test checks.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::task::{Context, Poll, Wake, Waker};

use interleave_test::{Builder, FailureKind};
use interleave_test_tokio::sync::{Notify, RwLock, RwLockWriteGuard, Semaphore};
use interleave_test_tokio::sync::{mpsc, oneshot};

use crate::support::every_execution;

/// A waker that counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A future polled by hand with a waker of its own, as Tokio's tests poll theirs.
struct Polled<F> {
    fut: Pin<Box<F>>,
    wakes: Arc<Count>,
}

impl<F: Future> Polled<F> {
    fn new(fut: F) -> Self {
        Polled {
            fut: Box::pin(fut),
            wakes: Arc::default(),
        }
    }

    fn poll(&mut self) -> Poll<F::Output> {
        let waker = Waker::from(Arc::clone(&self.wakes));
        self.fut.as_mut().poll(&mut Context::from_waker(&waker))
    }

    /// Whether it was woken since it was last asked.
    fn woken(&self) -> bool {
        self.wakes.0.swap(0, SeqCst) > 0
    }
}

// ---- mpsc: a reservation that fails or is dropped on a closed channel ----

/// `reserve_many(2)` waits with one slot of two; the receiver closes and waits for the end.
/// What gives that slot back — the reservation seeing the close (`fail`) or being dropped
/// — leaves the channel idle and must wake the receiver.
fn reservation_of_many_ends_on_a_closed_channel(fail: bool) {
    every_execution(|| async move {
        let (tx, mut rx) = mpsc::channel::<()>(2);
        let permit = tx.try_reserve().unwrap();
        let mut reserve = Polled::new(tx.reserve_many(2));
        assert!(reserve.poll().is_pending());
        rx.close();
        let mut recv = Polled::new(rx.recv());
        assert!(recv.poll().is_pending());
        drop(permit);
        assert!(!recv.woken(), "the reservation still holds a slot");
        match fail {
            true => assert!(matches!(reserve.poll(), Poll::Ready(Err(_)))),
            false => drop(reserve),
        }
        assert!(recv.woken());
        assert_eq!(recv.poll(), Poll::Ready(None));
    });
}

#[test]
fn mpsc_failed_reserve_many_on_a_closed_channel_wakes_the_receiver() {
    reservation_of_many_ends_on_a_closed_channel(true);
}

#[test]
fn mpsc_dropped_reserve_many_on_a_closed_channel_wakes_the_receiver() {
    reservation_of_many_ends_on_a_closed_channel(false);
}

/// `reserve` is given the only slot but not polled yet when the receiver closes: Tokio
/// fails it all the same (its acquisition checks for the close first), and the slot it
/// gives back, or that its drop gives back, must wake the receiver.
fn granted_reservation_ends_on_a_closed_channel(fail: bool) {
    every_execution(|| async move {
        let (tx, mut rx) = mpsc::channel::<()>(1);
        let permit = tx.try_reserve().unwrap();
        let mut reserve = Polled::new(tx.reserve());
        assert!(reserve.poll().is_pending());
        drop(permit);
        assert!(reserve.woken());
        rx.close();
        let mut recv = Polled::new(rx.recv());
        assert!(recv.poll().is_pending());
        match fail {
            true => assert!(matches!(reserve.poll(), Poll::Ready(Err(_)))),
            false => drop(reserve),
        }
        assert!(recv.woken());
        assert_eq!(recv.poll(), Poll::Ready(None));
    });
}

#[test]
fn mpsc_failed_granted_reserve_on_a_closed_channel_wakes_the_receiver() {
    granted_reservation_ends_on_a_closed_channel(true);
}

#[test]
fn mpsc_dropped_granted_reserve_on_a_closed_channel_wakes_the_receiver() {
    granted_reservation_ends_on_a_closed_channel(false);
}

#[test]
fn mpsc_receiver_drop_drops_its_waker() {
    every_execution(|| async {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let (_tx, mut rx) = mpsc::channel::<()>(1);
        assert!(rx.poll_recv(&mut Context::from_waker(&waker)).is_pending());
        assert_eq!(Arc::strong_count(&count), 3);
        drop(rx);
        assert_eq!(Arc::strong_count(&count), 2, "the receiver kept its waker");
    });
}

/// Compiles only if every mpsc handle is unwind safe whatever `T` is, as Tokio's.
#[test]
fn mpsc_handles_are_unwind_safe_for_any_t() {
    fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    type NotSafe = std::cell::Cell<u8>;
    unwind_safe::<mpsc::Sender<NotSafe>>();
    unwind_safe::<mpsc::Receiver<NotSafe>>();
    unwind_safe::<mpsc::Permit<'static, NotSafe>>();
    unwind_safe::<mpsc::OwnedPermit<NotSafe>>();
    unwind_safe::<mpsc::PermitIterator<'static, NotSafe>>();
    unwind_safe::<mpsc::UnboundedSender<NotSafe>>();
    unwind_safe::<mpsc::UnboundedReceiver<NotSafe>>();
    unwind_safe::<mpsc::WeakSender<NotSafe>>();
    unwind_safe::<mpsc::WeakUnboundedSender<NotSafe>>();
}

// ---- oneshot: receiving after `close` ----

#[test]
fn oneshot_receiver_closed_with_nothing_sent_is_ready_with_an_error() {
    every_execution(|| async {
        let (mut tx, rx) = oneshot::channel::<u8>();
        let mut closed = pin!(tx.closed());
        let mut rx = Polled::new(rx);
        let noop = &mut Context::from_waker(Waker::noop());
        assert!(closed.as_mut().poll(noop).is_pending());
        rx.fut.close();
        assert!(closed.as_mut().poll(noop).is_ready());
        assert!(!rx.fut.is_terminated());
        assert!(
            matches!(rx.poll(), Poll::Ready(Err(_))),
            "the sender lives on"
        );
        assert!(rx.fut.is_terminated());
    });
}

#[test]
fn oneshot_try_recv_after_close_with_nothing_sent_is_closed() {
    every_execution(|| async {
        let (_tx, mut rx) = oneshot::channel::<u8>();
        rx.close();
        assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Closed));
    });
}

// ---- Notify: a dropped waiter passes `notify_last` on ----

#[test]
fn notify_last_picked_waiter_dropped_passes_it_to_the_newest_waiter() {
    every_execution(|| async {
        let notify = Notify::new();
        let mut waiters: Vec<_> = (0..3).map(|_| Polled::new(notify.notified())).collect();
        for w in &mut waiters {
            assert!(w.poll().is_pending());
        }
        notify.notify_last();
        drop(waiters.pop());
        assert!(
            waiters[1].poll().is_ready(),
            "the newest waiter left gets it"
        );
        assert!(waiters[0].poll().is_pending());
    });
}

// ---- Semaphore: no more than MAX_PERMITS ----

fn add_permits_panic(start: usize, adds: &'static [usize]) -> String {
    let failure = Builder::new()
        .check_async(move || async move {
            let sem = Semaphore::new(start);
            for &n in adds {
                sem.add_permits(n);
            }
        })
        .expect_err("adding past MAX_PERMITS panics");
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
    failure.message().to_owned()
}

#[test]
fn semaphore_add_permits_past_max_permits_panics_with_tokios_message() {
    let max = Semaphore::MAX_PERMITS;
    assert_eq!(
        add_permits_panic(1, &[Semaphore::MAX_PERMITS]),
        format!("number of added permits ({max}) would overflow MAX_PERMITS ({max})")
    );
    assert_eq!(
        add_permits_panic(max - 1, &[1, 1]),
        format!("number of added permits (1) would overflow MAX_PERMITS ({max})")
    );
    assert_eq!(
        add_permits_panic(0, &[usize::MAX]),
        format!("cannot add more than MAX_PERMITS permits ({max})")
    );
}

#[test]
fn semaphore_add_permits_up_to_max_permits_is_fine() {
    every_execution(|| async {
        let sem = Semaphore::new(Semaphore::MAX_PERMITS - 1);
        sem.add_permits(1);
        assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
    });
}

// ---- RwLock: a write guard's downgrade_map ----

#[test]
fn rwlock_downgrade_map_lets_a_reader_in_only_after_the_map_function() {
    every_execution(|| async {
        let lock = RwLock::new(0u32);
        let write = lock.write().await;
        let mut read = Polled::new(lock.read());
        assert!(read.poll().is_pending());
        let mapped = RwLockWriteGuard::downgrade_map(write, |v| {
            assert!(
                read.poll().is_pending(),
                "a reader got in during the map function"
            );
            v
        });
        let Poll::Ready(other) = read.poll() else {
            panic!("the reader waits after the downgrade");
        };
        assert!(std::ptr::eq(&*mapped, &*other));
    });
}

#[test]
fn rwlock_try_downgrade_map_keeps_writing_when_the_map_function_finds_nothing() {
    every_execution(|| async {
        let lock = RwLock::new(0u32);
        let write = lock.write().await;
        let mut read = Polled::new(lock.read());
        assert!(read.poll().is_pending());
        let mut write = RwLockWriteGuard::try_downgrade_map(write, |_| {
            assert!(read.poll().is_pending());
            None::<&()>
        })
        .expect_err("the map function found nothing");
        *write += 1;
        assert!(read.poll().is_pending(), "still writing");
        let mapped = RwLockWriteGuard::try_downgrade_map(write, |v| Some(v)).expect("found");
        let Poll::Ready(other) = read.poll() else {
            panic!("the reader waits after the downgrade");
        };
        assert_eq!((*mapped, *other), (1, 1));
    });
}
