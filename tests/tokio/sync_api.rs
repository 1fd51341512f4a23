//! `tokio::sync` API details Tokio's own tests pin (`sync_panic`, `sync_semaphore`,
//! `sync_broadcast`, `sync_oneshot`, `sync_mpsc`) where the model once disagreed: where a
//! misuse panic is located, permit counts past `u32::MAX`, a value whose `Clone` panics,
//! a receiver polled after its outcome, a timer outside any runtime. Each runs outside a
//! model, as Tokio's do, in the OS thread's one-thread execution.

use std::cell::RefCell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Once};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use interleave_test_tokio::sync::{RwLock, Semaphore, broadcast, mpsc, oneshot};

use crate::common::panic_message;

thread_local! {
    /// Where the last panic on this thread was raised (file, line).
    static LAST_PANIC: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// The file and line of the panic `f` raises: a process-wide hook, installed once, notes
/// each panic's location for its own thread, then runs the hook it replaced.
fn panic_location(f: impl FnOnce()) -> (String, u32) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let at = info.location().map(|l| (l.file().to_owned(), l.line()));
            LAST_PANIC.with(|last| *last.borrow_mut() = at);
            previous(info);
        }));
    });
    LAST_PANIC.with(|last| last.borrow_mut().take());
    let caught = std::panic::catch_unwind(AssertUnwindSafe(f));
    assert!(caught.is_err(), "should panic");
    LAST_PANIC
        .with(|last| last.borrow_mut().take())
        .expect("the hook saw the panic")
}

// ---- misuse panics are located at the program's call ----

#[test]
fn broadcast_channel_of_capacity_zero_panics_at_the_call() {
    let at = panic_location(|| drop(broadcast::channel::<u32>(0)));
    assert_eq!(at, (file!().to_owned(), line!() - 1));
}

#[test]
fn rwlock_with_max_readers_out_of_range_panics_at_the_call() {
    for max in [0, u32::MAX] {
        let at = panic_location(|| drop(RwLock::with_max_readers((), max)));
        assert_eq!(at, (file!().to_owned(), line!() - 1), "max_reads {max}");
    }
}

#[test]
fn merging_permits_of_two_semaphores_panics_at_the_call() {
    let (one, two) = (Semaphore::new(1), Semaphore::new(1));
    let at = panic_location(|| {
        let mut mine = one.try_acquire().unwrap();
        mine.merge(two.try_acquire().unwrap());
    });
    assert_eq!(at, (file!().to_owned(), line!() - 2));

    let (one, two) = (Arc::new(Semaphore::new(1)), Arc::new(Semaphore::new(1)));
    let at = panic_location(|| {
        let mut mine = one.try_acquire_owned().unwrap();
        mine.merge(two.try_acquire_owned().unwrap());
    });
    assert_eq!(at, (file!().to_owned(), line!() - 2));
}

// ---- permit counts are usize, as Tokio's ----

#[test]
fn merged_permits_may_hold_more_than_u32_max() {
    let sem = Arc::new(Semaphore::new(6_000_000_000));
    let mut borrowed = sem.try_acquire_many(3_000_000_000).unwrap();
    borrowed.merge(sem.try_acquire_many(3_000_000_000).unwrap());
    assert_eq!(borrowed.num_permits(), 6_000_000_000);
    let part = borrowed.split(5_000_000_000).expect("it holds that many");
    assert_eq!(
        (borrowed.num_permits(), part.num_permits()),
        (1_000_000_000, 5_000_000_000)
    );
    drop((borrowed, part));
    assert_eq!(sem.available_permits(), 6_000_000_000);

    let mut owned = Arc::clone(&sem)
        .try_acquire_many_owned(3_000_000_000)
        .unwrap();
    owned.merge(
        Arc::clone(&sem)
            .try_acquire_many_owned(3_000_000_000)
            .unwrap(),
    );
    assert_eq!(owned.num_permits(), 6_000_000_000);
    assert_eq!(sem.available_permits(), 0);
    drop(owned);
    assert_eq!(sem.available_permits(), 6_000_000_000);
}

// ---- broadcast: a value whose Clone panics ----

/// A value whose clone panics when it holds 0.
#[derive(Debug, PartialEq)]
struct CloneFails(u32);

impl Clone for CloneFails {
    fn clone(&self) -> Self {
        assert_ne!(self.0, 0, "clone of 0");
        CloneFails(self.0)
    }
}

/// As Tokio's, a receiver always clones: the last receiver of a value too, whose clone
/// panic then counts as having received it (the next receive gets the next value).
#[test]
fn broadcast_receive_clones_for_the_last_receiver_and_a_clone_panic_skips_the_value() {
    let (tx, mut rx) = broadcast::channel(4);
    tx.send(CloneFails(0)).unwrap();
    tx.send(CloneFails(1)).unwrap();
    assert_eq!(
        panic_message(|| drop(rx.try_recv())),
        "assertion `left != right` failed: clone of 0\n  left: 0\n right: 0"
    );
    assert_eq!(rx.try_recv(), Ok(CloneFails(1)));
    assert_eq!(tx.len(), 0, "both values were seen by the only receiver");
    assert_eq!(rx.try_recv(), Err(broadcast::error::TryRecvError::Empty));
}

// ---- oneshot: polled after its outcome ----

#[test]
fn oneshot_receiver_polled_after_try_recv_gave_closed_panics() {
    let (_tx, mut rx) = oneshot::channel::<u32>();
    rx.close();
    assert!(rx.try_recv().is_err());
    let mut cx = Context::from_waker(Waker::noop());
    let message = panic_message(|| drop(std::pin::Pin::new(&mut rx).poll(&mut cx)));
    assert_eq!(message, "called after complete");
}

#[test]
fn oneshot_receiver_polled_after_its_value_panics() {
    let (tx, mut rx) = oneshot::channel::<u32>();
    tx.send(7).unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    assert_eq!(
        std::pin::Pin::new(&mut rx).poll(&mut cx),
        Poll::Ready(Ok(7))
    );
    let message = panic_message(|| drop(std::pin::Pin::new(&mut rx).poll(&mut cx)));
    assert_eq!(message, "called after complete");
}

// ---- a timer outside any model and runtime ----

/// `send_timeout` needs Tokio's timer, which outside a runtime (and here outside a model)
/// is Tokio's panic at the first poll.
#[test]
fn send_timeout_outside_a_runtime_panics_with_tokios_message() {
    let (tx, _rx) = mpsc::channel::<u32>(5);
    let mut send = std::pin::pin!(tx.send_timeout(10, Duration::from_secs(1)));
    let mut cx = Context::from_waker(Waker::noop());
    let message = panic_message(|| {
        let _ = send.as_mut().poll(&mut cx);
    });
    assert!(
        message.starts_with(
            "there is no reactor running, must be called from the context of a Tokio 1.x runtime"
        ),
        "{message}"
    );
}
