//! Bugs of Tokio code, found by every strategy and replayed exactly: the lost notification
//! of `notify_waiters`, a lock guard leaked on a `timeout`'s path, and an `RwLock` read
//! guard kept alive by a `match` scrutinee across a second read.

use std::future::Future;

use interleave_test::sync::Arc;
use interleave_test::{Builder, Failure, FailureKind};
use interleave_test_tokio::sync::{Mutex, Notify, RwLock};
use interleave_test_tokio::time::{self, Duration};

use crate::common::{each_dfs, each_sampler};

/// Finds `model`'s failure of `kind` with every DFS configuration that allows a preemption
/// (both bugs need the task that runs to be switched away from once: a bound of 0 misses
/// them, and its report says it was bounded) and with random and PCT (seed 3), and replays
/// each failure to an equal one.
fn found_by_every_strategy<Fut: Future<Output = ()>>(
    model: impl Fn() -> Fut + Sync + Copy,
    kind: FailureKind,
) {
    // `block_on` in one closure, so that the search and the replay report the same place.
    let sync_model = || interleave_test::future::block_on(model());
    let check = |builder: Builder, name: String| {
        let failure: Failure = match builder.check(sync_model) {
            Ok(report) => panic!("{name}: not found: {report}"),
            Err(failure) => failure,
        };
        assert_eq!(failure.kind(), kind, "{name}: {failure}");
        let again = builder.replay(sync_model, failure.schedule()).unwrap_err();
        assert_eq!(again, failure, "{name}: replay differs");
    };
    each_dfs(|builder, name, bound| {
        if bound != Some(0) {
            check(builder, name);
        }
    });
    each_sampler(3, check);
}

/// A worker announces it is ready, then waits for `notify_waiters`; the coordinator waits
/// for the announcement and notifies. The worker makes its `Notified` only after it
/// announced, so a notification between the two is lost and the worker waits forever.
async fn lost_notification() {
    let notify = Arc::new(Notify::new());
    let ready = Arc::new(Notify::new());
    let worker = interleave_test_tokio::spawn({
        let (notify, ready) = (Arc::clone(&notify), Arc::clone(&ready));
        async move {
            ready.notify_one();
            notify.notified().await; // BUG: made after the announcement
        }
    });
    ready.notified().await;
    notify.notify_waiters();
    worker.await.unwrap();
}

#[test]
fn notify_waiters_racing_a_task_that_has_not_called_notified_is_found() {
    found_by_every_strategy(lost_notification, FailureKind::Deadlock);
}

/// A task takes a lock under a timeout, and on the timeout path forgets the guard it got
/// after all (`mem::forget` of the guard taken by a retry): the next locker waits forever.
async fn guard_leaked_on_timeout() {
    let lock = Arc::new(Mutex::new(0));
    let holder = lock.lock().await;
    let other = interleave_test_tokio::spawn({
        let lock = Arc::clone(&lock);
        async move {
            match time::timeout(Duration::from_millis(5), lock.lock()).await {
                Ok(mut guard) => *guard += 1,
                Err(_) => {
                    // BUG: the retry's guard is leaked on the timeout path.
                    if let Ok(guard) = lock.try_lock() {
                        std::mem::forget(guard);
                    }
                }
            }
        }
    });
    time::sleep(Duration::from_millis(1)).await;
    drop(holder);
    other.await.unwrap();
    *lock.lock().await += 1;
}

#[test]
fn a_guard_leaked_on_the_timeout_path_is_found() {
    found_by_every_strategy(guard_leaked_on_timeout, FailureKind::Deadlock);
}

/// The read guard of the `match` scrutinee lives to the end of the `match`; the arm reads
/// again. When the writer queued in between, the second read waits behind the writer,
/// which waits for the first guard: a deadlock (Tokio's lock is fair, as here).
async fn read_guard_in_match_scrutinee() {
    let lock = Arc::new(RwLock::new(Some(1)));
    let writer = interleave_test_tokio::spawn({
        let lock = Arc::clone(&lock);
        async move { *lock.write().await = None }
    });
    match *lock.read().await {
        Some(v) => assert_eq!(lock.read().await.unwrap_or(v), v),
        // The scrutinee's guard is still held here too.
        None => assert!(lock.try_write().is_err()),
    }
    writer.await.unwrap();
}

#[test]
fn a_read_guard_held_by_a_match_scrutinee_deadlocks_with_a_writer() {
    found_by_every_strategy(read_guard_in_match_scrutinee, FailureKind::Deadlock);
}
