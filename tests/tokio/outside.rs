//! Tokio's primitives outside any model and any runtime, polled by hand with a real waker
//! (the pattern of Tokio's own tests, `tokio_test::task::spawn(sem.acquire()).poll()`):
//! they behave as Tokio's on one thread, and a waker they keep is the caller's real one,
//! called when the primitive is ready.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use interleave_test_tokio::sync::{Mutex, Notify, Semaphore, mpsc, oneshot};

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
/// spawned inside it run there too (on either shape), and time, paused, moves to the
/// deadline at once when every task waits.
#[test]
fn a_runtime_built_outside_a_model_runs_block_on_on_the_calling_thread() {
    use interleave_test_tokio::{self as tokio_mod, runtime, time};
    for rt in [
        runtime::Builder::new_multi_thread()
            .start_paused(true)
            .build()
            .unwrap(),
        runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
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
    use interleave_test_tokio::{self as tokio_mod, runtime};
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

/// As in Tokio, a runtime built outside a model keeps its tasks from one `block_on` to the
/// next (and runs a task spawned on its handle outside any `block_on` in the next one),
/// and drops the tasks left with itself.
#[test]
fn a_runtime_built_outside_a_model_keeps_its_tasks_until_it_is_dropped() {
    use interleave_test_tokio::{self as tokio_mod, runtime};
    for rt in [
        runtime::Runtime::new().unwrap(),
        runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    ] {
        let (tx, rx) = oneshot::channel::<u32>();
        #[allow(clippy::async_yields_async)] // the handle is awaited in the next block_on
        let spawned = rt.block_on(async { tokio_mod::spawn(async move { tx.send(7).unwrap() }) });
        // The task did not run inside the first `block_on` (its future returned first);
        // it runs in the second.
        assert_eq!(rt.block_on(rx), Ok(7));
        assert!(rt.block_on(spawned).is_ok());

        let (tx, rx) = oneshot::channel::<&str>();
        let from_handle = rt.handle().spawn(async move { tx.send("handle").unwrap() });
        assert_eq!(rt.block_on(rx), Ok("handle"));
        assert!(rt.block_on(from_handle).is_ok());

        // A task that never ends is dropped with the runtime: the sender it holds goes.
        let (tx, mut rx) = oneshot::channel::<()>();
        let (_keep, never) = oneshot::channel::<()>();
        rt.block_on(async {
            tokio_mod::spawn(async move {
                let _tx = tx;
                let _ = never.await;
            });
            tokio_mod::task::yield_now().await;
        });
        assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        drop(rt);
        assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Closed));
    }
}

/// A plain test that hands a primitive of its thread to a `std::thread` cannot be honoured
/// outside a model: the other thread is refused (and the sender it drops while that panic
/// unwinds does not abort the process), and the test's thread, which would otherwise spin
/// for ever waiting for it, fails at its next check with what happened and what to do.
#[test]
fn a_primitive_used_by_another_os_thread_fails_its_owner_rather_than_hang() {
    use interleave_test_tokio::{runtime, task};
    let rt = runtime::Builder::new_current_thread().build().unwrap();
    let message = crate::common::panic_message(|| {
        rt.block_on(async {
            let (tx, mut rx) = oneshot::channel::<()>();
            assert!(rx.try_recv().is_err()); // the channel is this thread's from here on
            let other = std::thread::Builder::new().name("helper".into());
            let helper = other.spawn(move || {
                let refused = crate::common::panic_message(|| {
                    let _ = tx.send(());
                });
                assert!(
                    refused.contains("used outside a model on two OS threads"),
                    "{refused}"
                );
                // `tx` went with that panic; a second use while another unwinds is quiet.
            });
            helper.unwrap().join().unwrap();
            while rx.try_recv().is_err() {
                task::yield_now().await;
            }
        })
    });
    assert!(
        message.starts_with(
            "a modelled primitive of this OS thread was used by another OS thread: a tokio \
             oneshot channel at "
        ),
        "{message}"
    );
    assert!(message.contains("by the OS thread 'helper'"), "{message}");
    assert!(message.contains("#[cfg(not(interleave))]"), "{message}");
}

/// Unpaused, time outside a model is real, as Tokio's: a `sleep` that every task waits for
/// takes its duration, and `std`'s clock sees it.
#[test]
fn unpaused_time_outside_a_model_passes_as_tokios() {
    use interleave_test_tokio::{runtime, time};
    let rt = runtime::Builder::new_current_thread().build().unwrap();
    let (std_start, start) = (
        std::time::Instant::now(),
        rt.block_on(async { time::Instant::now() }),
    );
    let slept = std::time::Duration::from_millis(30);
    let virtual_elapsed = rt.block_on(async move {
        time::sleep(slept).await;
        start.elapsed()
    });
    assert_eq!(virtual_elapsed, slept);
    assert!(std_start.elapsed() >= slept, "{:?}", std_start.elapsed());
}

/// A runtime and a `LocalSet` kept in a user's `thread_local!` are dropped while their OS
/// thread destroys its thread-locals: their pending tasks are forgotten, and the process
/// goes on (it aborted: "thread local panicked on drop").
#[test]
fn a_runtime_and_a_set_in_a_thread_local_end_with_their_thread() {
    use interleave_test_tokio::{self as tokio_mod, runtime, task};
    struct Kept {
        rt: runtime::Runtime,
        set: task::LocalSet,
    }
    std::thread_local! {
        static KEPT: Kept = Kept {
            rt: runtime::Builder::new_current_thread().build().unwrap(),
            set: task::LocalSet::new(),
        };
    }
    let thread = std::thread::spawn(|| {
        KEPT.with(|kept| {
            kept.rt.block_on(kept.set.run_until(async {
                task::spawn_local(std::future::pending::<()>());
                tokio_mod::spawn(std::future::pending::<()>());
                task::yield_now().await;
            }));
        });
        7
    });
    assert_eq!(thread.join().unwrap(), 7);
}

/// A task's panic read into a `JoinError` outside a model, kept unread in a thread-local,
/// ends with its thread: the error's drop (which inside a model may fail the execution)
/// does nothing outside one, and the thread and the process go on.
#[test]
fn an_unread_join_error_in_a_thread_local_ends_with_its_thread() {
    use interleave_test_tokio::{self as tokio_mod, runtime, task::JoinError};
    std::thread_local! {
        static KEPT: std::cell::RefCell<Option<JoinError>> = const { std::cell::RefCell::new(None) };
    }
    let thread = std::thread::spawn(|| {
        let rt = runtime::Builder::new_current_thread().build().unwrap();
        let error = rt.block_on(async {
            let handle = tokio_mod::spawn(async { panic!("kept unread") });
            handle.await.expect_err("the task panicked")
        });
        KEPT.with(|kept| *kept.borrow_mut() = Some(error));
        8
    });
    assert_eq!(thread.join().unwrap(), 8);
}

/// As Tokio's: a `Sleep` (and so a `timeout` or an `interval`) made outside any runtime's
/// context panics with Tokio's message (`block_on(sleep(..))` too: the sleep is made before
/// `block_on` enters the context); inside the future `block_on` runs it is made and ends.
#[test]
fn a_sleep_made_outside_a_runtime_panics_with_tokios_message() {
    use interleave_test_tokio::{runtime, time};
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

/// As Tokio's: a `block_on` inside another runtime's `block_on` (or one of its tasks)
/// panics; inside `spawn_blocking` work, and on a runtime made inside a `block_on`, it runs.
#[test]
fn a_runtime_started_inside_a_runtime_panics_with_tokios_message() {
    use interleave_test_tokio::{runtime, task};
    let (outer, inner) = (
        runtime::Builder::new_current_thread().build().unwrap(),
        runtime::Builder::new_current_thread().build().unwrap(),
    );
    let message = crate::common::panic_message(|| {
        outer.block_on(async { inner.block_on(async {}) });
    });
    assert!(
        message.starts_with("Cannot start a runtime from within a runtime."),
        "{message}"
    );
    let inner = std::sync::Arc::new(inner);
    let blocking = std::sync::Arc::clone(&inner);
    let out = outer.block_on(async move {
        task::spawn_blocking(move || blocking.block_on(async { 2 }))
            .await
            .unwrap()
    });
    assert_eq!(out, 2);
    let made = outer.block_on(async { runtime::Builder::new_current_thread().build().unwrap() });
    assert_eq!(made.block_on(async { 3 }), 3);
}

/// Outside any task's poll there is no cooperative budget, as in Tokio: a plain test that
/// polls a primitive by hand more than 128 times, or does so after a runtime's `block_on`
/// returned, is never told to yield.
#[test]
fn outside_a_tasks_poll_the_budget_never_runs_out() {
    use interleave_test_tokio::runtime;
    let sem = Semaphore::new(1);
    let (count, waker) = counting();
    let acquire_200_times = || {
        for _ in 0..200 {
            let mut acquire = pin!(sem.acquire());
            let Poll::Ready(permit) = poll(acquire.as_mut(), &waker) else {
                panic!("a free permit is acquired at once outside a task");
            };
            drop(permit.unwrap());
        }
    };
    acquire_200_times();
    let rt = runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {});
    acquire_200_times();
    assert_eq!(wakes(&count), 0);
}

/// Outside a model a wait nobody can end with a deadline a year or more away (Tokio's
/// `sleep(Duration::MAX)`, a `timeout` of it) is the deadlock it is, reported at once,
/// not a real sleep that would hang the test for ever without a word; a short one sleeps.
#[test]
fn a_wait_for_ever_outside_a_model_is_a_deadlock_not_a_silent_sleep() {
    use interleave_test_tokio::{runtime, time};
    let rt = runtime::Builder::new_current_thread().build().unwrap();
    let (_tx, rx) = oneshot::channel::<()>();
    let message = crate::common::panic_message(|| {
        let _ = rt.block_on(async { time::timeout(std::time::Duration::MAX, rx).await });
    });
    assert!(message.starts_with("deadlock outside a model"), "{message}");
    let (_tx, rx) = oneshot::channel::<()>();
    let timed_out =
        rt.block_on(async { time::timeout(std::time::Duration::from_millis(5), rx).await });
    assert!(timed_out.is_err());
}
