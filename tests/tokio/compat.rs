//! What code written against `tokio` needs to compile and run unchanged under the `cfg`
//! switch: `#[tokio::test]`, `JoinError` as a `Send + Sync` error behind `?`, channel
//! handles in `#[derive(Debug)]` structs whatever their item type, `JoinSet` built from an
//! iterator, `sync::futures::Notified`.

use std::time::Duration;

use interleave_test_tokio::runtime::{Handle, RuntimeFlavor};
use interleave_test_tokio::sync::futures::{Notified, OwnedNotified};
use interleave_test_tokio::sync::{Notify, broadcast, mpsc};
use interleave_test_tokio::task::{self, JoinError, JoinSet};

use crate::support::{every_execution, every_execution_of};
use interleave_test_tokio as tokio;

/// `#[tokio::test]` is `#[interleave]`: a current-thread runtime by default, whose tasks
/// run as model tasks (a `spawn` outside a model panics), and `?` on a `JoinError`.
#[tokio::test(strategy = "dfs")]
async fn tokio_test_runs_the_body_as_a_model() -> Result<(), JoinError> {
    assert_eq!(
        Handle::current().runtime_flavor(),
        RuntimeFlavor::CurrentThread
    );
    let value = tokio::spawn(async { 3 }).await?;
    assert_eq!(value, 3);
    Ok(())
}

/// Tokio's runtime arguments pass through.
#[tokio::test(flavor = "multi_thread", worker_threads = 3, strategy = "dfs")]
async fn tokio_test_takes_tokios_runtime_arguments()
-> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let handle = Handle::current();
    assert_eq!(handle.runtime_flavor(), RuntimeFlavor::MultiThread);
    assert_eq!(handle.metrics().num_workers(), 3);
    tokio::spawn(async {}).await?;
    Ok(())
}

/// `flavor = "local"` (Tokio 1.54's `LocalRuntime` flavour): a current-thread runtime
/// whose body spawns `!Send` tasks with `spawn_local` and no `LocalSet`; `start_paused`
/// goes with it. The attribute refused the flavour before.
#[tokio::test(flavor = "local", start_paused = true)]
async fn tokio_test_local_flavor_spawns_local_tasks_without_a_set() {
    let handle = Handle::current();
    assert_eq!(handle.runtime_flavor(), RuntimeFlavor::CurrentThread);
    let shared = std::rc::Rc::new(5);
    let inner = std::rc::Rc::clone(&shared);
    let local = task::spawn_local(async move { *inner + 1 });
    assert_eq!(local.await.unwrap(), 6);
    let start = tokio::time::Instant::now();
    tokio::time::sleep(std::time::Duration::from_secs(9)).await;
    assert_eq!(start.elapsed(), std::time::Duration::from_secs(9));
}

fn send_and_sync<T: Send + Sync + 'static>() {}

/// A `JoinError` is `Send + Sync` (as Tokio's), so `?` takes it into the usual boxed
/// errors and `io::Error`; its `Display` and `id` are Tokio's.
#[test]
fn join_error_is_a_send_sync_error_with_tokios_words() {
    send_and_sync::<JoinError>();
    send_and_sync::<JoinSet<u32>>();
    // A task's panic is its `JoinError` here, as in Tokio, not a failure of the model.
    every_execution_of(
        |b| b.thread_panics_fail(false),
        || async {
            let boom = tokio::spawn(async { panic!("boom") });
            let boom_id = boom.id();
            let error = boom.await.unwrap_err();
            assert_eq!(error.id(), boom_id);
            assert_eq!(
                error.to_string(),
                format!("task {boom_id} panicked with message \"boom\"")
            );
            let io: std::io::Error = error.into();
            assert_eq!(io.kind(), std::io::ErrorKind::Other);
            assert_eq!(io.to_string(), "task panicked");

            let stuck = tokio::spawn(std::future::pending::<()>());
            stuck.abort();
            let id = stuck.id();
            let error = stuck.await.unwrap_err();
            assert_eq!(error.to_string(), format!("task {id} was cancelled"));
            let boxed: Box<dyn std::error::Error + Send + Sync> = error.into();
            assert_eq!(boxed.to_string(), format!("task {id} was cancelled"));

            let payload = tokio::spawn(async { std::panic::panic_any(7u8) });
            let id = payload.id();
            let error = payload.await.unwrap_err();
            assert_eq!(error.to_string(), format!("task {id} panicked"));
            assert_eq!(error.into_panic().downcast_ref::<u8>(), Some(&7));
        },
    );
}

/// An item type without `Debug` (`Clone` for `broadcast`).
#[derive(Clone)]
struct Opaque;

/// A struct of channel handles whose item type has no `Debug` derives `Debug`, as with
/// Tokio's (whose handles' `Debug` has no `T: Debug` bound).
#[derive(Debug)]
#[allow(dead_code)] // read only by Debug
struct Handles {
    tx: mpsc::Sender<Opaque>,
    rx: mpsc::Receiver<Opaque>,
    weak: mpsc::WeakSender<Opaque>,
    utx: mpsc::UnboundedSender<Opaque>,
    urx: mpsc::UnboundedReceiver<Opaque>,
    uweak: mpsc::WeakUnboundedSender<Opaque>,
    btx: broadcast::Sender<Opaque>,
    brx: broadcast::Receiver<Opaque>,
}

#[test]
fn channel_handles_are_debug_whatever_their_item() {
    every_execution(|| async {
        let (tx, rx) = mpsc::channel::<Opaque>(2);
        let (utx, urx) = mpsc::unbounded_channel::<Opaque>();
        let (btx, brx) = broadcast::channel::<Opaque>(2);
        let permit = tx.reserve().await.unwrap();
        assert_eq!(format!("{permit:?}"), "Permit { .. }");
        drop(permit);
        let handles = Handles {
            weak: tx.downgrade(),
            uweak: utx.downgrade(),
            tx,
            rx,
            utx,
            urx,
            btx,
            brx,
        };
        assert_eq!(
            format!("{handles:?}"),
            "Handles { tx: Sender { .. }, rx: Receiver { .. }, weak: WeakSender { .. }, \
             utx: UnboundedSender { .. }, urx: UnboundedReceiver { .. }, \
             uweak: WeakUnboundedSender { .. }, btx: Sender { .. }, brx: Receiver { .. } }"
        );
    });
}

/// `collect` and `extend` spawn each future into the set, as Tokio's; `try_join_next_with_id`
/// gives each finished task's id.
#[test]
fn join_set_from_an_iterator_spawns_every_future() {
    every_execution(|| async {
        let mut set: JoinSet<u32> = (1..=2).map(|n| async move { n * 10 }).collect();
        set.extend([async { 30 }]);
        assert_eq!(set.len(), 3);
        let mut values = Vec::new();
        while !set.is_empty() {
            match set.try_join_next_with_id() {
                Some(done) => {
                    let (id, value) = done.unwrap();
                    assert_ne!(Some(id), task::try_id(), "a spawned task's id");
                    values.push(value);
                }
                // A wait on the clock, which lets the tasks run.
                None => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
        values.sort();
        assert_eq!(values, [10, 20, 30]);
    });
}

/// `notified_owned` makes a `'static` future that can move into a task; it registers at
/// `enable`, so a `notify_one` after it wakes that task and stores no permit.
#[test]
fn an_owned_notified_moves_into_a_task() {
    use std::sync::Arc;
    every_execution(|| async {
        let notify = Arc::new(Notify::new());
        let mut waiting: OwnedNotified = Arc::clone(&notify).notified_owned();
        assert!(
            !std::pin::Pin::new(&mut waiting).enable(),
            "nothing stored yet"
        );
        let task = tokio::spawn(waiting);
        notify.notify_one();
        task.await.unwrap();
        let next = std::pin::pin!(notify.notified());
        assert!(
            !crate::support::poll_once(next).await,
            "the waiter took the notification"
        );
    });
}

/// `tokio::sync::futures::Notified` names the future `notified()` returns.
#[test]
fn notified_has_tokios_path() {
    every_execution(|| async {
        let notify = Notify::new();
        let waiting: Notified<'_> = notify.notified();
        notify.notify_one();
        waiting.await;
    });
}

/// Every option of Tokio's `Builder` compiles and builds a runtime; the thread hooks are
/// not run (the runtime has no threads of its own), and `worker_threads` is what the
/// metrics report.
#[test]
fn builder_takes_tokios_options() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static HOOKS: AtomicUsize = AtomicUsize::new(0);
    let hook = || {
        HOOKS.fetch_add(1, Ordering::SeqCst);
    };
    crate::support::every_execution_sync(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .max_blocking_threads(8)
            .thread_name("worker")
            .thread_name_fn(|| "worker".to_string())
            .thread_stack_size(1 << 20)
            .thread_keep_alive(Duration::from_secs(1))
            .on_thread_start(hook)
            .on_thread_stop(hook)
            .on_thread_park(hook)
            .on_thread_unpark(hook)
            .global_queue_interval(31)
            .event_interval(61)
            .max_io_events_per_tick(1024)
            .enable_all()
            .build()
            .unwrap();
        let workers = runtime.block_on(async {
            tokio::spawn(async { Handle::current().metrics().num_workers() })
                .await
                .unwrap()
        });
        assert_eq!(workers, 4);
    });
    assert_eq!(HOOKS.load(Ordering::SeqCst), 0);
}

/// A guard's `mutex()` lives as long as the lock, not the guard, as Tokio's.
fn lock_of(guard: tokio::sync::MutexGuard<'_, u32>) -> &tokio::sync::Mutex<u32> {
    tokio::sync::MutexGuard::mutex(&guard)
}

/// An owned write guard downgrades to a read guard with no writer in between: a writer
/// task that waits meanwhile gets in only once the read guard is dropped. Guards show
/// their value with `Display`; `rwlock()` is the lock.
#[test]
fn an_owned_write_guard_downgrades_without_letting_a_writer_in() {
    use std::sync::Arc;

    use interleave_test_tokio::sync::{OwnedRwLockWriteGuard, RwLock};
    every_execution(|| async {
        let lock = Arc::new(RwLock::new(0u32));
        let mut write = Arc::clone(&lock).write_owned().await;
        *write = 1;
        let writer = tokio::spawn({
            let lock = Arc::clone(&lock);
            async move { *lock.write().await = 2 }
        });
        assert!(Arc::ptr_eq(OwnedRwLockWriteGuard::rwlock(&write), &lock));
        let read = write.downgrade();
        task::yield_now().await;
        assert_eq!(
            *read, 1,
            "no writer between the write and the downgraded read"
        );
        assert_eq!(format!("{read}"), "1");
        assert!(lock.try_write().is_err());
        drop(read);
        writer.await.unwrap();
        assert_eq!(format!("{}", lock.read().await), "2");
        let mutex = tokio::sync::Mutex::new(5);
        assert!(std::ptr::eq(lock_of(mutex.lock().await), &mutex));
        assert_eq!(format!("{}", mutex.lock().await), "5");
    });
}

/// The blocking forms of `Semaphore::acquire*` and `Mutex::lock_owned` wait from plain
/// threads; a permit names its semaphore.
#[test]
fn blocking_acquire_and_lock_owned_wait_from_threads() {
    use std::sync::Arc;

    use interleave_test::thread;
    use interleave_test_tokio::sync::{Mutex, Semaphore};
    crate::support::every_execution_sync(|| {
        let sem = Arc::new(Semaphore::new(1));
        let count = Arc::new(Mutex::new(0));
        let other = thread::spawn({
            let (sem, count) = (Arc::clone(&sem), Arc::clone(&count));
            move || {
                let _permit = sem.blocking_acquire_owned().unwrap();
                *count.blocking_lock_owned() += 1;
            }
        });
        let permit = sem.blocking_acquire().unwrap();
        assert!(std::ptr::eq(permit.semaphore(), &*sem));
        *Arc::clone(&count).blocking_lock_owned() += 1;
        drop(permit);
        other.join().unwrap();
        assert_eq!(sem.blocking_acquire_many(1).unwrap().num_permits(), 1);
        assert_eq!(*count.blocking_lock(), 2);
        let many = Arc::clone(&sem).blocking_acquire_many_owned(1).unwrap();
        assert_eq!(many.num_permits(), 1);
    });
}

/// A receiver reads the channel's capacity; `blocking_recv_many` takes what was sent; a
/// `SendError` converts into `TrySendError::Closed`.
#[test]
fn receiver_capacity_blocking_recv_many_and_send_error_conversion() {
    use interleave_test::thread;
    use interleave_test_tokio::sync::mpsc::error::{SendError, TrySendError};
    crate::support::every_execution_sync(|| {
        let (tx, mut rx) = mpsc::channel::<u32>(3);
        let sender = thread::spawn(move || {
            tx.blocking_send(1).unwrap();
            tx.blocking_send(2).unwrap();
        });
        assert_eq!(rx.max_capacity(), 3);
        let mut got = Vec::new();
        while rx.blocking_recv_many(&mut got, 5) > 0 {}
        sender.join().unwrap();
        assert_eq!(got, [1, 2]);
        assert_eq!(rx.capacity(), 3, "every slot free again");
    });
    let closed: TrySendError<u32> = SendError(4).into();
    assert!(matches!(closed, TrySendError::Closed(4)));
}

/// `task::coop` has Tokio's names; with no budget in the model, every check passes and
/// the wrappers poll their future as it is.
#[test]
fn coop_checks_pass_and_wrappers_poll_through() {
    use interleave_test_tokio::task::coop;
    every_execution(|| async {
        assert!(coop::has_budget_remaining());
        coop::consume_budget().await;
        let ready = std::future::poll_fn(|cx| coop::poll_proceed(cx).map(|r| r.made_progress()));
        ready.await;
        assert_eq!(coop::cooperative(async { 1 }).await, 1);
        assert_eq!(
            coop::unconstrained(tokio::spawn(async { 2 }))
                .await
                .unwrap(),
            2
        );
    });
}

/// A `LocalRuntime` runs `!Send` tasks spawned on it before and inside its `block_on`,
/// without a `LocalSet`, on a current-thread runtime; a multi-thread builder cannot build
/// one (Tokio's panic).
#[test]
fn a_local_runtime_runs_local_tasks_without_a_local_set() {
    use interleave_test_tokio::runtime::{Builder, LocalOptions, LocalRuntime};
    use std::rc::Rc;
    crate::support::every_execution_sync(|| {
        let rt = LocalRuntime::new().unwrap();
        assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
        let log = Rc::new(std::cell::RefCell::new(Vec::new()));
        let early = rt.spawn_local({
            let log = Rc::clone(&log);
            async move { log.borrow_mut().push("early") }
        });
        assert!(log.borrow().is_empty(), "nothing runs before block_on");
        rt.block_on({
            let log = Rc::clone(&log);
            async move {
                let late = task::spawn_local({
                    let log = Rc::clone(&log);
                    async move { log.borrow_mut().push("late") }
                });
                let sent = tokio::spawn(async { 5 });
                late.await.unwrap();
                early.await.unwrap();
                assert_eq!(sent.await.unwrap(), 5);
            }
        });
        let mut seen = log.borrow().clone();
        seen.sort();
        assert_eq!(seen, ["early", "late"]);
        let built = Builder::new_current_thread().build_local(LocalOptions::default());
        assert!(built.is_ok());
    });
    let failure = interleave_test::Builder::new()
        .iterations(1)
        .check(|| {
            let _ = Builder::new_multi_thread().build_local(LocalOptions::default());
        })
        .unwrap_err();
    assert!(
        failure
            .message()
            .contains("multi_thread is not supported for LocalRuntime"),
        "{failure}"
    );
}

/// `broadcast`: `Sender::new` starts with no receiver; `closed()` completes once the last
/// receiver is dropped; weak senders do not keep the channel open and upgrade only while
/// a sender exists; the counts follow.
#[test]
fn broadcast_weak_senders_closed_and_counts() {
    every_execution(|| async {
        let tx = broadcast::Sender::<u32>::new(2);
        assert!(tx.send(1).is_err(), "no receiver yet");
        tx.closed().await; // none: complete at once
        let mut rx = tx.subscribe();
        let weak = tx.downgrade();
        assert_eq!((tx.strong_count(), tx.weak_count()), (1, 1));
        assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (1, 1));
        let watcher = tokio::spawn({
            let tx = weak.upgrade().expect("a sender exists");
            async move {
                tx.closed().await;
                tx.send(9).is_err()
            }
        });
        tx.send(2).unwrap();
        assert_eq!(rx.recv().await, Ok(2));
        assert!(!rx.is_closed());
        drop(rx);
        assert!(watcher.await.unwrap(), "closed, and no receiver to send to");
        drop(tx);
        assert!(weak.upgrade().is_none(), "every sender is gone");
        assert_eq!((weak.strong_count(), weak.clone().weak_count()), (0, 2));
        let (tx, rx) = broadcast::channel::<u32>(1);
        drop(tx);
        assert!(rx.is_closed());
    });
}

interleave_test_tokio::task_local! {
    static REQUEST: u32;
}

/// `JoinSet::spawn_local_on` (a `LocalSet`'s task) and `spawn_blocking_on` (a handle's);
/// `LocalKey::try_get` inside and outside a scope; `TryCurrentError`'s predicates.
#[test]
fn join_set_on_a_set_or_handle_try_get_and_current_errors() {
    use interleave_test_tokio::task::LocalSet;
    crate::support::every_execution_sync(|| {
        let error = Handle::try_current().unwrap_err();
        assert!(error.is_missing_context() && !error.is_thread_local_destroyed());
        assert_eq!(
            error.to_string(),
            "there is no reactor running, must be called from the context of a Tokio 1.x runtime"
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let local = LocalSet::new();
        let mut set = JoinSet::new();
        let not_send = async {
            let one = std::rc::Rc::new(1);
            task::yield_now().await;
            *one
        };
        set.spawn_local_on(not_send, &local);
        set.spawn_blocking_on(|| 2, rt.handle());
        let mut values = local.block_on(&rt, async move {
            let mut values = Vec::new();
            while let Some(done) = set.join_next().await {
                values.push(done.unwrap());
            }
            values
        });
        values.sort();
        assert_eq!(values, [1, 2]);
        assert!(REQUEST.try_get().is_err(), "outside every scope");
        assert_eq!(REQUEST.sync_scope(7, || REQUEST.try_get()), Ok(7));
    });
}

/// The `RwLock` guards' `map` takes its type parameters in Tokio's order (`<F, U>`), so
/// code that names them compiles.
#[test]
fn rwlock_guard_maps_take_tokios_type_parameter_order() {
    use interleave_test_tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
    every_execution(|| async {
        let lock = RwLock::new((1u32, 2u32));
        let mut second = RwLockWriteGuard::map::<_, u32>(lock.write().await, |v| &mut v.1);
        *second += 1;
        drop(second);
        let first = RwLockReadGuard::map::<_, u32>(lock.read().await, |v| &v.0);
        assert_eq!(*first, 1);
        drop(first);
        let read = RwLockWriteGuard::downgrade_map::<_, u32>(lock.write().await, |v| &v.1);
        assert_eq!(*read, 3);
    });
}

/// A `#[tokio::main]` program compiles under the switch; its `main` is not a model, so it
/// stops with a message that says what to run.
#[tokio::main(flavor = "current_thread")]
async fn program_main() -> Result<(), std::io::Error> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(())
}

#[test]
fn tokio_main_compiles_and_says_to_run_the_model_tests() {
    let panic = std::panic::catch_unwind(program_main).unwrap_err();
    let message = panic.downcast_ref::<&str>().expect("a message");
    assert!(
        message.contains("a program's main is not a model")
            && message.contains("Run the model tests"),
        "{message}"
    );
}
