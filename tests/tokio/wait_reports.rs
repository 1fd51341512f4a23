//! A deadlock report says of a task what it says of a blocked thread: the primitive it
//! waits on (kind, number, first use) and what it waits to do there, from the engine's
//! wait queue the primitive registered it in. A waiter that left the queue is not named.

use interleave_test::sync::Arc;
use interleave_test::{Builder, Failure, FailureKind};
use interleave_test_tokio::sync::{Mutex, Notify, Semaphore, mpsc};
use interleave_test_tokio::{self as tokio};

/// The `file:line:` of the line of this file marked with the comment `// @marker`.
fn at(marker: &str) -> String {
    let line = crate::common::line_of(include_str!("wait_reports.rs"), &format!("// @{marker}"));
    format!("{}:{line}:", file!())
}

/// The deadlock `model` ends in, on every substrate; each thread's state. No spurious
/// poll: the last poll before the deadlock is the model's first.
fn states<F: Future<Output = ()> + 'static>(model: fn() -> F) -> Vec<(Failure, Vec<String>)> {
    crate::common::SUBSTRATES
        .into_iter()
        .map(|substrate| {
            let failure = Builder::new()
                .substrate(substrate)
                .seed(3)
                .spurious_wakeups(false)
                .check_async(model)
                .expect_err("the model deadlocks");
            assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
            let states = failure
                .threads()
                .iter()
                .map(|t| t.state().to_owned())
                .collect();
            (failure, states)
        })
        .collect()
}

#[test]
fn a_task_waiting_for_a_notification_names_the_notify() {
    for (failure, states) in states(|| async {
        let notify = Arc::new(Notify::new());
        let woken = Arc::clone(&notify);
        let worker = tokio::spawn(async move { woken.notified().await }); // @notify
        worker.await.unwrap();
    }) {
        let [main, worker] = &states[..] else {
            panic!("two threads: {failure}");
        };
        // First used by its first operation, the worker's `notified`.
        let first_use = format!("(first used at {}", at("notify"));
        assert!(
            worker.starts_with("waits to be notified by tokio Notify #"),
            "{failure}"
        );
        assert!(worker.contains(&first_use), "{first_use}: {failure}");
        assert!(worker.ends_with("; it waits in `tokio Notify notified`"));
        // A `JoinHandle` is no wait queue: its waiter is reported as before.
        assert!(
            main.contains("returned Pending and nothing woke it"),
            "{failure}"
        );
    }
}

#[test]
fn a_task_waiting_for_a_leaked_lock_names_the_mutex() {
    for (failure, states) in states(|| async {
        let lock = Mutex::new(0);
        std::mem::forget(lock.lock().await); // @lock
        *lock.lock().await += 1;
    }) {
        let first_use = format!("waits to lock tokio Mutex #0 (first used at {}", at("lock"));
        assert!(states[0].starts_with(&first_use), "{first_use}: {failure}");
    }
}

#[test]
fn a_select_names_each_primitive_it_waits_on() {
    for (failure, states) in states(|| async {
        let (_tx, mut rx) = mpsc::channel::<u8>(1);
        let notify = Notify::new();
        tokio::select! {
            biased;
            _ = rx.recv() => {}
            () = notify.notified() => {}
        }
    }) {
        let state = &states[0];
        assert!(
            state.starts_with("waits to receive from tokio mpsc channel #"),
            "{failure}"
        );
        assert!(
            state.contains(" or to be notified by tokio Notify #"),
            "{failure}"
        );
    }
}

#[test]
fn a_waiter_that_left_its_queue_is_not_named() {
    for (failure, states) in states(|| async {
        let notify = Notify::new();
        let semaphore = Semaphore::new(0);
        let mut notified = Box::pin(notify.notified());
        assert!(futures::poll!(&mut notified).is_pending());
        drop(notified);
        let _permit = semaphore.acquire().await;
    }) {
        let state = &states[0];
        assert!(
            state.starts_with("waits to acquire a permit from tokio Semaphore #"),
            "{failure}"
        );
        assert!(!state.contains("Notify"), "{failure}");
    }
}
