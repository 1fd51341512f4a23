//! A task's panic goes to its `JoinHandle`, as in Tokio; by default (task panics fail the
//! execution) a panic the program looks at (`JoinError::is_panic`, `into_panic`, ...: it
//! expected it) fails nothing, and one nobody looks at (its handle or its `JoinError`
//! dropped unread, or never returned by the end) fails the execution, reported as the panic
//! it is: message, place, task. Both shapes of task: a current-thread runtime's (a local task
//! of its `block_on`) and a multi-thread runtime's (a model thread).

use std::future::Future;

use interleave_test::{Failure, FailureKind, Reduction, SourceLocation};
use interleave_test_tokio::sync::{Notify, oneshot};
use interleave_test_tokio::task::JoinSet;
use interleave_test_tokio::{self as tokio, runtime};

use crate::common::{SUBSTRATES, dfs};

/// Runs `body` on a fresh runtime: multi-thread if `multi`, else current-thread.
fn on_runtime(multi: bool, body: impl Future<Output = ()>) {
    let rt = match multi {
        true => runtime::Builder::new_multi_thread().build().unwrap(),
        false => runtime::Builder::new_current_thread().build().unwrap(),
    };
    rt.block_on(body);
}

/// Every execution of `model` on a runtime of each shape, on each substrate, under
/// exhaustive DFS: all must pass.
fn passes(model: impl Fn() -> std::pin::Pin<Box<dyn Future<Output = ()>>> + Sync) {
    for substrate in SUBSTRATES {
        for multi in [false, true] {
            let report = dfs(substrate, Reduction::Dpor, None)
                .check(|| on_runtime(multi, model()))
                .unwrap_or_else(|f| panic!("{substrate:?}, multi {multi}: {f}"));
            assert!(report.exhausted, "{substrate:?}, multi {multi}");
        }
    }
}

/// The failure of `model` on a runtime of each shape, on each substrate, under DFS.
fn failures(
    model: impl Fn() -> std::pin::Pin<Box<dyn Future<Output = ()>>> + Sync,
) -> Vec<Failure> {
    let mut found = Vec::new();
    for substrate in SUBSTRATES {
        for multi in [false, true] {
            let failure = dfs(substrate, Reduction::Dpor, None)
                .check(|| on_runtime(multi, model()))
                .expect_err("the panic is not received");
            found.push(failure);
        }
    }
    found
}

/// The line of this file that ends with `// @marker`.
fn line_of(marker: &str) -> u32 {
    let tag = format!("// @{marker}");
    let index = include_str!("task_panics.rs")
        .lines()
        .position(|l| l.trim_end().ends_with(&tag))
        .expect("marker present");
    u32::try_from(index + 1).unwrap()
}

/// The failure is the task's panic: its message, its place, in a task.
fn assert_is_the_panic(failure: &Failure, marker: &str) {
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
    assert_eq!(failure.message(), "the task's panic", "{failure}");
    let at: &SourceLocation = failure.location().expect("a panic has a place");
    assert_eq!(at.line(), line_of(marker), "{failure}");
    assert!(at.file().ends_with("task_panics.rs"), "{failure}");
    let thread = failure.thread().expect("a panic names its thread");
    // A multi-thread runtime's task is a thread of its own; a current-thread one's is a
    // local task of the thread that runs `block_on`.
    assert!(
        thread.local_task().is_some() || thread.id() != 0,
        "in a task: {failure}"
    );
}

#[test]
fn a_panic_its_handle_returns_fails_nothing() {
    passes(|| {
        Box::pin(async {
            let handle = tokio::spawn(async { panic!("the task's panic") });
            let error = handle.await.expect_err("the task panicked");
            assert!(error.is_panic());
            assert_eq!(
                error.into_panic().downcast_ref::<&str>(),
                Some(&"the task's panic")
            );
        })
    });
}

#[test]
fn a_panic_a_join_set_returns_fails_nothing_and_join_all_passes_it_on() {
    // A set returns the panic from `join_next`; `join_all` resumes it in its caller, a task
    // whose handle receives that panic in turn.
    passes(|| {
        Box::pin(async {
            let mut set = JoinSet::new();
            set.spawn(async { 1 });
            set.spawn(async { panic!("the task's panic") });
            let (mut panics, mut values) = (0, 0);
            while let Some(joined) = set.join_next().await {
                match joined {
                    Ok(v) => values += v,
                    Err(e) => panics += u32::from(e.is_panic()),
                }
            }
            assert_eq!((panics, values), (1, 1));

            let mut set = JoinSet::new();
            set.spawn(async { panic!("the task's panic") });
            let joined = tokio::spawn(set.join_all()).await.expect_err("it panicked");
            assert!(joined.is_panic());
        })
    });
}

#[test]
fn a_panic_whose_handle_is_dropped_unreceived_fails_the_execution() {
    let found = failures(|| {
        Box::pin(async {
            let (done, finished) = oneshot::channel::<()>();
            let handle = tokio::spawn(async move {
                let _done = done;
                panic!("the task's panic"); // @dropped
            });
            // The sender is dropped as the task unwinds: it has panicked.
            let _ = finished.await;
            drop(handle);
        })
    });
    for failure in &found {
        assert_is_the_panic(failure, "dropped");
    }
}

#[test]
fn a_panic_never_received_fails_when_the_execution_ends() {
    let found = failures(|| {
        Box::pin(async {
            let handle = tokio::spawn(async {
                panic!("the task's panic"); // @forgotten
            });
            tokio::task::yield_now().await;
            // Neither received nor dropped: the execution ends with it kept.
            std::mem::forget(handle);
        })
    });
    for failure in &found {
        assert_is_the_panic(failure, "forgotten");
    }
}

#[test]
fn a_deadlock_after_an_unreceived_panic_is_reported_as_the_panic() {
    // The handle is held while the program waits for ever: the panic came first and nobody
    // can receive it now.
    let found = failures(|| {
        Box::pin(async {
            let never = Notify::new();
            let handle = tokio::spawn(async {
                panic!("the task's panic"); // @stuck
            });
            never.notified().await;
            drop(handle);
        })
    });
    for failure in &found {
        assert_is_the_panic(failure, "stuck");
    }
}

#[test]
fn a_panic_after_its_handle_was_dropped_fails_at_once() {
    let found = failures(|| {
        Box::pin(async {
            let (go, set_off) = oneshot::channel::<()>();
            let handle = tokio::spawn(async move {
                let _ = set_off.await;
                panic!("the task's panic"); // @detached
            });
            drop(handle);
            go.send(()).unwrap();
            std::future::pending::<()>().await;
        })
    });
    for failure in &found {
        assert_is_the_panic(failure, "detached");
    }
}

#[test]
fn a_join_error_dropped_unread_fails_the_execution_as_the_tasks_panic() {
    let found = failures(|| {
        Box::pin(async {
            let handle = tokio::spawn(async {
                panic!("the task's panic"); // @discarded
            });
            let _ = handle.await;
        })
    });
    for failure in &found {
        assert_is_the_panic(failure, "discarded");
    }
}

#[test]
fn an_unwrapped_join_error_is_reported_as_the_tasks_panic_not_the_unwrap() {
    let found = failures(|| {
        Box::pin(async {
            let handle = tokio::spawn(async {
                panic!("the task's panic"); // @unwrapped
            });
            handle.await.unwrap();
        })
    });
    for failure in &found {
        assert_is_the_panic(failure, "unwrapped");
    }
}

#[test]
fn asking_whether_it_was_cancelled_reads_the_error_too() {
    passes(|| {
        Box::pin(async {
            let handle = tokio::spawn(async { panic!("the task's panic") });
            let error = handle.await.expect_err("the task panicked");
            assert!(!error.is_cancelled());
        })
    });
}
