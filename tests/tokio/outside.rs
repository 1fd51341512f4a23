//! Tokio's primitives outside any model and any runtime, polled by hand with a real waker
//! (the pattern of Tokio's own tests, `tokio_test::task::spawn(sem.acquire()).poll()`):
//! they behave as Tokio's on one thread, and a waker they keep is the caller's real one,
//! called when the primitive is ready.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use interleave_test::tokio::sync::{Mutex, Notify, Semaphore, mpsc, oneshot};

/// A real waker that counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker counting into a fresh `Count`.
fn counting() -> (std::sync::Arc<Count>, Waker) {
    let count = std::sync::Arc::new(Count::default());
    let waker = Waker::from(std::sync::Arc::clone(&count));
    (count, waker)
}

fn wakes(count: &Count) -> usize {
    count.0.load(Ordering::SeqCst)
}

fn poll<F: Future>(f: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(waker))
}

#[test]
fn a_semaphore_polled_by_hand_wakes_its_waiter_when_a_permit_comes_back() {
    let sem = Semaphore::new(1);
    let (count, waker) = counting();
    let mut first = pin!(sem.acquire());
    let Poll::Ready(Ok(permit)) = poll(first.as_mut(), &waker) else {
        panic!("a free permit is taken at once");
    };
    let mut second = pin!(sem.acquire());
    assert!(poll(second.as_mut(), &waker).is_pending());
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(wakes(&count), 0);
    drop(permit);
    assert_eq!(wakes(&count), 1, "the waiter's real waker is called");
    assert!(matches!(poll(second.as_mut(), &waker), Poll::Ready(Ok(_))));
    assert_eq!(sem.available_permits(), 1);
    assert!(sem.try_acquire().is_ok());
    sem.close();
    assert!(sem.try_acquire().is_err());
}

#[test]
fn a_dropped_waiter_gives_its_place_to_the_next() {
    let sem = Semaphore::new(0);
    let (count, waker) = counting();
    {
        let mut dropped = pin!(sem.acquire());
        assert!(poll(dropped.as_mut(), &waker).is_pending());
    }
    let mut waiting = pin!(sem.acquire());
    assert!(poll(waiting.as_mut(), &waker).is_pending());
    sem.add_permits(1);
    assert_eq!(wakes(&count), 1);
    assert!(matches!(poll(waiting.as_mut(), &waker), Poll::Ready(Ok(_))));
}

#[test]
fn channels_mutexes_and_notify_polled_by_hand() {
    let (count, waker) = counting();
    let (tx, mut rx) = mpsc::channel(1);
    {
        let mut recv = pin!(rx.recv());
        assert!(poll(recv.as_mut(), &waker).is_pending());
        tx.try_send(7).unwrap();
        assert_eq!(wakes(&count), 1);
        assert_eq!(poll(recv.as_mut(), &waker), Poll::Ready(Some(7)));
    }
    drop(tx);
    assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected));

    let (tx, mut rx) = oneshot::channel();
    assert!(poll(Pin::new(&mut rx), &waker).is_pending());
    tx.send("done").unwrap();
    assert_eq!(wakes(&count), 2);
    assert_eq!(poll(Pin::new(&mut rx), &waker), Poll::Ready(Ok("done")));

    let mutex = Mutex::new(1);
    let guard = mutex.try_lock().unwrap();
    let mut lock = pin!(mutex.lock());
    assert!(poll(lock.as_mut(), &waker).is_pending());
    drop(guard);
    assert_eq!(wakes(&count), 3);
    let Poll::Ready(mut guard) = poll(lock.as_mut(), &waker) else {
        panic!("the lock is free again");
    };
    *guard += 1;
    drop(guard);
    assert_eq!(*mutex.try_lock().unwrap(), 2);

    let notify = Notify::new();
    let mut notified = pin!(notify.notified());
    assert!(poll(notified.as_mut(), &waker).is_pending());
    notify.notify_one();
    assert_eq!(wakes(&count), 4);
    assert!(poll(notified.as_mut(), &waker).is_ready());
}

/// A runtime built outside any model runs its `block_on` on the calling thread, in that
/// thread's one-thread execution: the future may borrow locals and be `!Send`, tasks
/// spawned inside it run there too (on either shape), and time is the paused clock.
#[test]
fn a_runtime_built_outside_a_model_runs_block_on_on_the_calling_thread() {
    use interleave_test::tokio::{self as tokio_mod, runtime, time};
    for rt in [
        runtime::Runtime::new().unwrap(),
        runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    ] {
        let local = std::rc::Rc::new(std::cell::Cell::new(1));
        let borrowed = &local;
        let sum = rt.block_on(async {
            let start = time::Instant::now();
            let task = tokio_mod::spawn(async {
                time::sleep(std::time::Duration::from_secs(60)).await;
                2
            });
            let blocking = tokio_mod::task::spawn_blocking(|| 3);
            borrowed.set(borrowed.get() + task.await.unwrap() + blocking.await.unwrap());
            assert_eq!(start.elapsed(), std::time::Duration::from_secs(60));
            borrowed.get()
        });
        assert_eq!(sum, 6);
    }
}

/// A panic in `block_on` unwinds through the runtime's drop and the tasks it still holds
/// without a second panic (which would abort the process).
#[test]
fn a_panic_in_block_on_unwinds_through_the_runtime_and_its_tasks() {
    use interleave_test::tokio::{self as tokio_mod, runtime};
    let sem = std::sync::Arc::new(Semaphore::new(0));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        let sem = std::sync::Arc::clone(&sem);
        rt.block_on(async move {
            let waiting = tokio_mod::spawn(async move { drop(sem.acquire().await) });
            tokio_mod::task::yield_now().await;
            assert!(!waiting.is_finished());
            panic!("the test's own panic");
        })
    }));
    let payload = caught.expect_err("block_on panics");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"the test's own panic")
    );
    // The waiting task was dropped with its acquire: the semaphore has no waiter left.
    sem.add_permits(1);
    assert!(sem.try_acquire().is_ok());
}

/// As Tokio's: a `Sleep` (and so a `timeout` or an `interval`) made outside any runtime's
/// context panics with Tokio's message (`block_on(sleep(..))` too: the sleep is made before
/// `block_on` enters the context); inside the future `block_on` runs it is made and ends.
#[test]
fn a_sleep_made_outside_a_runtime_panics_with_tokios_message() {
    use interleave_test::tokio::{runtime, time};
    let tokio_says =
        "there is no reactor running, must be called from the context of a Tokio 1.x runtime";
    const MS: std::time::Duration = std::time::Duration::from_millis(1);
    let made: [(&str, fn()); 4] = [
        ("sleep", || drop(time::sleep(MS))),
        ("sleep_until", || {
            drop(time::sleep_until(time::Instant::now() + MS))
        }),
        ("timeout", || drop(time::timeout(MS, async {}))),
        ("interval", || drop(time::interval(MS))),
    ];
    for (name, make) in made {
        let message = crate::common::panic_message(make);
        assert!(message.starts_with(tokio_says), "{name}: {message}");
    }
    let rt = runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let start = time::Instant::now();
    rt.block_on(async { time::sleep(5 * MS).await });
    assert_eq!(start.elapsed(), 5 * MS);
    let message = crate::common::panic_message(|| rt.block_on(time::sleep(MS)));
    assert!(message.starts_with(tokio_says), "{message}");
}
